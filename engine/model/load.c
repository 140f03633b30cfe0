/* load.c — opening a model directory: config, checkpoint, weights.
 *
 * Loading reads config.json (config.c), indexes the checkpoint (st.c) and
 * binds every tensor the config implies, checking dtype and shape, so a
 * forward pass never meets a missing or malformed weight. Names follow the
 * checkpoints: K3 under "language_model.model." with
 * "language_model.lm_head.weight", Kimi-Linear under "model." with
 * "lm_head.weight". The matrices every token uses are then registered with
 * the weight store as spine units, the RAM budget is planned (store.c), and
 * the rest of it becomes the expert cache (experts.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"
#include "remote/source.h"
#include "kernels/kernels.h"
#include "gpu/gpu.h"
#include "base/threadpool.h"

typedef struct loader {
    const st_set *st;
    const char *prefix;         /* "language_model.model." or "model." */
    rm_err *err;
    char name[512];
} loader;

/* The full name of a tensor: prefix + fmt (which may hold one %d for the
 * layer, or none) + suffix. */
static const char *nm(loader *ld, const char *fmt, int layer, const char *suffix)
{
    char mid[256];
    snprintf(mid, sizeof mid, fmt, layer);
    snprintf(ld->name, sizeof ld->name, "%s%s%s", ld->prefix, mid, suffix ? suffix : "");
    return ld->name;
}

#define MAT(dst, rows, cols, fmt, l, sfx) \
    if (wmat_get(ld->st, nm(ld, fmt, l, sfx), rows, cols, &(dst), ld->err)) return -1
#define VEC(dst, n, take, fmt, l, sfx) \
    if (wvec_get(ld->st, nm(ld, fmt, l, sfx), n, take, &(dst), ld->err)) return -1

static int load_mlp(loader *ld, mlp_weights *w, int D, int inter, const char *fmt, int l)
{
    MAT(w->gate, inter, D, fmt, l, "gate_proj.weight");
    MAT(w->up, inter, D, fmt, l, "up_proj.weight");
    MAT(w->down, D, inter, fmt, l, "down_proj.weight");
    return 0;
}

static int load_kda(loader *ld, const rm_config *c, kda_weights *w, int l)
{
    const int D = c->hidden_size, H = c->kda_heads, hd = c->kda_head_dim, P = H * hd;
    const char *f = "layers.%d.self_attn.";
    MAT(w->q, P, D, f, l, "q_proj.weight");
    MAT(w->k, P, D, f, l, "k_proj.weight");
    MAT(w->v, P, D, f, l, "v_proj.weight");
    MAT(w->f_a, hd, D, f, l, "f_a_proj.weight");
    MAT(w->f_b, P, hd, f, l, "f_b_proj.weight");
    MAT(w->b, H, D, f, l, "b_proj.weight");
    if (c->kda_full_rank_gate) {
        MAT(w->g, P, D, f, l, "g_proj.weight");
    } else {
        MAT(w->g_a, hd, D, f, l, "g_a_proj.weight");
        MAT(w->g_b, P, hd, f, l, "g_b_proj.weight");
    }
    MAT(w->o, D, P, f, l, "o_proj.weight");
    VEC(w->conv[0], P * c->conv_size, 0, f, l, "q_conv1d.weight");
    VEC(w->conv[1], P * c->conv_size, 0, f, l, "k_conv1d.weight");
    VEC(w->conv[2], P * c->conv_size, 0, f, l, "v_conv1d.weight");
    /* A_log is [1,1,H,1] (48B) or [head_dim] of which the first H are used (K3) */
    const st_tensor *a = st_find(ld->st, nm(ld, f, l, "A_log"));
    int n = a ? (int)st_numel(a) : H;
    if (n != H && n < H) n = H;   /* let wvec_get report the mismatch */
    VEC(w->A_log, n, H, f, l, "A_log");
    VEC(w->dt_bias, P, 0, f, l, "dt_bias");
    VEC(w->o_norm, hd, 0, f, l, "o_norm.weight");
    return 0;
}

