/* kernels.h — matrix-vector and matrix-matrix kernels over the checkpoint's
 * weight encodings (F32, BF16, MXFP4), with activations in fp32.
 *
 * Every kernel computes, for each output row r, y[r] = Σ_c W[r,c] · x[c] with
 * weights decoded exactly to fp32. The accumulation order is fixed by the
 * scalar reference (see kernels_scalar.c): 16 lane accumulators (lane =
 * c mod 16) updated with fused multiply-add, then a fixed pairwise reduction.
 * The AVX2 and AVX-512 versions follow that order, so all levels give the
 * same bits. The gemm forms apply the gemv to each of T input rows with the
 * same order, so batched prefill equals token-by-token decode bit for bit.
 *
 * Rows are split across the compute pool (threadpool.h) when the matrix is
 * large enough to be worth it.
 */
#ifndef REMORA_KERNELS_H
#define REMORA_KERNELS_H
#include <stdint.h>
#include <stddef.h>

/* bf16 → fp32 is exact: the bf16 bits are the high half of the fp32 bits. */
static inline float bf16_to_f32(uint16_t h)
{
    union { uint32_t u; float f; } v = { .u = (uint32_t)h << 16 };
    return v.f;
}

/* The 16 E2M1 values of an MXFP4 nibble (bit 3 is the sign). */
extern const float kern_e2m1[16];
/* 2^(e-127) for an E8M0 scale byte; 255 gives +Inf as the reference does. */
float kern_e8m0(uint8_t e);

/* y[rows] = W[rows, cols] · x[cols] */
void kern_gemv_f32(const float *W, const float *x, float *y, int rows, int cols);
void kern_gemv_bf16(const uint16_t *W, const float *x, float *y, int rows, int cols);
/* MXFP4 (compressed-tensors mxfp4-pack-quantized): packed [rows, cols/2], the
 * even column in the low nibble; scale [rows, cols/32] E8M0. cols % 32 == 0. */
void kern_gemv_mxfp4(const uint8_t *packed, const uint8_t *scale, const float *x,
                     float *y, int rows, int cols);

/* Y[T, rows] = X[T, cols] · W[rows, cols]ᵀ — each row of Y bit-identical to
 * the gemv of the matching row of X. Reads each weight row once for all T. */
void kern_gemm_f32(const float *W, const float *X, float *Y, int T, int rows, int cols);
void kern_gemm_bf16(const uint16_t *W, const float *X, float *Y, int T, int rows, int cols);
void kern_gemm_mxfp4(const uint8_t *packed, const uint8_t *scale, const float *X,
                     float *Y, int T, int rows, int cols);
/* kern_gemm_f32 with the rows of W ldw >= cols floats apart (a column range
 * of a wider matrix, such as one part of each row of a cache). */
void kern_gemm_f32_ld(const float *W, size_t ldw, const float *X, float *Y, int T, int rows, int cols);

/* Dot product with the same fixed order (for attention and norms where a
 * reproducible order matters). */
float kern_dot_f32(const float *a, const float *b, int n);
/* y[i] = fmaf(a, x[i], y[i]): an exact per-element multiply-add, the same
 * bits at every SIMD level (attention's weighted sums). */
void kern_axpy_f32(float a, const float *x, float *y, int n);
/* C[m, n] += Σ_k A[m, k] · B[k, n] for m < M, n < N, k < klen[m], each
 * element one fmaf per term in increasing k: bit-identical to
 * kern_axpy_f32(A[m, k], B[k, :], C[m, :], N) for k = 0, 1, .. — the order
 * of attention's weighted sums — at the speed of a blocked product. Rows are
 * lda, ldb, ldc floats apart. Runs on the calling thread. */
void kern_matmul_f32(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc,
                     int M, int N, const int *klen);
/* One step of the gated delta rule for one head (KDA; model/kda.c), S the
 * [hd][hd] state with one row per key channel:
 *   S[d][j] *= alpha[d];  u[j] = v[j] - Σ_d S[d][j] k[d]   (fmas in d order)
 *   u[j] *= beta;  S[d][j] += k[d] u[j];  o[j] = Σ_d S[d][j] q[d]
 * every sum taken over d in increasing order with one fmaf per term, so the
 * levels agree bit for bit; u is scratch of hd floats. */
void kern_kda_step(float *S, const float *alpha, const float *k, const float *q,
                   const float *v, float beta, float *o, float *u, int hd);

/* Ceilings for benchmarks (tools/bench_kernels.c), at the level in use:
 * kern_fma_probe runs n rounds of independent register-only fmas of the
 * level's widest vectors — the FMA peak of one core — and returns the flops
 * it made; kern_read_probe reads n floats (a multiple of 128, 64-byte
 * aligned) with the widest loads and enough independent adds to stream at
 * what the memory gives, and returns their sum. */
double kern_fma_probe(long n);
float kern_read_probe(const float *p, size_t n);
/* The gemm micro-kernel's own ceiling: n calls of the level's tile (a full
 * tile of weight rows x inputs over 32 groups of 16 columns) on panels that
 * stay in L1, on the calling thread; returns the flops it made. What the
 * gemm loses below this goes to its blocking and its operands' journey
 * through the caches, not to the tile's instructions. */
double kern_tile_probe(long n);

/* The SIMD level in use: "avx512", "avx2" or "scalar". Chosen once from
 * CPUID; the environment variable REMORA_SIMD=scalar|avx2|avx512 lowers it
 * (never raises it past what the CPU has). */
const char *kern_level(void);
/* Forces a level for tests; returns 0, or -1 when the CPU lacks it. */
int kern_set_level(const char *name);

#endif
