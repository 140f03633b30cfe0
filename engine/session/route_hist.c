/* route_hist.c — per-position router choices and draft cost prediction
 * (route_hist.h). Counting an expert once per prediction uses a generation
 * stamp per expert, so a prediction costs O(k · layers · topk), not a clear
 * of the whole table. */
#include <stdlib.h>
#include <string.h>
#include "session/route_hist.h"
#include "engine.h"

int route_hist_init(route_hist *h, const unsigned char *is_moe, int layers, int experts, int topk)
{
    memset(h, 0, sizeof *h);
    h->topk = topk;
    h->E = experts;
    h->nkeys = layers * experts;
    if (!(h->moe_layer = malloc((size_t)(layers ? layers : 1) * sizeof *h->moe_layer)) ||
        !(h->mark = calloc((size_t)(h->nkeys ? h->nkeys : 1), sizeof *h->mark))) {
        route_hist_free(h);
        return -1;
    }
    for (int l = 0; l < layers; l++)
        if (is_moe[l]) h->moe_layer[h->nmoe++] = l;
    return 0;
}

void route_hist_free(route_hist *h)
{
    free(h->moe_layer);
    free(h->ids);
    free(h->mark);
    memset(h, 0, sizeof *h);
}

int route_hist_reserve(route_hist *h, int npos)
{
    if (npos <= h->cap || !h->nmoe) return 0;
    const size_t row = (size_t)h->nmoe * h->topk;     /* ids per position */
    const int old = h->cap;
    if (rm_grow((void **)&h->ids, &h->cap, npos, row * sizeof *h->ids)) return -1;
    memset(h->ids + (size_t)old * row, 0xff, (size_t)(h->cap - old) * row * sizeof *h->ids);   /* -1: no record */
    return 0;
}

const int16_t *route_hist_get(const route_hist *h, int pos)
{
    return h->ids + (size_t)pos * h->nmoe * h->topk;
}

void route_hist_put(route_hist *h, int pos, int li, const int *ids, int k)
{
    if (pos < 0 || pos >= h->cap || li < 0 || li >= h->nmoe) return;
    int16_t *r = h->ids + ((size_t)pos * h->nmoe + li) * h->topk;
    for (int i = 0; i < h->topk; i++) r[i] = (int16_t)(i < k ? ids[i] : -1);
}

void route_hist_predict(route_hist *h, const expert_cache *c, int src, int k, int known, double unknown_bytes,
                        double *cum)
{
    if (++h->gen == 0) {        /* the stamp wrapped: start the marks afresh */
        memset(h->mark, 0, (size_t)h->nkeys * sizeof *h->mark);
        h->gen = 1;
    }
    double bytes = 0;
    cum[0] = 0;
    for (int j = 1; j <= k; j++) {
        int p = src + j - 1;
        if (p < 0 || p >= known || p >= h->cap || !h->nmoe) {
            bytes += unknown_bytes;
            cum[j] = bytes;
            continue;
        }
        for (int li = 0; li < h->nmoe; li++) {
            const int16_t *r = h->ids + ((size_t)p * h->nmoe + li) * h->topk;
            for (int i = 0; i < h->topk; i++) {
                if (r[i] < 0 || r[i] >= h->E) continue;
                int key = h->moe_layer[li] * h->E + r[i];
                if (key >= h->nkeys || h->mark[key] == h->gen) continue;
                h->mark[key] = h->gen;
                bytes += (double)experts_missing_bytes(c, key);     /* 0: resident or being read */
            }
        }
        cum[j] = bytes;
    }
}