static int load_mla(loader *ld, const rm_config *c, mla_weights *w, int l)
{
    const int D = c->hidden_size, nh = c->mla_heads, dqk = c->qk_nope + c->qk_rope;
    const char *f = "layers.%d.self_attn.";
    if (c->q_lora_rank) {
        MAT(w->q_a, c->q_lora_rank, D, f, l, "q_a_proj.weight");
        VEC(w->q_a_norm, c->q_lora_rank, 0, f, l, "q_a_layernorm.weight");
        MAT(w->q_b, nh * dqk, c->q_lora_rank, f, l, "q_b_proj.weight");
    } else {
        MAT(w->q, nh * dqk, D, f, l, "q_proj.weight");
    }
    MAT(w->kv_a, c->kv_lora_rank + c->qk_rope, D, f, l, "kv_a_proj_with_mqa.weight");
    VEC(w->kv_a_norm, c->kv_lora_rank, 0, f, l, "kv_a_layernorm.weight");
    MAT(w->kv_b, nh * (c->qk_nope + c->v_head_dim), c->kv_lora_rank, f, l, "kv_b_proj.weight");
    if (c->mla_output_gate) MAT(w->g, nh * c->v_head_dim, D, f, l, "g_proj.weight");
    MAT(w->o, D, nh * c->v_head_dim, f, l, "o_proj.weight");
    return 0;
}

static int load_moe(loader *ld, const rm_config *c, moe_weights *w, int l)
{
    const int D = c->hidden_size, E = c->num_experts, I = c->moe_inter;
    const int Z = c->latent ? c->latent : D;
    const char *f = "layers.%d.block_sparse_moe.";
    MAT(w->router, E, D, f, l, "gate.weight");
    if (st_find(ld->st, nm(ld, f, l, "gate.e_score_correction_bias"))) {
        VEC(w->bias, E, 0, f, l, "gate.e_score_correction_bias");
    } else if (c->noaux_tc)
        return rm_errf_input(ld->err, "%s: tensor '%s' is missing; config.json's topk_method \"noaux_tc\" routes with it",
                             ld->st->dir, ld->name);
    if (c->latent) {
        MAT(w->lat_down, Z, D, f, l, "routed_expert_down_proj.weight");
        MAT(w->lat_up, D, Z, f, l, "routed_expert_up_proj.weight");
        if (c->latent_norm) VEC(w->lat_norm, Z, 0, f, l, "routed_expert_norm.weight");
    }
    if (c->num_shared &&
        load_mlp(ld, &w->shared, D, I * c->num_shared, "layers.%d.block_sparse_moe.shared_experts.", l))
        return -1;
    if (!(w->experts = calloc((size_t)E, sizeof *w->experts)))
        return rm_errf(ld->err, "out of memory for %d experts", E);
    for (int e = 0; e < E; e++) {
        mlp_weights *x = &w->experts[e];
        char pre[320];
        snprintf(pre, sizeof pre, "layers.%d.block_sparse_moe.experts.%d.", l, e);
        struct { wmat *dst; const char *n; int rows, cols; } m3[3] = {
            { &x->gate, "w1", I, Z }, { &x->up, "w3", I, Z }, { &x->down, "w2", Z, I } };
        for (int i = 0; i < 3; i++) {
            snprintf(ld->name, sizeof ld->name, "%s%s%s", ld->prefix, pre, m3[i].n);
            if (c->experts_mxfp4) {
                if (wmat_get_mxfp4(ld->st, ld->name, m3[i].rows, m3[i].cols, m3[i].dst, ld->err)) return -1;
            } else {
                strncat(ld->name, ".weight", sizeof ld->name - strlen(ld->name) - 1);
                if (wmat_get(ld->st, ld->name, m3[i].rows, m3[i].cols, m3[i].dst, ld->err)) return -1;
            }
            m3[i].dst->routed = 1;
        }
    }
    return 0;
}

