/* weights.h — typed views of checkpoint tensors for the forward pass.
 *
 * A wmat is a matrix [rows, cols] in one of the encodings the kernels read
 * (F32, BF16, MXFP4). It records where its bytes are in the checkpoint and
 * points into whatever buffer holds them now (the store binds it to a
 * resident unit, the stream ring or an expert slot); it owns nothing.
 * Small vectors (norm weights, biases, gates) are widened to fp32 copies at
 * load. Every lookup checks dtype and shape and names the tensor on error.
 */
#ifndef REMORA_WEIGHTS_H
#define REMORA_WEIGHTS_H
#include "format/st.h"

typedef enum { WM_NONE, WM_F32, WM_BF16, WM_MXFP4 } wm_kind;

typedef struct wmat {
    wm_kind kind;
    const void *w;          /* F32/BF16 data, or MXFP4 packed nibbles */
    const uint8_t *scale;   /* MXFP4 E8M0 scales */
    int rows, cols;
    /* where the bytes are in the checkpoint; w/scale point into whatever
     * buffer currently holds them (store.c binds them) */
    int shard;
    uint64_t off, scale_off;
    int routed;             /* a routed expert's: copied to a GPU per use, never placed there */
    const st_set *src;      /* the checkpoint it is from (a GPU finds its copy by src, shard, off) */
} wmat;

/* name: a 2-D F32/BF16 tensor of exactly [rows, cols]. */
int wmat_get(const st_set *s, const char *name, int rows, int cols, wmat *out, rm_err *err);
/* prefix.weight_packed / prefix.weight_scale in mxfp4-pack-quantized form. */
int wmat_get_mxfp4(const st_set *s, const char *prefix, int rows, int cols, wmat *out, rm_err *err);
/* A SiLU/SiTU GLU block (a dense MLP, the shared experts, one routed
 * expert). */
typedef struct mlp_weights {
    wmat gate, up, down;        /* SiLU/SiTU GLU: down(act(gate x) * up x) */
} mlp_weights;

/* A view of rows [r0, r0+n) of m. */
wmat wmat_rows(const wmat *m, int r0, int n);
/* Bytes of the encoded matrix at m->off: the F32 or BF16 values, or the
 * packed MXFP4 codes; *scale_bytes (may be NULL) gets those of its E8M0
 * scales at m->scale_off (MXFP4; 0 for the others). */
uint64_t wmat_bytes(const wmat *m, uint64_t *scale_bytes);

/* name: an F32/BF16 tensor of n elements (any shape), widened to a new
 * fp32 array. With `take` > 0, only the first `take` of n are kept (K3's
 * A_log holds head_dim entries of which the first num_heads are used). */
int wvec_get(const st_set *s, const char *name, int n, int take, float **out, rm_err *err);

/* y = W x, and Y[T] = X[T] Wᵀ, bit-identical row for row, on the GPU
 * when the backend takes the product (gpu/gpu.h), else on the CPU: both
 * give the same bits. */
void wmat_gemv(const wmat *m, const float *x, float *y);
void wmat_gemm(const wmat *m, const float *X, float *Y, int T);
/* Flops of all products so far (2 per weight per row), process-wide. */
uint64_t wmat_flops(void);
/* A hint that a product of T rows over m follows: on the GPU its weights
 * start copying now (gpu_stage); wmat_unstage before the memory behind m
 * is released (it also drops the jobs below that were not collected).
 * Nothing on the CPU. */
void wmat_stage(const wmat *m, int T);
void wmat_unstage(void);

/* The GPU's larger jobs over wmat matrices (gpu/gpu.h says what each
 * computes): a 1 from wmat_expert or wmat_mla_core, or a -1 from
 * wmat_expert_collect, means the CPU computes it, with the same bits. */
int  wmat_expert(const wmat *gate, const wmat *up, const wmat *down, int situ, float beta, float linear_beta,
                 const float *X, int T);            /* launched: 0 */
int  wmat_expert_collect(float *Y);                 /* the oldest launched, into Y */
int  wmat_mla_core(uint64_t key, int valid, const float *latent, int lat, int kvl, int rope, int n_ctx, int pos0,
                   int T, int nh, const float *qa, const float *qr, float scale, float *ca);
/* gpu_mla_attend over kv_b: the whole attention of a pass on the device. */
int  wmat_mla_attend(const wmat *kv_b, int nope, int dv, uint64_t key, int valid, const float *latent, int lat,
                     int kvl, int rope, int n_ctx, int pos0, int T, int nh, const float *q, float scale, float *a);
/* Whether wmat_mla_core would take such a pass (0 without a device), so a
 * caller need not prepare the device's inputs; and the device's copy of a
 * cache forgotten (its state is freed). */
int  wmat_mla_takes(int nh, int T, int n_ctx, int lat);
void wmat_mla_drop(uint64_t key);

#endif
