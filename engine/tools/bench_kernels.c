/* bench_kernels.c — `remora bench-kernels`: how close the weight kernels come
 * to the machine's ceilings, measured in the same run.
 *
 * The ceilings: the FMA peak (kern_fma_probe's register-only fmas, on one
 * thread and on every thread at once), the gemm micro-kernel's own rate on
 * operands in L1 (kern_tile_probe, likewise) and the memory read bandwidth
 * (kern_read_probe streaming a buffer much larger than the last-level
 * cache). Then it times gemv over the K3 shapes (expert matrices 3072x3584
 * and 3584x3072, spine 12288x7168 and a 7168 -> 2048 projection) in MXFP4
 * and bf16, cycling over enough distinct matrices (>= 512 MiB in all) that
 * every product reads its weights from memory, counted in weight bytes
 * read per second (packed codes + scales for MXFP4) and printed as a
 * fraction of the read bandwidth at the same thread count; and gemm at
 * T = 1, 16, 64, 256 and 1024 inputs over K3's expert and spine shapes,
 * weights in cache, as a fraction of the FMA peak and of the tile's rate
 * at the same thread count (rm_bench_gemm, which
 * `remora bench --prompt-tokens` also calls). This is the one engine
 * function that prints: it is the body of a command, declared as such in
 * engine.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "tools/bench.h"
#include "kernels/kernels.h"
#include "format/weights.h"
#include "base/threadpool.h"

#define BW_BYTES   ((size_t)1 << 30)   /* bandwidth probe buffer */
#define ARENA_BYTES ((size_t)512 << 20) /* weights cycled through by a case */

/* ---- timing ------------------------------------------------------------ */

/* Runs step(ctx, 0), step(ctx, 1), ... (each returns the bytes it read) for
 * about `seconds`, in ten windows, and returns the best window's GB/s. The
 * cores may be shared with other work; the best window is the figure least
 * disturbed by it, and the bandwidth and the kernels are measured alike.
 * With `typical`, the median window's instead: what a long run on cores
 * shared as they are now gets (the forecast's figure: on this 2-core host
 * under a load of 10, best windows of the bf16 gemv gave 4.4-6.4 GB/s while
 * a decode's weights went at 3.5-3.9 GB/s). best_out, when not NULL, gets
 * the best window's either way. */
