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
 * With T positions the experts are visited once each, in expert order, on
 * the rows that chose them, so a pass reads every distinct expert once. Each
 * row's weighted sum adds its experts in expert order (one fmaf per element
 * and expert, kern_axpy_f32) rather than in selection order: the sum of a
 * row then needs no buffer of its k expert outputs (at K3's widths that is
 * 16 x 3584 floats per position, 470 MB for a 2048-token pass) and the
 * result still depends neither on how many positions are batched nor on
 * what the cache held. The reference's fp32 sum order is torch's and not
 * fixed either; the goldens' tolerance covers both.
 */
#include <stdlib.h>
#include <string.h>
#include "model/layers.h"
#include "kernels/kernels.h"
#include "base/threadpool.h"

/* Rows per block of the per-token work of a long pass (the GLU of the
 * dense layer and the shared experts, the router, the latent projections):
 * the scratch memory stays that of a 256-token pass however long the pass,
 * and a 256-row product still runs at the gemm kernel's full rate. */
#define FFN_BLOCK 256

int mlp_forward(const rm_config *c, const mlp_weights *w, int inter, const float *X, float *Y, int T,
                volatile int *stop, rm_err *err)
{
    const int nb = T < FFN_BLOCK ? T : FFN_BLOCK;
    const int D = w->gate.cols, O = w->down.rows;
    float *g = malloc((size_t)nb * inter * sizeof *g), *u = malloc((size_t)nb * inter * sizeof *u);
    if (!g || !u) { free(g); free(u); return rm_errf(err, "out of memory in MLP"); }
    int rc = 0;
    for (int t0 = 0; t0 < T && !rc; t0 += nb) {
        const int n = T - t0 < nb ? T - t0 : nb;
        /* the block whole on the GPU when it takes it: one copy each way
         * instead of three (if the device fails, the CPU computes it) */
        if (!wmat_expert(&w->gate, &w->up, &w->down, c->act != ACT_SILU, (float)c->situ_beta,
                         (float)c->situ_linear_beta, X + (size_t)t0 * D, n) &&
            !wmat_expert_collect(Y + (size_t)t0 * O)) {
            if (stop && *stop) rc = 1;
            continue;
        }
        /* a stop is looked at between the products: each is a fraction of a
         * second even at K3's widths */
        wmat_gemm(&w->gate, X + (size_t)t0 * D, g, n);
        if (stop && *stop) { rc = 1; break; }
        wmat_gemm(&w->up, X + (size_t)t0 * D, u, n);
        if (stop && *stop) { rc = 1; break; }
        norm_glu(c, g, u, n * inter);
        wmat_gemm(&w->down, g, Y + (size_t)t0 * O, n);
        if (stop && *stop) rc = 1;
    }
    free(g);
    free(u);
    return rc;
}

