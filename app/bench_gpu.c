/* bench_gpu.c — the GPU rows of `remora bench-kernels` (README "The GPU"):
 * the device's own ceilings, measured first, and each product at Kimi K3's
 * shapes as a ratio to them — decode's gemv against the read stream (a
 * gemv reads each weight once), a prompt's gemm against the fp32 FMA peak
 * (the products are exact fp32 fmas on CUDA cores: tensor cores would
 * change the bits). Times are the median of 7 event-timed launches on data
 * already in VRAM. Prints nothing but a note in a build without CUDA or on
 * a machine without a GPU. */
#include <stdio.h>
#include "engine.h"
#include "bench_gpu.h"

void bench_gpu_rows(FILE *f)
{
    double peak = 0, read = 0;
    if (rm_gpu_bench_peak(&peak, &read)) {
        rm_gpu_figures g;
        rm_gpu_get(&g);
        fprintf(f, "\nGPU: none (%s)\n", g.why);
        return;
    }
    rm_gpu_figures g;
    rm_gpu_get(&g);
    fprintf(f, "\nGPU %s: fp32 FMA peak %.0f GFLOP/s (register-only loop), read stream %.0f GB/s\n", g.name, peak,
            read);
    static const struct { int kind; const char *enc; int rows, cols, T; const char *what; } rows[] = {
        { 2, "bf16", 7168, 7168, 1, "dense spine, decode" },
        { 2, "bf16", 12288, 7168, 1, "" },
        { 2, "bf16", 163840, 7168, 1, "lm head, decode" },
        { 3, "MXFP4", 12288, 7168, 1, "" },
        { 3, "MXFP4", 3072, 3584, 1, "routed expert gate/up" },
        { 2, "bf16", 7168, 7168, 256, "prompt" },
        { 2, "bf16", 7168, 7168, 2048, "" },
        { 2, "bf16", 2048, 7168, 2048, "" },
        { 3, "MXFP4", 3072, 3584, 37, "expert, 2048-token prompt" },
        { 3, "MXFP4", 3072, 3584, 256, "" },
        { 3, "MXFP4", 3584, 3072, 2048, "" },
    };
    fprintf(f, "%-6s %7s %6s %5s %10s %8s %9s %8s  %s\n", "enc", "rows", "cols", "T", "GFLOP/s", "of peak",
            "wt GB/s", "of read", "");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double gf = 0, gbs = 0;
        if (rm_gpu_bench_product(rows[i].kind, rows[i].rows, rows[i].cols, rows[i].T, &gf, &gbs)) {
            fprintf(f, "%-6s %7d %6d %5d  (failed)\n", rows[i].enc, rows[i].rows, rows[i].cols, rows[i].T);
            continue;
        }
        fprintf(f, "%-6s %7d %6d %5d %10.0f %7.2f%% %9.0f %7.2f%%  %s\n", rows[i].enc, rows[i].rows, rows[i].cols,
                rows[i].T, gf, 100 * gf / peak, gbs, 100 * gbs / read, rows[i].what);
    }
}
