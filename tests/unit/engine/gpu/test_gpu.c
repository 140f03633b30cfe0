/* test_gpu.c — the CUDA backend (engine/gpu/): every product it computes
 * must have the CPU kernels' bits.
 *
 * On a machine with a GPU and a CUDA build (tests/gpu/run.sh) each case
 * computes one product on the device and on the CPU, for every weight
 * encoding, on shapes with column tails (not a multiple of 16 or of the
 * device's 128-column blocks), row counts that do not fill a tile, and
 * pass sizes on both sides of the device's gemv/gemm switch (8 tokens),
 * with values chosen to expose any change of order (huge, tiny, subnormal
 * magnitudes, signed zeros, every MXFP4 code, scale bytes 0..254). Weights
 * are taken both ways the backend holds them: placed in VRAM (and a row
 * range found inside a placed matrix), staged by the product and staged
 * ahead on the copy stream (gpu_stage). Built
 * without CUDA, or on a machine without a GPU, the test says so and
 * passes: the CPU path is what the other tests check there.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "tests/unit/test.h"
#include "kernels/kernels.h"
#include "gpu/gpu.h"
#include "model/layers.h"
#include "kernels/softmax.h"

static uint64_t rs;
static uint32_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs >> 11);
}
static float unit(void) { return (float)((rnd() & 0xFFFFFF) / 16777216.0 * 2.0 - 1.0); }
static float adversarial(void)
{
    const float u = unit();
    switch (rnd() % 16) {
    case 0: return u * 1e30f;
    case 1: return u * 1e-30f;
    case 2: return u * 1e-40f;
    case 3: return (rnd() & 1) ? 0.0f : -0.0f;
    case 4: return u * 65536.0f;
    default: return u;
    }
}

static int same(float a, float b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Opens the device with every product sent there; 0 when there is none. */
static int device(void)
{
    setenv("REMORA_GPU_MIN_WORK", "1", 1);
    setenv("REMORA_GPU_MIN_TOKENS", "1", 1);
    gpu_open(GPU_AUTO, 0, 0);
    gpu_status st;
    gpu_status_get(&st);
    if (!st.active) fprintf(stderr, "    skipped: %s\n", st.why);
    return st.active;
}

typedef struct {
    gpu_wkind kind;
    int rows, cols;
    float *wf;
    uint16_t *wb;
    uint8_t *packed, *scale;
} mat;

static mat make(gpu_wkind kind, int rows, int cols)
{
    mat m = { kind, rows, cols, NULL, NULL, NULL, NULL };
    const size_t n = (size_t)rows * cols;
    if (kind == GPU_W_F32) {
        m.wf = malloc(n * sizeof *m.wf);
        for (size_t i = 0; i < n; i++) m.wf[i] = adversarial();
    } else if (kind == GPU_W_BF16) {
        m.wb = malloc(n * sizeof *m.wb);
        for (size_t i = 0; i < n; i++) {
            const float f = adversarial();
            uint32_t u;
            memcpy(&u, &f, 4);
            m.wb[i] = (uint16_t)(u >> 16);
        }
    } else {
        m.packed = malloc(n / 2);
        m.scale = malloc(n / 32);
        for (size_t i = 0; i < n / 2; i++) m.packed[i] = (uint8_t)rnd();
        for (size_t i = 0; i < n / 32; i++) m.scale[i] = (uint8_t)(rnd() % 255);     /* no 255: Inf * 0 NaNs */
    }
    return m;
}

static void cpu(const mat *m, const float *X, float *Y, int T, int r0, int rows)
{
    if (m->kind == GPU_W_F32) kern_gemm_f32(m->wf + (size_t)r0 * m->cols, X, Y, T, rows, m->cols);
    else if (m->kind == GPU_W_BF16) kern_gemm_bf16(m->wb + (size_t)r0 * m->cols, X, Y, T, rows, m->cols);
    else
        kern_gemm_mxfp4(m->packed + (size_t)r0 * m->cols / 2, m->scale + (size_t)r0 * m->cols / 32, X, Y, T, rows,
                        m->cols);
}

