/* peers.c — remora's products against their peers on issue #30's shapes,
 * for tests/bench/peers.sh (which builds it against build/rel/libremora.a,
 * Debian's libopenblas and, when it has a ggml source tree, two ggml builds
 * of its own under build/peers; not part of make test).
 *
 * Per case (encoding, rows x cols, T inputs) and round it measures, one
 * after the other on the same threads: the ceiling (for a gemm the FMA peak,
 * kern_fma_probe on every thread; for a gemv, T = 1, the read bandwidth,
 * rm_bench_memory), remora (rm_bench_gemm / rm_bench_gemv, the figures
 * `remora bench-kernels` prints), cblas_sgemm on the same weights decoded to
 * fp32 — Y[T, rows] = X[T, cols] W^T, the product remora computes; no gemv
 * peer: on fp32 weights it reads two to eight times the bytes — and each ggml
 * build given as a shared object (peers_ggml.h; peers_ggml.c says what each
 * build does to weights and inputs). It prints each round on stderr, then
 * per case the medians over the rounds, remora / each peer and each as a
 * fraction of the ceiling. The gemv rows cycle through 512 MiB of matrices,
 * beyond the caches, and count GB/s of weights.
 *
 * It states each peer's loss of precision against remora on one product of
 * each encoding, as the max relative difference of the outputs: OpenBLAS
 * takes the exact fp32 weights and inputs but sums in its own blocked order;
 * ggml rounds the inputs (bf16 or q8_0), where remora keeps fp32 and a
 * fixed order, the same at every SIMD level and thread count.
 *
 * usage: peers THREADS SECONDS ROUNDS all|gemm|gemv [GGML_PEER.so ...]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cblas.h>
#include "engine.h"
#include "kernels/kernels.h"
#include "base/threadpool.h"
#include "tools/bench.h"
#include <dlfcn.h>
#include "tests/bench/peers_ggml.h"

void openblas_set_num_threads(int n);

typedef struct { int mxfp4, rows, cols, T; } gemm_case;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The weights rm_bench_gemm measures (its byte pattern), decoded to fp32. */
static float *decoded_weights(const gemm_case *c, uint8_t **raw)
{
    const size_t n = (size_t)c->rows * c->cols;
    const size_t wbytes = c->mxfp4 ? n / 2 + n / 32 : n * 2;
    uint8_t *w = malloc(wbytes);
    float *f = malloc(n * sizeof *f);
    if (!w || !f) { free(w); free(f); return NULL; }
    uint32_t rng = 12345;
    for (size_t i = 0; i < wbytes; i++) {
        rng = rng * 1664525u + 1013904223u;
        w[i] = (uint8_t)(0x38 + (rng >> 28));
    }
    for (int r = 0; r < c->rows; r++)
        for (int k = 0; k < c->cols; k++) {
            const size_t i = (size_t)r * c->cols + k;
            if (c->mxfp4) {
                const uint8_t byte = w[i / 2], code = k & 1 ? byte >> 4 : byte & 15;
                f[i] = kern_e2m1[code] * kern_e8m0(w[n / 2 + i / 32]);
            } else {
                f[i] = bf16_to_f32((uint16_t)(w[2 * i] | w[2 * i + 1] << 8));
            }
        }
    *raw = w;
    return f;
}

/* Best GFLOP/s of sgemm over about `seconds` (at least three products). */
static double blas_rate(const gemm_case *c, const float *W, const float *X, float *Y, double seconds)
{
    const double flops = 2.0 * c->T * c->rows * c->cols;
    double best = 0, end = rm_now() + seconds;
    int n = 0;
    do {
        double t0 = rm_now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, c->T, c->rows, c->cols, 1.0f, X, c->cols, W, c->cols,
                    0.0f, Y, c->rows);
        double g = flops / (rm_now() - t0) / 1e9;
        if (g > best) best = g;
    } while (rm_now() < end || ++n < 3);
    return best;
}

static void peak_task(void *ud, int b, int e)
{
    double *f = ud;
    for (int i = b; i < e; i++) f[i] = kern_fma_probe(2000000L);
}

/* GFLOP/s of the FMA probe on every thread of the pool (best of five). */
static double peak_rate(int threads)
{
    double best = 0, f[256];
    for (int k = 0; k < 5; k++) {
        double t0 = rm_now(), sum = 0;
        pool_for(threads, peak_task, f);
        for (int i = 0; i < threads; i++) sum += f[i];
        double g = sum / (rm_now() - t0) / 1e9;
        if (g > best) best = g;
    }
    return best;
}