/* Top-k selection for one position. ids/wts get k entries; returns margin. */
static float route_one(const rm_config *c, const float *logits, const float *bias, int *ids,
                       float *wts, float *sel, float *s)
{
    const int E = c->num_experts, k = c->topk;
    for (int e = 0; e < E; e++) {
        s[e] = crm_sigmoidf(logits[e]);
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

/* Working memory of one moe_forward call: per position, its routes, its
 * latent input and the running weighted sum of its experts; per block, the
 * router logits; per expert, its rows and their GLU. */
typedef struct moe_buf {
    int *ids;                   /* [T, k] chosen experts, by descending score */
    float *wts;                 /* [T, k] their routing weights */
    float *z;                   /* [T, Z] latent input (latent MoE only) */
    float *acc;                 /* [T, Z] Σ w_i · E_i, experts in expert order */
    int *start, *entry;         /* [E+1], [T*k]: the (t*k + i) of each expert, position order */
    int *uniq;                  /* [E] the distinct experts, in expert order */
    float *logits;              /* [FFN_BLOCK, E] router logits of a block */
    float *scratch;             /* [4E]: selection scores, scores, taken flags */
    float *gin, *eg, *eu, *eo;  /* [FFN_BLOCK rows]: one expert's input rows and GLU */
} moe_buf;

static void moe_buf_free(moe_buf *b)
{
    free(b->ids); free(b->wts); free(b->z); free(b->acc); free(b->start); free(b->entry); free(b->uniq);
    free(b->logits); free(b->scratch); free(b->gin); free(b->eg); free(b->eu); free(b->eo);
}

static int moe_buf_alloc(moe_buf *b, const rm_config *c, int T)
{
    const int E = c->num_experts, k = c->topk, I = c->moe_inter, Z = c->latent ? c->latent : c->hidden_size;
    const int nb = T < FFN_BLOCK ? T : FFN_BLOCK;
    *b = (moe_buf){
        malloc((size_t)T * k * sizeof(int)), malloc((size_t)T * k * sizeof(float)),
        c->latent ? malloc((size_t)T * Z * sizeof(float)) : NULL, calloc((size_t)T * Z, sizeof(float)),
        malloc((size_t)(E + 1) * sizeof(int)), malloc((size_t)T * k * sizeof(int)), malloc((size_t)E * sizeof(int)),
        malloc((size_t)nb * E * sizeof(float)), malloc((size_t)4 * E * sizeof(float)),
        malloc((size_t)nb * Z * sizeof(float)), malloc((size_t)nb * I * sizeof(float)),
        malloc((size_t)nb * I * sizeof(float)), malloc((size_t)nb * Z * sizeof(float)),
    };
    return b->ids && b->wts && (!c->latent || b->z) && b->acc && b->start && b->entry && b->uniq && b->logits &&
           b->scratch && b->gin && b->eg && b->eu && b->eo ? 0 : -1;
}

/* Bytes moe_forward allocates per position, and for a pass of any length
 * (the planner's figures, model/load.c). */
size_t moe_bytes_per_token(const rm_config *c)
{
    const size_t Z = c->latent ? (size_t)c->latent : (size_t)c->hidden_size;
    return (3 * (size_t)c->topk + 2 * Z) * sizeof(float);
}

size_t moe_bytes_fixed(const rm_config *c)
{
    const size_t E = (size_t)c->num_experts, Z = c->latent ? (size_t)c->latent : (size_t)c->hidden_size;
    return ((size_t)FFN_BLOCK * (E + 2 * Z + 2 * (size_t)c->moe_inter) + 6 * E + 1) * sizeof(float) +
           (size_t)FFN_BLOCK * 2 * (size_t)c->moe_inter * c->num_shared * sizeof(float);
}

/* Routes rows [t0, t0+n): ids and weights per row (KimiMoEGate.forward),
 * each reported through on_route in position order. */
static void route_rows(const rm_config *c, const moe_weights *w, moe_buf *b, int layer, int pos0, const float *X,
                       int t0, int n, rm_route_fn on_route, void *ud)
{
    const int E = c->num_experts, k = c->topk;
    wmat_gemm(&w->router, X + (size_t)t0 * c->hidden_size, b->logits, n);
    for (int r = 0; r < n; r++) {
        const int t = t0 + r;
        int *id = b->ids + (size_t)t * k;
        float *wt = b->wts + (size_t)t * k;
        float *s = b->scratch + E, *sel = b->scratch;  /* s spans 2E floats: scores + taken flags */
        float margin = route_one(c, b->logits + (size_t)r * E, w->bias, id, wt, sel, s);
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

/* A long pass starts its expert reads before its router runs, and the
 * next MoE layer's before this one's experts compute. Its rows'
 * normalised mixer input Xn (the layer's input, before attention) through
 * this layer's router gives a guess of the experts the pass will choose, and
 * their reads start at once, so the disk works while the mixer computes: on
 * the H200 machine the mixer of a 2048-token pass of the 31.6 GB synthetic
 * model took about 1.4 s per layer with the disk idle (the GPU prompt at
 * 1.14x its storage roofline). A guess the router does not confirm costs one
 * read and nothing else: which experts are computed, and so every bit of the
 * output, is still the router's choice after the mixer. The same guess from
 * the layer before (forward.c: a dense layer's mixer input for the first MoE
 * layer, a MoE layer's input for the next one, once this layer's own reads
 * are queued) keeps the disk busy across the layer boundary, where it idled
 * while the last experts, the next norm and the next mixer computed (a
 * dense first layer alone: 2-3 s of a 19.5 s prompt there). Only passes long
 * enough that each expert expects two or more rows guess (moe_guess_worth):
 * their choices cover nearly every expert, so a guess is rarely wasted. */
int moe_guess_worth(const rm_config *c, int T)
{
    static int off = -1;
    if (off < 0) {
        const char *e = getenv("REMORA_PREFETCH_GUESS");  /* 0: off, for benchmarks side by side */
        off = e && !strcmp(e, "0");
    }
    return !off && c->num_experts > 0 && (long long)T * c->topk >= 2LL * c->num_experts;
}

void moe_prefetch_guess(const rm_config *c, const moe_weights *w, expert_cache *cache, int layer, const float *Xn,
                        int n)
{
    const int E = c->num_experts, k = c->topk;
    float *logits = malloc((size_t)n * E * sizeof *logits), *scratch = malloc((size_t)4 * E * sizeof *scratch);
    int *ids = malloc((size_t)(E > k ? E : k) * sizeof *ids), *row = malloc((size_t)k * sizeof *row);
    unsigned char *want = calloc((size_t)E, 1);
    if (logits && scratch && ids && row && want) {   /* best effort: out of memory only skips the guess */
        wmat_gemm(&w->router, Xn, logits, n);
        for (int r = 0; r < n; r++) {
            route_one(c, logits + (size_t)r * E, w->bias, row, NULL, scratch, scratch + E);
            for (int i = 0; i < k; i++) want[row[i]] = 1;
        }
        int nu = 0;
        for (int e = 0; e < E; e++)     /* in expert order: the order the layer consumes them */
            if (want[e]) ids[nu++] = e;
        experts_prefetch(cache, layer, ids, nu);
    }
    free(logits); free(scratch); free(ids); free(row); free(want);
}

/* The distinct experts of these positions into b->uniq, in expert order,
 * with each expert's (t*k + i) entries in position order (b->start,
 * b->entry); returns their count. */
static int group_by_expert(const rm_config *c, moe_buf *b, int T)
{
    const int E = c->num_experts, n = T * c->topk;
    memset(b->start, 0, (size_t)(E + 1) * sizeof *b->start);
    for (int j = 0; j < n; j++) b->start[b->ids[j] + 1]++;
    int nu = 0;
    for (int e = 0; e < E; e++) {
        if (b->start[e + 1]) b->uniq[nu++] = e;
        b->start[e + 1] += b->start[e];
    }
    /* fill with a moving cursor per expert, then put start back */
    for (int j = 0; j < n; j++) b->entry[b->start[b->ids[j]]++] = j;
    for (int e = E; e > 0; e--) b->start[e] = b->start[e - 1];
    b->start[0] = 0;
    return nu;
}

/* The copies in and out of one expert's rows, split across the pool: the
 * gather of its input rows and the weighted add of its output rows into
 * their running sums are memory-bound (a 2048-token pass moves 2 x 470 MB
 * per MoE layer at K3's widths) and ran on one core while the other waited
 * for the next product. Every row is another position's (an expert is
 * chosen once per position), so the rows are independent and each keeps its
 * order of additions. */
typedef struct expert_io {
    const rm_config *c;
    moe_buf *b;
    const float *zin;
    const int *ent;             /* this block's entries */
} expert_io;

static void gather_task(void *ud, int r0, int r1)
{
    const expert_io *x = ud;
    const int k = x->c->topk, Z = x->c->latent ? x->c->latent : x->c->hidden_size;
    for (int r = r0; r < r1; r++)
        memcpy(x->b->gin + (size_t)r * Z, x->zin + (size_t)(x->ent[r] / k) * Z, (size_t)Z * sizeof *x->b->gin);
}

static void scatter_task(void *ud, int r0, int r1)
{
    const expert_io *x = ud;
    const int k = x->c->topk, Z = x->c->latent ? x->c->latent : x->c->hidden_size;
    for (int r = r0; r < r1; r++) {
        const int j = x->ent[r];
        kern_axpy_f32(x->b->wts[j], x->b->eo + (size_t)r * Z, x->b->acc + (size_t)(j / k) * Z, Z);
    }
}

/* Rows below this are copied on the calling thread: waking the pool costs
 * more than it saves. */
#define IO_POOL_ROWS 8

static void rows_for(int n, void (*fn)(void *, int, int), expert_io *x)
{
    if (n < IO_POOL_ROWS) fn(x, 0, n);
    else pool_for(n, fn, x);
}

/* One block of n gathered rows (b->gin) through expert ex on the CPU, or
 * product by product wherever wmat_gemm puts them, into b->eo. */
static void expert_block(const rm_config *c, const mlp_weights *ex, moe_buf *b, int n)
{
    wmat_gemm(&ex->gate, b->gin, b->eg, n);
    wmat_gemm(&ex->up, b->gin, b->eu, n);
    norm_glu(c, b->eg, b->eu, n * c->moe_inter);
    wmat_gemm(&ex->down, b->eg, b->eo, n);
}

/* A block of an expert's rows launched whole on the GPU (wmat_expert) and
 * not yet added in: it is collected once the next block has been launched,
 * so the device computes one while the CPU gathers and stages the next, and
 * the expert's slot stays pinned until then (`last`: its final block). */
typedef struct gpu_pending {
    int on, idx, last, n;
    mlp_weights ex;
    expert_io x;
} gpu_pending;

/* Adds the pending block in (computed on the CPU if the device failed, from
 * its rows gathered again) and releases its expert after its last block;
 * returns 1 when that recomputation used b->gin. */
static int settle(const rm_config *c, expert_cache *cache, moe_buf *b, gpu_pending *p)
{
    if (!p->on) return 0;
    p->on = 0;
    int regathered = 0;
    if (wmat_expert_collect(b->eo)) {
        rows_for(p->n, gather_task, &p->x);
        expert_block(c, &p->ex, b, p->n);
        regathered = 1;
    }
    rows_for(p->n, scatter_task, &p->x);
    if (p->last) experts_done(cache, p->idx);
    return regathered;
}

/* Entry idx, expert e (weights ex), on the rows of zin that chose it,
 * FFN_BLOCK rows at a time; each row's weighted output is added to its
 * running sum, so every row adds its experts in expert order. With `pipe`
 * a block goes to the GPU whole when it takes it, and is added in after
 * the next one is launched (p); the expert is released after its last
 * block is added in. */
static void expert_rows(const rm_config *c, expert_cache *cache, const mlp_weights *ex, int idx, int e, moe_buf *b,
                        const float *zin, int pipe, gpu_pending *p)
{
    const int *ent = b->entry + b->start[e], nr = b->start[e + 1] - b->start[e];
    const int situ = c->act != ACT_SILU;
    for (int r0 = 0; r0 < nr; r0 += FFN_BLOCK) {
        const int n = nr - r0 < FFN_BLOCK ? nr - r0 : FFN_BLOCK, last = r0 + n >= nr;
        expert_io x = { c, b, zin, ent + r0 };
        rows_for(n, gather_task, &x);
        if (pipe && !wmat_expert(&ex->gate, &ex->up, &ex->down, situ, (float)c->situ_beta,
                                 (float)c->situ_linear_beta, b->gin, n)) {
            settle(c, cache, b, p);
            *p = (gpu_pending){ 1, idx, last, n, *ex, x };
            continue;
        }
        if (settle(c, cache, b, p)) rows_for(n, gather_task, &x);
        expert_block(c, ex, b, n);
        rows_for(n, scatter_task, &x);
        if (last) experts_done(cache, idx);
    }
}

/* Entry idx's weights start copying to the GPU, if its bytes are in, while
 * the entry before computes (wmat_stage: nothing without a GPU). */
static void stage_next(const expert_cache *cache, const moe_buf *b, int idx, int nu)
{
    mlp_weights ex;
    if (idx >= nu || !experts_peek(cache, idx, &ex)) return;
    const int e = b->uniq[idx], nr = b->start[e + 1] - b->start[e], n = nr < FFN_BLOCK ? nr : FFN_BLOCK;
    wmat_stage(&ex.gate, n);
    wmat_stage(&ex.up, n);
    wmat_stage(&ex.down, n);
}

/* Y = up(norm(Σ_i w_i · E_i)) + Y, where Y holds the shared experts'
 * output (moe_infer's sum, then the latent projection; vLLM's
 * latent_moe_runner.py), FFN_BLOCK rows at a time. */
static int combine(const rm_config *c, const moe_weights *w, moe_buf *b, float *Y, int T, rm_err *err)
{
    const int D = c->hidden_size, Z = c->latent ? c->latent : D;
    const int nb = T < FFN_BLOCK ? T : FFN_BLOCK;
    float *up = c->latent ? malloc((size_t)nb * D * sizeof *up) : NULL;
    if (c->latent && !up) return rm_errf(err, "out of memory in the MoE output");
    for (int t0 = 0; t0 < T; t0 += nb) {
        const int n = T - t0 < nb ? T - t0 : nb;
        float *yl = b->acc + (size_t)t0 * Z;
        if (c->latent && w->lat_norm)
            for (int r = 0; r < n; r++) norm_rms(yl + (size_t)r * Z, w->lat_norm, yl + (size_t)r * Z, Z, (float)c->rms_eps);
        const float *routed = yl;
        if (c->latent) { wmat_gemm(&w->lat_up, yl, up, n); routed = up; }
        float *y = Y + (size_t)t0 * D;
        if (c->num_shared)
            for (size_t i = 0; i < (size_t)n * D; i++) y[i] = routed[i] + y[i];
        else
            memcpy(y, routed, (size_t)n * D * sizeof *y);
    }
    free(up);
    return 0;
}

int moe_forward(const rm_config *c, const moe_weights *w, expert_cache *cache, phase_timer *pt, int *last_route,
                int layer, int pos0, const float *X, float *Y, int T, const moe_weights *next_w, int next_layer,
                rm_route_fn on_route, void *ud, volatile int *stop, rm_err *err)
{
    const int k = c->topk, D = c->hidden_size, Z = c->latent ? c->latent : D;
    moe_buf b;
    gpu_pending pend = { 0 };
    int rc = 0, begun = 0;
    if (moe_buf_alloc(&b, c, T)) { rc = rm_errf(err, "out of memory in MoE layer %d", layer); goto out; }
    for (int t0 = 0; t0 < T; t0 += FFN_BLOCK) {
        const int n = T - t0 < FFN_BLOCK ? T - t0 : FFN_BLOCK;
        route_rows(c, w, &b, layer, pos0, X, t0, n, on_route, ud);
        if (c->latent) wmat_gemm(&w->lat_down, X + (size_t)t0 * D, b.z + (size_t)t0 * Z, n);
    }
    const float *zin = c->latent ? b.z : X;
    /* the distinct experts of these positions, each computed once on the
     * rows that chose it: a pass reads every expert it needs once */
    int nu = group_by_expert(c, &b, T);
    memcpy(last_route, b.ids + (size_t)(T - 1) * k, (size_t)k * sizeof *b.ids);
    phase_mark(pt, RM_PHASE_SPINE);
    if ((rc = experts_begin(cache, layer, b.uniq, nu, err))) goto out;
    begun = 1;
    /* the next MoE layer's reads queue behind this layer's, so the disk
     * goes on while these experts compute (its input is not known yet:
     * this layer's rows guess it, as its own mixer input will again) */
    if (next_w) moe_prefetch_guess(c, next_w, cache, next_layer, X, T);
    /* the shared experts need no routed bytes: computed while the reads are
     * in flight, into Y */
    if (c->num_shared && (rc = mlp_forward(c, &w->shared, c->moe_inter * c->num_shared, X, Y, T, stop, err))) goto out;
    phase_mark(pt, RM_PHASE_SPINE);
    /* a block in flight on the GPU keeps its expert's slot while the next
     * expert is waited for: that needs a second slot */
    const int pipe = cache->nslots >= 2;
    for (int idx = 0; idx < nu; idx++) {
        mlp_weights ex;
        rc = experts_wait(cache, idx, &ex, stop, err);
        phase_mark(pt, RM_PHASE_WAIT_IO);
        if (rc) goto out;
        stage_next(cache, &b, idx + 1, nu);
        expert_rows(c, cache, &ex, idx, b.uniq[idx], &b, zin, pipe, &pend);
        phase_mark(pt, RM_PHASE_EXPERTS);
        if (stop && *stop) { rc = 1; goto out; }
    }
    settle(c, cache, &b, &pend);
    phase_mark(pt, RM_PHASE_EXPERTS);
    begun = 0;
    wmat_unstage();
    rc = combine(c, w, &b, Y, T, err);
    phase_mark(pt, RM_PHASE_SPINE);
out:
    if (begun) {
        wmat_unstage();         /* drops a block in flight (a stop, a failed read) ... */
        if (pend.on) experts_done(cache, pend.idx);     /* ... and its expert (a last block: see expert_rows) */
        experts_abort(cache);
    }
    moe_buf_free(&b);
    return rc;
}