/* AttnRes weight: norm ⊙ projection, both [D]. */
static int load_res(loader *ld, int D, float **out, const char *normfmt, const char *projfmt, int l)
{
    float *nw, *pw;
    VEC(nw, D, 0, normfmt, l, NULL);
    if (wvec_get(ld->st, nm(ld, projfmt, l, NULL), D, 0, &pw, ld->err)) { free(nw); return -1; }
    for (int d = 0; d < D; d++) nw[d] *= pw[d];
    free(pw);
    *out = nw;
    return 0;
}

/* Every tensor of the text model must have been bound: one the config does
 * not use means the config and the checkpoint disagree (a config without
 * num_shared_experts or attn_res_block_size beside a checkpoint that has
 * those weights would silently compute another model). Tensors outside the
 * text model (a vision tower) are not the forward pass's business. */
static int check_all_used(const rm_model *m, const char *prefix, const char *lm, rm_err *err)
{
    const st_set *st = m->st;
    for (int i = 0; i < st->ntensors; i++) {
        const char *n = st->tensors[i].name;
        if (st->used[i] || (strncmp(n, prefix, strlen(prefix)) && strcmp(n, lm))) continue;
        return rm_errf_input(err, "%s: tensor '%s' is in the checkpoint but config.json does not use it (a key such as "
                             "num_shared_experts or attn_res_block_size missing?)", st->shards[st->tensors[i].shard].path, n);
    }
    return 0;
}

static int load_weights(rm_model *m, rm_err *err)
{
    const rm_config *c = &m->cfg;
    loader L = { m->st, NULL, err, "" }, *ld = &L;
    const int D = c->hidden_size, V = c->vocab_size;
    const char *lm;
    if (st_find(m->st, "language_model.model.embed_tokens.weight")) {
        L.prefix = "language_model.model.";
        lm = "language_model.lm_head.weight";
    } else {
        L.prefix = "model.";
        lm = "lm_head.weight";
    }
    MAT(m->embed, V, D, "embed_tokens.weight", 0, NULL);
    if (wmat_get(m->st, lm, V, D, &m->lm_head, err)) return -1;
    VEC(m->final_norm, D, 0, "norm.weight", 0, NULL);
    if (c->attn_res_block &&
        load_res(ld, D, &m->out_res_w, "output_attn_res_norm.weight", "output_attn_res_proj.weight", 0))
        return -1;
    if (!(m->layers = calloc((size_t)c->num_layers, sizeof *m->layers))) return rm_errf(err, "out of memory");
    for (int l = 0; l < c->num_layers; l++) {
        layer_weights *w = &m->layers[l];
        VEC(w->in_norm, D, 0, "layers.%d.input_layernorm.weight", l, NULL);
        VEC(w->post_norm, D, 0, "layers.%d.post_attention_layernorm.weight", l, NULL);
        if (c->attn_res_block &&
            (load_res(ld, D, &w->attn_res_w, "layers.%d.self_attention_res_norm.weight",
                      "layers.%d.self_attention_res_proj.weight", l) ||
             load_res(ld, D, &w->mlp_res_w, "layers.%d.mlp_res_norm.weight", "layers.%d.mlp_res_proj.weight", l)))
            return -1;
        if (c->is_kda[l] ? load_kda(ld, c, &w->kda, l) : load_mla(ld, c, &w->mla, l)) return -1;
        if (c->is_moe[l] ? load_moe(ld, c, &w->moe, l)
                         : load_mlp(ld, &w->mlp, D, c->intermediate_size, "layers.%d.mlp.", l))
            return -1;
    }
    return check_all_used(m, L.prefix, lm, err);
}

/* Registers every matrix a token always uses with a spine unit: each layer
 * has two (its mixer, then its feed-forward part: router, shared experts,
 * latent projections or the dense MLP) so a large layer can stream in two
 * halves; unit 2L is the head (lm_head). Experts and the embedding are not spine:
 * experts go through the cache, embedding rows are read per token. */
