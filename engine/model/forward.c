/* forward.c — the forward pass: the layer loop over a chunk of positions
 * (rm_forward); the per-token figures it leaves behind are counters.c.
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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"
#include "kernels/kernels.h"
#include "base/threadpool.h"

static int embed_rows(rm_model *m, const int32_t *ids, int T, float *H, rm_err *err)
{
    const int D = m->cfg.hidden_size;
    for (int t = 0; t < T; t++)
        if (store_embed_row(&m->store, &m->embed, ids[t], H + (size_t)t * D, err)) return -1;
    return 0;
}

/* The per-row mix of AttnRes over blocks[0..nb) and P. */
static void mix_rows(float *const *blocks, int nb, const float *P, const float *w, float *out, int T, int D, float eps)
{
    const float *src[CFG_MAX_LAYERS + 2];
    for (int t = 0; t < T; t++) {
        for (int j = 0; j < nb; j++) src[j] = blocks[j] + (size_t)t * D;
        src[nb] = P + (size_t)t * D;
        norm_attn_res_mix(src, nb + 1, w, out + (size_t)t * D, D, eps);
    }
}

static void norm_rows(const float *X, const float *w, float *Y, int T, int D, float eps)
{
    for (int t = 0; t < T; t++) norm_rms(X + (size_t)t * D, w, Y + (size_t)t * D, D, eps);
}

static int forward_chunk(rm_model *m, rm_state *s, const int32_t *ids, int T, float *logits,
                         float *last_logits, rm_route_fn on_route, void *ud, float *dbg, int dbg_T,
                         int dbg_t0, rm_err *err)
{
    const rm_config *c = &m->cfg;
    const int D = c->hidden_size, L = c->num_layers, B = c->attn_res_block;
    const float eps = (float)c->rms_eps;
    const size_t TD = (size_t)T * D;
    const int nblk_max = B ? L / B + 2 : 0;
    float *P = malloc(TD * sizeof *P), *xin = malloc(TD * sizeof *xin), *xn = malloc(TD * sizeof *xn);
    float *y = malloc(TD * sizeof *y);
    float **blocks = calloc((size_t)nblk_max + 1, sizeof *blocks);
    int nb = 0, rc = 0;
    if (!P || !xin || !xn || !y || !blocks) { rc = rm_errf(err, "out of memory in forward pass"); goto out; }
    if ((rc = state_reserve(s, s->pos + T, err))) goto out;
    phase_timer pt;
    phase_start(&pt, m->ctr.phase);
    if ((rc = embed_rows(m, ids, T, P, err))) goto out;
    for (int l = 0; l < L; l++) {
        const layer_weights *w = &m->layers[l];
        int fresh = 0;   /* P restarts from the mixer output after a snapshot */
        phase_mark(&pt, RM_PHASE_SPINE);
        if ((rc = store_unit_begin(&m->store, 2 * l, err))) goto out;
        if (c->is_moe[l] && T == 1 && m->prev_route[(size_t)l * c->topk] >= 0)
            experts_prefetch(&m->experts, l, m->prev_route + (size_t)l * c->topk, c->topk);
        phase_mark(&pt, RM_PHASE_WAIT_IO);
        if (B) {
            if (nb) mix_rows(blocks, nb, P, w->attn_res_w, xin, T, D, eps);
            else memcpy(xin, P, TD * sizeof *xin);
            if (l % B == 0) {
                blocks[nb++] = P;
                if (!(P = malloc(TD * sizeof *P))) { rc = rm_errf(err, "out of memory"); goto out; }
                fresh = 1;
            }
            norm_rows(xin, w->in_norm, xn, T, D, eps);
        } else {
            norm_rows(P, w->in_norm, xn, T, D, eps);
        }
        phase_mark(&pt, RM_PHASE_SPINE);
        rc = c->is_kda[l] ? kda_forward(c, &w->kda, &s->kda[l], l, xn, y, T, err)
                          : mla_forward(c, &w->mla, &s->mla[l], l, s->pos, xn, y, T, err);
        if (rc) goto out;
        phase_mark(&pt, RM_PHASE_ATTN);
        if (fresh) memcpy(P, y, TD * sizeof *P);
        else for (size_t i = 0; i < TD; i++) P[i] += y[i];
        if (B) {
            mix_rows(blocks, nb, P, w->mlp_res_w, xin, T, D, eps);
            norm_rows(xin, w->post_norm, xn, T, D, eps);
        } else {
            norm_rows(P, w->post_norm, xn, T, D, eps);
        }
        phase_mark(&pt, RM_PHASE_SPINE);
        if ((rc = store_unit_begin(&m->store, 2 * l + 1, err))) goto out;
        phase_mark(&pt, RM_PHASE_WAIT_IO);
        if (c->is_moe[l]) {     /* marks its own phases: router, waits, experts */
            rc = moe_forward(c, &w->moe, &m->experts, &pt, m->prev_route + (size_t)l * c->topk, l, s->pos,
                             xn, y, T, on_route, ud, err);
        } else {
            rc = mlp_forward(c, &w->mlp, c->intermediate_size, xn, y, T, err);
            phase_mark(&pt, RM_PHASE_SPINE);
        }
        if (rc) goto out;
        for (size_t i = 0; i < TD; i++) P[i] += y[i];
        if (dbg)
            memcpy(dbg + ((size_t)l * dbg_T + dbg_t0) * D, P, TD * sizeof *P);
    }
    if (B) mix_rows(blocks, nb, P, m->out_res_w, xin, T, D, eps);
    else memcpy(xin, P, TD * sizeof *xin);
    norm_rows(xin, m->final_norm, xn, T, D, eps);
    if (dbg) memcpy(dbg + ((size_t)L * dbg_T + dbg_t0) * D, xn, TD * sizeof *xn);
    phase_mark(&pt, RM_PHASE_SPINE);
    if ((rc = store_unit_begin(&m->store, 2 * L, err))) goto out;
    phase_mark(&pt, RM_PHASE_WAIT_IO);
    if (logits) wmat_gemm(&m->lm_head, xn, logits, T);
    if (last_logits) wmat_gemv(&m->lm_head, xn + (size_t)(T - 1) * D, last_logits);
    phase_mark(&pt, RM_PHASE_LM_HEAD);
    m->ctr.tokens += (uint64_t)T;
    s->pos += T;
out:
    free(P); free(xin); free(xn); free(y);
    if (blocks) for (int j = 0; j < nb; j++) free(blocks[j]);
    free(blocks);
    return rc;
}

