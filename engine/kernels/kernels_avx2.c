/* kernels_avx2.c — the AVX2 + FMA level of the kernels.
 *
 * A row's 16 lane accumulators live in two 8-wide registers (lanes 0-7 and
 * 8-15, or for MXFP4 the two halves of the interleaved-halves layout), so
 * every vfmadd is exactly eight of the scalar reference's per-lane fmaf
 * calls; the column tail and the reduction are the shared scalar code of
 * kernels_impl.h. Rows are processed four at a time so four independent
 * fma chains overlap and share the loads of x.
 *
 * MXFP4: every weight E2M1[c] * scale is a bf16 value, so the lookup is two
 * in-lane byte shuffles (vpshufb, 16 entries) into the block's row of
 * kern_mx_bf16 rather than an 8-entry vpermps plus sign handling; see
 * mx_block.
 */
#include <immintrin.h>
#include <string.h>
#include "kernels_impl.h"

#define ROWS 4

static inline uint64_t load_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline __m256 load_bf16x8(const uint16_t *w)
{
    __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)w));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

/* Software prefetch of the same columns of the next group of rows, as in
 * kernels_avx512.c: into L1, and into L2 only for the MXFP4 gemv. */
static inline void prefetch(const void *p)
{
    _mm_prefetch((const char *)p, _MM_HINT_T0);
}

static inline void prefetch_l2(const void *p)
{
    _mm_prefetch((const char *)p, _MM_HINT_T1);
}

static inline int row_group(int r, int r1)
{
    return r1 - r < ROWS ? r1 - r : ROWS;
}

/* Stores the two halves of a row's accumulators as its 16 lanes. */
static inline void store_lanes(float l[16], __m256 lo, __m256 hi)
{
    _mm256_storeu_ps(l, lo);
    _mm256_storeu_ps(l + 8, hi);
}

static float dot_f32(const float *a, const float *b, int n)
{
    __m256 lo = _mm256_setzero_ps(), hi = lo;
    int c = 0;
    for (; c + 16 <= n; c += 16) {
        lo = _mm256_fmadd_ps(_mm256_loadu_ps(a + c), _mm256_loadu_ps(b + c), lo);
        hi = _mm256_fmadd_ps(_mm256_loadu_ps(a + c + 8), _mm256_loadu_ps(b + c + 8), hi);
    }
    float l[16];
    store_lanes(l, lo, hi);
    for (; c < n; c++)
        l[c & 15] = fmaf(a[c], b[c], l[c & 15]);
    return kern_reduce16(l);
}

/* The gemm micro-kernel (kernels_impl.h: gemm_tile): with 16 registers and
 * two per output (lanes 0-7 and 8-15), 2 weight rows x up to 3 inputs keep
 * 12 accumulators, 2 weight halves and one input half in registers; per
 * half-group 5 loads feed 6 fmas. Measured with the operands in L1 (per
 * CPU-second, best of 15 rounds, against a 12-chain fma loop at 117-121
 * GFLOP/s): 2x3 92-93 (0.77), 3x2 92-93, 1x4 94-95, 2x2 87, 2x4 80
 * (spilled); 1x4 is as good but would take twice the input tiles. */
#define TILE_ROWS 2
#define TILE_TOKS 3

