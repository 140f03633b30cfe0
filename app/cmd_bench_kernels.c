/* cmd_bench_kernels.c — `remora bench-kernels`: measures memory bandwidth and
 * the weight kernels' throughput (the work is in engine/tools/bench_kernels.c),
 * then the GPU's rows when there is one (bench_gpu.c). Its options are read
 * by opts_next like every command's. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "engine.h"
#include "commands.h"
#include "opts.h"
#include "bench_gpu.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: remora bench-kernels [--threads N] [--seconds S] [--only gemv|gemm]\n"
               "  Measures the FMA peak and the memory read bandwidth, then MXFP4/bf16\n"
               "  gemv and gemm (T = 1, 16, 64, 256, 1024) throughput as fractions of\n"
               "  them, with 1 and N threads, the best of S-second windows per figure,\n"
               "  then the GPU's rows when there is one.\n"
               "  REMORA_SIMD=scalar|avx2|avx512 lowers the SIMD level.\n");
    static const char *const text[OPT_COUNT] = { [OPT_THREADS] = "the second thread count (default 2)" };
    opts_help(f, OPT_BIT(OPT_THREADS), text);
    opts_help_line(f, "--seconds S", "the length of a timing window (default 1; in (0, 3600])");
    opts_help_line(f, "--only gemv|gemm", "skip the other table (and the bandwidth probe with gemm)");
}

int cmd_bench_kernels(int argc, char **argv)
{
    /* --threads is the shared option (opts.c's rule): the second column's count */
    opts_shared so = { .open = { .threads = 2 } };
    int tables = RM_BENCH_GEMV | RM_BENCH_GEMM;
    double seconds = 1.0;
    enum { O_SECONDS = 256, O_ONLY, O_HELP };
    static const struct option own[] = {
        { "seconds", required_argument, 0, O_SECONDS }, { "only", required_argument, 0, O_ONLY },
        { "help", no_argument, 0, O_HELP }, { 0, 0, 0, 0 } };
    const struct option *opts = opts_longopts(own, OPT_BIT(OPT_THREADS));
    int c;
    opterr = 0;
    while ((c = opts_next("bench-kernels", argc, argv, opts, &so)) >= 0) {
        switch (c) {
        case O_SECONDS: if (opts_real_arg("bench-kernels", "seconds", optarg, 0, 3600, 1, &seconds)) return 2; break;
        case O_ONLY:
            if (!strcmp(optarg, "gemv")) tables = RM_BENCH_GEMV;
            else if (!strcmp(optarg, "gemm")) tables = RM_BENCH_GEMM;
            else {
                fprintf(stderr, "remora bench-kernels: --only %s: must be gemv or gemm\n", optarg);
                return 2;
            }
            break;
        case O_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (c == OPTS_REFUSED) return 2;
    if (optind < argc) { usage(stderr); return 2; }
    const int rc = rm_bench_kernels(so.open.threads, seconds, tables);
    if (rc == 0) bench_gpu_rows(stdout);
    return rc;
}
