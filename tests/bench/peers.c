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
 * Built with PEERS_GGML (peers.sh does, against a ggml build of its own
 * outside the tree), each round also measures ggml's CPU backend on the
 * same weights: bf16 as they are, MXFP4 requantized by ggml (lossless: the
 * weights are exact MXFP4 values, which it checks), MXFP4 in its buffer of
 * repacked weights when PEERS_GGML_REPACK is 1 (as llama.cpp loads them)
 * and otherwise in its plain CPU buffer. ggml rounds the inputs — to bf16 for bf16
 * weights, to 8-bit blocks (q8_0) for MXFP4 — so it states that loss against
 * remora's exact fp32 as well. The gemv rows (T = 1) cycle both through
 * 512 MiB of matrices, beyond the caches, and print GB/s of weights.
 *
 * usage: peers THREADS SECONDS ROUNDS [gemm|gemv]   (the last: only those rows)
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
#ifdef PEERS_GGML
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#endif

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

/* Weights cycled through by the gemv rows, for both. */
#define GEMV_ARENA ((size_t)512 << 20)

#ifdef PEERS_GGML
static size_t weight_bytes(const gemm_case *c)
{
    const size_t n = (size_t)c->rows * c->cols;
    return c->mxfp4 ? n / 2 + n / 32 : n * 2;
}

#ifndef PEERS_GGML_REPACK
#define PEERS_GGML_REPACK 0
#endif
/* One case in ggml: `copies` weight tensors of the same values (the gemv's
 * arena), one input, a graph of one mul_mat per copy. */
typedef struct {
    ggml_backend_t be;
    struct ggml_context *wctx, *gctx;
    ggml_backend_buffer_t wbuf, gbuf;
    struct ggml_cgraph *graph;
    struct ggml_tensor *out;
    int copies;
} gg_case;

/* The buffer type llama.cpp puts the CPU's weights of this type in: the
 * repacking one for MXFP4 when asked for and present (it repacks no bf16:
 * those stay in the plain CPU buffer, where LLAMAFILE's tinyBLAS takes
 * them), else the plain CPU buffer. */
static ggml_backend_buffer_type_t gg_weight_buft(enum ggml_type type)
{
    if (!PEERS_GGML_REPACK || type != GGML_TYPE_MXFP4) return ggml_backend_cpu_buffer_type();
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    ggml_backend_reg_t reg = dev ? ggml_backend_dev_backend_reg(dev) : NULL;
    ggml_backend_dev_get_extra_bufts_t get =
        reg ? (ggml_backend_dev_get_extra_bufts_t)ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts")
            : NULL;
    ggml_backend_buffer_type_t *b = get ? get(dev) : NULL;
    for (; b && *b; b++)
        if (strstr(ggml_backend_buft_name(*b), "REPACK")) return *b;
    return NULL;
}

static void gg_free(gg_case *g)
{
    if (g->gbuf) ggml_backend_buffer_free(g->gbuf);
    if (g->wbuf) ggml_backend_buffer_free(g->wbuf);
    if (g->gctx) ggml_free(g->gctx);
    if (g->wctx) ggml_free(g->wctx);
    if (g->be) ggml_backend_free(g->be);
    memset(g, 0, sizeof *g);
}

/* Sets up case c on W (fp32, exact weights; raw: remora's bytes) and X;
 * prints once per encoding whether ggml's MXFP4 holds the same weights. */
