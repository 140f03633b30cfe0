/* forward.c — the forward pass: the layer loop over a pass of positions
 * (rm_forward, rm_forward_ex); the per-token figures it leaves behind are
 * counters.c, the planner that sizes a pass is load.c.
 *
 * The layer loop (KimiDecoderLayer and KimiLinearModel.forward of K3's
 * modeling_kimi_linear.py; KimiDecoderLayer of Kimi-Linear-48B's
 * modeling_kimi.py). Plain residual stream (48B):
 *   h += Mixer(RMSNorm(h)); h += FFN(RMSNorm(h))
 * Attention Residuals (K3, block size B): a running partial sum P of the
 * current block and a list of snapshots; every layer's input is a softmax mix
 * of the snapshots and P (none before the first snapshot); at layers
 * l % B == 0 the partial sum is snapshotted and restarts from the mixer
 * output; the output mix over all snapshots and P feeds the final norm
 * (KimiDecoderLayer._forward_attn_residual, KimiLinearModel.
 * _apply_output_attn_res).
 * AttnRes mixes across depth only, never across tokens, so it needs no cache.
 *
 * Layer-major passes. A prompt is fed in passes of up to the planner's size
 * (up to the whole prompt): within a pass every layer sees all of the pass's
 * positions before the next layer starts, so each routed expert a layer
 * needs is read once per pass, and a streamed spine unit once per pass —
 * where 256-token chunks read nearly the whole expert pool again every 256
 * tokens under K3's flat routing. What only needs one position at a time
 * (norms, the AttnRes mixes, the mixers, whose recurrent and causal parts
 * step through positions in order anyway) runs in blocks of FWD_BLOCK
 * positions, so its scratch memory does not grow with the pass; what a pass
 * keeps per position is the residual stream, the AttnRes snapshots and the
 * feed-forward block's input and output. Every row's arithmetic is the same
 * whatever the pass or block size, so passes of 1, 7, 256 or all tokens give
 * the same bits, and the same bits as token-by-token decoding.
 *
 * A stoppable pass (rm_forward_ex) marks the state first; a stop (looked at
 * between blocks, products and experts) or an error puts it back, so the
 * state is always that of the last complete pass (with stop_to_start, the
 * mark is taken once, before the first pass, and a stop goes back there).
 *
 * A capture (rm_forward_ctl.capture) hands out the state at a position
 * inside a pass without ending the pass there, which would read every
 * expert the layers need once more: the blocks of the per-position work end
 * at it, and right after each layer's mixer has consumed the block that ends
 * there, that layer's state is the state at that position (a KDA layer's
 * recurrent and convolution state; an MLA layer's cache rows up to there,
 * which later positions leave alone). Cutting a block changes no row's
 * arithmetic, so the pass gives the same bits with or without a capture.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"
#include "kernels/kernels.h"
#include "base/threadpool.h"

/* Positions per block of the per-position work within a pass: at K3's
 * widths a 256-row product runs at the gemm kernel's full rate (167 GFLOP/s
 * on the 2-core development machine, against 106 at 64 rows), and each
 * product of a block is a fraction of a second, which bounds how long a
 * stop waits. */
#define FWD_BLOCK 256

/* What one pass needs besides the model and the state. */
typedef struct pass_ctx {
    volatile int *stop;
    rm_route_fn on_route;
    void *route_ud;
    float *dbg;                 /* test hook rows [L+1][dbg_T][D], or NULL */
    int dbg_T, dbg_t0;
    void (*after_layer)(void *ud, int layer);
    void *ud;
    int cap;                    /* 0 < cap < T: blocks end at it, and each layer's state there goes to on_capture */
    void (*on_capture)(void *ud, int layer);
    void *cap_ud;
} pass_ctx;

static int stopped(const pass_ctx *p) { return p->stop && *p->stop; }

