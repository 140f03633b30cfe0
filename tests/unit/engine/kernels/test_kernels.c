/* test_kernels.c — the weight kernels (engine/kernels/).
 *
 * The central property is bit-identity: every SIMD level the CPU has must
 * give exactly the scalar reference's bits, for every weight encoding, on
 * shapes that exercise the column tails and the row groups, and on values
 * chosen to expose any change of order (huge and tiny magnitudes, signed
 * zeros, every MXFP4 code and scale byte). The gemm forms must equal the gemv
 * row by row, and results must not depend on the thread count. Accuracy is
 * checked against a double-precision dot, and the MXFP4 decoding (nibble
 * order, scale indexing) against the fixture's dequantised samples.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "tests/unit/test.h"
#include "kernels/kernels.h"
#include "base/threadpool.h"

static const char *const level_names[] = { "scalar", "avx2", "avx512" };

/* ---- deterministic inputs ---------------------------------------------- */

static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ull + 1; }
static uint32_t rng_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}
static float rng_unit(void) { return (float)((rng_u32() & 0xFFFFFF) / 16777216.0 * 2.0 - 1.0); }

/* A float of wildly varying magnitude: mostly ordinary values, with huge,
 * tiny, subnormal values and signed zeros mixed in so that any reordering of
 * the sums shows up in the bits. */
static float adversarial(void)
{
    uint32_t k = rng_u32() % 16;
    float u = rng_unit();
    switch (k) {
    case 0: return u * 1e30f;
    case 1: return u * 1e-30f;
    case 2: return u * 1e-40f;          /* subnormal */
    case 3: return (rng_u32() & 1) ? 0.0f : -0.0f;
    case 4: return u * 65536.0f;
    default: return u;
    }
}

