/* gpu_figures.c — what the engine says about its GPU (engine.h's rm_gpu_*):
 * what computes the products, what has been placed in VRAM and copied, and
 * the probes of bench-kernels. The device itself is engine/gpu/; the model
 * opens it (load.c) and its products go there through format/weights.c. */
#include <stdio.h>
#include "engine.h"
#include "gpu/gpu.h"

void rm_gpu_get(rm_gpu_figures *out)
{
    gpu_status g;
    gpu_status_get(&g);
    *out = (rm_gpu_figures){ g.active,        gpu_build(),         "",          "",
                             g.vram_total,    g.vram_budget,       g.vram_resident, g.units_resident,
                             g.vram_experts,  g.expert_vram_reads, gpu_min_tokens(), g.h2d_bytes,
                             g.d2h_bytes,     g.products,          g.flops,     g.seconds };
    snprintf(out->name, sizeof out->name, "%s", g.name);
    snprintf(out->why, sizeof out->why, "%s", g.why);
}

int rm_gpu_open(int mode, int device, double vram_gb)
{
    return gpu_open((gpu_mode)mode, device, vram_gb);
}

int rm_gpu_bench_peak(double *fma_gflops, double *read_gbs)
{
    gpu_open(GPU_AUTO, 0, 0);       /* bench-kernels opens no model */
    return gpu_bench_peak(fma_gflops, read_gbs);
}

int rm_gpu_bench_product(int kind, int rows, int cols, int T, double *gflops, double *wgbs)
{
    if (kind < GPU_W_F32 || kind > GPU_W_MXFP4) return -1;
    gpu_open(GPU_AUTO, 0, 0);
    return gpu_bench_product((gpu_wkind)kind, rows, cols, T, gflops, wgbs);
}

int rm_gpu_bench_h2d(double *gbs)
{
    gpu_open(GPU_AUTO, 0, 0);
    return gpu_bench_h2d(gbs);
}
