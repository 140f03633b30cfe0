/* gpu.h — the optional CUDA backend: the products of the forward pass on an
 * NVIDIA GPU, bit-identical to the CPU kernels (kernels/kernels.h).
 *
 * The contract is the CPU's: every output is 16 lane accumulators (lane =
 * column % 16), each taking one fused multiply-add per column in column
 * order, then kern_reduce16's pairwise tree. The device code keeps that
 * order exactly (fp32 FMAs on CUDA cores, --fmad=false, no tensor cores, no
 * atomics in sums, no flush-to-zero), so a product gives the same bits on
 * either side and the engine may choose per product where it runs.
 *
 * What lives here: one device per process (like the compute pool), device
 * memory for the weights placed in VRAM, the staging of activations and
 * streamed weights, and the policy that says which products run on the
 * device. format/weights.c hands every product to gpu_gemm first and
 * computes it on the CPU when the GPU declines; model/load.c opens the
 * device with the user's --gpu and --vram and reads the figures back.
 *
 * Weights on the device are repacked once when copied in ("chain-major
 * blocks" of 128 columns: for each row, block and lane the 8 weights that
 * lane takes from that block, contiguous), so a lane's loads are 16-byte
 * vectors and a half-warp's are one coalesced 256-byte read; rows are
 * padded to whole blocks with zero weights and zero inputs, which leave
 * every accumulator unchanged (acc + (+0) = acc for every acc the sums can
 * produce; an accumulator that starts at +0 is never -0).
 *
 * Built without CUDA (gpu_none.c) every call declines and gpu_open says
 * why; nothing above format/ and model/ knows which device computed a
 * token, except the figures.
 */
#ifndef REMORA_GPU_H
#define REMORA_GPU_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GPU_W_F32 = 1, GPU_W_BF16 = 2, GPU_W_MXFP4 = 3 } gpu_wkind;

/* One matrix [rows, cols] as the CPU holds it (row-major F32/BF16, or MXFP4
 * packed nibbles [rows, cols/2] and E8M0 scales [rows, cols/32]), with the
 * identity of its bytes in the checkpoint (shard, off), which is what a
 * copy in VRAM is found by: the host buffer holding them (a resident unit,
 * the stream ring, an expert slot) changes, the checkpoint bytes do not. */
typedef struct gpu_mat {
    gpu_wkind kind;
    const void *w;
    const uint8_t *scale;
    int rows, cols;
    const void *owner;  /* the checkpoint (one process may hold several models) */
    int shard;
    uint64_t off;
    int spine;          /* 1: spine, placed in VRAM for good within the budget; 0: a routed expert,
                           placed in what the spine leaves, else staged per use */
} gpu_mat;

typedef enum { GPU_AUTO = 0, GPU_OFF = 1, GPU_DEVICE = 2 } gpu_mode;

/* Opens the device once per process (later calls return the first call's
 * answer): mode GPU_AUTO takes device 0 if there is one, GPU_DEVICE the
 * given one, GPU_OFF none. The environment variable REMORA_GPU=auto|off|N
 * replaces GPU_AUTO (the tests compare the two sides through it). vram_gb
 * bounds the weights placed in VRAM; 0 = the card's free memory less a
 * margin. Returns 1 when the device is in use, 0 when not (gpu_status's
 * `why` says why: off, no device, a build without CUDA). */
int  gpu_open(gpu_mode mode, int device, double vram_gb);

/* Y[T, rows] = X[T, cols] · Wᵀ on the device. Returns 0 when it computed Y,
 * 1 when it declined (the caller computes it on the CPU: same bits). It
 * declines when the device is not open, the product is too small to pay
 * for its copies, a streamed matrix has fewer than gpu_min_tokens() rows of
 * X (its copy over PCIe costs more than the CPU's product), or a device
 * call failed (the device is then closed for the process, said in `why`).
 * Thread-safe: products from the compute pool take turns. */
int  gpu_gemm(const gpu_mat *m, const float *X, float *Y, int T);