#define DEF_TILE(NT)                                                                        \
    static void tile2x##NT(const float *wp, const float *xp, int ng, int first, float *acc) \
    {                                                                                       \
        __m256 a[2][NT][TILE_ROWS];                                                         \
        _Pragma("GCC unroll 8") for (int h = 0; h < 2; h++)                                 \
            _Pragma("GCC unroll 8") for (int t = 0; t < NT; t++)                            \
                _Pragma("GCC unroll 8") for (int j = 0; j < TILE_ROWS; j++)                 \
                    a[h][t][j] = first ? _mm256_setzero_ps()                                \
                                       : _mm256_loadu_ps(acc + (t * TILE_ROWS + j) * 16 + 8 * h); \
        for (int g = 0; g < ng; g++, wp += TILE_ROWS * 16, xp += NT * 16) {                 \
            _Pragma("GCC unroll 8") for (int h = 0; h < 2; h++) {                           \
                __m256 w[TILE_ROWS];                                                        \
                _Pragma("GCC unroll 8") for (int j = 0; j < TILE_ROWS; j++)                 \
                    w[j] = _mm256_load_ps(wp + 16 * j + 8 * h);                             \
                _Pragma("GCC unroll 8") for (int t = 0; t < NT; t++) {                      \
                    const __m256 x = _mm256_load_ps(xp + 16 * t + 8 * h);                   \
                    _Pragma("GCC unroll 8") for (int j = 0; j < TILE_ROWS; j++)             \
                        a[h][t][j] = _mm256_fmadd_ps(w[j], x, a[h][t][j]);                  \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
        _Pragma("GCC unroll 8") for (int h = 0; h < 2; h++)                                 \
            _Pragma("GCC unroll 8") for (int t = 0; t < NT; t++)                            \
                _Pragma("GCC unroll 8") for (int j = 0; j < TILE_ROWS; j++)                 \
                    _mm256_storeu_ps(acc + (t * TILE_ROWS + j) * 16 + 8 * h, a[h][t][j]);   \
    }
DEF_TILE(1)
DEF_TILE(2)
DEF_TILE(3)

static void gemm_tile(const float *wp, const float *xp, int ng, int nt, int first, float *acc)
{
    static void (*const tiles[TILE_TOKS])(const float *, const float *, int, int, float *) = {
        tile2x1, tile2x2, tile2x3,
    };
    tiles[nt - 1](wp, xp, ng, first, acc);
}

/* 8 weights from element i of f32 or bf16 (bf16) rows W. */
static inline __m256 load_w8(const void *W, int bf16, size_t i)
{
    return bf16 ? load_bf16x8((const uint16_t *)W + i) : _mm256_loadu_ps((const float *)W + i);
}

/* gemv over f32 or bf16 rows (bf16: W holds bf16 values), four rows at a
 * time; the same fmas in the same order for both, only the loads differ.
 * bf16 rows are the large ones and prefetch the next group as they go; f32
 * rows never did. Inlined into each caller with bf16 a constant. */
static inline __attribute__((always_inline)) void gemv_rows(const void *W, int bf16, const float *x, float *y,
                                                          int r0, int r1, int cols)
{
    for (int r = r0; r < r1; r += ROWS) {
        int nw = row_group(r, r1);
        size_t off[ROWS];
        for (int j = 0; j < ROWS; j++)
            off[j] = (size_t)(r + (j < nw ? j : nw - 1)) * cols;
        __m256 lo[ROWS], hi[ROWS];
        for (int j = 0; j < ROWS; j++)
            lo[j] = hi[j] = _mm256_setzero_ps();
        int c = 0;
        for (; c + 16 <= cols; c += 16) {
            if (bf16 && (c & 31) == 0)
                for (int j = 0; j < ROWS; j++)
                    prefetch((const uint16_t *)W + off[j] + (size_t)ROWS * cols + c);
            __m256 x0 = _mm256_loadu_ps(x + c), x1 = _mm256_loadu_ps(x + c + 8);
            for (int j = 0; j < ROWS; j++) {
                lo[j] = _mm256_fmadd_ps(load_w8(W, bf16, off[j] + c), x0, lo[j]);
                hi[j] = _mm256_fmadd_ps(load_w8(W, bf16, off[j] + c + 8), x1, hi[j]);
            }
        }
        for (int j = 0; j < nw; j++) {
            float l[16];
            store_lanes(l, lo[j], hi[j]);
            for (int t = c; t < cols; t++)
                l[t & 15] = fmaf(kern_weight(W, bf16, off[j] + t), x[t], l[t & 15]);
            y[r + j] = kern_reduce16(l);
        }
    }
}

static void gemv_f32(const float *W, const float *x, float *y, int r0, int r1, int cols)
{
    gemv_rows(W, 0, x, y, r0, r1, cols);
}

static void gemv_bf16(const uint16_t *W, const float *x, float *y, int r0, int r1, int cols)
{
    gemv_rows(W, 1, x, y, r0, r1, cols);
}

/* MXFP4 register order (see mx_block): element e of a row's two registers
 * holds column mx_order[e] of each group of 16. */
static const uint8_t mx_order[16] = { 0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15 };

/* The 32 weights of one block (16 packed bytes at p, table = kern_mx_bf16[s]):
 * f[0], f[1] hold columns 0-15 and f[2], f[3] columns 16-31, each pair in
 * mx_order.
 *   1. The low nibbles of the 16 bytes (codes of the even columns 0, 2, ..,
 *      30) go to the low 128-bit half, the high nibbles (odd columns) to the
 *      high half.
 *   2. Two vpshufb look up byte 2 and byte 3 of each weight's fp32 bits (its
 *      bf16 form); interleaving them gives bf16 words: wl = columns 0-15
 *      (low half even, high half odd), wh = columns 16-31.
 *   3. Interleaving the words with zeros makes them fp32.
 * Shifts are the scarce operation on the CPUs measured (Zen 4), so there is
 * only one, on 128 bits. */
static inline void mx_block(const uint8_t *p, const uint8_t *table, __m256 f[4])
{
    const __m128i nib = _mm_set1_epi8(15);
    const __m256i zero = _mm256_setzero_si256();
    __m128i raw = _mm_loadu_si128((const __m128i *)p);
    __m128i lo = _mm_and_si128(raw, nib), hi = _mm_and_si128(_mm_srli_epi16(raw, 4), nib);
    __m256i codes = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    __m256i b2 = _mm256_shuffle_epi8(_mm256_load_si256((const __m256i *)table), codes);
    __m256i b3 = _mm256_shuffle_epi8(_mm256_load_si256((const __m256i *)(table + 32)), codes);
    __m256i wl = _mm256_unpacklo_epi8(b2, b3), wh = _mm256_unpackhi_epi8(b2, b3);
    f[0] = _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, wl));
    f[1] = _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, wl));
    f[2] = _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, wh));
    f[3] = _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, wh));
}