/* The view of rows [r0, r0+rows) as the backend sees it, named by `shard`. */
static gpu_mat view(const mat *m, int shard, int r0, int rows, int spine)
{
    const size_t rb = m->kind == GPU_W_F32 ? 4u * m->cols : m->kind == GPU_W_BF16 ? 2u * m->cols : m->cols / 2u;
    const void *w = m->kind == GPU_W_F32 ? (const void *)(m->wf + (size_t)r0 * m->cols)
                  : m->kind == GPU_W_BF16 ? (const void *)(m->wb + (size_t)r0 * m->cols)
                                          : (const void *)(m->packed + (size_t)r0 * m->cols / 2);
    return (gpu_mat){ m->kind, w, m->scale ? m->scale + (size_t)r0 * m->cols / 32 : NULL, rows, m->cols, &rs, shard,
                      (uint64_t)r0 * rb, spine };
}

/* One product both ways; returns the number of differing outputs. */
static int compare(const mat *m, int shard, int r0, int rows, int spine, int T, int ahead)
{
    float *X = malloc((size_t)T * m->cols * sizeof *X);
    float *a = malloc((size_t)T * rows * sizeof *a), *b = malloc((size_t)T * rows * sizeof *b);
    for (size_t i = 0; i < (size_t)T * m->cols; i++) X[i] = adversarial();
    for (size_t i = 0; i < (size_t)T * rows; i++) { a[i] = 1234.5f; b[i] = -777.0f; }   /* poison */
    cpu(m, X, a, T, r0, rows);
    const gpu_mat g = view(m, shard, r0, rows, spine);
    if (ahead) gpu_stage(&g, T);        /* copied in on the copy stream before the product */
    int bad = gpu_gemm(&g, X, b, T) ? -1 : 0;
    if (ahead) gpu_unstage();
    for (size_t i = 0; !bad && i < (size_t)T * rows; i++)
        if (!same(a[i], b[i])) {
            fprintf(stderr, "    kind %d %dx%d T=%d spine=%d: output %zu: cpu %a gpu %a\n", m->kind, rows, m->cols,
                    T, spine, i, a[i], b[i]);
            bad = 1;
        }
    free(X); free(a); free(b);
    return bad;
}

TEST(gpu_products_equal_cpu_kernels)
{
    if (!device()) return;
    setenv("REMORA_GPU_EXPERTS", "0", 1);      /* the streamed paths: no expert placed for good */
    static const struct { gpu_wkind kind; int rows, cols; } shapes[] = {
        { GPU_W_F32, 1, 16 },    { GPU_W_F32, 5, 37 },     { GPU_W_F32, 33, 300 },   { GPU_W_F32, 70, 512 },
        { GPU_W_BF16, 3, 7 },    { GPU_W_BF16, 17, 129 },  { GPU_W_BF16, 64, 1000 }, { GPU_W_BF16, 300, 7168 },
        { GPU_W_MXFP4, 2, 32 },  { GPU_W_MXFP4, 31, 160 }, { GPU_W_MXFP4, 96, 3584 }, { GPU_W_MXFP4, 129, 3072 },
        { GPU_W_MXFP4, 24, 672 },   /* 6 blocks: a group of 4 (one 16-byte load) and a half-empty one */
    };
    /* both sides of the gemv/gemm switch (8) and of the 16/32-token tiles (48) */
    static const int Ts[] = { 1, 2, 7, 8, 9, 17, 31, 33, 47, 48, 49, 100, 257 };
    rs = 0x1234567;
    int shard = 1 << 20, cases = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        mat m = make(shapes[s].kind, shapes[s].rows, shapes[s].cols);
        for (size_t t = 0; t < sizeof Ts / sizeof Ts[0]; t++) {
            CHECK(compare(&m, shard, 0, m.rows, 0, Ts[t], 0) == 0);      /* staged by the product */
            CHECK(compare(&m, shard, 0, m.rows, 0, Ts[t], 1) == 0);      /* staged ahead (gpu_stage) */
            CHECK(compare(&m, shard + 1, 0, m.rows, 1, Ts[t], 0) == 0);  /* placed at the first T, found after */
            cases += 3;
            if (m.rows > 2) {                                            /* rows inside the placed matrix */
                CHECK(compare(&m, shard + 1, 1, m.rows - 2, 1, Ts[t], 0) == 0);
                cases++;
            }
            if (m.kind == GPU_W_MXFP4 && Ts[t] <= 8) {  /* k_gemv's row pairs, by default only on tall matrices */
                setenv("REMORA_GPU_PAIR_ROWS", "1", 1);
                CHECK(compare(&m, shard, 0, m.rows, 0, Ts[t], 0) == 0);
                if (m.rows > 2) CHECK(compare(&m, shard + 1, 1, m.rows - 2, 1, Ts[t], 0) == 0);
                unsetenv("REMORA_GPU_PAIR_ROWS");
                cases += 1 + (m.rows > 2);
            }
        }
        shard += 2;
        free(m.wf); free(m.wb); free(m.packed); free(m.scale);
    }
    gpu_status st;
    gpu_status_get(&st);
    fprintf(stderr, "    %d products on %s: all equal to the CPU's bits (%d matrices in VRAM)\n", cases, st.name,
            st.units_resident);
    gpu_forget(&rs);
    gpu_status_get(&st);
    CHECK(st.units_resident == 0);
    unsetenv("REMORA_GPU_EXPERTS");
}