/* Max |a - b| / max |a| over the outputs. */
static double rel_diff(const float *a, const float *b, size_t n)
{
    double d = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        if (fabs(a[i] - b[i]) > d) d = fabs(a[i] - b[i]);
        if (fabs(a[i]) > m) m = fabs(a[i]);
    }
    return m > 0 ? d / m : 0;
}

/* Weights cycled through by the gemv rows, for remora and ggml. */
#define GEMV_ARENA ((size_t)512 << 20)
#define MAX_GG 4

static size_t weight_bytes(const gemm_case *c)
{
    const size_t n = (size_t)c->rows * c->cols;
    return c->mxfp4 ? n / 2 + n / 32 : n * 2;
}

/* The api of the ggml build in shared object `path`, opened with its own
 * symbols local to it, so that two builds live side by side. */
static const peers_ggml_api *gg_open(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const peers_ggml_api *api = h ? dlsym(h, "peers_ggml") : NULL;
    if (!api) fprintf(stderr, "peers: %s: %s\n", path, dlerror());
    return api;
}

int main(int argc, char **argv)
{
    const char *only = argc >= 5 ? argv[4] : "";
    if (argc < 5 || argc > 5 + MAX_GG || (strcmp(only, "all") && strcmp(only, "gemm") && strcmp(only, "gemv"))) {
        fprintf(stderr, "usage: peers THREADS SECONDS ROUNDS all|gemm|gemv [GGML_PEER.so ...]\n");
        return 2;
    }
    const int threads = atoi(argv[1]), rounds = atoi(argv[3]), ngg = argc - 5;
    const double seconds = atof(argv[2]);
    if (threads < 1 || threads > 256 || rounds < 1 || rounds > 99 || !(seconds > 0)) return 2;
    const peers_ggml_api *gg[MAX_GG];
    for (int i = 0; i < ngg; i++)
        if (!(gg[i] = gg_open(argv[5 + i]))) return 1;
    pool_set_threads(threads);
    openblas_set_num_threads(threads);
    static const gemm_case cases[] = {
        { 1, 3072, 3584, 256 }, { 1, 3072, 3584, 1024 }, { 1, 3584, 3072, 256 }, { 1, 3584, 3072, 1024 },
        { 0, 2048, 7168, 256 }, { 0, 2048, 7168, 1024 }, { 0, 12288, 7168, 256 }, { 0, 12288, 7168, 1024 },
        { 1, 12288, 7168, 1 }, { 0, 12288, 7168, 1 },
    };
    printf("threads %d, SIMD level %s; best of %.2g-second windows, medians of %d interleaved rounds\n",
           threads, kern_level(), seconds, rounds);
    for (int i = 0; i < ngg; i++) printf("peer %s: %s\n", gg[i]->tag, gg[i]->name);
    printf("gemm rows: GFLOP/s, ceiling the FMA peak; gemv rows (T = 1): GB/s of weights, ceiling the read bandwidth\n");
    char line[512];
    int at = snprintf(line, sizeof line, "%-6s %-11s %5s %8s %8s %8s", "enc", "shape", "T", "ceiling", "remora",
                      "openblas");
    for (int i = 0; i < ngg; i++) at += snprintf(line + at, sizeof line - at, " %8s", gg[i]->tag);
    at += snprintf(line + at, sizeof line - at, " %8s", "r/blas");
    for (int i = 0; i < ngg; i++) at += snprintf(line + at, sizeof line - at, "  r/%-5s", gg[i]->tag);
    at += snprintf(line + at, sizeof line - at, " %8s", "r/ceil");
    for (int i = 0; i < ngg; i++) at += snprintf(line + at, sizeof line - at, "  %-5s/c", gg[i]->tag);
    puts(line);
    int blas_said = 0, gg_said[2] = { 0, 0 };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const gemm_case *c = &cases[ci];
        const int gemv = c->T == 1;
        if (strcmp(only, "all") && (only[3] == 'v') != gemv) continue;
        uint8_t *raw = NULL;
        float *W = decoded_weights(c, &raw);
        float *X = malloc((size_t)c->T * c->cols * sizeof *X), *Y = malloc((size_t)c->T * c->rows * sizeof *Y);
        float *R = malloc((size_t)c->T * c->rows * sizeof *R);
        if (!W || !X || !Y || !R) { fprintf(stderr, "peers: out of memory\n"); return 1; }
        /* inputs in [-1, 1] (bench_kernels.c's pattern, without its
         * unsigned wrap-around to 3.7e17 for half of them, which ggml's
         * rounded inputs cannot hold) */
        for (size_t i = 0; i < (size_t)c->T * c->cols; i++) X[i] = (float)((int)(i * 37 % 101) - 50) / 50.0f;
        if (c->mxfp4) kern_gemm_mxfp4(raw, raw + (size_t)c->rows * c->cols / 2, X, R, c->T, c->rows, c->cols);
        else kern_gemm_bf16((const uint16_t *)raw, X, R, c->T, c->rows, c->cols);
        if (!blas_said && !gemv) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, c->T, c->rows, c->cols, 1.0f, X, c->cols, W,
                        c->cols, 0.0f, Y, c->rows);
            printf("precision: openblas (fp32 weights and inputs, its own order) vs remora on %dx%d T=%d: "
                   "max relative difference %.2g\n", c->rows, c->cols, c->T, rel_diff(R, Y, (size_t)c->T * c->rows));
            blas_said = 1;
        }
        void *gh[MAX_GG];
        const int copies = gemv ? (int)(GEMV_ARENA / weight_bytes(c)) : 1;
        for (int i = 0; i < ngg; i++) {
            size_t differ = 0;
            if (!(gh[i] = gg[i]->setup(c->mxfp4, c->rows, c->cols, c->T, W, raw, X, copies, threads, &differ))) {
                fprintf(stderr, "peers: %s cannot set up %dx%d\n", gg[i]->tag, c->rows, c->cols);
                return 1;
            }
            if (!gg_said[c->mxfp4] && !gemv && !gg[i]->output(gh[i], Y))
                printf("precision: %s %s (inputs rounded to %s; %zu of its weights differ from remora's) vs remora "
                       "on %dx%d T=%d: max relative difference %.2g\n", gg[i]->tag, c->mxfp4 ? "MXFP4" : "bf16",
                       c->mxfp4 ? "q8_0" : "bf16", differ, c->rows, c->cols, c->T,
                       rel_diff(R, Y, (size_t)c->T * c->rows));
        }
        if (!gemv && ngg) gg_said[c->mxfp4] = 1;
        double pk[99], rr[99], bb[99], gr[MAX_GG][99];
        for (int r = 0; r < rounds; r++) {
            /* a pause before each, so that the other's threads have gone to
             * sleep (OpenBLAS's spin a while after a product) */
            usleep(300000);
            pk[r] = gemv ? rm_bench_memory(seconds, 0) : peak_rate(threads);
            rr[r] = gemv ? rm_bench_gemv(c->mxfp4, c->rows, c->cols, GEMV_ARENA, seconds, 0)
                         : rm_bench_gemm(c->mxfp4, c->T, c->rows, c->cols, seconds);
            usleep(300000);
            bb[r] = gemv ? 0 : blas_rate(c, W, X, Y, seconds);
            at = snprintf(line, sizeof line, "  round %d: %s %dx%d T=%d ceiling %.1f remora %.1f", r + 1,
                          c->mxfp4 ? "MXFP4" : "bf16", c->rows, c->cols, c->T, pk[r], rr[r]);
            if (!gemv) at += snprintf(line + at, sizeof line - at, " openblas %.1f", bb[r]);
            for (int i = 0; i < ngg; i++) {
                usleep(300000);
                gr[i][r] = gg[i]->rate(gh[i], seconds);
                at += snprintf(line + at, sizeof line - at, " %s %.1f", gg[i]->tag, gr[i][r]);
            }
            fprintf(stderr, "%s\n", line);
        }
        const double p = median(pk, rounds), a = median(rr, rounds), b = median(bb, rounds);
        double q[MAX_GG];
        for (int i = 0; i < ngg; i++) {
            q[i] = median(gr[i], rounds);
            gg[i]->release(gh[i]);
        }
        char dims[32];
        snprintf(dims, sizeof dims, "%dx%d", c->rows, c->cols);
        at = snprintf(line, sizeof line, "%-6s %-11s %5d %8.1f %8.1f", c->mxfp4 ? "MXFP4" : "bf16", dims, c->T, p, a);
        if (b > 0) at += snprintf(line + at, sizeof line - at, " %8.1f", b);
        else at += snprintf(line + at, sizeof line - at, " %8s", "-");
        for (int i = 0; i < ngg; i++) at += snprintf(line + at, sizeof line - at, " %8.1f", q[i]);
        if (b > 0) at += snprintf(line + at, sizeof line - at, " %8.2f", a / b);
        else at += snprintf(line + at, sizeof line - at, " %8s", "-");
        for (int i = 0; i < ngg; i++) at += snprintf(line + at, sizeof line - at, " %8.2f", q[i] > 0 ? a / q[i] : 0);
        at += snprintf(line + at, sizeof line - at, " %8.2f", a / p);
        for (int i = 0; i < ngg; i++) at += snprintf(line + at, sizeof line - at, " %8.2f", q[i] / p);
        puts(line);
        fflush(stdout);
        free(raw); free(W); free(X); free(Y); free(R);
    }
    pool_free();
    return 0;
}