static int cmp_rate(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double window_rate(size_t (*step)(void *ctx, int i), void *ctx, double seconds, int typical, double *best_out)
{
    double best = 0, rates[64], end = rm_now() + seconds;
    int i = 0, n = 0, windows = 0;
    do {
        double t0 = rm_now(), t;
        size_t bytes = 0;
        do bytes += step(ctx, i++);
        while ((t = rm_now() - t0) < seconds / 10);
        if (bytes / t / 1e9 > best) best = bytes / t / 1e9;
        if (n < 64) rates[n++] = bytes / t / 1e9;
    } while (rm_now() < end || ++windows < 3);     /* at least three windows of long steps */
    if (best_out) *best_out = best;
    if (!typical) return best;
    qsort(rates, (size_t)n, sizeof *rates, cmp_rate);
    return rates[n / 2];
}

static double best_rate(size_t (*step)(void *ctx, int i), void *ctx, double seconds)
{
    return window_rate(step, ctx, seconds, 0, NULL);
}

/* ---- memory read bandwidth --------------------------------------------- */

typedef struct {
    const float *buf;
    size_t n;                 /* floats */
    int chunks;
    float sums[256];          /* one per chunk, so the reads are not dead */
} stream;

/* Reads each chunk once with the widest loads and independent adds
 * (kern_read_probe): the plain read loop the kernels are judged against. */
static void stream_task(void *ud, int b, int e)
{
    stream *s = ud;
    size_t per = s->n / (size_t)s->chunks;
    for (int i = b; i < e; i++)
        s->sums[i] = kern_read_probe(s->buf + (size_t)i * per, per);
}

/* One step of the probe reads a quarter of the buffer (256 MiB, still far
 * beyond any cache), so the windows of best_rate can be short. */
static size_t stream_step(void *ctx, int i)
{
    const stream *whole = ctx;
    stream s = *whole;
    s.n = whole->n / 4;
    s.buf = whole->buf + (size_t)(i % 4) * s.n;
    pool_for(s.chunks, stream_task, &s);
    return s.n * sizeof *s.buf;
}

/* ---- FMA peak ---------------------------------------------------------- */

/* Rounds of kern_fma_probe per pool item: a few milliseconds. */
#define PEAK_ROUNDS 1000000L

static void peak_task(void *ud, int b, int e)
{
    double *flops = ud;
    for (int i = b; i < e; i++) flops[i] = kern_fma_probe(PEAK_ROUNDS);
}

/* Calls of kern_tile_probe per pool item: under a millisecond with AVX-512,
 * 0.16 s at the scalar level (0.5 GFLOP/s). */
#define TILE_ROUNDS 5000L

static void tile_task(void *ud, int b, int e)
{
    double *flops = ud;
    for (int i = b; i < e; i++) flops[i] = kern_tile_probe(TILE_ROUNDS);
}

/* A compute ceiling: one of the tasks above on n threads. */
typedef struct {
    int n;
    void (*task)(void *ud, int b, int e);
} probe;

/* One probe on every thread of the pool; returns its flops (as bytes for
 * best_rate, which then reports GFLOP/s). */
static size_t peak_step(void *ctx, int i)
{
    (void)i;
    const probe *pr = ctx;
    double flops[256];
    pool_for(pr->n, pr->task, flops);
    double sum = 0;
    for (int k = 0; k < pr->n; k++) sum += flops[k];
    return (size_t)sum;
}

/* ---- gemv throughput --------------------------------------------------- */

typedef struct {
    const char *enc;          /* "MXFP4" or "bf16" */
    int rows, cols;
} shape;

/* Bytes of one matrix of the shape (codes and scales for MXFP4), as the
 * checkpoint encodes it. */
static size_t matrix_bytes(const shape *s)
{
    wmat m = { strcmp(s->enc, "MXFP4") ? WM_BF16 : WM_MXFP4, NULL, NULL, s->rows, s->cols, 0, 0, 0 };
    uint64_t scale_bytes, bytes = wmat_bytes(&m, &scale_bytes);
    return (size_t)(bytes + scale_bytes);
}

typedef struct {
    const shape *s;
    const uint8_t *arena;
    int count;                /* distinct matrices in the arena */
    const float *x;
    float *y;
} gemv_bench;

/* One gemv on the next matrix of the arena. */
static size_t gemv_step(void *ctx, int i)
{
    const gemv_bench *g = ctx;
    const shape *s = g->s;
    size_t mb = matrix_bytes(s);
    const uint8_t *w = g->arena + (size_t)(i % g->count) * mb;
    if (!strcmp(s->enc, "MXFP4"))
        kern_gemv_mxfp4(w, w + (size_t)s->rows * s->cols / 2, g->x, g->y, s->rows, s->cols);
    else
        kern_gemv_bf16((const uint16_t *)w, g->x, g->y, s->rows, s->cols);
    return mb;
}

/* Weights for the kernels: bytes 0x38..0x47 are normal numbers both as
 * bf16 halves and as E8M0 scales (2^-71..2^-56), so no subnormal or
 * infinite values slow down or distort the figures; the codes themselves
 * are arbitrary. */
static void fill_weights(uint8_t *w, size_t n)
{
    /* eight bytes from the top 32 bits of each 64-bit step: a byte per
     * step took 1.13 s per 512 MB arena here (0.40 s so, under a load of
     * 3), and each forecast fills two */
    uint64_t rng = 12345;
    for (size_t i = 0; i < n; i += 8) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        for (size_t j = 0; j < 8 && i + j < n; j++) w[i + j] = (uint8_t)(0x38 + ((rng >> (32 + 4 * j)) & 15));
    }
}

/* ---- gemm throughput (the compute ceiling of a prefill pass) ---------- */

typedef struct {
    int mxfp4, T, rows, cols;
    const uint8_t *w;
    const float *X;
    float *Y;
} gemm_bench;

/* One product of T rows; returns its flops (counted as bytes for
 * best_rate, which then reports GFLOP/s). */
static size_t gemm_step(void *ctx, int i)
{
    (void)i;
    const gemm_bench *g = ctx;
    if (g->mxfp4)
        kern_gemm_mxfp4(g->w, g->w + (size_t)g->rows * g->cols / 2, g->X, g->Y, g->T, g->rows, g->cols);
    else
        kern_gemm_bf16((const uint16_t *)g->w, g->X, g->Y, g->T, g->rows, g->cols);
    return 2 * (size_t)g->T * g->rows * g->cols;
}

double rm_bench_gemm(int mxfp4, int T, int rows, int cols, double seconds)
{
    return rm_bench_gemm_rate(mxfp4, T, rows, cols, seconds, 0, NULL);
}