static uint16_t f32_to_bf16_trunc(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

/* Equal bits, or both NaN (a NaN's sign and payload may follow the operand
 * order the compiler picked, which IEEE leaves open). */
static int same(float a, float b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

static int same_vec(const float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++)
        if (!same(a[i], b[i])) {
            fprintf(stderr, "    element %d: %a vs %a\n", i, a[i], b[i]);
            return 0;
        }
    return 1;
}

/* Back to the best level the CPU has, so later tests use it. */
static void best_level(void)
{
    for (int l = 2; l >= 0; l--)
        if (kern_set_level(level_names[l]) == 0) return;
}

/* ---- one product computed every way ------------------------------------ */

enum { F32, BF16, MXFP4 };

typedef struct {
    int enc, rows, cols;
    float *wf;                 /* F32 weights */
    uint16_t *wb;              /* BF16 weights */
    uint8_t *packed, *scale;   /* MXFP4 */
} mat;

static void mat_free(mat *m)
{
    free(m->wf); free(m->wb); free(m->packed); free(m->scale);
}

static void gemv(const mat *m, const float *x, float *y)
{
    if (m->enc == F32) kern_gemv_f32(m->wf, x, y, m->rows, m->cols);
    else if (m->enc == BF16) kern_gemv_bf16(m->wb, x, y, m->rows, m->cols);
    else kern_gemv_mxfp4(m->packed, m->scale, x, y, m->rows, m->cols);
}

static void gemm(const mat *m, const float *X, float *Y, int T)
{
    if (m->enc == F32) kern_gemm_f32(m->wf, X, Y, T, m->rows, m->cols);
    else if (m->enc == BF16) kern_gemm_bf16(m->wb, X, Y, T, m->rows, m->cols);
    else kern_gemm_mxfp4(m->packed, m->scale, X, Y, T, m->rows, m->cols);
}

static mat make_dense(int enc, int rows, int cols)
{
    mat m = { .enc = enc, .rows = rows, .cols = cols };
    size_t n = (size_t)rows * cols;
    if (enc == F32) {
        m.wf = malloc(n * sizeof *m.wf);
        for (size_t i = 0; i < n; i++) m.wf[i] = adversarial();
    } else {
        m.wb = malloc(n * sizeof *m.wb);
        for (size_t i = 0; i < n; i++) m.wb[i] = f32_to_bf16_trunc(adversarial());
    }
    return m;
}

/* MXFP4 weights with every code in every row, and scale bytes walking
 * through lo..hi so that every byte appears across the blocks. */
static mat make_mxfp4(int rows, int cols, int lo, int hi)
{
    mat m = { .enc = MXFP4, .rows = rows, .cols = cols };
    size_t nb = (size_t)rows * cols / 2, ns = (size_t)rows * cols / 32;
    m.packed = malloc(nb);
    m.scale = malloc(ns);
    for (size_t i = 0; i < nb; i++)
        m.packed[i] = (i % 8 == 0) ? (uint8_t)(((i / 8) % 16) | (((i / 8 + 5) % 16) << 4))
                                   : (uint8_t)rng_u32();
    for (size_t i = 0; i < ns; i++)
        m.scale[i] = (uint8_t)(lo + (i * 7 + rng_u32() % 3) % (size_t)(hi - lo + 1));
    return m;
}

/* Runs gemv and gemm (T = 1, 2, 5, 9: one, some and more than one
 * tile of 4 input rows) on every available level and compares
 * them all with the scalar gemv. Returns the number of mismatches. */
static int check_all_levels(const mat *m, const char *what)
{
    const int Ts[] = { 1, 2, 5, 9 };
    enum { NT = 9 };
    int bad = 0;
    float *X = malloc((size_t)NT * m->cols * sizeof *X);
    float *ref = malloc((size_t)NT * m->rows * sizeof *ref);
    float *got = malloc((size_t)NT * m->rows * sizeof *got);
    for (int i = 0; i < NT * m->cols; i++) X[i] = adversarial();

    kern_set_level("scalar");
    for (int t = 0; t < NT; t++)
        gemv(m, X + (size_t)t * m->cols, ref + (size_t)t * m->rows);

    for (int l = 0; l < 3; l++) {
        if (kern_set_level(level_names[l]) != 0) continue;
        for (int t = 0; t < NT; t++) {
            gemv(m, X + (size_t)t * m->cols, got);
            if (!same_vec(ref + (size_t)t * m->rows, got, m->rows)) {
                fprintf(stderr, "    %s gemv %s %dx%d differs from scalar\n",
                        level_names[l], what, m->rows, m->cols);
                bad++;
            }
        }
        for (int i = 0; i < 4; i++) {
            gemm(m, X, got, Ts[i]);
            if (!same_vec(ref, got, Ts[i] * m->rows)) {
                fprintf(stderr, "    %s gemm T=%d %s %dx%d differs from the gemv\n",
                        level_names[l], Ts[i], what, m->rows, m->cols);
                bad++;
            }
        }
    }
    best_level();
    free(X); free(ref); free(got);
    return bad;
}

/* ---- tests ------------------------------------------------------------- */

TEST(kernels_tables)
{
    CHECK(kern_e8m0(127) == 1.0f);
    CHECK(kern_e8m0(128) == 2.0f);
    CHECK(kern_e8m0(126) == 0.5f);
    CHECK(kern_e8m0(254) == 0x1p127f);
    CHECK(kern_e8m0(1) == 0x1p-126f);
    CHECK(kern_e8m0(0) == 0x1p-127f);            /* subnormal, not flushed */
    CHECK(isinf(kern_e8m0(255)) && kern_e8m0(255) > 0);
    static const float want[16] = { 0, .5, 1, 1.5, 2, 3, 4, 6, -0.0f, -.5, -1, -1.5, -2, -3, -4, -6 };
    for (int c = 0; c < 16; c++)
        CHECK(same(kern_e2m1[c], want[c]));
    CHECK(signbit(kern_e2m1[8]));
    CHECK(bf16_to_f32(0x3F80) == 1.0f);
    CHECK(bf16_to_f32(0xC000) == -2.0f);
    const char *lv = kern_level();
    CHECK(!strcmp(lv, "scalar") || !strcmp(lv, "avx2") || !strcmp(lv, "avx512"));
    CHECK(kern_set_level("sse9") == -1);
    best_level();
}

TEST(kernels_dense_levels_bitexact)
{
    static const int rows[] = { 1, 3, 7, 33 };
    static const int cols[] = { 1, 15, 16, 17, 33, 100, 257 };
    rng_seed(1);
    for (int enc = F32; enc <= BF16; enc++)
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 7; c++) {
                mat m = make_dense(enc, rows[r], cols[c]);
                CHECK(check_all_levels(&m, enc == F32 ? "f32" : "bf16") == 0);
                mat_free(&m);
            }
    best_level();
}

