/* kernels_impl.h — what the three SIMD levels of the kernels share, private
 * to engine/kernels/: the table of per-level functions that kernels.c
 * dispatches to, the E8M0 scale table, and the one reduction every level ends
 * with.
 *
 * The accumulation order (the contract that makes all levels bit-identical):
 *   - 16 lane accumulators start at +0; column c feeds lane c % 16;
 *   - each lane takes its columns in increasing order, acc = fmaf(w, x, acc),
 *     where w is the weight decoded exactly to fp32 (MXFP4: E2M1 * scale,
 *     one exact multiply);
 *   - the 16 lanes are summed by kern_reduce16's fixed pairwise tree.
 * A level may keep the lanes in any register layout as long as each lane sees
 * the same sequence of fmas; the tail columns of a row that does not fill a
 * last group of 16 are added with scalar fmaf into their lanes.
 */
#ifndef REMORA_KERNELS_IMPL_H
#define REMORA_KERNELS_IMPL_H
#include <math.h>
#include "kernels.h"

/* Tables filled once before the first kernel runs:
 *   kern_e8m0_tab[s]      = kern_e8m0(s);
 *   kern_mx_f32[s][c]     = kern_e2m1[c] * kern_e8m0_tab[s], the exact weight
 *                           of code c under scale s (the AVX-512 lookup table);
 *   kern_mx_bf16[s][...]  = the same weights as bf16 — exact, since an E2M1
 *                           value times a power of two has at most two
 *                           significant bits and, even when subnormal, no bits
 *                           below bit 16 — split into byte 2 of the fp32 bits
 *                           (bytes 0-31: 16 entries, twice) and byte 3
 *                           (bytes 32-63), for the AVX2 byte shuffles. */
extern float kern_e8m0_tab[256];
extern float kern_mx_f32[256][16];
extern uint8_t kern_mx_bf16[256][64];
/* Fills them (mx_tables.c); kernels.c calls it once, before picking a level. */
void kern_tables_init(void);

/* The pairwise tree, written out once for every level:
 *   s8[i] = l[i] + l[i+8]    (i < 8)
 *   s4[i] = s8[i] + s8[i+4]  (i < 4)
 *   s2[i] = s4[i] + s4[i+2]  (i < 2)
 *   sum   = s2[0] + s2[1]
 * i.e. halve the vector and add the halves, four times — the shape of the
 * natural in-register reduction of a 16-wide vector. */
static inline float kern_reduce16(const float l[16])
{
    float s8[8], s4[4], s2[2];
    for (int i = 0; i < 8; i++) s8[i] = l[i] + l[i + 8];
    for (int i = 0; i < 4; i++) s4[i] = s8[i] + s8[i + 4];
    for (int i = 0; i < 2; i++) s2[i] = s4[i] + s4[i + 2];
    return s2[0] + s2[1];
}

/* Element i of f32 or bf16 (bf16) rows W: the column tail of the levels'
 * row kernels, which take either encoding. */
static inline float kern_weight(const void *W, int bf16, size_t i)
{
    return bf16 ? bf16_to_f32(((const uint16_t *)W)[i]) : ((const float *)W)[i];
}

/* The step of the gated delta rule (kernels.h: kern_kda_step), written
 * once for every level: a sweep over the rows of S decaying them and
 * taking u = v - S^T k, then one adding k (x) beta u back and reading
 * o = S^T q. Per element: row *= a, u = fma(-row, k, u); then row =
 * fma(k, u, row), o = fma(row, q, o). A level gives its vector forms of the
 * two column loops for the columns [0, j0) (decay, update; NULL for none),
 * the scalar loops here take [j0, hd); inlined into each level's kda_step,
 * with its column loops inlined in turn. */
typedef void kern_kda_decay_fn(float *row, float a, float kd, float *u, int j0);
typedef void kern_kda_update_fn(float *row, float kd, float qd, const float *u, float *o, int j0);

static inline __attribute__((always_inline)) void
kern_kda_sweeps(float *S, const float *alpha, const float *k, const float *q, const float *v, float beta, float *o,
                float *u, int hd, int j0, kern_kda_decay_fn *decay, kern_kda_update_fn *update)
{
    for (int j = 0; j < hd; j++) u[j] = v[j];
    for (int d = 0; d < hd; d++) {
        float *row = S + (size_t)d * hd;
        const float a = alpha[d], kd = k[d];
        if (decay) decay(row, a, kd, u, j0);
        for (int j = j0; j < hd; j++) {
            row[j] *= a;
            u[j] = fmaf(-row[j], kd, u[j]);
        }
    }
    for (int j = 0; j < hd; j++) { u[j] *= beta; o[j] = 0; }
    for (int d = 0; d < hd; d++) {
        float *row = S + (size_t)d * hd;
        const float kd = k[d], qd = q[d];
        if (update) update(row, kd, qd, u, o, j0);
        for (int j = j0; j < hd; j++) {
            row[j] = fmaf(kd, u[j], row[j]);
            o[j] = fmaf(row[j], qd, o[j]);
        }
    }
}