double rm_bench_gemm_rate(int mxfp4, int T, int rows, int cols, double seconds, int typical, double *best)
{
    if (T < 1 || rows < 1 || cols < 32 || cols % 32 || !(seconds > 0)) return -1;
    const size_t wbytes = mxfp4 ? (size_t)rows * cols / 2 + (size_t)rows * cols / 32 : (size_t)rows * cols * 2;
    uint8_t *w = malloc(wbytes);
    float *X = malloc((size_t)T * cols * sizeof *X), *Y = malloc((size_t)T * rows * sizeof *Y);
    double r = -1;
    if (w && X && Y) {
        fill_weights(w, wbytes);
        for (size_t i = 0; i < (size_t)T * cols; i++) X[i] = (float)((int)((i * 37) % 101) - 50) / 50.0f;   /* in [-1, 1]: size_t arithmetic wrapped to 3.7e17 */
        gemm_bench g = { mxfp4, T, rows, cols, w, X, Y };
        r = window_rate(gemm_step, &g, seconds, typical, best);
    }
    free(w);
    free(X);
    free(Y);
    return r;
}

/* The memory read ceiling: the probe above over a 1 GiB buffer, on the
 * compute pool as it is set; -1 when the buffer cannot be had. */
double rm_bench_memory(double seconds, int typical)
{
    float *buf = aligned_alloc(4096, BW_BYTES);
    if (!buf || !(seconds > 0)) { free(buf); return -1; }
    for (size_t i = 0; i < BW_BYTES / sizeof *buf; i++) buf[i] = 1.0f;   /* faults the pages in */
    stream st = { .buf = buf, .n = BW_BYTES / sizeof *buf, .chunks = 256 };
    double r = window_rate(stream_step, &st, seconds, typical, NULL);
    free(buf);
    return r;
}

/* The decode kernel's rate in GB/s of weights: gemvs cycling through an
 * arena of `arena_bytes` of rows x cols matrices (far beyond any cache, as
 * a token's weights are), in about `seconds` (window_rate). */
double rm_bench_gemv(int mxfp4, int rows, int cols, size_t arena_bytes, double seconds, int typical)
{
    const shape s = { mxfp4 ? "MXFP4" : "bf16", rows, cols };
    const size_t mb = matrix_bytes(&s);
    if (rows < 1 || cols < 32 || cols % 32 || !(seconds > 0) || arena_bytes < mb) return -1;
    uint8_t *arena = aligned_alloc(4096, (arena_bytes + 4095) / 4096 * 4096);
    float *x = malloc((size_t)cols * sizeof *x), *y = malloc((size_t)rows * sizeof *y);
    double r = -1;
    if (arena && x && y) {
        fill_weights(arena, arena_bytes);
        for (int i = 0; i < cols; i++) x[i] = (float)((i * 37) % 101 - 50) / 50.0f;
        gemv_bench g = { .s = &s, .arena = arena, .count = (int)(arena_bytes / mb), .x = x, .y = y };
        r = window_rate(gemv_step, &g, seconds, typical, NULL);
    }
    free(arena);
    free(x);
    free(y);
    return r;
}

/* The gemv table: weights from memory, as a fraction of the read
 * bandwidth bw[c] at thread count nt[c]. Returns 0, or 1 when out of
 * memory. */
static int gemv_table(const int *nt, const double *bw, int nconf, double seconds)
{
    /* Weights: bytes 0x38..0x47 are normal numbers both as bf16 halves and
     * as E8M0 scales (2^-71..2^-56), so no subnormal or infinite values
     * slow down or distort the figures; the codes themselves are arbitrary. */
    uint8_t *arena = aligned_alloc(4096, ARENA_BYTES);
    float *x = malloc(12288 * sizeof *x), *y = malloc(12288 * sizeof *y);
    if (!arena || !x || !y) {
        fprintf(stderr, "remora: bench-kernels: cannot allocate %zu MiB\n", ARENA_BYTES >> 20);
        free(arena); free(x); free(y);
        return 1;
    }
    fill_weights(arena, ARENA_BYTES);
    for (int i = 0; i < 12288; i++)
        x[i] = (float)((i * 37) % 101 - 50) / 50.0f;

    static const shape shapes[] = {
        { "MXFP4", 3072, 3584 }, { "MXFP4", 3584, 3072 }, { "MXFP4", 2048, 7168 }, { "MXFP4", 12288, 7168 },
        { "bf16", 3072, 3584 },  { "bf16", 3584, 3072 },  { "bf16", 2048, 7168 },  { "bf16", 12288, 7168 },
    };
    printf("\n%-7s %-12s %8s %10s %8s\n", "weights", "gemv", "threads", "GB/s", "of read");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const shape *s = &shapes[i];
        char dims[32];
        snprintf(dims, sizeof dims, "%dx%d", s->rows, s->cols);
        for (int c = 0; c < nconf; c++) {
            pool_set_threads(nt[c]);
            gemv_bench g = { .s = s, .arena = arena, .count = (int)(ARENA_BYTES / matrix_bytes(s)),
                             .x = x, .y = y };
            double r = best_rate(gemv_step, &g, seconds);
            printf("%-7s %-12s %8d %10.2f %8.2f\n", s->enc, dims, nt[c], r, r / bw[c]);
            fflush(stdout);
        }
    }
    free(arena);
    free(x);
    free(y);
    return 0;
}