TEST(kernels_mxfp4_levels_bitexact)
{
    static const int rows[] = { 1, 3, 7, 33 };
    static const int cols[] = { 32, 96, 160, 224, 512, 1056 };
    rng_seed(2);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 6; c++) {
            /* all finite scales, subnormal 2^-127 included */
            mat m = make_mxfp4(rows[r], cols[c], 0, 254);
            CHECK(check_all_levels(&m, "mxfp4") == 0);
            mat_free(&m);
            /* realistic scales, where the sums are ordinary numbers */
            m = make_mxfp4(rows[r], cols[c], 115, 130);
            CHECK(check_all_levels(&m, "mxfp4") == 0);
            mat_free(&m);
        }
    best_level();
}

/* Each scale byte alone, each code alone: the decoded weight through a
 * one-hot x is exactly E2M1[code] * 2^(scale-127), at every level. */
TEST(kernels_mxfp4_every_code_and_scale)
{
    const int cols = 64;
    uint8_t packed[32], scale[2];
    float x[64], y;
    for (int l = 0; l < 3; l++) {
        if (kern_set_level(level_names[l]) != 0) continue;
        for (int s = 0; s < 256; s++)
            for (int code = 0; code < 16; code++)
                for (int col = 0; col < cols; col += 21) {   /* low and high nibbles, both blocks */
                    memset(packed, 0, sizeof packed);
                    packed[col / 2] = (uint8_t)(col & 1 ? code << 4 : code);
                    scale[0] = scale[1] = (uint8_t)s;
                    memset(x, 0, sizeof x);
                    x[col] = 1.0f;
                    kern_gemv_mxfp4(packed, scale, x, &y, 1, cols);
                    float want = kern_e2m1[code] * ldexpf(1.0f, s - 127);
                    if (s == 255) {
                        /* Inf scale: the zero codes give NaN (0 * Inf), the
                         * others ±Inf — and every other column's 0 * Inf is
                         * NaN too, so the row is NaN whatever the code. */
                        CHECKF(isnan(y), "level %s code %d: %a", level_names[l], code, y);
                    } else {
                        /* -0 weights sum to +0 with the other lanes' +0 */
                        CHECKF(y == want, "level %s scale %d code %d col %d: %a vs %a",
                               level_names[l], s, code, col, y, want);
                    }
                }
    }
    best_level();
}

/* Scale 255 (+Inf) in some blocks: every level agrees on which outputs are
 * NaN or infinite, and the other rows keep their exact values. */
TEST(kernels_mxfp4_inf_scale)
{
    rng_seed(3);
    mat m = make_mxfp4(9, 96, 120, 126);
    m.scale[4] = 255;                     /* row 1, block 1 */
    m.scale[3 * 3 + 2] = 255;             /* row 3, block 2 */
    CHECK(check_all_levels(&m, "mxfp4 inf scale") == 0);
    float x[96], y[9];
    for (int i = 0; i < 96; i++) x[i] = 1.0f + i;
    kern_gemv_mxfp4(m.packed, m.scale, x, y, 9, 96);
    CHECK(!isfinite(y[1]) && !isfinite(y[3]));
    CHECK(isfinite(y[0]) && isfinite(y[2]) && isfinite(y[8]));
    mat_free(&m);
}

static double dot_double(const mat *m, int r, const float *x, double *mag)
{
    double s = 0, a = 0;
    for (int c = 0; c < m->cols; c++) {
        double w;
        if (m->enc == F32) w = m->wf[(size_t)r * m->cols + c];
        else if (m->enc == BF16) w = bf16_to_f32(m->wb[(size_t)r * m->cols + c]);
        else {
            uint8_t b = m->packed[((size_t)r * m->cols + c) / 2];
            w = kern_e2m1[c & 1 ? b >> 4 : b & 15] *
                ldexp(1.0, m->scale[((size_t)r * m->cols + c) / 32] - 127);
        }
        s += w * x[c];
        a += fabs(w * x[c]);
    }
    *mag = a;
    return s;
}