/* Orders (id, position) pairs by id, then position. */
static int by_id(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* The embedding rows of a pass, read from storage once per distinct id (a
 * row is a read of its own: a 36,000-token prompt of 2,000 distinct ids
 * took 3 s of small reads on k3-tiny, now a tenth of that) and copied to the
 * other positions; the stop flag is looked at every FWD_BLOCK reads, so a
 * long prompt stops here too. Returns 0, 1 (stopped) or -1. */
static int embed_rows(rm_model *m, const int32_t *ids, int T, float *H, const pass_ctx *p, rm_err *err)
{
    const size_t D = (size_t)m->cfg.hidden_size;
    if (T == 1) return store_embed_row(&m->store, &m->embed, ids[0], H, err) ? -1 : 0;
    int32_t *order = malloc((size_t)T * 2 * sizeof *order);
    if (!order) return rm_errf(err, "out of memory in the forward pass (%d positions)", T);
    for (int t = 0; t < T; t++) { order[2 * t] = ids[t]; order[2 * t + 1] = t; }
    qsort(order, (size_t)T, 2 * sizeof *order, by_id);
    int rc = 0, reads = 0;
    for (int i = 0; i < T && !rc; i++) {
        const int t = order[2 * i + 1];
        if (i > 0 && order[2 * i] == order[2 * i - 2]) {
            memcpy(H + (size_t)t * D, H + (size_t)order[2 * i - 1] * D, D * sizeof *H);
            continue;
        }
        if (store_embed_row(&m->store, &m->embed, ids[t], H + (size_t)t * D, err)) rc = -1;
        else if (++reads % FWD_BLOCK == 0 && stopped(p)) rc = 1;
    }
    free(order);
    return rc;
}

/* The per-row mix of AttnRes over the nb snapshots and P, for n rows from
 * row t0 of each. */
static void mix_rows(float *const *blocks, int nb, const float *P, const float *w, float *out, int t0, int n, int D,
                     float eps)
{
    const float *src[CFG_MAX_LAYERS + 2];
    for (int r = 0; r < n; r++) {
        const size_t row = (size_t)(t0 + r) * D;
        for (int j = 0; j < nb; j++) src[j] = blocks[j] + row;
        src[nb] = P + (size_t)r * D;
        norm_attn_res_mix(src, nb + 1, w, out + (size_t)r * D, D, eps);
    }
}

static void norm_rows(const float *X, const float *w, float *Y, int n, int D, float eps)
{
    for (int r = 0; r < n; r++) norm_rms(X + (size_t)r * D, w, Y + (size_t)r * D, D, eps);
}

/* The memory of one pass of T positions. */
typedef struct pass_buf {
    float *P;                   /* [T, D] partial sum of the current AttnRes block (the residual stream) */
    float *xf, *y;              /* [T, D] feed-forward input and output */
    float **blocks;             /* AttnRes snapshots, each [T, D] */
    int nb;
    float *xin, *xn, *ym;       /* [FWD_BLOCK, D] a block's mix, its norm, the mixer's output */
} pass_buf;

static void pass_buf_free(pass_buf *b)
{
    free(b->P); free(b->xf); free(b->y); free(b->xin); free(b->xn); free(b->ym);
    if (b->blocks) for (int j = 0; j < b->nb; j++) free(b->blocks[j]);
    free(b->blocks);
}

static int pass_buf_alloc(pass_buf *b, const rm_config *c, int T)
{
    const size_t TD = (size_t)T * c->hidden_size, BD = (size_t)(T < FWD_BLOCK ? T : FWD_BLOCK) * c->hidden_size;
    const int nblk_max = c->attn_res_block ? c->num_layers / c->attn_res_block + 2 : 0;
    *b = (pass_buf){ malloc(TD * sizeof(float)), malloc(TD * sizeof(float)), malloc(TD * sizeof(float)),
                     calloc((size_t)nblk_max + 1, sizeof(float *)), 0, malloc(BD * sizeof(float)),
                     malloc(BD * sizeof(float)), malloc(BD * sizeof(float)) };
    return b->P && b->xf && b->y && b->blocks && b->xin && b->xn && b->ym ? 0 : -1;
}

size_t forward_bytes_per_token(const rm_config *c)
{
    const int nblk_max = c->attn_res_block ? c->num_layers / c->attn_res_block + 2 : 0;
    return (size_t)(3 + nblk_max) * c->hidden_size * sizeof(float);
}

int forward_block_tokens(void) { return FWD_BLOCK; }

/* The first MoE layer at or after l, or -1. */
static int next_moe(const rm_config *c, int l)
{
    for (; l < c->num_layers; l++)
        if (c->is_moe[l]) return l;
    return -1;
}

/* The mixer half of layer l for every block of the pass: AttnRes mix (or the
 * residual stream), norm, KDA or MLA, the partial sum, then the
 * feed-forward input. Returns 0, 1 (stopped) or -1. */
static int mixer_half(rm_model *m, rm_state *s, pass_buf *b, int l, int T, phase_timer *pt, const pass_ctx *p,
                      rm_err *err)
{
    const rm_config *c = &m->cfg;
    const layer_weights *w = &m->layers[l];
    const int D = c->hidden_size, B = c->attn_res_block;
    const float eps = (float)c->rms_eps;
    /* at a block boundary the partial sum so far becomes a snapshot and the
     * next one starts from the mixer's output */
    const int nb0 = b->nb, fresh = B && l % B == 0;
    /* reads start before the router: this layer's experts, or a dense
     * layer's guess of the next MoE layer's */
    const int gl = next_moe(c, l);
    const int guess = gl >= 0 && moe_guess_worth(c, T) && store_unit_resident(&m->store, 2 * gl + 1);
    float *Pin = b->P;
    if (fresh) {
        b->blocks[b->nb++] = b->P;
        if (!(b->P = malloc((size_t)T * D * sizeof *b->P))) return rm_errf(err, "out of memory in the forward pass");
    }
    for (int t0 = 0, n; t0 < T; t0 += n) {
        n = T - t0 < FWD_BLOCK ? T - t0 : FWD_BLOCK;
        if (p->cap > t0 && p->cap < t0 + n) n = p->cap - t0;    /* a block ends at the capture */
        const size_t off = (size_t)t0 * D, nd = (size_t)n * D;
        if (B) {
            if (nb0) mix_rows(b->blocks, nb0, Pin + off, w->attn_res_w, b->xin, t0, n, D, eps);
            else memcpy(b->xin, Pin + off, nd * sizeof *b->xin);
            norm_rows(b->xin, w->in_norm, b->xn, n, D, eps);
        } else {
            norm_rows(Pin + off, w->in_norm, b->xn, n, D, eps);
        }
        if (guess) moe_prefetch_guess(c, &m->layers[gl].moe, &m->experts, gl, b->xn, n);
        phase_mark(pt, RM_PHASE_SPINE);
        int rc = c->is_kda[l] ? kda_forward(c, &w->kda, &s->kda[l], l, b->xn, b->ym, n, p->stop, err)
                              : mla_forward(c, &w->mla, &s->mla[l], l, s->pos + t0, b->xn, b->ym, n, p->stop, err);
        phase_mark(pt, RM_PHASE_ATTN);
        if (rc) return rc;
        if (p->cap && p->cap == t0 + n) p->on_capture(p->cap_ud, l);
        float *P = b->P + off;
        if (fresh) memcpy(P, b->ym, nd * sizeof *P);
        else for (size_t i = 0; i < nd; i++) P[i] += b->ym[i];
        if (B) {
            mix_rows(b->blocks, b->nb, P, w->mlp_res_w, b->xin, t0, n, D, eps);
            norm_rows(b->xin, w->post_norm, b->xf + off, n, D, eps);
        } else {
            norm_rows(P, w->post_norm, b->xf + off, n, D, eps);
        }
        phase_mark(pt, RM_PHASE_SPINE);
        if (stopped(p)) return 1;
    }
    return 0;
}

/* The final mix and norm of every block, then lm_head: every row into
 * logits, or the last row into last_logits. */
static int head(rm_model *m, pass_buf *b, int T, float *logits, float *last_logits, phase_timer *pt,
                const pass_ctx *p, rm_err *err)
{
    const rm_config *c = &m->cfg;
    const int D = c->hidden_size, L = c->num_layers, V = c->vocab_size;
    const float eps = (float)c->rms_eps;
    phase_mark(pt, RM_PHASE_SPINE);
    if (store_unit_begin(&m->store, 2 * L, err)) return -1;
    phase_mark(pt, RM_PHASE_WAIT_IO);
    for (int t0 = 0; t0 < T; t0 += FWD_BLOCK) {
        const int n = T - t0 < FWD_BLOCK ? T - t0 : FWD_BLOCK;
        const size_t off = (size_t)t0 * D;
        if (t0 + n < T && !logits && !p->dbg) continue;     /* only the last row is needed */
        if (c->attn_res_block) mix_rows(b->blocks, b->nb, b->P + off, m->out_res_w, b->xin, t0, n, D, eps);
        else memcpy(b->xin, b->P + off, (size_t)n * D * sizeof *b->xin);
        norm_rows(b->xin, m->final_norm, b->xn, n, D, eps);
        if (p->dbg) memcpy(p->dbg + ((size_t)L * p->dbg_T + p->dbg_t0 + t0) * D, b->xn, (size_t)n * D * sizeof *b->xn);
        phase_mark(pt, RM_PHASE_SPINE);
        if (logits) wmat_gemm(&m->lm_head, b->xn, logits + (size_t)t0 * V, n);
        if (last_logits && t0 + n == T) wmat_gemv(&m->lm_head, b->xn + (size_t)(n - 1) * D, last_logits);
        phase_mark(pt, RM_PHASE_LM_HEAD);
    }
    return 0;
}

/* One layer-major pass of T positions. Returns 0, 1 (stopped) or -1; on
 * anything but 0 the state is partly updated. */
static int pass(rm_model *m, rm_state *s, const int32_t *ids, int T, float *logits, float *last_logits,
                const pass_ctx *p, rm_err *err)
{
    const rm_config *c = &m->cfg;
    const int D = c->hidden_size, L = c->num_layers;
    const size_t TD = (size_t)T * D;
    pass_buf b;
    int rc = 0;
    if (pass_buf_alloc(&b, c, T)) { rc = rm_errf(err, "out of memory in the forward pass (%d positions)", T); goto out; }
    if ((rc = state_reserve(s, s->pos + T, err))) goto out;
    phase_timer pt;
    phase_start(&pt, m->ctr.phase);
    if ((rc = embed_rows(m, ids, T, b.P, p, err))) goto out;
    for (int l = 0; l < L; l++) {
        const layer_weights *w = &m->layers[l];
        phase_mark(&pt, RM_PHASE_SPINE);
        if ((rc = store_unit_begin(&m->store, 2 * l, err))) goto out;
        if (c->is_moe[l] && T == 1 && m->prev_route[(size_t)l * c->topk] >= 0)
            experts_prefetch(&m->experts, l, m->prev_route + (size_t)l * c->topk, c->topk);
        phase_mark(&pt, RM_PHASE_WAIT_IO);
        if ((rc = mixer_half(m, s, &b, l, T, &pt, p, err))) goto out;
        if ((rc = store_unit_begin(&m->store, 2 * l + 1, err))) goto out;
        phase_mark(&pt, RM_PHASE_WAIT_IO);
        if (c->is_moe[l]) {     /* marks its own phases: router, waits, experts */
            /* (a guess reads the router of that layer: only from a resident unit) */
            const int nl = next_moe(c, l + 1);
            const int ahead = nl >= 0 && moe_guess_worth(c, T) && store_unit_resident(&m->store, 2 * nl + 1);
            rc = moe_forward(c, &w->moe, &m->experts, &pt, m->prev_route + (size_t)l * c->topk, l, s->pos,
                             b.xf, b.y, T, ahead ? &m->layers[nl].moe : NULL, nl, p->on_route, p->route_ud, p->stop, err);
        } else {
            rc = mlp_forward(c, &w->mlp, c->intermediate_size, b.xf, b.y, T, p->stop, err);
            phase_mark(&pt, RM_PHASE_SPINE);
        }
        if (rc) goto out;
        for (size_t i = 0; i < TD; i++) b.P[i] += b.y[i];
        if (p->dbg) memcpy(p->dbg + ((size_t)l * p->dbg_T + p->dbg_t0) * D, b.P, TD * sizeof *b.P);
        phase_mark(&pt, RM_PHASE_SPINE);
        if (p->after_layer) p->after_layer(p->ud, l);
        if (stopped(p)) { rc = 1; goto out; }
    }
    if ((rc = head(m, &b, T, logits, last_logits, &pt, p, err))) goto out;
    m->ctr.tokens += (uint64_t)T;
    s->pos += T;
out:
    pass_buf_free(&b);
    return rc;
}

static int check_ids(const rm_model *m, const int32_t *ids, int n, rm_err *err)
{
    const int V = m->cfg.vocab_size;
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return rm_errf(err, "token id %d at position %d is outside the vocabulary (0..%d)", ids[i], i, V - 1);
    return 0;
}

/* Passes of at most `chunk` tokens, all of the same size but the last. */
static int pass_size(int n, int chunk)
{
    if (chunk <= 0 || chunk >= n) return n;
    int passes = (n + chunk - 1) / chunk;
    return (n + passes - 1) / passes;
}

int rm_forward(rm_model *m, rm_state *s, const int32_t *ids, int n, float *logits, float *last_logits,
               rm_route_fn on_route, void *route_ud, rm_err *err)
{
    if (check_ids(m, ids, n, err)) return -1;
    const int V = m->cfg.vocab_size, size = pass_size(n, m->prefill_chunk);
    for (int t = 0; t < n; t += size) {
        const int T = n - t < size ? n - t : size;
        pass_ctx p = { NULL, on_route, route_ud, m->test_hidden, n, t, NULL, NULL, 0, NULL, NULL };
        if (pass(m, s, ids + t, T, logits ? logits + (size_t)t * V : NULL, t + T == n ? last_logits : NULL, &p, err))
            return -1;
    }
    return 0;
}

/* ---- rm_forward_ex: stoppable passes with progress ---------------------- */

/* What the progress figures are computed from, for one prompt. Progress
 * is counted in the work of the prompt's layers, not in positions: each
 * layer of each pass is its products' and attention's flops and the bytes
 * it reads (its experts, its share of a streamed spine), which differ
 * between dense and MoE layers, KDA and MLA, early and late passes. The
 * seconds a flop and a byte cost are measured as the prompt goes (the
 * time not spent waiting for reads over the flops done; the waits over
 * the bytes read), and the expected bytes are scaled by what was read
 * against what was expected, so the ETA converges as layers complete. */
typedef struct prompt_meter {
    rm_model *m;
    rm_forward_ctl *ctl;
    rm_prompt_figures f;
    double t0;                  /* the prompt began */
    double wait0;               /* the seconds waited for reads then */
    uint64_t bytes0, pass_bytes0;   /* storage bytes read at the start, and at the pass's start */
    int n, size, pos0;          /* the feed's tokens, a pass's, and the state's position at the start */
    /* each layer's flops: per position, and per position and position it
     * attends to (MLA); their sums over the layers; MoE layers */
    double tok_flops[CFG_MAX_LAYERS], att_flops[CFG_MAX_LAYERS], tok_all, att_all;
    int moe_layers;
    double flops_done;          /* the complete layers' flops (estimated as the rest is) */
    double bytes_expected_done; /* and the bytes they were expected to read */
} prompt_meter;

static uint64_t bytes_now(const rm_model *m)
{
    return io_peek_bytes(m->store.io) + (m->experts.io ? io_peek_bytes(m->experts.io) : 0);
}

/* The expected bytes one MoE layer of a T-position pass reads: the distinct
 * experts T positions choose under uniform routing, E (1 - (1 - k/E)^T),
 * less the share the cache holds now. */
static double layer_bytes_estimate(const rm_model *m, int T)
{
    const rm_model_info *in = &m->info;
    const rm_config *c = &m->cfg;
    if (!c->num_experts || !in->total_experts) return 0;
    const double E = c->num_experts, chosen = E * (1 - pow(1 - (double)c->topk / E, T));
    const double per = (double)in->expert_bytes / in->total_experts;
    const double held = in->total_experts ? (double)m->experts.resident / in->total_experts : 0;
    return chosen * per * (1 - held);
}

/* Layer l's flops: per position its products (the router's and the chosen
 * experts' included) and KDA's recurrence (about 8 hd^2 a head); per
 * position and earlier position it attends to, MLA's scores and values in
 * the absorbed form. */
static void layer_flops_init(prompt_meter *mt)
{
    const rm_model *m = mt->m;
    const rm_config *c = &m->cfg;
    for (int l = 0; l < c->num_layers; l++) {
        const layer_weights *w = &m->layers[l];
        const wmat *mats[] = { &w->kda.q, &w->kda.k, &w->kda.v, &w->kda.f_a, &w->kda.f_b, &w->kda.b, &w->kda.g,
                               &w->kda.g_a, &w->kda.g_b, &w->kda.o, &w->mla.q, &w->mla.q_a, &w->mla.q_b,
                               &w->mla.kv_a, &w->mla.g, &w->mla.o, &w->mlp.gate, &w->mlp.up, &w->mlp.down,
                               &w->moe.router, &w->moe.lat_down, &w->moe.lat_up, &w->moe.shared.gate,
                               &w->moe.shared.up, &w->moe.shared.down };
        double f = 0;
        for (size_t i = 0; i < sizeof mats / sizeof *mats; i++) f += 2.0 * mats[i]->rows * mats[i]->cols;
        if (c->is_moe[l] && w->moe.experts) {
            const mlp_weights *e = &w->moe.experts[0];
            f += 2.0 * c->topk * ((double)e->gate.rows * e->gate.cols + (double)e->up.rows * e->up.cols +
                                  (double)e->down.rows * e->down.cols);
        }
        if (c->is_kda[l]) f += 8.0 * c->kda_heads * (double)c->kda_head_dim * c->kda_head_dim;
        mt->tok_flops[l] = f;
        mt->att_flops[l] = c->is_kda[l] ? 0 : 2.0 * c->mla_heads * (2.0 * c->kv_lora_rank + c->qk_rope);
        mt->tok_all += mt->tok_flops[l];
        mt->att_all += mt->att_flops[l];
        mt->moe_layers += c->is_moe[l];
    }
}

/* Positions attended by T positions from pos (each attends to itself and
 * every earlier one). */
static double attended(int T, int pos) { return (double)T * pos + (double)T * (T + 1) / 2; }

/* The flops and expected bytes of layer l of the pass at feed position t
 * (of T tokens). */
static double layer_flops(const prompt_meter *mt, int l, int t, int T)
{
    return T * mt->tok_flops[l] + mt->att_flops[l] * attended(T, mt->pos0 + t);
}

static double layer_bytes(const prompt_meter *mt, int l, int T)
{
    const rm_model *m = mt->m;
    const double streamed = (double)(m->info.spine_bytes - m->info.spine_resident_bytes) / m->cfg.num_layers;
    return (m->cfg.is_moe[l] ? layer_bytes_estimate(m, T) : 0) + streamed;
}

/* What is left of the feed: the layers from `from` of the pass at feed
 * position t (of T tokens), then every later pass; *later_bytes gets the
 * later passes' share of the bytes. One sum per pass, so a prompt of many
 * small passes costs little per layer. */
static void work_left(const prompt_meter *mt, int t, int T, int from, double *flops, double *bytes,
                      double *later_bytes)
{
    const rm_model *m = mt->m;
    const int L = m->cfg.num_layers;
    *flops = *bytes = 0;
    for (int l = from; l < L; l++) {
        *flops += layer_flops(mt, l, t, T);
        *bytes += layer_bytes(mt, l, T);
    }
    const double streamed = (double)(m->info.spine_bytes - m->info.spine_resident_bytes);
    const double full = mt->moe_layers * layer_bytes_estimate(m, mt->size) + streamed;
    double later = 0;
    for (int u = t + T; u < mt->n; u += mt->size) {
        const int U = mt->n - u < mt->size ? mt->n - u : mt->size;
        *flops += U * mt->tok_all + mt->att_all * attended(U, mt->pos0 + u);
        later += U == mt->size ? full : mt->moe_layers * layer_bytes_estimate(m, U) + streamed;
    }
    *bytes += later;
    *later_bytes = later;
}

static void meter_publish(prompt_meter *mt, int layers_done)
{
    rm_prompt_figures *f = &mt->f;
    const rm_model *m = mt->m;
    const double now = rm_now();
    f->layer = layers_done;
    f->elapsed = now - mt->t0;
    f->chunk_bytes_read = bytes_now(m) - mt->pass_bytes0;
    /* positions through all layers, for the rate */
    const double done = f->done + (double)f->chunk_tokens * layers_done / (f->layers ? f->layers : 1);
    f->tok_per_s = f->elapsed > 0 && done > 0 ? done / f->elapsed : 0;
    double flops_left, bytes_left, later_bytes;
    work_left(mt, f->chunk * mt->size, f->chunk_tokens, layers_done, &flops_left, &bytes_left, &later_bytes);
    /* what was read against what was expected corrects the estimate of
     * the rest (routing is not uniform; the cache holds more as it goes) */
    const double bytes_read = (double)(bytes_now(m) - mt->bytes0);
    const double scale = mt->bytes_expected_done > 0 ? bytes_read / mt->bytes_expected_done : 1;
    f->chunk_bytes_left = (uint64_t)(scale * (bytes_left - later_bytes));
    /* the seconds a flop and a byte have cost so far: the time spent
     * computing over the flops done, the time spent waiting over the
     * bytes read (reads that overlap the arithmetic cost nothing) */
    const double waited = m->ctr.phase[RM_PHASE_WAIT_IO] - mt->wait0;
    const double computing = f->elapsed - waited > 0 ? f->elapsed - waited : 0;
    double eta = -1;
    if (mt->flops_done > 0) {
        eta = flops_left * (computing / mt->flops_done);
        if (bytes_read > 0) eta += scale * bytes_left * (waited / bytes_read);
    }
    f->eta = eta;
    /* the work done, in the seconds it took against those still to come;
     * it never goes back (a rate measured anew moves the ETA, not the bar) */
    const double work = eta < 0 ? 0 : f->elapsed + eta > 0 ? f->elapsed / (f->elapsed + eta) : 1;
    if (work > f->work) f->work = work;
    if (mt->ctl->on_progress) mt->ctl->on_progress(mt->ctl->ud, f);
}

static void meter_after_layer(void *ud, int l)
{
    prompt_meter *mt = ud;
    mt->flops_done += layer_flops(mt, l, mt->f.chunk * mt->size, mt->f.chunk_tokens);
    mt->bytes_expected_done += layer_bytes(mt, l, mt->f.chunk_tokens);
    meter_publish(mt, l + 1);
}

int rm_forward_ex(rm_model *m, rm_state *s, const int32_t *ids, int n, float *logits, float *last_logits,
                  rm_route_fn on_route, void *route_ud, rm_forward_ctl *ctl, int *fed, rm_err *err)
{
    if (fed) *fed = 0;
    if (check_ids(m, ids, n, err)) return -1;
    if (s->ckpt_pos >= 0) return rm_errf(err, "a prompt cannot be fed while a speculation checkpoint is open");
    rm_forward_ctl none = { 0 };
    if (!ctl) ctl = &none;
    const int V = m->cfg.vocab_size;
    const int size = pass_size(n, ctl->chunk_tokens > 0 ? ctl->chunk_tokens : m->prefill_chunk);
    prompt_meter mt = { .m = m, .ctl = ctl, .f = ctl->base, .t0 = rm_now(), .wait0 = m->ctr.phase[RM_PHASE_WAIT_IO],
                        .bytes0 = bytes_now(m), .n = n, .size = size, .pos0 = s->pos };
    layer_flops_init(&mt);
    mt.f.work = 0;
    mt.f.total = n;
    mt.f.done = 0;
    mt.f.chunks = (n + size - 1) / size;
    mt.f.layers = m->cfg.num_layers;
    mt.f.eta = -1;
    /* one mark for the whole feed, or one per pass */
    const int whole = ctl->stop_to_start;
    if (whole && state_mark(s, err)) return -1;
    for (int t = 0; t < n; t += size) {
        const int T = n - t < size ? n - t : size;
        if (ctl->stop && *ctl->stop) {
            if (whole) {
                state_restore_mark(s);
                if (fed) *fed = 0;
            }
            return 1;
        }
        mt.f.chunk = t / size;
        mt.f.chunk_tokens = T;
        mt.pass_bytes0 = bytes_now(m);
        meter_publish(&mt, 0);
        if (!whole && state_mark(s, err)) return -1;
        /* a capture inside this pass; one on its end is the pass's own end */
        const int cap = ctl->capture - t;
        pass_ctx p = { ctl->stop, on_route, route_ud, m->test_hidden, n, t, meter_after_layer, &mt,
                       ctl->on_capture && cap > 0 && cap < T ? cap : 0, ctl->on_capture, ctl->ud };
        int rc = pass(m, s, ids + t, T, logits ? logits + (size_t)t * V : NULL, t + T == n ? last_logits : NULL,
                      &p, err);
        if (rc) {
            state_restore_mark(s);
            if (whole && fed) *fed = 0;
            return rc;
        }
        if (!whole) state_forget_mark(s);
        mt.f.done = t + T;
        if (fed) *fed = t + T;
        if (ctl->on_chunk) ctl->on_chunk(ctl->ud, t + T);
    }
    if (whole) state_forget_mark(s);
    return 0;
}

void model_test_hidden(rm_model *m, float *rows) { m->test_hidden = rows; }