/* One routed expert on the CPU as moe.c's expert_block computes it. */
static void cpu_expert(const rm_config *c, const mat *gate, const mat *up, const mat *down, const float *X, float *Y,
                       int T)
{
    const int I = gate->rows;
    float *g = malloc((size_t)T * I * sizeof *g), *u = malloc((size_t)T * I * sizeof *u);
    cpu(gate, X, g, T, 0, I);
    cpu(up, X, u, T, 0, I);
    norm_glu(c, g, u, T * I);
    cpu(down, g, Y, T, 0, down->rows);
    free(g);
    free(u);
}

/* gpu_expert (the four products and the GLU on the device, two in flight)
 * against the CPU's expert, bit for bit: both GLUs (SiLU; SiTU with and
 * without its linear part), MXFP4 and BF16 experts with an inner size that
 * is not a whole number of the device's blocks, pass sizes across the
 * gemv/gemm and tile switches; a third launch while two are in flight is
 * declined. */
TEST(gpu_experts_equal_cpu_experts)
{
    if (!device()) return;
    static const struct { gpu_wkind kind; int D, I; } shapes[] = {
        { GPU_W_MXFP4, 160, 96 }, { GPU_W_MXFP4, 512, 224 }, { GPU_W_BF16, 200, 72 },
    };
    static const struct { cfg_act act; double beta, lin; } glus[] = {
        { ACT_SILU, 0, 0 }, { ACT_SITU, 2.5, 0 }, { ACT_SITU, 2.0, 8.0 },
    };
    static const int Ts[] = { 1, 7, 9, 33, 49, 130, 256 };
    int cases = 0, placed_cases = 0;
    /* first staged per use, then placed in VRAM for good at their first pass */
    for (int placing = 0; placing < 2; placing++) {
    setenv("REMORA_GPU_EXPERTS", placing ? "1" : "0", 1);
    rs = 0x51ab1e;
    int shard = 1 << 22;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int D = shapes[s].D, I = shapes[s].I;
        mat gate = make(shapes[s].kind, I, D), up = make(shapes[s].kind, I, D), down = make(shapes[s].kind, D, I);
        const gpu_mat gg = view(&gate, shard, 0, I, 0), gu = view(&up, shard + 1, 0, I, 0),
                      gd = view(&down, shard + 2, 0, D, 0);
        shard += 3;
        for (size_t a = 0; a < sizeof glus / sizeof glus[0]; a++) {
            rm_config c = { 0 };
            c.act = glus[a].act;
            c.situ_beta = glus[a].beta;
            c.situ_linear_beta = glus[a].lin;
            for (size_t t = 0; t < sizeof Ts / sizeof Ts[0]; t++) {
                const int T = Ts[t];
                float *X = malloc((size_t)T * D * sizeof *X);
                float *want = malloc((size_t)T * D * sizeof *want), *got = malloc((size_t)T * D * sizeof *got);
                float *got2 = malloc((size_t)T * D * sizeof *got2);
                /* moderate inputs: the GLU's tanh and exp see their whole range */
                for (size_t i = 0; i < (size_t)T * D; i++) X[i] = unit() * (float)(1 << (rnd() % 6));
                cpu_expert(&c, &gate, &up, &down, X, want, T);
                const int situ = c.act != ACT_SILU;
                const float b = (float)c.situ_beta, bl = (float)c.situ_linear_beta;
                /* two in flight, the second staged ahead; a third declined */
                CHECK(gpu_expert(&gg, &gu, &gd, situ, b, bl, X, T) == 0);
                gpu_stage(&gg, T);
                CHECK(gpu_expert(&gg, &gu, &gd, situ, b, bl, X, T) == 0);
                CHECK(gpu_expert(&gg, &gu, &gd, situ, b, bl, X, T) == 1);
                for (size_t i = 0; i < (size_t)T * D; i++) got[i] = got2[i] = 1234.5f;
                CHECK(gpu_expert_collect(got) == 0);
                CHECK(gpu_expert_collect(got2) == 0);
                CHECK(gpu_expert_collect(got2) == -1);      /* nothing left */
                int bad = 0;
                for (size_t i = 0; i < (size_t)T * D && bad < 3; i++)
                    if (!same(want[i], got[i]) || !same(want[i], got2[i])) {
                        fprintf(stderr, "    expert kind %d %dx%d act %d T=%d: output %zu: cpu %a gpu %a %a\n",
                                shapes[s].kind, I, D, (int)c.act, T, i, want[i], got[i], got2[i]);
                        bad++;
                    }
                CHECK(bad == 0);
                cases++;
                if (placing) {      /* a placed expert's matrix through gpu_gemm too */
                    float *gw = malloc((size_t)T * I * sizeof *gw), *gg_ = malloc((size_t)T * I * sizeof *gg_);
                    cpu(&gate, X, gw, T, 0, I);
                    CHECK(gpu_gemm(&gg, X, gg_, T) == 0);
                    for (size_t i = 0; i < (size_t)T * I; i++) bad += !same(gw[i], gg_[i]);
                    CHECK(bad == 0);
                    free(gw); free(gg_);
                    placed_cases++;
                }
                if (a == 0) {   /* as the dense layer's MLP and the shared experts: placed in VRAM, any T */
                    const gpu_mat sg_ = view(&gate, shard + 100, 0, I, 1), su = view(&up, shard + 101, 0, I, 1),
                                  sd = view(&down, shard + 102, 0, D, 1);
                    CHECK(gpu_expert(&sg_, &su, &sd, situ, b, bl, X, T) == 0);
                    CHECK(gpu_expert_collect(got) == 0);
                    for (size_t i = 0; i < (size_t)T * D; i++) bad += !same(want[i], got[i]);
                    CHECK(bad == 0);
                    cases++;
                }
                free(X); free(want); free(got); free(got2);
            }
        }
        gpu_unstage();
        free(gate.wf); free(gate.wb); free(gate.packed); free(gate.scale);
        free(up.wf); free(up.wb); free(up.packed); free(up.scale);
        free(down.wf); free(down.wb); free(down.packed); free(down.scale);
    }
    gpu_status st;
    gpu_status_get(&st);
    if (placing) CHECK(st.units_resident >= 9);     /* the three shapes' experts, placed */
    gpu_forget(&rs);
    }
    unsetenv("REMORA_GPU_EXPERTS");
    fprintf(stderr, "    %d experts on the device (%d placed in VRAM, their gate also through gpu_gemm): all equal to the CPU's bits\n",
            cases, placed_cases);
}