/* Against a double-precision dot: |y - exact| <= n * 2^-24 * Σ|w x|
 * (a loose form of the standard bound for recursive summation). */
TEST(kernels_accuracy_vs_double)
{
    rng_seed(4);
    for (int enc = F32; enc <= MXFP4; enc++) {
        mat m = enc == MXFP4 ? make_mxfp4(17, 1024, 118, 130) : make_dense(enc, 17, 1000);
        if (enc != MXFP4)             /* ordinary magnitudes for this check */
            for (int i = 0; i < 17 * 1000; i++) {
                if (enc == F32) m.wf[i] = rng_unit();
                else m.wb[i] = f32_to_bf16_trunc(rng_unit());
            }
        float x[1024], y[17];
        for (int i = 0; i < 1024; i++) x[i] = rng_unit();
        gemv(&m, x, y);
        for (int r = 0; r < 17; r++) {
            double mag, want = dot_double(&m, r, x, &mag);
            double tol = m.cols * 0x1p-24 * mag + 1e-30;
            CHECKF(fabs(y[r] - want) <= tol, "enc %d row %d: %.9g vs %.9g", enc, r, y[r], want);
        }
        mat_free(&m);
    }
}

TEST(kernels_dot_f32)
{
    rng_seed(5);
    float a[300], b[300];
    for (int i = 0; i < 300; i++) { a[i] = adversarial(); b[i] = adversarial(); }
    static const int ns[] = { 0, 1, 15, 16, 17, 100, 300 };
    for (int i = 0; i < 7; i++) {
        REQUIRE(kern_set_level("scalar") == 0);
        float ref = kern_dot_f32(a, b, ns[i]);
        /* the dot equals the one-row gemv */
        float g;
        kern_gemv_f32(a, b, &g, 1, ns[i]);
        CHECK(ns[i] == 0 || same(ref, g));
        for (int l = 1; l < 3; l++)
            if (kern_set_level(level_names[l]) == 0)
                CHECKF(same(ref, kern_dot_f32(a, b, ns[i])), "%s n=%d", level_names[l], ns[i]);
    }
    best_level();
}

/* The element-wise kernels (axpy, the KDA step) give the scalar bits at
 * every level, for head widths that fill whole registers and ones that
 * leave a tail. */
TEST(kernels_elementwise_levels_bitexact)
{
    static const int hds[] = { 1, 7, 16, 24, 128 };
    for (int i = 0; i < 5; i++) {
        const int hd = hds[i];
        float x[128], y0[128], alpha[128], k[128], q[128], v[128];
        float S0[128 * 128], ref_S[128 * 128], ref_o[128], ref_y[128], u[128];
        rng_seed(40 + (uint64_t)hd);
        for (int j = 0; j < hd; j++) {
            x[j] = adversarial(); y0[j] = adversarial();
            alpha[j] = 0.5f + 0.5f * fabsf(rng_unit()); k[j] = rng_unit(); q[j] = rng_unit(); v[j] = rng_unit();
        }
        for (int j = 0; j < hd * hd; j++) S0[j] = rng_unit();
        REQUIRE(kern_set_level("scalar") == 0);
        memcpy(ref_y, y0, sizeof ref_y);
        kern_axpy_f32(0.37f, x, ref_y, hd);
        memcpy(ref_S, S0, (size_t)hd * hd * sizeof *S0);
        kern_kda_step(ref_S, alpha, k, q, v, 0.8f, ref_o, u, hd);
        for (int l = 1; l < 3; l++) {
            if (kern_set_level(level_names[l]) != 0) continue;
            float yy[128], SS[128 * 128], oo[128];
            memcpy(yy, y0, sizeof yy);
            kern_axpy_f32(0.37f, x, yy, hd);
            CHECKF(same_vec(ref_y, yy, hd), "axpy %s hd=%d", level_names[l], hd);
            memcpy(SS, S0, (size_t)hd * hd * sizeof *S0);
            kern_kda_step(SS, alpha, k, q, v, 0.8f, oo, u, hd);
            CHECKF(same_vec(ref_o, oo, hd) && same_vec(ref_S, SS, hd * hd), "kda_step %s hd=%d", level_names[l], hd);
        }
    }
    best_level();
}

