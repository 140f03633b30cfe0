/* moe.c — the feed-forward blocks: the dense GLU MLP and the mixture of
 * experts with its router.
 *
 * Router (K3 KimiMoEGate; kimi-spec §6): s = sigmoid(W_r x) in fp32; the
 * selection score s + e_score_correction_bias picks the top k (descending,
 * ties to the lower id; grouped selection when num_expert_group > 1); the
 * weights are the UNBIASED s of the chosen experts, renormalised
 * (s / (Σs + 1e-20)) and times routed_scaling_factor.
 *
 * Experts: y = Σ_i w_i · E_i(z) with E(z) = w2(act(w1 z) · w3 z). For K3's
 * latent MoE z = W_down x, and the weighted sum is RMS-normalised
 * (routed_expert_norm) and projected back with W_up; for 48B z = x. The
 * shared experts (one fused GLU) act on x and are added.
 *
 * With T positions the experts are visited once each, on the rows that chose
 * them, so a prefill chunk reads every distinct expert once; the weighted sum
 * still adds each row's experts in its own selection order, so the result
 * does not depend on how many positions are batched.
 */
#include <stdlib.h>
#include <string.h>
#include "model/layers.h"

int mlp_forward(const rm_config *c, const mlp_weights *w, int inter, const float *X, float *Y, int T, rm_err *err)
{
    float *g = malloc((size_t)T * inter * sizeof *g), *u = malloc((size_t)T * inter * sizeof *u);
    if (!g || !u) { free(g); free(u); return rm_errf(err, "out of memory in MLP"); }
    wmat_gemm(&w->gate, X, g, T);
    wmat_gemm(&w->up, X, u, T);
    glu_act(c, g, u, T * inter);
    wmat_gemm(&w->down, g, Y, T);
    free(g);
    free(u);
    return 0;
}

/* Top-k selection for one position. ids/wts get k entries; returns margin. */
static float route_one(const rm_config *c, const float *logits, const float *bias, int *ids,
                       float *wts, float *sel, float *s)
{
    const int E = c->num_experts, k = c->topk;
    for (int e = 0; e < E; e++) {
        s[e] = sigmoidf_(logits[e]);
        sel[e] = s[e] + (bias ? bias[e] : 0.0f);
    }
    if (c->n_group > 1) {
        /* keep the topk_group groups with the best sum of their top-2 scores */
        const int gs = E / c->n_group;
        float gscore[1024];
        int keep[1024] = { 0 };
        for (int gi = 0; gi < c->n_group; gi++) {
            float b1 = -INFINITY, b2 = -INFINITY;
            for (int e = gi * gs; e < (gi + 1) * gs; e++) {
                if (sel[e] > b1) { b2 = b1; b1 = sel[e]; }
                else if (sel[e] > b2) b2 = sel[e];
            }
            gscore[gi] = b1 + (gs > 1 ? b2 : 0);
        }
        for (int r = 0; r < c->topk_group; r++) {
            int best = -1;
            for (int gi = 0; gi < c->n_group; gi++)
                if (!keep[gi] && (best < 0 || gscore[gi] > gscore[best])) best = gi;
            keep[best] = 1;
        }
        for (int e = 0; e < E; e++)
            if (!keep[e / gs]) sel[e] = -INFINITY;
    }
    /* partial selection sort: k best, ties to the lower id */
    unsigned char *taken = (unsigned char *)s + (size_t)E * sizeof(float); /* caller sized s to 2E floats */
    memset(taken, 0, (size_t)(unsigned)E);
    for (int i = 0; i <= k && i < E; i++) {
        int best = -1;
        for (int e = 0; e < E; e++)
            if (!taken[e] && (best < 0 || sel[e] > sel[best])) best = e;
        if (i == k) return sel[ids[k - 1]] - sel[best];
        taken[best] = 1;
        ids[i] = best;
    }
    return INFINITY;   /* k == E: no k+1-th expert */
}