/* Starts copying a streamed matrix (a routed expert's) to the device on a
 * copy stream of its own, for a product of T rows that will follow, so the
 * copy runs while the products before it compute: the product of the
 * expert before takes 0.1-0.3 ms on the H200, about as long as its 17 MB
 * copy at 55 GB/s, which without this waited in turn. The host memory must
 * stay as it is until gpu_unstage (an expert slot stays pinned until its
 * experts_done). No-op where gpu_gemm would not take the product, for a
 * matrix placed in VRAM, or with $REMORA_GPU_STAGE=0. */
void gpu_stage(const gpu_mat *m, int T);
/* Waits for the copies gpu_stage started and forgets them: called before
 * the host memory they read is released (the end of a MoE layer, a stop). */
void gpu_unstage(void);

/* A routed expert's rows whole on the device, launched without waiting:
 * Y[T, down.rows] = down(glu(gate(X), up(X))), where glu is the model's
 * (SiLU: g * sigmoid(g) * u; situ: beta * tanh(g / beta) * sigmoid(g),
 * times linear_beta * tanh(u / linear_beta) when linear_beta > 0, else u)
 * with kernels/crmath.h's functions, so the bits are the CPU's. One input
 * copy, one output copy and no round trip between the four products (which
 * cost three of each and three synchronizations one by one), and two can
 * be in flight, on streams of their own: the device computes one while the
 * CPU gathers and launches the next (a 2048-token prompt on a 3-layer
 * synthetic model at K3's widths, H200, medians of 3 interleaved: the
 * experts' phase 1.6 -> 1.3 s, copied in 20.5 -> 18.2 GB, out 5.2 -> 2.9
 * GB, the bits unchanged). X is read before the call returns;
 * the weights' host memory must stay until the expert is collected.
 * Returns 0 when launched, 1 when declined (as gpu_gemm declines; also
 * while two are in flight): the caller computes it on the CPU. */
int  gpu_expert(const gpu_mat *gate, const gpu_mat *up, const gpu_mat *down, int situ, float beta, float linear_beta,
                const float *X, int T);
/* Waits for the oldest expert launched and not yet collected and copies its
 * output to Y; 0, or -1 when the device failed (it is then closed, and the
 * caller computes that expert on the CPU). gpu_unstage drops experts not
 * collected (a stop). */
int  gpu_expert_collect(float *Y);

/* MLA's attention core for a pass of T positions from pos0 (model/mla.c):
 * for each of nh heads and positions t, the scores of qa[h][t][:kvl] and
 * qr[h][t][:rope] against the latent cache's n_ctx rows (lat floats each:
 * kvl of latent, then rope), their causal softmax over s <= pos0 + t
 * (kernels/softmax.h) and ca[h][t][:kvl] = Σ_s p_s · latent[s][:kvl], with
 * the CPU's order of every sum, so the bits are its own. The cache is kept
 * on the device between calls, by key (one per layer's cache, never 0):
 * rows [0, valid) are as in the last call with this key, so only the rows
 * after them are copied in (a decoded token: one row instead of the whole
 * context). The heads go in groups whose scores fit 1 GiB of VRAM. Returns
 * 0, or 1 when declined (no device, too little work: gpu_mla_takes; no
 * VRAM for the scores) or failed: the caller computes the heads on the
 * CPU. */
int  gpu_mla_core(uint64_t key, int valid, const float *latent, int lat, int kvl, int rope, int n_ctx, int pos0, int T,
                  int nh, const float *qa, const float *qr, float scale, float *ca);
/* The whole of MLA's attention for such a pass, from the queries q
 * [T][nh][nope + rope] to the heads' outputs a [T][nh][dv] (model/mla.c):
 * each head's absorbed queries (Σ_i q_nope[i] · W_UK[i, :], one fma chain
 * in i order), gpu_mla_core's steps, and the values W_UV · ca (a product
 * per head, the kernels' contract), W_UK and W_UV being head h's rows
 * h * (nope + dv) .. + nope and the dv after them of kv_b (F32 or BF16, kvl
 * columns). Nothing of a head crosses the bus but its queries and its
 * output. Returns 0, or 1 when declined (as gpu_mla_core; also when kv_b
 * is not in VRAM, or will not be placed there) or failed: the caller
 * computes it another way. */