/* One pass of gpu_mla_core over latent[n_ctx = pos0 + T][kvl + rope]
 * against the CPU's steps as model/mla.c takes them, bit for bit:
 * kern_gemm_f32_ld over the latent rows, kern_attn_softmax,
 * kern_matmul_f32. 1 when equal. */
static int mla_pass(uint64_t key, int valid, const float *latent, int kvl, int rope, int nh, int pos0, int T)
{
    const int lat = kvl + rope, n_ctx = pos0 + T;
    const float scale = 1.0f / sqrtf((float)(128 + rope));
    float *qa = malloc((size_t)nh * T * kvl * sizeof *qa), *qr = malloc((size_t)nh * T * rope * sizeof *qr);
    float *want = calloc((size_t)nh * T * kvl, sizeof *want), *got = malloc((size_t)nh * T * kvl * sizeof *got);
    float *s1 = malloc((size_t)T * n_ctx * sizeof *s1), *s2 = malloc((size_t)T * n_ctx * sizeof *s2);
    int *klen = malloc((size_t)T * sizeof *klen);
    for (size_t i = 0; i < (size_t)nh * T * kvl; i++) qa[i] = unit() * 4.0f;
    for (size_t i = 0; i < (size_t)nh * T * rope; i++) qr[i] = unit() * 4.0f;
    for (int h = 0; h < nh; h++) {
        kern_gemm_f32_ld(latent, (size_t)lat, qa + (size_t)h * T * kvl, s1, T, n_ctx, kvl);
        kern_gemm_f32_ld(latent + kvl, (size_t)lat, qr + (size_t)h * T * rope, s2, T, n_ctx, rope);
        for (int t = 0; t < T; t++) {
            klen[t] = pos0 + t + 1;
            kern_attn_softmax(s1 + (size_t)t * n_ctx, s2 + (size_t)t * n_ctx, klen[t], scale);
        }
        kern_matmul_f32(s1, (size_t)n_ctx, latent, (size_t)lat, want + (size_t)h * T * kvl, (size_t)kvl, T, kvl, klen);
    }
    for (size_t i = 0; i < (size_t)nh * T * kvl; i++) got[i] = 1234.5f;
    int bad = gpu_mla_core(key, valid, latent, lat, kvl, rope, n_ctx, pos0, T, nh, qa, qr, scale, got) != 0;
    if (bad) fprintf(stderr, "    mla kvl %d rope %d pos0 %d T %d: declined\n", kvl, rope, pos0, T);
    for (size_t i = 0; i < (size_t)nh * T * kvl && !bad; i++)
        if (!same(want[i], got[i])) {
            fprintf(stderr, "    mla kvl %d rope %d pos0 %d T %d (key %llu, valid %d): output %zu: cpu %a gpu %a\n", kvl,
                    rope, pos0, T, (unsigned long long)key, valid, i, want[i], got[i]);
            bad = 1;
        }
    free(qa); free(qr); free(want); free(got); free(s1); free(s2); free(klen);
    return !bad;
}