int rm_forward(rm_model *m, rm_state *s, const int32_t *ids, int n, float *logits, float *last_logits,
               rm_route_fn on_route, void *route_ud, rm_err *err)
{
    const int V = m->cfg.vocab_size;
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return rm_errf(err, "token id %d at position %d is outside the vocabulary (0..%d)", ids[i], i, V - 1);
    for (int t0 = 0; t0 < n; t0 += PREFILL_CHUNK) {
        int T = n - t0 < PREFILL_CHUNK ? n - t0 : PREFILL_CHUNK;
        int last = t0 + T == n;
        if (forward_chunk(m, s, ids + t0, T, logits ? logits + (size_t)t0 * V : NULL,
                          last ? last_logits : NULL, on_route, route_ud, m->test_hidden, n, t0, err))
            return -1;
    }
    return 0;
}

/* A first form of the prompt path: 256-token passes, the stop flag looked at
 * between passes (the layer-major planner replaces it). */
int rm_forward_ex(rm_model *m, rm_state *s, const int32_t *ids, int n, float *logits, float *last_logits,
                  rm_route_fn on_route, void *route_ud, rm_forward_ctl *ctl, int *fed, rm_err *err)
{
    const int V = m->cfg.vocab_size;
    if (fed) *fed = 0;
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return rm_errf(err, "token id %d at position %d is outside the vocabulary (0..%d)", ids[i], i, V - 1);
    const int chunk = ctl && ctl->chunk_tokens > 0 ? ctl->chunk_tokens : PREFILL_CHUNK;
    rm_prompt_figures pf = ctl ? ctl->base : (rm_prompt_figures){ 0 };
    pf.total = n;
    pf.chunks = (n + chunk - 1) / chunk;
    pf.layers = m->cfg.num_layers;
    pf.eta = -1;
    const double t0 = rm_now();
    for (int t = 0; t < n; t += chunk) {
        if (ctl && ctl->stop && *ctl->stop) return 1;
        int T = n - t < chunk ? n - t : chunk;
        pf.chunk = t / chunk;
        pf.chunk_tokens = T;
        if (forward_chunk(m, s, ids + t, T, logits ? logits + (size_t)t * V : NULL,
                          t + T == n ? last_logits : NULL, on_route, route_ud, m->test_hidden, n, t, err))
            return -1;
        if (fed) *fed = t + T;
        pf.done = t + T;
        pf.layer = pf.layers;
        pf.elapsed = rm_now() - t0;
        pf.tok_per_s = pf.elapsed > 0 ? pf.done / pf.elapsed : 0;
        pf.eta = pf.tok_per_s > 0 ? (n - pf.done) / pf.tok_per_s : -1;
        if (ctl && ctl->on_progress) ctl->on_progress(ctl->ud, &pf);
        if (ctl && ctl->on_chunk) ctl->on_chunk(ctl->ud, t + T);
    }
    return 0;
}

void model_test_hidden(rm_model *m, float *rows) { m->test_hidden = rows; }