int moe_forward(const rm_config *c, const moe_weights *w, expert_cache *cache, double *phase, int *last_route, int layer,
                int pos0, const float *X, float *Y, int T, rm_route_fn on_route, void *ud, rm_err *err)
{
    const int D = c->hidden_size, E = c->num_experts, k = c->topk, I = c->moe_inter;
    const int Z = c->latent ? c->latent : D;
    float *logits = malloc((size_t)T * E * sizeof *logits);
    float *scratch = malloc((size_t)4 * E * sizeof *scratch);
    int *ids = malloc((size_t)T * k * sizeof *ids);
    float *wts = malloc((size_t)T * k * sizeof *wts);
    float *z = c->latent ? malloc((size_t)T * Z * sizeof *z) : NULL;
    float *slot = malloc((size_t)T * k * Z * sizeof *slot);      /* expert outputs per (t, i) */
    float *ylat = malloc((size_t)T * Z * sizeof *ylat);
    int *rows = malloc((size_t)T * sizeof *rows), *slots = malloc((size_t)T * sizeof *slots);
    int *uniq = malloc((size_t)E * sizeof *uniq);
    const double tstart = rm_now();
    float *gin = malloc((size_t)T * Z * sizeof *gin), *eg = malloc((size_t)T * I * sizeof *eg);
    float *eu = malloc((size_t)T * I * sizeof *eu), *eo = malloc((size_t)T * Z * sizeof *eo);
    float *shared = c->num_shared ? malloc((size_t)T * D * sizeof *shared) : NULL;
    int rc = 0;
    if (!logits || !scratch || !ids || !wts || (c->latent && !z) || !slot || !ylat || !rows ||
        !slots || !gin || !eg || !eu || !eo || !uniq || (c->num_shared && !shared)) {
        rc = rm_errf(err, "out of memory in MoE layer %d", layer);
        goto out;
    }
    wmat_gemm(&w->router, X, logits, T);
    for (int t = 0; t < T; t++) {
        int *id = ids + (size_t)t * k;
        float *wt = wts + (size_t)t * k;
        float *s = scratch + E, *sel = scratch;  /* s spans 2E floats: scores + taken flags */
        float margin = route_one(c, logits + (size_t)t * E, w->bias, id, wt, sel, s);
        double sum = 0;
        for (int i = 0; i < k; i++) sum += s[id[i]];
        for (int i = 0; i < k; i++) {
            double v = s[id[i]];
            if (c->renormalize && k > 1) v /= sum + 1e-20;
            wt[i] = (float)(v * c->routed_scaling);
        }
        if (on_route) on_route(ud, layer, pos0 + t, id, wt, k, margin);
    }
    const float *zin = X;
    if (c->latent) { wmat_gemm(&w->lat_down, X, z, T); zin = z; }
    /* the distinct experts of these positions, each computed once on the
     * rows that chose it, in the order their bytes arrive */
    int n = 0;
    for (int e = 0; e < E; e++)
        for (size_t j = 0; j < (size_t)T * k; j++)
            if (ids[j] == e) { uniq[n++] = e; break; }
    memcpy(last_route, ids + (size_t)(T - 1) * k, (size_t)k * sizeof *ids);
    double t0 = rm_now(), t1;
    phase[RM_PHASE_SPINE] += t0 - tstart;
    if ((rc = experts_begin(cache, layer, uniq, n, err))) goto out;
    /* the shared experts need no routed bytes: compute them while the
     * reads are in flight */
    if (c->num_shared && (rc = mlp_forward(c, &w->shared, I * c->num_shared, X, shared, T, err))) goto out;
    t1 = rm_now();
    phase[RM_PHASE_SPINE] += t1 - t0;
    t0 = t1;
    for (;;) {
        mlp_weights ex;
        int idx = experts_next(cache, &ex, err);
        t1 = rm_now();
        phase[RM_PHASE_WAIT_IO] += t1 - t0;
        if (idx == -2) { rc = -1; goto out; }
        if (idx < 0) break;
        const int e = uniq[idx];
        int nr = 0;
        for (int t = 0; t < T; t++)
            for (int i = 0; i < k; i++)
                if (ids[(size_t)t * k + i] == e) { rows[nr] = t; slots[nr] = i; nr++; }
        for (int r = 0; r < nr; r++) memcpy(gin + (size_t)r * Z, zin + (size_t)rows[r] * Z, (size_t)Z * sizeof *gin);
        wmat_gemm(&ex.gate, gin, eg, nr);
        wmat_gemm(&ex.up, gin, eu, nr);
        glu_act(c, eg, eu, nr * I);
        wmat_gemm(&ex.down, eg, eo, nr);
        for (int r = 0; r < nr; r++)
            memcpy(slot + ((size_t)rows[r] * k + slots[r]) * Z, eo + (size_t)r * Z, (size_t)Z * sizeof *eo);
        experts_done(cache, idx);
        t0 = rm_now();
        phase[RM_PHASE_EXPERTS] += t0 - t1;
    }
    for (int t = 0; t < T; t++) {
        float *yl = ylat + (size_t)t * Z;
        for (int d = 0; d < Z; d++) {
            float acc = 0;
            for (int i = 0; i < k; i++) acc += wts[(size_t)t * k + i] * slot[((size_t)t * k + i) * Z + d];
            yl[d] = acc;
        }
        if (c->latent && w->lat_norm) rms_norm(yl, w->lat_norm, yl, Z, (float)c->rms_eps);
    }
    t0 = rm_now();
    if (c->latent) wmat_gemm(&w->lat_up, ylat, Y, T);
    else memcpy(Y, ylat, (size_t)T * D * sizeof *Y);
    if (c->num_shared)
        for (size_t i = 0; i < (size_t)T * D; i++) Y[i] += shared[i];
    phase[RM_PHASE_SPINE] += rm_now() - t0;
out:
    free(logits); free(scratch); free(ids); free(wts); free(z); free(slot); free(ylat);
    free(rows); free(slots); free(gin); free(eg); free(eu); free(eo); free(uniq); free(shared);
    return rc;
}