/* gpu_mla_core against the CPU: passes that start at 0 and later in the
 * context, latent widths that are not whole device blocks; then a cache
 * kept on the device as model/mla.c keeps it: a prompt, decoded tokens
 * (one new row each), a rewind whose rows are written again, a restore
 * that rewrites every row (valid 0), a cache that grows past its copy's
 * rows, two caches taking turns. */
TEST(gpu_mla_core_equals_cpu_attention)
{
    if (!device()) return;
    static const struct { int kvl, rope, nh, pos0, T; } cases[] = {
        { 32, 16, 3, 0, 9 }, { 512, 64, 5, 0, 40 }, { 96, 24, 4, 37, 20 }, { 160, 8, 2, 200, 129 },
    };
    rs = 0xa77e;
    int n_ok = 0, n = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int lat = cases[k].kvl + cases[k].rope, n_ctx = cases[k].pos0 + cases[k].T;
        float *latent = malloc((size_t)n_ctx * lat * sizeof *latent);
        for (size_t i = 0; i < (size_t)n_ctx * lat; i++) latent[i] = unit();
        n_ok += mla_pass(900 + k, 0, latent, cases[k].kvl, cases[k].rope, cases[k].nh, cases[k].pos0, cases[k].T);
        n++;
        gpu_mla_drop(900 + k);
        free(latent);
    }
    const int kvl = 96, rope = 24, lat = kvl + rope, cap = 700;
    float *a = malloc((size_t)cap * lat * sizeof *a), *b = malloc((size_t)cap * lat * sizeof *b);
    for (size_t i = 0; i < (size_t)cap * lat; i++) { a[i] = unit(); b[i] = unit(); }
    const uint64_t ka = 71, kb = 72;
    int va = 0, vb = 0;         /* as mla_state's gpu_rows */