/* The reductions of a tile one after the other (the levels without a
 * batched form). */
static inline void kern_reduce16x16_each(const float *acc, float *out)
{
    for (int k = 0; k < 16; k++)
        out[k] = kern_reduce16(acc + 16 * k);
}

/* One SIMD level. Row functions compute rows [r0, r1) only, so kernels.c can
 * split rows across the pool. */
typedef struct kern_impl {
    const char *name;
    float (*dot_f32)(const float *a, const float *b, int n);
    /* The gemm micro-kernel: a tile of tile_rows weight rows x nt inputs
     * (1 <= nt <= tile_toks) over ng groups of 16 columns, the 16 lane
     * accumulators of its outputs held in registers throughout:
     *   acc[(t * tile_rows + j) * 16 + e] =
     *       fmaf(wp[(g * tile_rows + j) * 16 + e], xp[(g * nt + t) * 16 + e], ·)
     * for g = 0 .. ng-1 in order, starting from acc (from +0 when first) —
     * exactly the fmas dot_f32 makes for those columns. wp and xp are the
     * packed weights and inputs (kernels.c: gemm_block), 64-byte aligned. */
    int tile_rows, tile_toks;
    void (*gemm_tile)(const float *wp, const float *xp, int ng, int nt, int first, float *acc);
    /* out[k] = kern_reduce16(acc + 16k) for k < 16: a tile's reductions. */
    void (*reduce16x16)(const float *acc, float *out);
    void (*gemv_f32)(const float *W, const float *x, float *y, int r0, int r1, int cols);
    void (*gemv_bf16)(const uint16_t *W, const float *x, float *y, int r0, int r1, int cols);
    /* xp is x with each group of 16 reordered by mx_order (xp[e] = x[order[e]]),
     * the order in which the level's registers hold the columns; the SIMD
     * levels read it, the scalar one reads x. */
    void (*gemv_mxfp4)(const uint8_t *packed, const uint8_t *scale, const float *x,
                       const float *xp, float *y, int r0, int r1, int cols);
    /* Exact widening of n columns of a row to fp32 (n a multiple of 16,
     * of 32 for MXFP4), group g of 16 columns in column order at
     * out + g * gs (64-byte aligned): one row of gemm_tile's packed
     * weights. */
    void (*decode_bf16)(const uint16_t *w, float *out, int n, size_t gs);
    void (*decode_mxfp4)(const uint8_t *packed, const uint8_t *scale, float *out, int cols, size_t gs);
    /* Column (within a group of 16) held by element e of the MXFP4 gemv's
     * registers; NULL for the scalar level, which reads x directly. */
    const uint8_t *mx_order;
    /* Element-wise forms (no reduction across elements, so every level
     * gives the same bits as long as each element sees the same fmas):
     * y[i] = fmaf(a, x[i], y[i]). */
    void (*axpy_f32)(float a, const float *x, float *y, int n);
    /* kern_matmul_f32 on rows [0, 4) of A and C and columns [0, 64) of B
     * and C, every row taking k < kn (the caller does the rest with axpy). */
    void (*matmul4x64_f32)(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc,
                           int kn);
    /* The benchmarks' ceilings (kernels.h: kern_fma_probe, kern_read_probe);
     * width: floats per vector; fma_probe makes probe_fmas fmas of them
     * per round. */
    int width, probe_fmas;
    float (*fma_probe)(long n);
    float (*read_probe)(const float *p, size_t n);
    /* One gated delta-rule step of one head (kernels.h: kern_kda_step). */
    void (*kda_step)(float *S, const float *alpha, const float *k, const float *q,
                     const float *v, float beta, float *o, float *u, int hd);
} kern_impl;

/* The members every level fills with its own functions of the same names
 * (and its TILE_ROWS, TILE_TOKS): a level's table is its name, these, and
 * what sets it apart (reduce16x16, mx_order, matmul4x64_f32, width,
 * probe_fmas). */
#define KERN_IMPL_FUNCTIONS                                                    \
    .dot_f32 = dot_f32, .tile_rows = TILE_ROWS, .tile_toks = TILE_TOKS,        \
    .gemm_tile = gemm_tile, .gemv_f32 = gemv_f32, .gemv_bf16 = gemv_bf16,      \
    .gemv_mxfp4 = gemv_mxfp4, .decode_bf16 = decode_bf16,                      \
    .decode_mxfp4 = decode_mxfp4, .axpy_f32 = axpy_f32,                        \
    .fma_probe = fma_probe, .read_probe = read_probe, .kda_step = kda_step

/* Reorders a row's accumulators from a SIMD level's MXFP4 register layout
 * (element e holds the lane of column order[e] of each group of 16) into
 * lane order. */
static inline void kern_order_to_lanes(const uint8_t order[16], const float in[16],
                                       float lanes[16])
{
    for (int e = 0; e < 16; e++)
        lanes[order[e]] = in[e];
}

extern const kern_impl kern_impl_scalar, kern_impl_avx2, kern_impl_avx512;

#endif