/* Products past one task's tile (128 rows x 128 inputs), with and without
 * a column tail: the gemm still equals the gemv of each input row. */
TEST(kernels_gemm_many_tiles_equals_gemv)
{
    const int T = 133;
    mat ms[3] = { make_dense(BF16, 300, 544), make_dense(BF16, 300, 550), make_mxfp4(300, 544, 115, 130) };
    for (int i = 0; i < 3; i++) {
        const mat *m = &ms[i];
        float *X = malloc((size_t)T * m->cols * sizeof *X);
        float *a = malloc((size_t)T * m->rows * sizeof *a), *b = malloc((size_t)T * m->rows * sizeof *b);
        for (size_t j = 0; j < (size_t)T * m->cols; j++) X[j] = adversarial();
        for (int t = 0; t < T; t++) gemv(m, X + (size_t)t * m->cols, a + (size_t)t * m->rows);
        gemm(m, X, b, T);
        CHECKF(same_vec(a, b, T * m->rows), "gemm %dx%d T=%d", m->rows, m->cols, T);
        free(X); free(a); free(b);
        mat_free(&ms[i]);
    }
}

/* The gemm of m over TM adversarial inputs, at each of the nT input counts
 * and on every level, against the scalar gemv row by row (outputs
 * pre-filled with NaN, so a row the gemm skips fails too). */
static void check_gemm_levels(const mat *m, int enc, const int *Ts, int nT, int TM)
{
    const int rows = m->rows, cols = m->cols;
    float *X = malloc((size_t)TM * cols * sizeof *X);
    float *ref = malloc((size_t)TM * rows * sizeof *ref), *got = malloc((size_t)TM * rows * sizeof *got);
    for (size_t i = 0; i < (size_t)TM * cols; i++) X[i] = adversarial();
    REQUIRE(kern_set_level("scalar") == 0);
    for (int t = 0; t < TM; t++) gemv(m, X + (size_t)t * cols, ref + (size_t)t * rows);
    for (int l = 0; l < 3; l++) {
        if (kern_set_level(level_names[l]) != 0) continue;
        for (int ti = 0; ti < nT; ti++) {
            for (int i = 0; i < TM * rows; i++) got[i] = NAN;
            gemm(m, X, got, Ts[ti]);
            CHECKF(same_vec(ref, got, Ts[ti] * rows), "%s gemm enc %d %dx%d T=%d", level_names[l], enc, rows, cols,
                   Ts[ti]);
        }
    }
    free(X); free(ref); free(got);
}

/* The gemm blocking's edges on every level, against the scalar gemv:
 * input counts that fill no micro-kernel tile (avx512 4x6, avx2 2x3,
 * scalar 4x4), one, and not a whole number of them, and more than one input
 * block (192); row counts short of a tile and past a work item (64) with a
 * remainder; columns in one group, past a column block (512) and with a
 * tail of fewer than 16 (none for MXFP4), and fewer than one group. */