static int gg_setup(gg_case *g, const gemm_case *c, const float *W, const uint8_t *raw, const float *X, int copies,
                    int threads)
{
    memset(g, 0, sizeof *g);
    g->copies = copies;
    const enum ggml_type type = c->mxfp4 ? GGML_TYPE_MXFP4 : GGML_TYPE_BF16;
    ggml_backend_buffer_type_t buft = gg_weight_buft(type);
    if (!buft) { fprintf(stderr, "peers: ggml has no repacking buffer\n"); return -1; }
    g->be = ggml_backend_cpu_init();
    if (!g->be) return -1;
    ggml_backend_cpu_set_n_threads(g->be, threads);
    struct ggml_init_params wp = { ggml_tensor_overhead() * (size_t)(copies + 1), NULL, true };
    g->wctx = ggml_init(wp);
    struct ggml_tensor *w[64];
    for (int i = 0; i < copies; i++) w[i] = ggml_new_tensor_2d(g->wctx, type, c->cols, c->rows);
    g->wbuf = ggml_backend_alloc_ctx_tensors_from_buft(g->wctx, buft);
    if (!g->wbuf) { gg_free(g); return -1; }
    const size_t n = (size_t)c->rows * c->cols, nb = ggml_row_size(type, c->cols) * c->rows;
    void *q = malloc(nb);
    if (!q) { gg_free(g); return -1; }
    if (c->mxfp4) {
        ggml_quantize_chunk(type, W, q, 0, c->rows, c->cols, NULL);
        float *back = malloc(n * sizeof *back);
        if (back) {
            ggml_get_type_traits(type)->to_float(q, back, (int64_t)n);
            size_t diff = 0;
            for (size_t i = 0; i < n; i++) diff += back[i] != W[i];
            static int said;
            if (!said++) printf("ggml MXFP4 weights: %zu of %zu differ from remora's\n", diff, n);
            free(back);
        }
    } else {
        memcpy(q, raw, nb);             /* bf16: the same bits */
    }
    for (int i = 0; i < copies; i++) ggml_backend_tensor_set(w[i], q, 0, nb);
    free(q);
    struct ggml_init_params gp = { ggml_tensor_overhead() * (size_t)(2 * copies + 8) + ggml_graph_overhead_custom(2 * copies + 8, false),
                                   NULL, true };
    g->gctx = ggml_init(gp);
    struct ggml_tensor *x = ggml_new_tensor_2d(g->gctx, GGML_TYPE_F32, c->cols, c->T);
    g->graph = ggml_new_graph_custom(g->gctx, 2 * copies + 8, false);
    for (int i = 0; i < copies; i++) {
        g->out = ggml_mul_mat(g->gctx, w[i], x);
        ggml_build_forward_expand(g->graph, g->out);
    }
    g->gbuf = ggml_backend_alloc_ctx_tensors_from_buft(g->gctx, ggml_backend_cpu_buffer_type());
    if (!g->gbuf) { gg_free(g); return -1; }
    ggml_backend_tensor_set(x, X, 0, (size_t)c->T * c->cols * sizeof *X);
    return 0;
}

/* Best rate over about `seconds` (at least three graphs): GFLOP/s, or for
 * a gemv GB/s of weights. */
static double gg_rate(gg_case *g, const gemm_case *c, double seconds)
{
    const double per = c->T == 1 ? (double)weight_bytes(c) : 2.0 * c->T * c->rows * c->cols;
    double best = 0, end = rm_now() + seconds;
    int n = 0;
    do {
        double t0 = rm_now();
        if (ggml_backend_graph_compute(g->be, g->graph) != GGML_STATUS_SUCCESS) return -1;
        double r = per * g->copies / (rm_now() - t0) / 1e9;
        if (r > best) best = r;
    } while (rm_now() < end || ++n < 3);
    return best;
}
#endif

#ifdef PEERS_GGML
#define GG_NAME (PEERS_GGML_REPACK ? "ggml, as llama.cpp builds it (LLAMAFILE, repacked weights)" : "ggml, plain")
#endif

