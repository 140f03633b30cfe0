/* bench_kernels.c — `remora bench-kernels`: how close the weight kernels come
 * to the machine's memory bandwidth.
 *
 * It first measures the read bandwidth by streaming a buffer much larger than
 * the last-level cache, then times gemv over the K3 shapes (expert matrices
 * 3072x3584 and 3584x3072, spine 12288x7168) in MXFP4 and bf16, cycling over
 * enough distinct matrices (>= 512 MiB in all) that every product reads its
 * weights from memory. Throughput is counted in weight bytes read per second
 * (packed codes + scales for MXFP4) and compared with the read bandwidth at
 * the same thread count. This is the one engine function that prints: it is
 * the body of a command, declared as such in engine.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "engine.h"
#include "kernels/kernels.h"
#include "threadpool.h"

#define BW_BYTES   ((size_t)1 << 30)   /* bandwidth probe buffer */
#define ARENA_BYTES ((size_t)512 << 20) /* weights cycled through by a case */

const char *rm_kernels_level(void)
{
    return kern_level();
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- memory read bandwidth --------------------------------------------- */

typedef struct {
    const uint64_t *buf;
    size_t words;
    int chunks;
    uint64_t sums[256];       /* one per chunk, so the reads are not dead */
} stream;

static void stream_task(void *ud, int b, int e)
{
    stream *s = ud;
    size_t per = s->words / (size_t)s->chunks;
    for (int i = b; i < e; i++) {
        const uint64_t *p = s->buf + (size_t)i * per;
        /* eight independent sums keep several loads in flight */
        uint64_t a[8] = { 0 };
        for (size_t j = 0; j + 8 <= per; j += 8)
            for (int k = 0; k < 8; k++) a[k] += p[j + k];
        s->sums[i] = a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
    }
}

/* GB/s of streaming reads over buf with the pool's current thread count. */
static double read_bandwidth(const uint64_t *buf, size_t bytes, double seconds)
{
    stream s = { .buf = buf, .words = bytes / 8, .chunks = 256 };
    double t0 = now_s(), t;
    size_t total = 0;
    do {
        pool_for(s.chunks, stream_task, &s);
        total += bytes;
    } while ((t = now_s() - t0) < seconds);
    return total / t / 1e9;
}

/* ---- gemv throughput --------------------------------------------------- */

typedef struct {
    const char *enc;          /* "MXFP4" or "bf16" */
    int rows, cols;
} shape;

static size_t matrix_bytes(const shape *s)
{
    size_t n = (size_t)s->rows * s->cols;
    return strcmp(s->enc, "MXFP4") ? n * 2 : n / 2 + n / 32;
}

/* GB/s of weight bytes read by gemv over the matrices packed in arena. */
static double gemv_rate(const shape *s, const uint8_t *arena, const float *x, float *y,
                        double seconds)
{
    size_t mb = matrix_bytes(s);
    int count = (int)(ARENA_BYTES / mb);
    int mxfp4 = !strcmp(s->enc, "MXFP4");
    double t0 = now_s(), t;
    size_t total = 0;
    int i = 0;
    do {
        const uint8_t *w = arena + (size_t)(i++ % count) * mb;
        if (mxfp4)
            kern_gemv_mxfp4(w, w + (size_t)s->rows * s->cols / 2, x, y, s->rows, s->cols);
        else
            kern_gemv_bf16((const uint16_t *)w, x, y, s->rows, s->cols);
        total += mb;
    } while ((t = now_s() - t0) < seconds);
    return total / t / 1e9;
}

static int usage(FILE *f)
{
    fprintf(f, "usage: remora bench-kernels [--threads N] [--seconds S]\n"
               "  Measures memory read bandwidth and MXFP4/bf16 gemv throughput with\n"
               "  1 and N threads (default N = 2), S seconds per figure (default 1).\n"
               "  REMORA_SIMD=scalar|avx2|avx512 lowers the SIMD level.\n");
    return f == stdout ? 0 : 2;
}

int rm_bench_kernels(int argc, char **argv)
{
    int nthreads = 2;
    double seconds = 1.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout);
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else return usage(stderr);
    }
    if (nthreads < 1 || nthreads > 256 || !(seconds > 0 && seconds < 3600)) return usage(stderr);
    int nt[2] = { 1, nthreads };
    int nconf = nthreads > 1 ? 2 : 1;

    printf("SIMD level: %s\n", kern_level());

    /* Memory read bandwidth. */
    uint64_t *buf = aligned_alloc(4096, BW_BYTES);
    if (!buf) {
        fprintf(stderr, "remora: bench-kernels: cannot allocate %zu MiB\n", BW_BYTES >> 20);
        return 1;
    }
    memset(buf, 1, BW_BYTES);            /* fault the pages in */
    double bw[2];
    for (int c = 0; c < nconf; c++) {
        pool_set_threads(nt[c]);
        bw[c] = read_bandwidth(buf, BW_BYTES, seconds);
        printf("memory read bandwidth, %d thread%s: %6.2f GB/s\n", nt[c], nt[c] > 1 ? "s" : "",
               bw[c]);
    }
    free(buf);

    /* Weights: bytes 0x38..0x47 are normal numbers both as bf16 halves and
     * as E8M0 scales (2^-71..2^-56), so no subnormal or infinite values
     * slow down or distort the figures; the codes themselves are arbitrary. */
    uint8_t *arena = aligned_alloc(4096, ARENA_BYTES);
    float *x = malloc(12288 * sizeof *x), *y = malloc(12288 * sizeof *y);
    if (!arena || !x || !y) {
        fprintf(stderr, "remora: bench-kernels: cannot allocate %zu MiB\n", ARENA_BYTES >> 20);
        free(arena); free(x); free(y);
        pool_free();
        return 1;
    }
    uint32_t rng = 12345;
    for (size_t i = 0; i < ARENA_BYTES; i++) {
        rng = rng * 1664525u + 1013904223u;
        arena[i] = (uint8_t)(0x38 + (rng >> 28));
    }
    for (int i = 0; i < 12288; i++)
        x[i] = (float)((i * 37) % 101 - 50) / 50.0f;

    static const shape shapes[] = {
        { "MXFP4", 3072, 3584 }, { "MXFP4", 3584, 3072 }, { "MXFP4", 12288, 7168 },
        { "bf16", 3072, 3584 },  { "bf16", 3584, 3072 },  { "bf16", 12288, 7168 },
    };
    printf("\n%-6s %-12s %8s %10s %8s\n", "weights", "shape", "threads", "GB/s", "of read");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const shape *s = &shapes[i];
        char dims[32];
        snprintf(dims, sizeof dims, "%dx%d", s->rows, s->cols);
        for (int c = 0; c < nconf; c++) {
            pool_set_threads(nt[c]);
            double r = gemv_rate(s, arena, x, y, seconds);
            printf("%-7s %-12s %8d %10.2f %7.0f%%\n", s->enc, dims, nt[c], r, 100.0 * r / bw[c]);
            fflush(stdout);
        }
    }
    free(arena);
    free(x);
    free(y);
    pool_free();
    return 0;
}
