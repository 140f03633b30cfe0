/* moe.c — the feed-forward blocks: the dense GLU MLP and the mixture of
 * experts with its router.
 *
 * Router (KimiMoEGate.forward of K3's modeling_kimi_linear.py):
 * s = sigmoid(W_r x) in fp32; the selection score s + e_score_correction_bias
 * picks the top k (descending, ties to the lower id; grouped selection when
 * num_expert_group > 1); the weights are the UNBIASED s of the chosen
 * experts, renormalised (s / (Σs + 1e-20)) and times routed_scaling_factor.
 * (Kimi-Linear-48B's modeling_kimi.py adds the bias to s in place and so
 * weights by biased scores; the goldens follow K3's router for both, see
 * tests/fixtures/README.md.)
 *
 * Experts (KimiSparseMoeBlock.forward and moe_infer): y = Σ_i w_i · E_i(z)
 * with E(z) = w2(act(w1 z) · w3 z). For K3's latent MoE z = W_down x, and
 * the weighted sum is RMS-normalised (routed_expert_norm) and projected back
 * with W_up (the order of vllm/models/kimi_k3/nvidia/latent_moe_runner.py);
 * for 48B z = x. The shared experts (one fused GLU) act on x and are added.
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
    norm_glu(c, g, u, T * inter);
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
        s[e] = norm_sigmoid(logits[e]);
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

/* Working memory of one moe_forward call. */
typedef struct moe_buf {
    float *logits;              /* [T, E] router logits */
    float *scratch;             /* [4E]: selection scores, scores, taken flags */
    int *ids;                   /* [T, k] chosen experts, by descending score */
    float *wts;                 /* [T, k] their routing weights */
    float *z;                   /* [T, Z] latent input (latent MoE only) */
    float *slot;                /* [T, k, Z] expert outputs per (t, i) */
    float *ylat;                /* [T, Z] weighted sum */
    int *rows, *slots;          /* [T] the rows that chose one expert, and where */
    int *uniq;                  /* [E] the distinct experts, in expert order */
    float *gin, *eg, *eu, *eo;  /* one expert's input rows and GLU */
    float *shared;              /* [T, D] shared experts' output */
} moe_buf;

static void moe_buf_free(moe_buf *b)
{
    free(b->logits); free(b->scratch); free(b->ids); free(b->wts); free(b->z); free(b->slot); free(b->ylat);
    free(b->rows); free(b->slots); free(b->gin); free(b->eg); free(b->eu); free(b->eo); free(b->uniq); free(b->shared);
}

static int moe_buf_alloc(moe_buf *b, const rm_config *c, int T)
{
    const int D = c->hidden_size, E = c->num_experts, k = c->topk, I = c->moe_inter;
    const int Z = c->latent ? c->latent : D;
    *b = (moe_buf){
        malloc((size_t)T * E * sizeof(float)), malloc((size_t)4 * E * sizeof(float)),
        malloc((size_t)T * k * sizeof(int)), malloc((size_t)T * k * sizeof(float)),
        c->latent ? malloc((size_t)T * Z * sizeof(float)) : NULL, malloc((size_t)T * k * Z * sizeof(float)),
        malloc((size_t)T * Z * sizeof(float)), malloc((size_t)T * sizeof(int)), malloc((size_t)T * sizeof(int)),
        malloc((size_t)E * sizeof(int)), malloc((size_t)T * Z * sizeof(float)), malloc((size_t)T * I * sizeof(float)),
        malloc((size_t)T * I * sizeof(float)), malloc((size_t)T * Z * sizeof(float)),
        c->num_shared ? malloc((size_t)T * D * sizeof(float)) : NULL,
    };
    return b->logits && b->scratch && b->ids && b->wts && (!c->latent || b->z) && b->slot && b->ylat && b->rows &&
           b->slots && b->uniq && b->gin && b->eg && b->eu && b->eo && (!c->num_shared || b->shared) ? 0 : -1;
}

/* Routes every position: ids and weights per row (KimiMoEGate.forward), each
 * reported through on_route. */
static void route_rows(const rm_config *c, const moe_weights *w, moe_buf *b, int layer, int pos0, const float *X,
                       int T, rm_route_fn on_route, void *ud)
{
    const int E = c->num_experts, k = c->topk;
    wmat_gemm(&w->router, X, b->logits, T);
    for (int t = 0; t < T; t++) {
        int *id = b->ids + (size_t)t * k;
        float *wt = b->wts + (size_t)t * k;
        float *s = b->scratch + E, *sel = b->scratch;  /* s spans 2E floats: scores + taken flags */
        float margin = route_one(c, b->logits + (size_t)t * E, w->bias, id, wt, sel, s);
        double sum = 0;
        for (int i = 0; i < k; i++) sum += s[id[i]];
        for (int i = 0; i < k; i++) {
            double v = s[id[i]];
            if (c->renormalize && k > 1) v /= sum + 1e-20;
            wt[i] = (float)(v * c->routed_scaling);
        }
        if (on_route) on_route(ud, layer, pos0 + t, id, wt, k, margin);
    }
}

