/* peers_ggml.h — what tests/bench/peers.c asks of a ggml build: the one
 * symbol, `peers_ggml`, that each build's peers_ggml.c exports from its own
 * shared object (peers.sh links each ggml build into one, its ggml symbols
 * kept local, so that peers.c can dlopen both builds into one process and
 * measure them in the same rounds as remora). */
#ifndef REMORA_PEERS_GGML_H
#define REMORA_PEERS_GGML_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *name;           /* the build, for the table's legend */
    const char *tag;            /* its column in the table */
    /* One product Y[T, rows] = X[T, cols] W^T in ggml, over `copies`
     * tensors of the same weights (the gemv's arena): W the exact weights
     * in fp32, raw remora's bytes of them (bf16, or MXFP4 nibbles then
     * scales). *differ gets how many of ggml's weights differ from W. NULL
     * when ggml cannot set it up. */
    void *(*setup)(int mxfp4, int rows, int cols, int T, const float *W, const uint8_t *raw, const float *X,
                   int copies, int threads, size_t *differ);
    /* The best rate over about `seconds` (at least three graphs): GFLOP/s,
     * or for T = 1 GB/s of weights; -1 when a graph fails. */
    double (*rate)(void *g, double seconds);
    /* Computes the graph once and copies the last product's Y out. */
    int (*output)(void *g, float *Y);
    void (*release)(void *g);
} peers_ggml_api;

#endif