#define STEP(K, V, L, P0, T)                                                                                          \
    do {                                                                                                              \
        if ((V) > (P0)) (V) = (P0);                                                                                   \
        n_ok += mla_pass(K, V, L, kvl, rope, 3, P0, T);                                                               \
        n++;                                                                                                          \
        (V) = (P0) + (T);                                                                                             \
    } while (0)
    STEP(ka, va, a, 0, 40);                                     /* a prompt */
    for (int p = 40; p < 44; p++) STEP(ka, va, a, p, 1);        /* decoded tokens */
    STEP(kb, vb, b, 0, 17);                                     /* another cache between them */
    for (size_t i = 30 * (size_t)lat; i < 33 * (size_t)lat; i++) a[i] = unit();
    STEP(ka, va, a, 30, 3);                                     /* a rewind: rows 30.. written again */
    STEP(ka, va, a, 33, 1);
    STEP(kb, vb, b, 17, 1);
    for (size_t i = 0; i < 34 * (size_t)lat; i++) a[i] = unit();
    va = 0;                                                     /* a restore: every row */
    STEP(ka, va, a, 34, 1);
    STEP(ka, va, a, 35, 600);                                   /* past the copy's rows: regrown */
    STEP(ka, va, a, 635, 1);
#undef STEP
    gpu_mla_drop(ka);
    gpu_mla_drop(kb);
    free(a);
    free(b);
    CHECK(n_ok == n);
    fprintf(stderr, "    %d attention passes on the device (%d over kept caches): all equal to the CPU's bits\n", n_ok,
            n - (int)(sizeof cases / sizeof cases[0]));
}

/* One pass of gpu_mla_attend against the CPU's steps as model/mla.c takes
 * them: each head's absorbed queries (kern_matmul_f32 over its decoded
 * W_UK rows), the core as in mla_pass, and W_UV · ca through the kernels'
 * product of the head's dv rows of kv_b. 1 when equal. */
static int attend_pass(const mat *kvb, int shard, int nope, int dv, uint64_t key, int valid, const float *latent,
                       int kvl, int rope, int nh, int pos0, int T)
{
    const int lat = kvl + rope, n_ctx = pos0 + T, dqk = nope + rope, per = nope + dv;
    const float scale = 1.0f / sqrtf((float)dqk);
    const size_t ldq = (size_t)nh * dqk;
    float *q = malloc((size_t)T * ldq * sizeof *q), *uk = malloc((size_t)nope * kvl * sizeof *uk);
    float *qa = malloc((size_t)T * kvl * sizeof *qa), *qr = malloc((size_t)T * rope * sizeof *qr);
    float *ca = malloc((size_t)T * kvl * sizeof *ca), *o = malloc((size_t)T * dv * sizeof *o);
    float *s1 = malloc((size_t)T * n_ctx * sizeof *s1), *s2 = malloc((size_t)T * n_ctx * sizeof *s2);
    float *want = malloc((size_t)T * nh * dv * sizeof *want), *got = malloc((size_t)T * nh * dv * sizeof *got);
    int *klen = malloc((size_t)T * sizeof *klen);
    for (size_t i = 0; i < (size_t)T * ldq; i++) q[i] = unit() * 4.0f;
    for (int h = 0; h < nh; h++) {
        for (int i = 0; i < nope; i++)
            for (int k = 0; k < kvl; k++) {
                const size_t at = (size_t)(h * per + i) * kvl + k;
                uk[(size_t)i * kvl + k] = kvb->kind == GPU_W_F32 ? kvb->wf[at] : bf16_to_f32(kvb->wb[at]);
            }
        memset(qa, 0, (size_t)T * kvl * sizeof *qa);
        for (int t = 0; t < T; t++) klen[t] = nope;
        kern_matmul_f32(q + (size_t)h * dqk, ldq, uk, (size_t)kvl, qa, (size_t)kvl, T, kvl, klen);
        for (int t = 0; t < T; t++) memcpy(qr + (size_t)t * rope, q + t * ldq + h * dqk + nope, (size_t)rope * sizeof *qr);
        kern_gemm_f32_ld(latent, (size_t)lat, qa, s1, T, n_ctx, kvl);
        kern_gemm_f32_ld(latent + kvl, (size_t)lat, qr, s2, T, n_ctx, rope);
        for (int t = 0; t < T; t++) {
            klen[t] = pos0 + t + 1;
            kern_attn_softmax(s1 + (size_t)t * n_ctx, s2 + (size_t)t * n_ctx, klen[t], scale);
        }
        memset(ca, 0, (size_t)T * kvl * sizeof *ca);
        kern_matmul_f32(s1, (size_t)n_ctx, latent, (size_t)lat, ca, (size_t)kvl, T, kvl, klen);
        cpu(kvb, ca, o, T, h * per + nope, dv);
        for (int t = 0; t < T; t++)
            memcpy(want + ((size_t)t * nh + h) * dv, o + (size_t)t * dv, (size_t)dv * sizeof *o);
    }
    for (size_t i = 0; i < (size_t)T * nh * dv; i++) got[i] = 1234.5f;
    const gpu_mat g = view(kvb, shard, 0, nh * per, 1);
    int bad = gpu_mla_attend(&g, nope, dv, key, valid, latent, lat, kvl, rope, n_ctx, pos0, T, nh, q, scale, got) != 0;
    if (bad) fprintf(stderr, "    attend kvl %d pos0 %d T %d: declined\n", kvl, pos0, T);
    for (size_t i = 0; i < (size_t)T * nh * dv && !bad; i++)
        if (!same(want[i], got[i])) {
            fprintf(stderr, "    attend kind %d nope %d dv %d kvl %d rope %d pos0 %d T %d (valid %d): output %zu: cpu %a gpu %a\n",
                    kvb->kind, nope, dv, kvl, rope, pos0, T, valid, i, want[i], got[i]);
            bad = 1;
        }
    free(q); free(uk); free(qa); free(qr); free(ca); free(o); free(s1); free(s2); free(want); free(got); free(klen);
    return !bad;
}

