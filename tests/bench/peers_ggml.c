/* peers_ggml.c — ggml's CPU backend as a peer of remora's kernels, for
 * tests/bench/peers.c. peers.sh compiles it once per ggml build (outside the
 * tree, under build/peers) into a shared object whose only exported symbol
 * is `peers_ggml` (peers_ggml.h), PEERS_GGML_REPACK saying which build:
 *   1  as llama.cpp builds and loads it: GGML_LLAMAFILE and GGML_CPU_REPACK
 *      on, MXFP4 weights in the repacking buffer (bf16 stays in the plain
 *      CPU buffer, where tinyBLAS takes it: the repacking buffer has no bf16
 *      form, and setting one crashed);
 *   0  plain: both off, the plain CPU buffer.
 * bf16 weights are remora's bits as they are; MXFP4 is requantized by ggml
 * from the exact fp32 weights (lossless: the caller checks the count of
 * weights that differ). ggml rounds the inputs, to bf16 for bf16 weights
 * and to 8-bit blocks (q8_0) for MXFP4, where remora keeps them fp32. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "peers_ggml.h"

#ifndef PEERS_GGML_REPACK
#error "peers.sh says which build: -DPEERS_GGML_REPACK=0 or 1"
#endif
/* at most this many weight tensors per graph (the gemv's arena) */
#define GG_COPIES 64

typedef struct {
    ggml_backend_t be;
    struct ggml_context *wctx, *gctx;
    ggml_backend_buffer_t wbuf, gbuf;
    struct ggml_cgraph *graph;
    struct ggml_tensor *out;
    int copies;
    double per;                 /* flops of one product, or for T = 1 its weight bytes */
} gg_case;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* ggml's log without its notes (a line per repacked tensor). */
static void quiet_log(enum ggml_log_level level, const char *text, void *ud)
{
    (void)ud;
    if (level >= GGML_LOG_LEVEL_WARN) fputs(text, stderr);
}

/* The buffer type llama.cpp puts the CPU's weights of this type in. */
static ggml_backend_buffer_type_t weight_buft(enum ggml_type type)
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

static void release(void *p)
{
    gg_case *g = p;
    if (!g) return;
    if (g->gbuf) ggml_backend_buffer_free(g->gbuf);
    if (g->wbuf) ggml_backend_buffer_free(g->wbuf);
    if (g->gctx) ggml_free(g->gctx);
    if (g->wctx) ggml_free(g->wctx);
    if (g->be) ggml_backend_free(g->be);
    free(g);
}

static void *setup(int mxfp4, int rows, int cols, int T, const float *W, const uint8_t *raw, const float *X,
                   int copies, int threads, size_t *differ)
{
    const enum ggml_type type = mxfp4 ? GGML_TYPE_MXFP4 : GGML_TYPE_BF16;
    const size_t n = (size_t)rows * cols, nb = ggml_row_size(type, cols) * rows;
    ggml_backend_buffer_type_t buft = weight_buft(type);
    gg_case *g = calloc(1, sizeof *g);
    void *q = malloc(nb);
    ggml_log_set(quiet_log, NULL);
    if (!buft || !g || !q) goto fail;
    g->copies = copies < GG_COPIES ? copies : GG_COPIES;
    g->per = T == 1 ? (double)(mxfp4 ? n / 2 + n / 32 : n * 2) : 2.0 * T * n;
    g->be = ggml_backend_cpu_init();
    if (!g->be) goto fail;
    ggml_backend_cpu_set_n_threads(g->be, threads);
    struct ggml_init_params wp = { ggml_tensor_overhead() * (size_t)(g->copies + 1), NULL, true };
    g->wctx = ggml_init(wp);
    struct ggml_tensor *w[GG_COPIES];
    for (int i = 0; i < g->copies; i++) w[i] = ggml_new_tensor_2d(g->wctx, type, cols, rows);
    g->wbuf = ggml_backend_alloc_ctx_tensors_from_buft(g->wctx, buft);
    if (!g->wbuf) goto fail;
    *differ = 0;
    if (mxfp4) {
        ggml_quantize_chunk(type, W, q, 0, rows, cols, NULL);
        float *back = malloc(n * sizeof *back);
        if (!back) goto fail;
        ggml_get_type_traits(type)->to_float(q, back, (int64_t)n);
        for (size_t i = 0; i < n; i++) *differ += back[i] != W[i];
        free(back);
    } else {
        memcpy(q, raw, nb);
    }
    for (int i = 0; i < g->copies; i++) ggml_backend_tensor_set(w[i], q, 0, nb);
    free(q);
    q = NULL;
    const size_t nodes = 2 * (size_t)g->copies + 8;
    struct ggml_init_params gp = { ggml_tensor_overhead() * nodes + ggml_graph_overhead_custom(nodes, false), NULL,
                                   true };
    g->gctx = ggml_init(gp);
    struct ggml_tensor *x = ggml_new_tensor_2d(g->gctx, GGML_TYPE_F32, cols, T);
    g->graph = ggml_new_graph_custom(g->gctx, nodes, false);
    for (int i = 0; i < g->copies; i++) {
        g->out = ggml_mul_mat(g->gctx, w[i], x);
        ggml_build_forward_expand(g->graph, g->out);
    }
    g->gbuf = ggml_backend_alloc_ctx_tensors_from_buft(g->gctx, ggml_backend_cpu_buffer_type());
    if (!g->gbuf) goto fail;
    ggml_backend_tensor_set(x, X, 0, (size_t)T * cols * sizeof *X);
    return g;
fail:
    free(q);
    release(g);
    return NULL;
}

static double rate(void *p, double seconds)
{
    gg_case *g = p;
    double best = 0, end = now() + seconds;
    int n = 0;
    do {
        double t0 = now();
        if (ggml_backend_graph_compute(g->be, g->graph) != GGML_STATUS_SUCCESS) return -1;
        double r = g->per * g->copies / (now() - t0) / 1e9;
        if (r > best) best = r;
    } while (now() < end || ++n < 3);
    return best;
}

static int output(void *p, float *Y)
{
    gg_case *g = p;
    if (ggml_backend_graph_compute(g->be, g->graph) != GGML_STATUS_SUCCESS) return -1;
    ggml_backend_tensor_get(g->out, Y, 0, ggml_nbytes(g->out));
    return 0;
}

const peers_ggml_api peers_ggml = {
    PEERS_GGML_REPACK ? "ggml as llama.cpp builds it (LLAMAFILE, repacked MXFP4)" : "ggml plain",
    PEERS_GGML_REPACK ? "llama" : "plain", setup, rate, output, release,
};