/* The gemm table: weights in cache, as a fraction of the FMA peak pk[c]
 * and of the micro-kernel's own rate in L1 tk[c] at thread count nt[c]: K3's routed experts (MXFP4, 3072 wide on the
 * 3584-wide latent: 3072x3584 up and gate, 3584x3072 down) and bf16 spine
 * shapes (a 7168 -> 2048 projection, the 12288x7168 gate and its
 * 7168x12288 transpose, the output projection). */
static void gemm_table(const int *nt, const double *pk, const double *tk, int nconf, double seconds)
{
    static const shape gemms[] = {
        { "MXFP4", 3072, 3584 }, { "MXFP4", 3584, 3072 },
        { "bf16", 2048, 7168 },  { "bf16", 12288, 7168 }, { "bf16", 7168, 12288 },
    };
    static const int Ts[] = { 1, 16, 64, 256, 1024 };
    printf("\n%-7s %-12s %6s %8s %10s %8s %8s\n", "weights", "gemm", "T", "threads", "GFLOP/s", "of peak",
           "of tile");
    for (size_t i = 0; i < sizeof gemms / sizeof gemms[0]; i++) {
        const shape *s = &gemms[i];
        char dims[32];
        snprintf(dims, sizeof dims, "%dx%d", s->rows, s->cols);
        for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++)
            for (int c = 0; c < nconf; c++) {
                pool_set_threads(nt[c]);
                double r = rm_bench_gemm(!strcmp(s->enc, "MXFP4"), Ts[ti], s->rows, s->cols, seconds);
                printf("%-7s %-12s %6d %8d %10.1f %8.2f %8.2f\n", s->enc, dims, Ts[ti], nt[c], r, r / pk[c],
                       r / tk[c]);
                fflush(stdout);
            }
    }
}

int rm_bench_kernels(int nthreads, double seconds, int tables)
{
    int nt[2] = { 1, nthreads };
    int nconf = nthreads > 1 ? 2 : 1;

    printf("SIMD level: %s\n", kern_level());

    /* The FMA peak: register-only fmas on every thread at once. */
    double pk[2], tk[2];
    for (int c = 0; c < nconf; c++) {
        pool_set_threads(nt[c]);
        probe pr = { nt[c], peak_task };
        pk[c] = best_rate(peak_step, &pr, seconds);
        printf("fma peak, %d thread%s: %8.1f GFLOP/s\n", nt[c], nt[c] > 1 ? "s" : "", pk[c]);
    }
    /* The gemm micro-kernel on operands in L1: the ceiling of the gemm
     * rows' tile, beside the FMA peak. */
    for (int c = 0; c < nconf && (tables & RM_BENCH_GEMM); c++) {
        pool_set_threads(nt[c]);
        probe pr = { nt[c], tile_task };
        tk[c] = best_rate(peak_step, &pr, seconds);
        printf("gemm tile in L1, %d thread%s: %8.1f GFLOP/s (%.2f of peak)\n", nt[c], nt[c] > 1 ? "s" : "",
               tk[c], tk[c] / pk[c]);
    }

    /* Memory read bandwidth. */
    double bw[2];
    if (tables & RM_BENCH_GEMV) {
        float *buf = aligned_alloc(4096, BW_BYTES);
        if (!buf) {
            fprintf(stderr, "remora: bench-kernels: cannot allocate %zu MiB\n", BW_BYTES >> 20);
            pool_free();
            return 1;
        }
        for (size_t i = 0; i < BW_BYTES / sizeof *buf; i++)   /* faults the pages in */
            buf[i] = 1.0f;
        for (int c = 0; c < nconf; c++) {
            pool_set_threads(nt[c]);
            stream st = { .buf = buf, .n = BW_BYTES / sizeof *buf, .chunks = 256 };
            bw[c] = best_rate(stream_step, &st, seconds);
            printf("memory read bandwidth, %d thread%s: %6.2f GB/s\n", nt[c], nt[c] > 1 ? "s" : "",
                   bw[c]);
        }
        free(buf);
        if (gemv_table(nt, bw, nconf, seconds)) {
            pool_free();
            return 1;
        }
    }
    if (tables & RM_BENCH_GEMM)
        gemm_table(nt, pk, tk, nconf, seconds);
    pool_free();
    return 0;
}