int main(int argc, char **argv)
{
    const char *only = argc == 5 ? argv[4] : NULL;
    if ((argc != 4 && argc != 5) || (only && strcmp(only, "gemm") && strcmp(only, "gemv"))) {
        fprintf(stderr, "usage: peers THREADS SECONDS ROUNDS [gemm|gemv]\n");
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
        { 1, 12288, 7168, 1 }, { 0, 12288, 7168, 1 },
    };
    printf("threads %d, SIMD level %s; best of %.1f-second windows, medians of %d interleaved rounds\n",
           threads, kern_level(), seconds, rounds);
#ifdef PEERS_GGML
    printf("peer: %s\n", GG_NAME);
#endif
    printf("gemm rows: GFLOP/s against the FMA peak; gemv rows (T = 1): GB/s of weights against the read ceiling\n");
    printf("%-6s %-11s %5s %8s %8s %8s %8s %8s %8s %8s %8s\n", "enc", "shape", "T", "ceiling", "remora", "openblas",
           "ggml", "r/blas", "r/ggml", "r/ceil", "g/ceil");
    int blas_said = 0, gg_said[2] = { 0, 0 };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const gemm_case *c = &cases[ci];
        const int gemv = c->T == 1;
        if (only && (only[3] == 'v') != gemv) continue;
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
            printf("precision: OpenBLAS sgemm (fp32 weights and inputs, its own order) vs remora on %dx%d T=%d: "
                   "max relative difference %.2g\n", c->rows, c->cols, c->T, rel_diff(R, Y, (size_t)c->T * c->rows));
            blas_said = 1;
        }
#ifdef PEERS_GGML
        gg_case g;
        const int copies = gemv ? (int)(GEMV_ARENA / weight_bytes(c)) : 1;
        if (gg_setup(&g, c, W, raw, X, copies < 64 ? copies : 64, threads)) {
            fprintf(stderr, "peers: ggml cannot set up %dx%d\n", c->rows, c->cols);
            return 1;
        }
        if (!gg_said[c->mxfp4] && !gemv && ggml_backend_graph_compute(g.be, g.graph) == GGML_STATUS_SUCCESS) {
            ggml_backend_tensor_get(g.out, Y, 0, (size_t)c->T * c->rows * sizeof *Y);
            printf("precision: %s %s (inputs rounded to %s) vs remora on %dx%d T=%d: max relative difference %.2g\n",
                   GG_NAME, c->mxfp4 ? "MXFP4" : "bf16", c->mxfp4 ? "q8_0" : "bf16", c->rows, c->cols, c->T,
                   rel_diff(R, Y, (size_t)c->T * c->rows));
            gg_said[c->mxfp4] = 1;
        }
#else
        (void)gg_said;
#endif
        double pk[99], rr[99], bb[99], gg[99];
        for (int r = 0; r < rounds; r++) {
            /* a pause before each, so that the other's threads have gone to
             * sleep (OpenBLAS's spin a while after a product) */
            usleep(300000);
            pk[r] = gemv ? rm_bench_memory(seconds, 0) : peak_rate(threads);
            rr[r] = gemv ? rm_bench_gemv(c->mxfp4, c->rows, c->cols, GEMV_ARENA, seconds, 0)
                         : rm_bench_gemm(c->mxfp4, c->T, c->rows, c->cols, seconds);
            usleep(300000);
            /* sgemm on fp32 weights reads twice to eight times the bytes:
             * no gemv peer */
            bb[r] = gemv ? 0 : blas_rate(c, W, X, Y, seconds);
#ifdef PEERS_GGML
            usleep(300000);
            gg[r] = gg_rate(&g, c, seconds);
#else
            gg[r] = 0;
#endif
            fprintf(stderr, "  round %d: %s %dx%d T=%d ceiling %.1f remora %.1f openblas %.1f ggml %.1f\n", r + 1,
                    c->mxfp4 ? "MXFP4" : "bf16", c->rows, c->cols, c->T, pk[r], rr[r], bb[r], gg[r]);
        }
#ifdef PEERS_GGML
        gg_free(&g);
#endif
        const double p = median(pk, rounds), a = median(rr, rounds), b = median(bb, rounds), q = median(gg, rounds);
        char dims[32];
        snprintf(dims, sizeof dims, "%dx%d", c->rows, c->cols);
        printf("%-6s %-11s %5d %8.1f %8.1f %8.1f %8.1f %8.2f %8.2f %8.2f %8.2f\n", c->mxfp4 ? "MXFP4" : "bf16", dims,
               c->T, p, a, b, q, b > 0 ? a / b : 0, q > 0 ? a / q : 0, a / p, q / p);
        fflush(stdout);
        free(raw); free(W); free(X); free(Y); free(R);
    }
    pool_free();
    return 0;
}