int  gpu_mla_attend(const gpu_mat *kv_b, int nope, int dv, uint64_t key, int valid, const float *latent, int lat,
                    int kvl, int rope, int n_ctx, int pos0, int T, int nh, const float *q, float scale, float *a);
/* Whether gpu_mla_core takes such a pass (so the caller need not prepare
 * the device's inputs for one it declines): the device is in use and the
 * scores' fmas, nh * T * n_ctx * lat, are at least GPU_MIN_WORK (a call's
 * copies and launches take tens of microseconds). */
int  gpu_mla_takes(int nh, int T, int n_ctx, int lat);
/* Forgets the device's copy of a cache (its state is freed). */
void gpu_mla_drop(uint64_t key);

/* Drops what is placed for owner (a model being closed), so its memory
 * and its names can serve another. */
void gpu_forget(const void *owner);
/* The spine's bytes (model/load.c, at open): routed experts are placed in
 * VRAM for good only in what the budget has beyond them, so the spine,
 * which every token uses, is never crowded out by experts placed first
 * (the last model opened sets it). */
void gpu_reserve_spine(uint64_t bytes);
/* Page-locks host memory that weights are copied from to the device (the
 * expert cache), so its copies run at the bus's DMA rate instead of through
 * the driver's pageable staging (55.5 against 9.4 GB/s measured on the H200
 * machine's PCIe 5); gpu_unpin before the memory is unmapped. No-ops
 * without a device, or with $REMORA_GPU_PIN=0. */
void gpu_pin(void *p, size_t n);
void gpu_unpin(void *p);

/* Rows of X from which a streamed (not VRAM-resident) matrix is computed on
 * the device: $REMORA_GPU_MIN_TOKENS, else 16. */
int  gpu_min_tokens(void);

typedef struct gpu_status {
    int active;                 /* products go to the device */
    int device;
    char name[96];              /* the device's name, or "" */
    char why[160];              /* when not active: why */
    uint64_t vram_total;        /* the card's memory */
    uint64_t vram_budget;       /* for weights placed in VRAM */
    uint64_t vram_resident;     /* weights placed so far */
    int units_resident;         /* matrices placed so far */
    uint64_t vram_experts;      /* of vram_resident, routed experts' */
    uint64_t expert_vram_reads; /* bytes of placed experts products read, since the start */
    uint64_t h2d_bytes, d2h_bytes;  /* copied in and out, since the start */
    uint64_t products, flops;   /* computed on the device, since the start */
    double seconds;             /* the callers waited for device products (copies included) */
} gpu_status;

void gpu_status_get(gpu_status *st);
/* The three running figures a token's record takes (model_take_stats, per
 * token and per layer of a prompt): copied in, seconds in products, bytes
 * placed; zeros without a device, and none of gpu_status's strings. */
void gpu_counters(uint64_t *h2d_bytes, double *seconds, uint64_t *vram_resident);
/* "cuda" or "none": what this binary was built with. */
const char *gpu_build(void);

/* Figures for bench-kernels, measured on the device with events (kernel
 * time only, data already in VRAM): the fp32 FMA peak of a register-only
 * loop (GFLOP/s), the read-stream ceiling (GB/s), and one product of the
 * given kind and shape (GFLOP/s, and GB/s of weights read). Each returns 0,
 * or -1 without a device. */
int  gpu_bench_peak(double *fma_gflops, double *read_gbs);
int  gpu_bench_product(gpu_wkind kind, int rows, int cols, int T, double *gflops, double *wgbs);
/* The host-to-device copy rate (GB/s) from page-locked memory, as the
 * pinned expert cache copies (64 MB pieces, median of 5); -1 without a
 * device. */
int  gpu_bench_h2d(double *gbs);

#ifdef __cplusplus
}
#endif
#endif
