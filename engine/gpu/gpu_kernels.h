/* gpu_kernels.h — the device kernels of the CUDA backend (gpu_kernels.cu),
 * private to engine/gpu/: the repacking of a matrix into the device layout,
 * the products over it, and the probes bench-kernels reads. Every launcher
 * enqueues on the given stream and returns the launch's error.
 *
 * The device layout (gpu.h says why): a matrix of rows x cols is held as
 * rows x nb blocks of GPU_BLK columns, nb = ceil(cols / GPU_BLK); within a
 * block, lane l (0..15) holds the GPU_STEPS weights of columns
 * GPU_BLK*b + 16*i + l, i = 0..7, contiguous:
 *   F32   float    [rows][nb][16][8]   (32 bytes a lane)
 *   BF16  uint16_t [rows][nb][16][8]   (16 bytes a lane)
 *   MXFP4 uint32_t [rows][nq][16][4]   (nq = ceil(nb / 4): lane l's words of
 *         4 neighbouring blocks as one 16-byte load; in block b's word,
 *         nibble i at bits 4i)
 *         scales   uint8_t [rows][16*nq] (one per 32 columns, padded with 0:
 *         the 16 scales of 4 blocks as one 16-byte load)
 * Columns past cols hold zero weights (code 0 for MXFP4), and the inputs'
 * rows are padded with zeros to nb * GPU_BLK floats (ldx).
 *
 * Inputs of passes of up to GPU_GEMV_T rows (k_gemv's) are in lane order:
 * within each block of GPU_BLK floats, lane l's 8 inputs are contiguous
 * (gpu_lane_col), so a thread reads them as two 16-byte loads instead of
 * eight 4-byte ones; longer passes' inputs are plain rows.
 */
#ifndef REMORA_GPU_KERNELS_H
#define REMORA_GPU_KERNELS_H
#include <cuda_runtime.h>
#include <stdint.h>
#include "gpu/gpu.h"

#define GPU_LANES 16
#define GPU_STEPS 8
#define GPU_BLK (GPU_LANES * GPU_STEPS)

#define GPU_GEMV_T 8     /* the longest pass k_gemv computes */

static inline int gpu_blocks(int cols) { return (cols + GPU_BLK - 1) / GPU_BLK; }
/* MXFP4's groups of 4 blocks a row. */
static inline int gpu_quads(int cols) { return (gpu_blocks(cols) + 3) / 4; }
/* Whether a pass of T rows takes its inputs in lane order. */
static inline int gpu_in_lanes(int T) { return T <= GPU_GEMV_T; }
/* Where column c of an input row goes in lane order: 128b + 16i + l to
 * 128b + 8l + i. */
static inline __host__ __device__ size_t gpu_lane_col(size_t c)
{
    return (c & ~(size_t)(GPU_BLK - 1)) | ((c & (GPU_LANES - 1)) << 3) | ((c >> 4) & (GPU_STEPS - 1));
}
/* Bytes of the device layout of a matrix (weights, then MXFP4 scales). */
size_t gpu_packed_bytes(gpu_wkind kind, int rows, int cols, size_t *scale_bytes);

/* raw (the CPU's layout, already on the device) -> packed (the device's). */
cudaError_t gpu_repack(gpu_wkind kind, const void *raw, const uint8_t *raw_scale, int rows, int cols, void *packed,
                       uint8_t *packed_scale, cudaStream_t s);
/* Y[T][rows] = X[T][ldx] · Wᵀ over a packed matrix (the first `cols`
 * columns of X are the inputs, the rest of each row is zero; in lane order
 * when gpu_in_lanes(T)). */
cudaError_t gpu_product(gpu_wkind kind, const void *packed, const uint8_t *packed_scale, int rows, int cols,
                        const float *X, int ldx, float *Y, int T, cudaStream_t s);
/* h[T][ldh] = the model's GLU of g[T][I] and u[T][I] (gpu_expert), rows
 * padded with zeros to ldh, in lane order when gpu_in_lanes(T) (the down
 * product's input). */
cudaError_t gpu_glu(int situ, float beta, float linear_beta, const float *g, const float *u, float *h, int T, int I,
                    int ldh, cudaStream_t s);
/* MLA's attention core (gpu_mla_core): a column range of a row-major
 * matrix copied out; the causal softmax of rows of scores s1 (+ s2),
 * row r being position r % T, in place in s1; and the weighted sums
 * ca[r][:kvl] = Σ_{s<=pos0+r%T} s1[r][s] · lat[s][:kvl]. */
cudaError_t gpu_cols(const float *src, int lds, int c0, int n, float *dst, int rows, cudaStream_t s);
cudaError_t gpu_softmax(float *s1, const float *s2, int n_ctx, int T, int pos0, float scale, int rows, cudaStream_t s);
cudaError_t gpu_wsum(const float *p, int n_ctx, const float *lat, int ldl, int kvl, int T, int pos0, float *ca,
                     int rows, cudaStream_t s);
/* gpu_product for `heads` products of one shape in one launch (F32 or BF16
 * weights): product h on weights p_head bytes, inputs T * ldx floats and
 * outputs T * rows floats after product h - 1's (MLA's values, a product
 * per head over kv_b's rows). */
cudaError_t gpu_product_heads(gpu_wkind kind, const void *packed, size_t p_head, int rows, int cols, const float *X,
                              int ldx, float *Y, int T, int heads, cudaStream_t s);
/* MLA's absorbed queries (gpu_mla_attend) of heads [h0, h0 + heads) from
 * q [T][nh][dqk] and kv_b in the device layout (W_UK of head h: rows
 * h * per .. + nope): qa [heads * T][ld1] and the rope parts qr
 * [heads * T][ld2], each row padded with zeros, in lane order for `lanes`;
 * and ca [rows][kvl] laid out as a product's input x [rows][ld]. */
cudaError_t gpu_absorb(gpu_wkind kind, const void *W, int per, int nope, const float *q, int nh, int dqk, int h0,
                       int heads, int kvl, int ld1, int rope, int ld2, int T, int lanes, float *qa, float *qr,
                       cudaStream_t s);
cudaError_t gpu_lay(const float *ca, int kvl, int ld, int lanes, float *x, int rows, cudaStream_t s);
/* Probes: n iterations of a register-only FMA loop on every SM; a read of
 * `bytes` of device memory. */
cudaError_t gpu_probe_fma(float *out, int iters, cudaStream_t s, double *flops);
cudaError_t gpu_probe_read(const void *buf, size_t bytes, float *out, cudaStream_t s);
/* Fills n bytes with a hash of their index (never zeros: MXFP4 codes and
 * scales of every value; bf16/f32 values that are finite). */
cudaError_t gpu_fill_random(gpu_wkind kind, void *buf, size_t n, uint32_t seed, cudaStream_t s);

#endif