/* One row's update for block k: codes at p, scales at sc, accumulators
 * lo/hi. */
#define MX_ROW(lo, hi, p, sc)                                                  \
    do {                                                                       \
        __m256 f[4];                                                           \
        mx_block((p) + 16 * k, kern_mx_bf16[(sc)[k]], f);                      \
        lo = _mm256_fmadd_ps(f[0], x0, lo);                                    \
        hi = _mm256_fmadd_ps(f[1], x1, hi);                                    \
        lo = _mm256_fmadd_ps(f[2], x2, lo);                                    \
        hi = _mm256_fmadd_ps(f[3], x3, hi);                                    \
    } while (0)

#define MX_BLOCK()                                                             \
    do {                                                                       \
        const float *xb = xp + 32 * k;                                         \
        __m256 x0 = _mm256_loadu_ps(xb), x1 = _mm256_loadu_ps(xb + 8);         \
        __m256 x2 = _mm256_loadu_ps(xb + 16), x3 = _mm256_loadu_ps(xb + 24);   \
        MX_ROW(lo0, hi0, p0, s0);                                              \
        MX_ROW(lo1, hi1, p1, s1);                                              \
        MX_ROW(lo2, hi2, p2, s2);                                              \
        MX_ROW(lo3, hi3, p3, s3);                                              \
    } while (0)

static void gemv_mxfp4(const uint8_t *packed, const uint8_t *scale, const float *x,
                       const float *xp, float *y, int r0, int r1, int cols)
{
    (void)x;
    const size_t pb = (size_t)cols / 2, sb = (size_t)cols / 32;
    const int nblk = cols / 32;
    for (int r = r0; r < r1; r += ROWS) {
        int nw = row_group(r, r1);
        /* rows of the group; a short last group repeats its last row */
        const uint8_t *p0 = packed + (size_t)r * pb, *s0 = scale + (size_t)r * sb;
        const uint8_t *p1 = p0 + (nw > 1 ? pb : 0), *s1 = s0 + (nw > 1 ? sb : 0);
        const uint8_t *p2 = p0 + (nw > 2 ? 2 * pb : 0), *s2 = s0 + (nw > 2 ? 2 * sb : 0);
        const uint8_t *p3 = p0 + (nw > 3 ? 3 * pb : 0), *s3 = s0 + (nw > 3 ? 3 * sb : 0);
        const uint8_t *next = p0 + ROWS * pb;    /* the next group, to prefetch */
        __m256 lo0 = _mm256_setzero_ps(), lo1 = lo0, lo2 = lo0, lo3 = lo0;
        __m256 hi0 = lo0, hi1 = lo0, hi2 = lo0, hi3 = lo0;
        int k = 0;
        /* four blocks (one cache line of codes per row) per round */
        for (; k + 4 <= nblk; ) {
            for (int j = 0; j < ROWS; j++)
                prefetch_l2(next + j * pb + 16 * k);
            if ((k & 63) == 0)
                for (int j = 0; j < ROWS; j++)
                    prefetch_l2(s0 + (ROWS + j) * sb + k);
            for (int u = 0; u < 4; u++, k++)
                MX_BLOCK();
        }
        for (; k < nblk; k++)
            MX_BLOCK();
        __m256 lo[ROWS] = { lo0, lo1, lo2, lo3 }, hi[ROWS] = { hi0, hi1, hi2, hi3 };
        for (int j = 0; j < nw; j++) {
            float e[16], l[16];
            store_lanes(e, lo[j], hi[j]);
            kern_order_to_lanes(mx_order, e, l);
            y[r + j] = kern_reduce16(l);
        }
    }
}