/* The distinct experts of these positions into b->uniq, in expert order;
 * returns their count. */
static int distinct_experts(const rm_config *c, moe_buf *b, int T)
{
    int n = 0;
    for (int e = 0; e < c->num_experts; e++)
        for (size_t j = 0; j < (size_t)T * c->topk; j++)
            if (b->ids[j] == e) { b->uniq[n++] = e; break; }
    return n;
}

/* Expert e (weights ex) on the rows of zin that chose it; each row's output
 * goes to its (t, i) place in b->slot. */
static void expert_rows(const rm_config *c, const mlp_weights *ex, int e, moe_buf *b, const float *zin, int T)
{
    const int k = c->topk, I = c->moe_inter, Z = c->latent ? c->latent : c->hidden_size;
    int nr = 0;
    for (int t = 0; t < T; t++)
        for (int i = 0; i < k; i++)
            if (b->ids[(size_t)t * k + i] == e) { b->rows[nr] = t; b->slots[nr] = i; nr++; }
    for (int r = 0; r < nr; r++) memcpy(b->gin + (size_t)r * Z, zin + (size_t)b->rows[r] * Z, (size_t)Z * sizeof *b->gin);
    wmat_gemm(&ex->gate, b->gin, b->eg, nr);
    wmat_gemm(&ex->up, b->gin, b->eu, nr);
    norm_glu(c, b->eg, b->eu, nr * I);
    wmat_gemm(&ex->down, b->eg, b->eo, nr);
    for (int r = 0; r < nr; r++)
        memcpy(b->slot + ((size_t)b->rows[r] * k + b->slots[r]) * Z, b->eo + (size_t)r * Z, (size_t)Z * sizeof *b->eo);
}

/* Y = up(norm(Σ_i w_i · E_i)) + shared, each row's experts added in its own
 * selection order (KimiSparseMoeBlock.moe_infer, then the latent
 * projection). */
static void combine(const rm_config *c, const moe_weights *w, const moe_buf *b, float *Y, int T)
{
    const int D = c->hidden_size, k = c->topk, Z = c->latent ? c->latent : D;
    for (int t = 0; t < T; t++) {
        float *yl = b->ylat + (size_t)t * Z;
        for (int d = 0; d < Z; d++) {
            float acc = 0;
            for (int i = 0; i < k; i++) acc += b->wts[(size_t)t * k + i] * b->slot[((size_t)t * k + i) * Z + d];
            yl[d] = acc;
        }
        if (c->latent && w->lat_norm) norm_rms(yl, w->lat_norm, yl, Z, (float)c->rms_eps);
    }
    if (c->latent) wmat_gemm(&w->lat_up, b->ylat, Y, T);
    else memcpy(Y, b->ylat, (size_t)T * D * sizeof *Y);
    if (c->num_shared)
        for (size_t i = 0; i < (size_t)T * D; i++) Y[i] += b->shared[i];
}

int moe_forward(const rm_config *c, const moe_weights *w, expert_cache *cache, phase_timer *pt, int *last_route,
                int layer, int pos0, const float *X, float *Y, int T, rm_route_fn on_route, void *ud, rm_err *err)
{
    const int k = c->topk;
    moe_buf b;
    int rc = 0;
    if (moe_buf_alloc(&b, c, T)) { rc = rm_errf(err, "out of memory in MoE layer %d", layer); goto out; }
    route_rows(c, w, &b, layer, pos0, X, T, on_route, ud);
    const float *zin = X;
    if (c->latent) { wmat_gemm(&w->lat_down, X, b.z, T); zin = b.z; }
    /* the distinct experts of these positions, each computed once on the
     * rows that chose it, in the order their bytes arrive */
    int n = distinct_experts(c, &b, T);
    memcpy(last_route, b.ids + (size_t)(T - 1) * k, (size_t)k * sizeof *b.ids);
    phase_mark(pt, RM_PHASE_SPINE);
    if ((rc = experts_begin(cache, layer, b.uniq, n, err))) goto out;
    /* the shared experts need no routed bytes: compute them while the
     * reads are in flight */
    if (c->num_shared && (rc = mlp_forward(c, &w->shared, c->moe_inter * c->num_shared, X, b.shared, T, err))) goto out;
    phase_mark(pt, RM_PHASE_SPINE);
    for (;;) {
        mlp_weights ex;
        int idx = experts_next(cache, &ex, err);
        phase_mark(pt, RM_PHASE_WAIT_IO);
        if (idx == -2) { rc = -1; goto out; }
        if (idx < 0) break;
        expert_rows(c, &ex, b.uniq[idx], &b, zin, T);
        experts_done(cache, idx);
        phase_mark(pt, RM_PHASE_EXPERTS);
    }
    combine(c, w, &b, Y, T);
    phase_mark(pt, RM_PHASE_SPINE);
out:
    moe_buf_free(&b);
    return rc;
}