static int register_spine(rm_model *m, rm_err *err)
{
    const rm_config *c = &m->cfg;
    store *st = &m->store;
#define REG(u, x) do { if ((x).kind != WM_NONE && store_add_mat(st, u, &(x), err)) return -1; } while (0)
    for (int l = 0; l < c->num_layers; l++) {
        layer_weights *w = &m->layers[l];
        kda_weights *k = &w->kda;
        mla_weights *a = &w->mla;
        moe_weights *e = &w->moe;
        /* unit 2l: the mixer; unit 2l+1: the feed-forward spine */
        REG(2 * l, k->q); REG(2 * l, k->k); REG(2 * l, k->v); REG(2 * l, k->f_a); REG(2 * l, k->f_b);
        REG(2 * l, k->b); REG(2 * l, k->g); REG(2 * l, k->g_a); REG(2 * l, k->g_b); REG(2 * l, k->o);
        REG(2 * l, a->q); REG(2 * l, a->q_a); REG(2 * l, a->q_b); REG(2 * l, a->kv_a); REG(2 * l, a->kv_b);
        REG(2 * l, a->g); REG(2 * l, a->o);
        REG(2 * l + 1, w->mlp.gate); REG(2 * l + 1, w->mlp.up); REG(2 * l + 1, w->mlp.down);
        REG(2 * l + 1, e->router); REG(2 * l + 1, e->lat_down); REG(2 * l + 1, e->lat_up);
        REG(2 * l + 1, e->shared.gate); REG(2 * l + 1, e->shared.up); REG(2 * l + 1, e->shared.down);
    }
    REG(2 * c->num_layers, m->lm_head);
#undef REG
    return 0;
}

/* The expert cache over every MoE layer's routed experts. */
static int init_experts(rm_model *m, int io_threads, rm_err *err)
{
    const rm_config *c = &m->cfg;
    const mlp_weights **table = calloc((size_t)c->num_layers, sizeof *table);
    if (!table) return rm_errf(err, "out of memory");
    for (int l = 0; l < c->num_layers; l++) table[l] = c->is_moe[l] ? m->layers[l].moe.experts : NULL;
    int rc = experts_init(&m->experts, &m->store, c->num_layers, c->num_experts, table, io_threads, err);
    free(table);
    return rc;
}

/* A safe share of physical memory for weights: 60% of the RAM that is
 * available now, leaving room for the page cache, activations and the rest
 * of the system. */
uint64_t model_default_budget(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    unsigned long long kb = 0, v;
    char key[64];
    while (f && fscanf(f, "%63s %llu kB\n", key, &v) == 2)
        if (!strcmp(key, "MemAvailable:")) { kb = v; break; }
    if (f) fclose(f);
    return kb ? kb * 1024ull / 10 * 6 : 4ull << 30;
}

/* The prefill planner (documented in README.md and remora(1)). A prompt is
 * fed in layer-major passes (forward.c); a pass of T tokens needs the
 * scratch of one block of per-position work plus, per position, what the
 * layer loop and the MoE block keep for the whole pass. The planner gives
 * passes a workspace of a quarter of the budget (at least what a 256-token
 * pass needs), which holds thousands of tokens at K3's widths: at
 * --ram 3.5 on the 31.6 GB synthetic model (172 KB per position), passes of
 * up to 3,100 tokens, so a 2048-token prompt reads each expert it needs
 * once instead of eight times. The workspace lies beside the budget, in the
 * overhead, like the sequence state. */
static uint64_t pass_block_bytes(const rm_config *c)
{
    const uint64_t P = (uint64_t)c->kda_heads * c->kda_head_dim, D = (uint64_t)c->hidden_size;
    uint64_t wide = P > (uint64_t)c->mla_heads * (c->qk_nope + c->qk_rope) ? P : (uint64_t)c->mla_heads * (c->qk_nope + c->qk_rope);
    uint64_t Z = c->latent ? (uint64_t)c->latent : D;
    const uint64_t B = (uint64_t)forward_block_tokens();
    return 4ull * B * (8 * D + 7 * wide + (uint64_t)(c->topk + 2) * Z + 3ull * c->moe_inter +
                       (c->intermediate_size > 2 * c->moe_inter * c->num_shared ? 2ull * c->intermediate_size : 0)) +
           (c->num_experts ? moe_bytes_fixed(c) : 0);
}