TEST(kernels_gemm_tiles_and_tails_levels_bitexact)
{
    static const int Ts[] = { 2, 5, 6, 7, 13, 200 };
    /* The largest shape crosses every blocking boundary: rows past
     * GEMM_MC (64) with a tail, columns past two GEMM_KC (512) with a
     * tail, T = 200 past GEMM_NT (192), and more than PAR_MIN_WEIGHTS
     * (65536) weights, so it runs in the pool. Under ASan 66 rows keep all
     * of that (a full row block and a tail of 2) at half the work: this
     * test was the slowest of the ASan run (56 s of 445 on a loaded
     * machine). */
    const int big = T_ASAN ? 66 : 130;
    const struct { int rows, cols; } dense[] = { { 3, 8 }, { 5, 16 }, { 7, 550 }, { 67, 544 }, { big, 1040 } };
    const struct { int rows, cols; } mx[] = { { 5, 32 }, { 67, 544 }, { big, 1056 } };
    rng_seed(91);
    for (int e = 0; e < 3; e++) {
        const int n = e == MXFP4 ? 3 : 5;
        for (int si = 0; si < n; si++) {
            const int rows = e == MXFP4 ? mx[si].rows : dense[si].rows;
            const int cols = e == MXFP4 ? mx[si].cols : dense[si].cols;
            mat m = e == MXFP4 ? make_mxfp4(rows, cols, 110, 135) : make_dense(e, rows, cols);
            check_gemm_levels(&m, e, Ts, 6, 200);
            mat_free(&m);
        }
    }
    best_level();
}

/* Every input count from 1 to 17 (every tail of the micro-kernels' input
 * tiles: avx512 6, avx2 3, scalar 4, and one past 16) and a few about three
 * tiles' worth, on every level and every encoding, against the scalar gemv:
 * rows short of and past a tile with a remainder (9: not a multiple of 2 or
 * 4), columns past one column block (512) that fill no whole block, with a
 * tail of fewer than 16 for the dense encodings (530) and none for MXFP4
 * (576, blocks of 32), and fewer than one group (7). */
TEST(kernels_gemm_every_small_T_levels_bitexact)
{
    static const int Ts[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 23, 24, 25 };
    const int nT = (int)(sizeof Ts / sizeof Ts[0]), TM = 25;
    const struct { int enc, rows, cols; } shapes[] = {
        { F32, 9, 530 }, { BF16, 9, 530 }, { MXFP4, 9, 576 }, { BF16, 5, 7 }, { F32, 3, 16 },
    };
    rng_seed(1234);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int rows = shapes[si].rows, cols = shapes[si].cols, enc = shapes[si].enc;
        mat m = enc == MXFP4 ? make_mxfp4(rows, cols, 112, 134) : make_dense(enc, rows, cols);
        check_gemm_levels(&m, enc, Ts, nT, TM);
        mat_free(&m);
    }
    best_level();
}

/* A product whose packed inputs pass the kernels' 16 MB in one go runs in
 * input ranges (kernels.c: XG_FLOATS): the same bits as the gemv. */
TEST(kernels_gemm_input_ranges_equal_gemv)
{
    const int rows = 5, cols = 2048, T = 2100;
    rng_seed(17);
    mat m = make_dense(BF16, rows, cols);
    float *X = malloc((size_t)T * cols * sizeof *X);
    float *ref = malloc((size_t)T * rows * sizeof *ref), *got = malloc((size_t)T * rows * sizeof *got);
    for (size_t i = 0; i < (size_t)T * cols; i++) X[i] = adversarial();
    for (int t = 0; t < T; t++) gemv(&m, X + (size_t)t * cols, ref + (size_t)t * rows);
    gemm(&m, X, got, T);
    CHECKF(same_vec(ref, got, T * rows), "gemm bf16 %dx%d T=%d", rows, cols, T);
    free(X); free(ref); free(got);
    mat_free(&m);
}

/* A column range of a wider matrix (the MLA cache's two parts): each output
 * is the dot product of that part of the row, for one input row and many. */
TEST(kernels_gemm_column_range_equals_dots)
{
    static const int cols[] = { 64, 512, 100 }, Ts[] = { 1, 6, 133 };
    rng_seed(78);
    for (int ci = 0; ci < 3; ci++)
        for (int ti = 0; ti < 3; ti++) {
            const int rows = 150, C = cols[ci], T = Ts[ti];
            const size_t ldw = (size_t)C + 64;
            float *W = malloc(rows * ldw * sizeof *W), *X = malloc((size_t)T * C * sizeof *X);
            float *Y = malloc((size_t)T * rows * sizeof *Y), *ref = malloc((size_t)T * rows * sizeof *ref);
            for (size_t i = 0; i < rows * ldw; i++) W[i] = adversarial();
            for (size_t i = 0; i < (size_t)T * C; i++) X[i] = adversarial();
            for (int t = 0; t < T; t++)
                for (int r = 0; r < rows; r++) ref[t * rows + r] = kern_dot_f32(W + r * ldw + 32, X + (size_t)t * C, C);
            kern_gemm_f32_ld(W + 32, ldw, X, Y, T, rows, C);
            CHECKF(same_vec(ref, Y, T * rows), "gemm_f32_ld cols=%d T=%d", C, T);
            free(W); free(X); free(Y); free(ref);
        }
}

