/* cmd_bench_kernels.c — `remora bench-kernels`: measures memory bandwidth and
 * the weight kernels' throughput (the work is in engine/tools/bench_kernels.c). */
#include "engine.h"
#include "commands.h"

int cmd_bench_kernels(int argc, char **argv)
{
    return rm_bench_kernels(argc, argv);
}
