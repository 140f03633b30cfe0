/* peers.c — remora's gemm against OpenBLAS sgemm on the same shapes, for
 * tests/bench/peers.sh (which builds it against build/rel/libremora.a and
 * Debian's libopenblas; not part of make test).
 *
 * Per case (encoding, rows x cols, T inputs) and round it measures, one
 * after the other on the same threads: the FMA peak (kern_fma_probe), remora
 * (rm_bench_gemm, the figure `remora bench-kernels` prints) and cblas_sgemm
 * on the same weights decoded to fp32 — Y[T, rows] = X[T, cols] W^T, the
 * product remora computes. It prints each round and the medians, the ratio
 * remora / OpenBLAS and both as fractions of the peak. It also states
 * OpenBLAS's loss of precision against remora on one product: both take
 * the exact fp32 weights and fp32 inputs, and OpenBLAS sums in its own
 * blocked order, so the outputs differ in the last bits (the max relative
 * difference printed), where remora's order is fixed and the same at every
 * SIMD level and thread count.
 *
 * usage: peers THREADS SECONDS ROUNDS
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

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: peers THREADS SECONDS ROUNDS\n");
        return 2;
    }
    const int threads = atoi(argv[1]), rounds = atoi(argv[3]);
    const double seconds = atof(argv[2]);
    if (threads < 1 || threads > 256 || rounds < 1 || rounds > 99 || !(seconds > 0)) return 2;
    pool_set_threads(threads);
    openblas_set_num_threads(threads);
    static const gemm_case cases[] = {
        { 1, 3072, 3584, 256 }, { 1, 3072, 3584, 1024 }, { 1, 3584, 3072, 256 }, { 1, 3584, 3072, 1024 },
        { 0, 2048, 7168, 256 }, { 0, 2048, 7168, 1024 }, { 0, 12288, 7168, 256 }, { 0, 12288, 7168, 1024 },
    };
    printf("threads %d, SIMD level %s; GFLOP/s, best of %.1f-second windows, medians of %d interleaved rounds\n",
           threads, kern_level(), seconds, rounds);
    printf("%-6s %-11s %5s %8s %8s %8s %8s %8s %8s\n", "enc", "shape", "T", "peak", "remora", "openblas",
           "r/blas", "r/peak", "b/peak");
    int precision_done = 0;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const gemm_case *c = &cases[ci];
        uint8_t *raw = NULL;
        float *W = decoded_weights(c, &raw);
        float *X = malloc((size_t)c->T * c->cols * sizeof *X), *Y = malloc((size_t)c->T * c->rows * sizeof *Y);
        if (!W || !X || !Y) { fprintf(stderr, "peers: out of memory\n"); return 1; }
        for (size_t i = 0; i < (size_t)c->T * c->cols; i++) X[i] = (float)((i * 37) % 101 - 50) / 50.0f;
        if (!precision_done) {
            float *R = malloc((size_t)c->T * c->rows * sizeof *R);
            if (R) {
                if (c->mxfp4) kern_gemm_mxfp4(raw, raw + (size_t)c->rows * c->cols / 2, X, R, c->T, c->rows, c->cols);
                else kern_gemm_bf16((const uint16_t *)raw, X, R, c->T, c->rows, c->cols);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, c->T, c->rows, c->cols, 1.0f, X, c->cols, W,
                            c->cols, 0.0f, Y, c->rows);
                printf("precision: OpenBLAS sgemm (fp32 weights and inputs, its own order) vs remora on %dx%d T=%d: "
                       "max relative difference %.2g\n", c->rows, c->cols, c->T, rel_diff(R, Y, (size_t)c->T * c->rows));
                free(R);
                precision_done = 1;
            }
        }
        double pk[99], rr[99], bb[99];
        for (int r = 0; r < rounds; r++) {
            /* a pause before each, so that the other's threads have gone to
             * sleep (OpenBLAS's spin a while after a product) */
            usleep(300000);
            pk[r] = peak_rate(threads);
            rr[r] = rm_bench_gemm(c->mxfp4, c->T, c->rows, c->cols, seconds);
            usleep(300000);
            bb[r] = blas_rate(c, W, X, Y, seconds);
            fprintf(stderr, "  round %d: %s %dx%d T=%d peak %.1f remora %.1f openblas %.1f\n", r + 1,
                    c->mxfp4 ? "MXFP4" : "bf16", c->rows, c->cols, c->T, pk[r], rr[r], bb[r]);
        }
        const double p = median(pk, rounds), a = median(rr, rounds), b = median(bb, rounds);
        char dims[32];
        snprintf(dims, sizeof dims, "%dx%d", c->rows, c->cols);
        printf("%-6s %-11s %5d %8.1f %8.1f %8.1f %8.2f %8.2f %8.2f\n", c->mxfp4 ? "MXFP4" : "bf16", dims, c->T, p, a,
               b, a / b, a / p, b / p);
        fflush(stdout);
        free(raw); free(W); free(X); free(Y);
    }
    pool_free();
    return 0;
}