/* kern_matmul_f32 against the axpy chains it stands for, on every level:
 * row counts that do and do not fill groups of 4, column counts past and
 * short of the 64-wide tiles, ragged (causal) k limits across k blocks. */
TEST(kernels_matmul_equals_axpy_chains)
{
    static const int Ms[] = { 1, 4, 7 }, Ns[] = { 16, 64, 100, 512 }, Ks[] = { 1, 5, 130, 300 };
    rng_seed(77);
    for (int mi = 0; mi < 3; mi++)
        for (int ni = 0; ni < 4; ni++)
            for (int ki = 0; ki < 4; ki++) {
                const int M = Ms[mi], N = Ns[ni], K = Ks[ki], lda = K + 3, ldb = N + 5, ldc = N + 1;
                float *A = malloc((size_t)M * lda * sizeof *A), *B = malloc((size_t)K * ldb * sizeof *B);
                float *ref = calloc((size_t)M * ldc, sizeof *ref), *got = malloc((size_t)M * ldc * sizeof *got);
                int klen[8];
                for (size_t i = 0; i < (size_t)M * lda; i++) A[i] = adversarial();
                for (size_t i = 0; i < (size_t)K * ldb; i++) B[i] = adversarial();
                for (int m = 0; m < M; m++) klen[m] = K - (M - 1 - m) > 0 ? K - (M - 1 - m) : 0;
                REQUIRE(kern_set_level("scalar") == 0);
                for (int m = 0; m < M; m++)
                    for (int k = 0; k < klen[m]; k++) kern_axpy_f32(A[m * lda + k], B + (size_t)k * ldb, ref + m * ldc, N);
                for (int l = 0; l < 3; l++) {
                    if (kern_set_level(level_names[l]) != 0) continue;
                    memset(got, 0, (size_t)M * ldc * sizeof *got);
                    kern_matmul_f32(A, lda, B, ldb, got, ldc, M, N, klen);
                    CHECKF(same_vec(ref, got, M * ldc), "matmul %s M=%d N=%d K=%d", level_names[l], M, N, K);
                }
                free(A); free(B); free(ref); free(got);
            }
    best_level();
}

/* ---- the fixture's dequantised samples --------------------------------- */

/* The bytes of one tensor of a safetensors shard held in memory. */
static const uint8_t *st_tensor(const char *shard, size_t len, const char *name,
                                int64_t shape[2])
{
    if (len < 8) return NULL;
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | (uint8_t)shard[i];
    if (hlen > len - 8) return NULL;
    json_error_t je;
    json_t *h = json_loadb(shard + 8, (size_t)hlen, 0, &je);
    json_t *t = h ? json_object_get(h, name) : NULL;
    json_t *off = t ? json_object_get(t, "data_offsets") : NULL;
    json_t *shp = t ? json_object_get(t, "shape") : NULL;
    const uint8_t *p = NULL;
    if (off && shp && json_array_size(shp) == 2 &&
        !strcmp(json_string_value(json_object_get(t, "dtype")), "U8")) {
        shape[0] = json_integer_value(json_array_get(shp, 0));
        shape[1] = json_integer_value(json_array_get(shp, 1));
        size_t b = (size_t)json_integer_value(json_array_get(off, 0));
        if (8 + hlen + b + (size_t)(shape[0] * shape[1]) <= len)
            p = (const uint8_t *)shard + 8 + hlen + b;
    }
    json_decref(h);
    return p;
}