static uint64_t pass_token_bytes(const rm_config *c)
{
    return forward_bytes_per_token(c) + (c->num_experts ? moe_bytes_per_token(c) : 0);
}

uint64_t model_pass_workspace(const rm_config *c, int tokens)
{
    return pass_block_bytes(c) + pass_token_bytes(c) * (uint64_t)tokens;
}

/* The largest pass: `want` tokens when asked, else from the budget; never
 * more than K3's context of 2^20 tokens. */
int model_plan_pass(const rm_config *c, uint64_t budget, int want)
{
    const int limit = 1 << 20;
    if (want > 0) return want < limit ? want : limit;
    const uint64_t block = pass_block_bytes(c), per = pass_token_bytes(c);
    uint64_t space = budget / 4, least = block + per * (uint64_t)forward_block_tokens();
    if (space < least) space = least;
    uint64_t T = (space - block) / per;
    if (T < (uint64_t)forward_block_tokens()) T = (uint64_t)forward_block_tokens();
    return T < (uint64_t)limit ? (int)T : limit;
}

/* RAM outside the budget (documented in README.md): the sequence state
 * (KDA recurrent and conv state, twice for a speculation checkpoint or a
 * pass's mark, and the MLA latent cache for ctx tokens), the workspace of
 * the largest prefill pass, and a fixed 64 MB for code, libraries, thread
 * stacks and small vectors. */
uint64_t model_overhead(const rm_config *c, int ctx, uint64_t workspace)
{
    const uint64_t P = (uint64_t)c->kda_heads * c->kda_head_dim;
    uint64_t state = 0;
    for (int l = 0; l < c->num_layers; l++)
        state += c->is_kda[l] ? 2 * 4 * ((uint64_t)c->kda_heads * c->kda_head_dim * c->kda_head_dim + 3 * 3 * P)
                              : 4ull * ctx * ((uint64_t)c->kv_lora_rank + c->qk_rope);
    uint64_t spec = 4ull * 9 * (uint64_t)c->vocab_size + (uint64_t)c->num_layers * 9 * 6 * P * 4;
    return state + workspace + spec + (64ull << 20);
}

