/* bench.h — the kernel and memory probes of bench_kernels.c that the
 * forecast (forecast.c) measures a machine with; rm_bench_gemm, which
 * `remora bench` calls, stays in engine.h. */
#ifndef REMORA_TOOLS_BENCH_H
#define REMORA_TOOLS_BENCH_H
#include <stddef.h>

/* rm_bench_gemm with `typical`: the median window's rate instead of the
 * best, what a long run gets on cores shared as they are now; `best`, when
 * not NULL, gets the best window's from the same windows (the figure
 * rm_bench_gemm and `remora bench`'s ceilings give). */
double rm_bench_gemm_rate(int mxfp4, int T, int rows, int cols, double seconds, int typical, double *best);
/* The decode gemv's rate in GB/s of weights over an arena of arena_bytes
 * of rows x cols matrices (best or typical window, as above); -1 when it
 * cannot run. (The memory read ceiling, rm_bench_memory, is in engine.h:
 * `remora bench` uses it too.) */
double rm_bench_gemv(int mxfp4, int rows, int cols, size_t arena_bytes, double seconds, int typical);

#endif
