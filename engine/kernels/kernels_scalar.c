/* kernels_scalar.c — the reference level of the kernels, in plain C.
 *
 * This file defines the accumulation order every level reproduces (see
 * kernels_impl.h): 16 lanes, lane = column % 16, each updated with an
 * explicit fmaf in column order, then kern_reduce16. Every multiply-add is
 * written as fmaf — never as a*b+c, which the compiler could fuse or not
 * depending on flags — so the result does not depend on -ffp-contract or on
 * whether this file is built with FMA instructions. It is also the fallback
 * on CPUs without AVX2.
 */
#include "kernels_impl.h"

static float dot_f32(const float *a, const float *b, int n)
{
    float l[16] = { 0 };
    for (int c = 0; c < n; c++)
        l[c & 15] = fmaf(a[c], b[c], l[c & 15]);
    return kern_reduce16(l);
}

/* The gemm micro-kernel (kernels_impl.h: gemm_tile), 4 rows x up to 4
 * inputs, in plain loops: each lane of each output takes its groups in
 * order. */
#define TILE_ROWS 4
#define TILE_TOKS 4

static void gemm_tile(const float *wp, const float *xp, int ng, int nt, int first, float *acc)
{
    const int n = nt * TILE_ROWS;
    if (first)
        for (int i = 0; i < n * 16; i++) acc[i] = 0;
    for (int g = 0; g < ng; g++, wp += TILE_ROWS * 16, xp += nt * 16)
        for (int t = 0; t < nt; t++)
            for (int j = 0; j < TILE_ROWS; j++) {
                float *l = acc + (t * TILE_ROWS + j) * 16;
                for (int e = 0; e < 16; e++)
                    l[e] = fmaf(wp[16 * j + e], xp[16 * t + e], l[e]);
            }
}

static void gemv_f32(const float *W, const float *x, float *y, int r0, int r1, int cols)
{
    for (int r = r0; r < r1; r++)
        y[r] = dot_f32(W + (size_t)r * cols, x, cols);
}

static void gemv_bf16(const uint16_t *W, const float *x, float *y, int r0, int r1, int cols)
{
    for (int r = r0; r < r1; r++) {
        const uint16_t *w = W + (size_t)r * cols;
        float l[16] = { 0 };
        for (int c = 0; c < cols; c++)
            l[c & 15] = fmaf(bf16_to_f32(w[c]), x[c], l[c & 15]);
        y[r] = kern_reduce16(l);
    }
}

/* The weight of column c of an MXFP4 row: one exact multiply of the E2M1
 * value by the block's power-of-two scale. */
static inline float mxfp4_weight(const uint8_t *p, const uint8_t *s, int c)
{
    uint8_t byte = p[c >> 1];
    uint8_t code = c & 1 ? byte >> 4 : byte & 15;
    return kern_e2m1[code] * kern_e8m0_tab[s[c >> 5]];
}

static void gemv_mxfp4(const uint8_t *packed, const uint8_t *scale, const float *x,
                       const float *xp, float *y, int r0, int r1, int cols)
{
    (void)xp;
    for (int r = r0; r < r1; r++) {
        const uint8_t *p = packed + (size_t)r * (cols / 2);
        const uint8_t *s = scale + (size_t)r * (cols / 32);
        float l[16] = { 0 };
        for (int c = 0; c < cols; c++)
            l[c & 15] = fmaf(mxfp4_weight(p, s, c), x[c], l[c & 15]);
        y[r] = kern_reduce16(l);
    }
}

static void decode_bf16(const uint16_t *w, float *out, int n, size_t gs)
{
    for (int c = 0; c < n; c++)
        out[(size_t)(c / 16) * gs + c % 16] = bf16_to_f32(w[c]);
}

static void decode_mxfp4(const uint8_t *packed, const uint8_t *scale, float *out, int cols, size_t gs)
{
    for (int c = 0; c < cols; c++)
        out[(size_t)(c / 16) * gs + c % 16] = mxfp4_weight(packed, scale, c);
}

static void axpy_f32(float a, const float *x, float *y, int n)
{
    for (int i = 0; i < n; i++) y[i] = fmaf(a, x[i], y[i]);
}

/* The reference form of the step (kernels.h: kern_kda_step): every
 * column by the scalar loops. */
static void kda_step(float *S, const float *alpha, const float *k, const float *q,
                     const float *v, float beta, float *o, float *u, int hd)
{
    kern_kda_sweeps(S, alpha, k, q, v, beta, o, u, hd, 0, NULL, NULL);
}

/* The ceilings (kernels.h): 24 independent chains cover the latency of the
 * fma units many times over. */
static float fma_probe(long n)
{
    float a[24], b = 0.999f, c = 1e-7f;
    for (int i = 0; i < 24; i++) a[i] = (float)i;
    for (long k = 0; k < n; k++) {
        for (int i = 0; i < 24; i++) a[i] = fmaf(a[i], b, c);
        __asm__ volatile("" : "+m"(a));
    }
    float s = 0;
    for (int i = 0; i < 24; i++) s += a[i];
    return s;
}

static float read_probe(const float *p, size_t n)
{
    float s[8] = { 0 };
    for (size_t i = 0; i < n; i += 8)
        for (int j = 0; j < 8; j++) s[j] += p[i + j];
    return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

const kern_impl kern_impl_scalar = {
    .name = "scalar",
    KERN_IMPL_FUNCTIONS,
    .reduce16x16 = kern_reduce16x16_each,
    .width = 1,
    .probe_fmas = 24,
};
