/* bench_gpu.h — the GPU rows of bench-kernels (bench_gpu.c). */
#ifndef REMORA_BENCH_GPU_H
#define REMORA_BENCH_GPU_H
#include <stdio.h>
void bench_gpu_rows(FILE *f);
#endif
