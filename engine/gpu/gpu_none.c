/* gpu_none.c — the GPU backend of a build without CUDA (gpu.h): every
 * product is declined, so the CPU computes it, and gpu_open says why.
 * The Makefile compiles this file instead of the .cu files when nvcc is
 * not found (or with CUDA=0).
 */
#include <stdio.h>
#include <string.h>
#include "gpu/gpu.h"

static int opened;
static gpu_mode opened_mode;

int gpu_open(gpu_mode mode, int device, double vram_gb)
{
    (void)device;
    (void)vram_gb;
    if (!opened) { opened = 1; opened_mode = mode; }
    return 0;
}

int gpu_gemm(const gpu_mat *m, const float *X, float *Y, int T)
{
    (void)m; (void)X; (void)Y; (void)T;
    return 1;
}

void gpu_stage(const gpu_mat *m, int T) { (void)m; (void)T; }
void gpu_unstage(void) {}
int gpu_expert(const gpu_mat *gate, const gpu_mat *up, const gpu_mat *down, int situ, float beta, float linear_beta,
               const float *X, int T)
{
    (void)gate; (void)up; (void)down; (void)situ; (void)beta; (void)linear_beta; (void)X; (void)T;
    return 1;
}
int gpu_expert_collect(float *Y) { (void)Y; return -1; }
int gpu_mla_core(uint64_t key, int valid, const float *latent, int lat, int kvl, int rope, int n_ctx, int pos0, int T,
                 int nh, const float *qa, const float *qr, float scale, float *ca)
{
    (void)key; (void)valid; (void)latent; (void)lat; (void)kvl; (void)rope; (void)n_ctx; (void)pos0; (void)T; (void)nh;
    (void)qa; (void)qr; (void)scale; (void)ca;
    return 1;
}
int gpu_mla_attend(const gpu_mat *kv_b, int nope, int dv, uint64_t key, int valid, const float *latent, int lat,
                   int kvl, int rope, int n_ctx, int pos0, int T, int nh, const float *q, float scale, float *a)
{
    (void)kv_b; (void)nope; (void)dv; (void)key; (void)valid; (void)latent; (void)lat; (void)kvl; (void)rope;
    (void)n_ctx; (void)pos0; (void)T; (void)nh; (void)q; (void)scale; (void)a;
    return 1;
}
int gpu_mla_takes(int nh, int T, int n_ctx, int lat) { (void)nh; (void)T; (void)n_ctx; (void)lat; return 0; }
void gpu_mla_drop(uint64_t key) { (void)key; }
int gpu_min_tokens(void) { return 0; }
void gpu_forget(const void *owner) { (void)owner; }
void gpu_reserve_spine(uint64_t bytes) { (void)bytes; }
void gpu_pin(void *p, size_t n) { (void)p; (void)n; }
void gpu_unpin(void *p) { (void)p; }

void gpu_status_get(gpu_status *st)
{
    memset(st, 0, sizeof *st);
    snprintf(st->why, sizeof st->why, "%s",
             opened && opened_mode == GPU_OFF ? "off (--gpu off)" : "this build has no CUDA (make CUDA=1 with nvcc)");
}

void gpu_counters(uint64_t *h2d_bytes, double *seconds, uint64_t *vram_resident)
{
    *h2d_bytes = 0;
    *seconds = 0;
    *vram_resident = 0;
}

const char *gpu_build(void) { return "none"; }

int gpu_bench_peak(double *fma_gflops, double *read_gbs)
{
    (void)fma_gflops; (void)read_gbs;
    return -1;
}

int gpu_bench_product(gpu_wkind kind, int rows, int cols, int T, double *gflops, double *wgbs)
{
    (void)kind; (void)rows; (void)cols; (void)T; (void)gflops; (void)wgbs;
    return -1;
}

int gpu_bench_h2d(double *gbs)
{
    (void)gbs;
    return -1;
}