int rm_model_open(const char *dir, const rm_open_opts *opts, rm_model **out, rm_err *err)
{
    *out = NULL;
    rm_model *m = calloc(1, sizeof *m);
    if (!m) return rm_errf_runtime(err, "out of memory");
    const rm_open_opts none = { 0 };
    if (!opts) opts = &none;
    uint64_t cache_bytes = 0;
    pool_init(opts->threads);   /* idempotent: one compute pool per process */
    gpu_open((gpu_mode)opts->gpu, opts->gpu_device, opts->vram_gb);     /* likewise one device */
    if (config_load(dir, &m->cfg, err) || st_open(dir, &m->st, err) ||
        (!(m->st->used = calloc((size_t)m->st->ntensors + 1, 1)) && rm_errf_runtime(err, "out of memory")) ||
        store_init(&m->store, m->st, opts->io_threads, err) || load_weights(m, err) || register_spine(m, err) ||
        init_experts(m, opts->io_threads, err) ||
        remote_open(dir, m->st, &m->cfg, opts->io_threads, &m->remote, err)) {
        rm_model_free(m);
        return -1;
    }
    if (m->remote) m->experts.remote = remote_hooks(m->remote);
    const rm_config *c = &m->cfg;
    const uint64_t min_cache = (uint64_t)experts_slot_bytes(&m->experts) * (uint64_t)(c->topk ? c->topk : 0);
    uint64_t budget = opts->ram_gb > 0 ? (uint64_t)(opts->ram_gb * 1e9) : model_default_budget();
    if (store_plan(&m->store, budget, min_cache, &cache_bytes, err) ||
        experts_alloc(&m->experts, cache_bytes, err) ||
        !(m->prev_route = malloc((size_t)c->num_layers * (c->topk ? c->topk : 1) * sizeof *m->prev_route))) {
        if (!err->msg[0]) rm_errf(err, "out of memory");
        rm_model_free(m);
        return -1;
    }
    for (int i = 0; i < c->num_layers * (c->topk ? c->topk : 1); i++) m->prev_route[i] = -1;
    gpu_pin(m->experts.slot_mem, (size_t)m->experts.nslots * experts_slot_bytes(&m->experts));
    gpu_reserve_spine(m->store.spine_total);    /* experts go in VRAM only beside the whole spine */
    if (m->experts.io) io_pool_yield_to(m->store.io, m->experts.io);
    rm_model_info *in = &m->info;
    in->ram_budget = budget;
    in->min_ram_budget = store_min_budget(&m->store, min_cache);
    in->spine_bytes = m->store.spine_total;
    in->spine_resident_bytes = m->store.spine_resident;
    in->expert_cache_slots = m->experts.nslots;
    in->expert_cache_bytes = (uint64_t)m->experts.nslots * experts_slot_bytes(&m->experts);
    in->direct_io = m->store.direct;
    m->prefill_chunk = model_plan_pass(c, budget, opts->prefill_chunk);
    in->prefill_chunk = m->prefill_chunk;
    in->prefill_workspace_bytes = model_pass_workspace(c, m->prefill_chunk);
    in->overhead_ctx = 4096;
    in->overhead_bytes = model_overhead(c, in->overhead_ctx, in->prefill_workspace_bytes);
    in->family = c->family;
    in->vocab_size = c->vocab_size;
    in->hidden_size = c->hidden_size;
    in->num_layers = c->num_layers;
    in->num_experts = c->num_experts;
    in->experts_per_token = c->topk;
    in->first_moe_layer = -1;
    in->max_position = c->max_pos;
    for (int l = 0; l < c->num_layers; l++) {
        if (!c->is_moe[l]) continue;
        if (in->first_moe_layer < 0) in->first_moe_layer = l;
        in->total_experts += c->num_experts;
        for (int e = 0; e < c->num_experts; e++) in->expert_bytes += m->experts.loc[(size_t)l * c->num_experts + e].raw_bytes;
        const mlp_weights *x = &m->layers[l].moe.experts[0];
        in->expert_weights = (uint64_t)x->gate.rows * x->gate.cols + (uint64_t)x->up.rows * x->up.cols +
                             (uint64_t)x->down.rows * x->down.cols;
        in->expert_mxfp4 = x->gate.kind == WM_MXFP4;
    }
    in->bos_id = c->bos_id;
    in->eos_id = c->eos_id;
    in->pad_id = c->pad_id;
    in->num_params = (uint64_t)in->total_experts * in->expert_weights;
    for (int i = 0; i < m->st->ntensors; i++) {
        const st_tensor *t = &m->st->tensors[i];
        in->total_weight_bytes += t->nbytes;
        if (strstr(t->name, ".experts.")) continue;    /* routed experts: counted above */
        uint64_t n = 1;
        for (int d = 0; d < t->ndim; d++) n *= (uint64_t)t->shape[d];
        in->num_params += n;
    }
    *out = m;
    return 0;
}

void rm_model_free(rm_model *m)
{
    if (!m) return;
    if (m->layers) {
        for (int l = 0; l < m->cfg.num_layers; l++) {
            layer_weights *w = &m->layers[l];
            free(w->in_norm); free(w->post_norm); free(w->attn_res_w); free(w->mlp_res_w);
            for (int i = 0; i < 3; i++) free(w->kda.conv[i]);
            free(w->kda.A_log); free(w->kda.dt_bias); free(w->kda.o_norm);
            free(w->mla.q_a_norm); free(w->mla.kv_a_norm);
            free(w->moe.bias); free(w->moe.lat_norm); free(w->moe.experts);
        }
        free(m->layers);
    }
    free(m->final_norm);
    free(m->out_res_w);
    free(m->prev_route);
    gpu_forget(m->st);
    gpu_unpin(m->experts.slot_mem);
    experts_free(&m->experts);
    remote_free(m->remote);     /* after the reader threads that call it are gone */
    store_free(&m->store);
    st_close(m->st);
    free(m);
}

const rm_model_info *rm_model_get_info(const rm_model *m) { return &m->info; }
