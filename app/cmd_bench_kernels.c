/* cmd_bench_kernels.c — `remora bench-kernels`: measures memory bandwidth and
 * the weight kernels' throughput (the work is in engine/tools/bench_kernels.c),
 * then the GPU's rows when there is one (bench_gpu.c). */
#include <string.h>
#include "engine.h"
#include "commands.h"
#include "bench_gpu.h"

int cmd_bench_kernels(int argc, char **argv)
{
    const int rc = rm_bench_kernels(argc, argv);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return rc;
    if (rc == 0) bench_gpu_rows(stdout);
    return rc;
}