static void decode_bf16(const uint16_t *w, float *out, int n, size_t gs)
{
    for (int c = 0; c < n; c += 16, out += gs) {
        _mm256_store_ps(out, load_bf16x8(w + c));
        _mm256_store_ps(out + 8, load_bf16x8(w + c + 8));
    }
}

static void decode_mxfp4(const uint8_t *packed, const uint8_t *scale, float *out, int cols, size_t gs)
{
    for (int k = 0; k < cols / 32; k++, out += 2 * gs) {
        __m256 f[4];
        float e[32];
        mx_block(packed + 16 * k, kern_mx_bf16[scale[k]], f);
        for (int i = 0; i < 4; i++)
            _mm256_storeu_ps(e + 8 * i, f[i]);
        for (int i = 0; i < 16; i++) {
            out[mx_order[i]] = e[i];
            out[gs + mx_order[i]] = e[16 + i];
        }
    }
}

static void axpy_f32(float a, const float *x, float *y, int n)
{
    const __m256 av = _mm256_set1_ps(a);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; i++) y[i] = fmaf(a, x[i], y[i]);
}

/* The KDA step's column loops with 8 columns of S per register: the same
 * multiply and fmas per element as the scalar loops (kern_kda_sweeps). */
static inline void kda_decay(float *row, float a, float kd, float *u, int j0)
{
    const __m256 av = _mm256_set1_ps(a), kv = _mm256_set1_ps(kd);
    for (int j = 0; j < j0; j += 8) {
        __m256 r = _mm256_mul_ps(_mm256_loadu_ps(row + j), av);
        _mm256_storeu_ps(row + j, r);
        _mm256_storeu_ps(u + j, _mm256_fnmadd_ps(r, kv, _mm256_loadu_ps(u + j)));
    }
}

static inline void kda_update(float *row, float kd, float qd, const float *u, float *o, int j0)
{
    const __m256 kv = _mm256_set1_ps(kd), qv = _mm256_set1_ps(qd);
    for (int j = 0; j < j0; j += 8) {
        __m256 r = _mm256_fmadd_ps(kv, _mm256_loadu_ps(u + j), _mm256_loadu_ps(row + j));
        _mm256_storeu_ps(row + j, r);
        _mm256_storeu_ps(o + j, _mm256_fmadd_ps(r, qv, _mm256_loadu_ps(o + j)));
    }
}

static void kda_step(float *S, const float *alpha, const float *k, const float *q,
                     const float *v, float beta, float *o, float *u, int hd)
{
    kern_kda_sweeps(S, alpha, k, q, v, beta, o, u, hd, hd & ~7, kda_decay, kda_update);
}

/* The ceilings (kernels.h): 12 chains of register-only fmas in 16
 * registers (2 units x 4 cycles of latency need 8), and a read loop with 8 independent adds per
 * 8 loads — kern_dot_f32's single chain of fmas reads only a vector per
 * fma latency, which was 25 GB/s against 31 for this loop on the 2-core
 * development machine. */
static float fma_probe(long n)
{
    __m256 a[12];
    const __m256 b = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(1e-7f);
    for (int i = 0; i < 12; i++) a[i] = _mm256_set1_ps((float)i);
    for (long k = 0; k < n; k++) {
        _Pragma("GCC unroll 12") for (int i = 0; i < 12; i++) a[i] = _mm256_fmadd_ps(a[i], b, c);
    }
    __m256 s = a[0];
    for (int i = 1; i < 12; i++) s = _mm256_add_ps(s, a[i]);
    float l[8];
    _mm256_storeu_ps(l, s);
    return l[0];
}

static float read_probe(const float *p, size_t n)
{
    __m256 s[8];
    for (int j = 0; j < 8; j++) s[j] = _mm256_setzero_ps();
    for (size_t i = 0; i < n; i += 8 * 8)
        _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) s[j] = _mm256_add_ps(s[j], _mm256_load_ps(p + i + 8 * j));
    for (int j = 1; j < 8; j++) s[0] = _mm256_add_ps(s[0], s[j]);
    float l[8];
    _mm256_storeu_ps(l, s[0]);
    return l[0];
}

const kern_impl kern_impl_avx2 = {
    .name = "avx2",
    KERN_IMPL_FUNCTIONS,
    .reduce16x16 = kern_reduce16x16_each,
    .mx_order = mx_order,
    .width = 8,
    .probe_fmas = 12,
};