TEST(kernels_mxfp4_fixture_samples)
{
    const char *sp = fixture_path("k3-tiny/goldens/mxfp4_samples.json");
    const char *ip = fixture_path("k3-tiny/model.safetensors.index.json");
    REQUIRE(sp && ip);
    json_error_t je;
    json_t *samples = json_load_file(sp, 0, &je), *index = json_load_file(ip, 0, &je);
    REQUIRE(samples && index);
    json_t *list = json_object_get(samples, "samples"), *map = json_object_get(index, "weight_map");
    CHECK(json_array_size(list) > 0);
    size_t i;
    json_t *s;
    json_array_foreach(list, i, s) {
        const char *name = json_string_value(json_object_get(s, "tensor"));
        int row = (int)json_integer_value(json_object_get(s, "row"));
        int col = (int)json_integer_value(json_object_get(s, "col"));
        int byte = (int)json_integer_value(json_object_get(s, "byte"));
        int sbyte = (int)json_integer_value(json_object_get(s, "scale_byte"));
        double value = json_number_value(json_object_get(s, "value"));
        char sname[512];
        const char *suf = strstr(name, "weight_packed");
        REQUIRE(suf && (size_t)(suf - name) + 16 < sizeof sname);
        snprintf(sname, sizeof sname, "%.*sweight_scale", (int)(suf - name), name);
        const char *file = json_string_value(json_object_get(map, name));
        REQUIRE(file);
        char rel[512];
        snprintf(rel, sizeof rel, "k3-tiny/%s", file);
        size_t len;
        char *shard = t_read_file(fixture_path(rel), &len);
        REQUIRE(shard);
        int64_t ps[2], ss[2];
        const uint8_t *packed = st_tensor(shard, len, name, ps);
        const uint8_t *scale = st_tensor(shard, len, sname, ss);
        CHECK(packed && scale);
        if (packed && scale) {
            int cols = (int)ps[1] * 2;
            CHECK(ss[0] == ps[0] && ss[1] * 32 == cols);
            CHECK(packed[(size_t)row * ps[1] + col / 2] == byte);
            CHECK(scale[(size_t)row * ss[1] + col / 32] == sbyte);
            float *x = calloc((size_t)cols, sizeof *x), *y = calloc((size_t)ps[0], sizeof *y);
            x[col] = 1.0f;
            for (int l = 0; l < 3; l++) {
                if (kern_set_level(level_names[l]) != 0) continue;
                kern_gemv_mxfp4(packed, scale, x, y, (int)ps[0], cols);
                CHECKF(y[row] == (float)value, "%s %s [%d,%d]: %g vs %g", level_names[l],
                       name, row, col, y[row], value);
            }
            free(x); free(y);
        }
        free(shard);
    }
    json_decref(samples);
    json_decref(index);
    best_level();
}

/* ---- threads ------------------------------------------------------------ */

/* Products large enough to be split across the pool give the same bits with
 * one thread and with two, at every level. */
TEST(kernels_threads_do_not_change_results)
{
    rng_seed(6);
    const int rows = 301, cols = 1024, T = 3;
    mat ms[3] = { make_dense(F32, rows, cols), make_dense(BF16, rows, cols),
                  make_mxfp4(rows, cols, 100, 140) };
    float *X = malloc((size_t)T * cols * sizeof *X);
    float *a = malloc((size_t)T * rows * sizeof *a), *b = malloc((size_t)T * rows * sizeof *b);
    for (int i = 0; i < T * cols; i++) X[i] = adversarial();
    for (int l = 0; l < 3; l++) {
        if (kern_set_level(level_names[l]) != 0) continue;
        for (int e = 0; e < 3; e++) {
            pool_set_threads(1);
            gemv(&ms[e], X, a);
            gemm(&ms[e], X, a + rows, T - 1);
            pool_set_threads(2);
            gemv(&ms[e], X, b);
            gemm(&ms[e], X, b + rows, T - 1);
            CHECKF(same_vec(a, b, T * rows), "%s encoding %d", level_names[l], e);
        }
    }
    pool_free();
    for (int e = 0; e < 3; e++) mat_free(&ms[e]);
    free(X); free(a); free(b);
    best_level();
}