/* gpu_mla_attend, the whole attention with kv_b in VRAM, against the CPU:
 * F32 and BF16 kv_b, latent widths that are not whole device blocks, a
 * pass later in a context, and a kept cache taking a prompt then decoded
 * tokens (one new row each), as model/mla.c calls it. */
TEST(gpu_mla_attend_equals_cpu_attention)
{
    if (!device()) return;
    static const struct { gpu_wkind kind; int nope, dv, kvl, rope, nh, pos0, T; } cases[] = {
        { GPU_W_F32, 32, 48, 96, 24, 3, 0, 9 },   { GPU_W_BF16, 128, 128, 512, 64, 4, 0, 40 },
        { GPU_W_BF16, 40, 24, 160, 8, 2, 200, 1 }, { GPU_W_F32, 24, 40, 136, 16, 5, 37, 129 },
    };
    rs = 0xa77e2;
    int n_ok = 0, n = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int kvl = cases[k].kvl, lat = kvl + cases[k].rope, n_ctx = cases[k].pos0 + cases[k].T;
        const int rows = cases[k].nh * (cases[k].nope + cases[k].dv);
        mat kvb = { cases[k].kind, rows, kvl, NULL, NULL, NULL, NULL };
        if (kvb.kind == GPU_W_F32) kvb.wf = malloc((size_t)rows * kvl * sizeof *kvb.wf);
        else kvb.wb = malloc((size_t)rows * kvl * sizeof *kvb.wb);
        for (size_t i = 0; i < (size_t)rows * kvl; i++) {
            const float f = unit() * 0.25f;     /* finite scores: a softmax of infinities compares NaNs */
            uint32_t u;
            memcpy(&u, &f, 4);
            if (kvb.wf) kvb.wf[i] = f;
            else kvb.wb[i] = (uint16_t)(u >> 16);
        }
        float *latent = malloc((size_t)(n_ctx + 4) * lat * sizeof *latent);
        for (size_t i = 0; i < (size_t)(n_ctx + 4) * lat; i++) latent[i] = unit();
        const uint64_t key = 950 + k;
        n_ok += attend_pass(&kvb, 600 + (int)k, cases[k].nope, cases[k].dv, key, 0, latent, kvl, cases[k].rope,
                            cases[k].nh, cases[k].pos0, cases[k].T);
        n++;
        for (int p = n_ctx; p < n_ctx + 4; p++, n++)    /* decoded tokens over the kept cache */
            n_ok += attend_pass(&kvb, 600 + (int)k, cases[k].nope, cases[k].dv, key, p, latent, kvl, cases[k].rope,
                                cases[k].nh, p, 1);
        gpu_mla_drop(key);
        free(latent); free(kvb.wf); free(kvb.wb);
    }
    gpu_forget(&rs);
    CHECK(n_ok == n);
    fprintf(stderr, "    %d whole attention passes on the device (kv_b placed; %d decoded over kept caches): all equal "
            "to the CPU's bits\n", n_ok, n - (int)(sizeof cases / sizeof cases[0]));
}
