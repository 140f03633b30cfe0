/* route_hist.h — which experts each position the model has consumed chose,
 * kept so that the cost of verifying a speculative draft can be predicted
 * before the pass: a draft copies tokens from an earlier place in the
 * context, and a token fed again mostly routes as it did there. The
 * predicted cost is the bytes of the experts those positions chose that are
 * neither resident nor already being read (spec.c weighs them against the
 * expected acceptance).
 */
#ifndef REMORA_ROUTE_HIST_H
#define REMORA_ROUTE_HIST_H
#include <stdint.h>
#include "io/experts.h"

typedef struct route_hist {
    int nmoe, topk;             /* MoE layers; experts per position and layer */
    int E;                      /* experts per MoE layer */
    int *moe_layer;             /* [nmoe] layer number of each MoE layer */
    int16_t *ids;               /* [cap][nmoe][topk] */
    int cap;
    uint32_t *mark, gen;        /* [L*E] experts counted in this prediction */
    int nkeys;
} route_hist;

int  route_hist_init(route_hist *h, const unsigned char *is_moe, int layers, int experts, int topk);
void route_hist_free(route_hist *h);
/* Makes room for positions [0, npos); -1 when out of memory. */
int  route_hist_reserve(route_hist *h, int npos);
/* Records the experts position `pos` chose in MoE layer ordinal `li`. */
void route_hist_put(route_hist *h, int pos, int li, const int *ids, int k);
/* The experts position `pos` chose: [nmoe][topk] (-1 where not recorded). */
const int16_t *route_hist_get(const route_hist *h, int pos);
/* Predicted storage bytes of draft positions copied from context positions
 * src, src+1, ...: cum[j] (j = 1..k) is the bytes of the first j positions'
 * experts (each counted once) that cache c neither holds nor is reading.
 * Positions at or past `known` have no record: each costs `unknown_bytes`. */
void route_hist_predict(route_hist *h, const expert_cache *c, int src, int k, int known, double unknown_bytes,
                        double *cum);

#endif
