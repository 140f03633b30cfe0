/* state.c — the per-sequence state: KDA recurrent and convolution states,
 * the MLA latent cache (grown on demand) and the position; the checkpoint /
 * rollback / commit that speculation uses to undo tokens exactly (kda.c
 * records the recurrence inputs, kda_rollback replays them); and the arrays
 * of each layer as a snapshot holds them (state_layer_io).
 */
#include <stdlib.h>
#include <string.h>
#include "model/model.h"


/* Forgets the checkpoint: what was fed since stays. */
static void commit(rm_state *s)
{
    const rm_config *c = &s->m->cfg;
    for (int l = 0; l < c->num_layers; l++) { s->kda[l].recording = 0; s->kda[l].nrec = 0; }
    s->ckpt_pos = -1;
}

rm_state *rm_state_new(rm_model *m, rm_err *err)
{
    const rm_config *c = &m->cfg;
    rm_state *s = calloc(1, sizeof *s);
    if (!s) { rm_errf(err, "out of memory"); return NULL; }
    s->m = m;
    s->ckpt_pos = -1;
    s->kda = calloc((size_t)c->num_layers, sizeof *s->kda);
    s->mla = calloc((size_t)c->num_layers, sizeof *s->mla);
    if (!s->kda || !s->mla) goto oom;
    const size_t P = (size_t)c->kda_heads * c->kda_head_dim;
    for (int l = 0; l < c->num_layers; l++) {
        if (!c->is_kda[l]) continue;
        s->kda[l].S = calloc((size_t)c->kda_heads * c->kda_head_dim * c->kda_head_dim, sizeof(float));
        s->kda[l].conv = calloc(3 * (size_t)(c->conv_size > 1 ? c->conv_size - 1 : 1) * P, sizeof(float));
        if (!s->kda[l].S || !s->kda[l].conv) goto oom;
    }
    return s;
oom:
    rm_state_free(s);
    rm_errf(err, "out of memory for the sequence state");
    return NULL;
}

void rm_state_free(rm_state *s)
{
    if (!s) return;
    for (int l = 0; s->kda && l < s->m->cfg.num_layers; l++) {
        free(s->kda[l].S);
        free(s->kda[l].conv);
        free(s->kda[l].S0);
        free(s->kda[l].conv0);
        free(s->kda[l].rec);
        if (s->mla) {
            wmat_mla_drop(s->mla[l].gpu_key);
            free(s->mla[l].latent);
        }
    }
    free(s->kda);
    free(s->mla);
    free(s);
}

void rm_state_reset(rm_state *s)
{
    const rm_config *c = &s->m->cfg;
    const size_t P = (size_t)c->kda_heads * c->kda_head_dim;
    for (int l = 0; l < c->num_layers; l++) {
        if (!c->is_kda[l]) continue;
        memset(s->kda[l].S, 0, (size_t)c->kda_heads * c->kda_head_dim * c->kda_head_dim * sizeof(float));
        memset(s->kda[l].conv, 0, 3 * (size_t)(c->conv_size > 1 ? c->conv_size - 1 : 1) * P * sizeof(float));
    }
    s->pos = 0;
    commit(s);
}

int rm_state_pos(const rm_state *s) { return s->pos; }

/* Floats of a KDA layer's recurrent state and of its convolution history. */
static size_t kda_S_floats(const rm_config *c) { return (size_t)c->kda_heads * c->kda_head_dim * c->kda_head_dim; }
static size_t kda_conv_floats(const rm_config *c)
{
    return 3 * (size_t)(c->conv_size > 1 ? c->conv_size - 1 : 1) * c->kda_heads * c->kda_head_dim;
}

uint64_t state_layer_bytes(const rm_config *c, int l, int pos)
{
    if (c->is_kda[l]) return (uint64_t)(kda_S_floats(c) + kda_conv_floats(c)) * sizeof(float);
    return (uint64_t)pos * ((uint64_t)c->kv_lora_rank + c->qk_rope) * sizeof(float);
}

int state_layer_io(rm_state *s, int l, int pos, int (*io)(void *ud, void *p, size_t n), void *ud)
{
    const rm_config *c = &s->m->cfg;
    if (c->is_kda[l])
        return io(ud, s->kda[l].S, kda_S_floats(c) * sizeof(float)) ||
               io(ud, s->kda[l].conv, kda_conv_floats(c) * sizeof(float));
    if (pos > s->cap) return -1;
    s->mla[l].gpu_rows = 0;     /* a restore writes every row: the device's copy is stale */
    return pos ? io(ud, s->mla[l].latent, (size_t)pos * ((size_t)c->kv_lora_rank + c->qk_rope) * sizeof(float)) : 0;
}

void state_set_pos(rm_state *s, int pos)
{
    commit(s);
    s->pos = pos;
}

/* Saves every KDA layer's S and convolution history in S0/conv0 and sets
 * the checkpoint at the current position; with `recording`, the inputs of
 * every position fed later are kept too (speculation's exact rollback). */
static int save_checkpoint(rm_state *s, int recording, rm_err *err)
{
    const rm_config *c = &s->m->cfg;
    const size_t P = (size_t)c->kda_heads * c->kda_head_dim;
    const size_t nS = (size_t)c->kda_heads * c->kda_head_dim * c->kda_head_dim;
    const size_t nconv = 3 * (size_t)(c->conv_size > 1 ? c->conv_size - 1 : 1) * P;
    for (int l = 0; l < c->num_layers; l++) {
        kda_state *k = &s->kda[l];
        if (!c->is_kda[l]) continue;
        if (!k->S0 && !(k->S0 = malloc(nS * sizeof *k->S0))) return rm_errf(err, "out of memory for a checkpoint");
        if (!k->conv0 && !(k->conv0 = malloc(nconv * sizeof *k->conv0))) return rm_errf(err, "out of memory for a checkpoint");
        memcpy(k->S0, k->S, nS * sizeof *k->S0);
        memcpy(k->conv0, k->conv, nconv * sizeof *k->conv0);
        k->nrec = 0;
        k->recording = recording;
    }
    s->ckpt_pos = s->pos;
    return 0;
}

int rm_state_checkpoint(rm_state *s, rm_err *err) { return save_checkpoint(s, 1, err); }

int state_mark(rm_state *s, rm_err *err) { return save_checkpoint(s, 0, err); }

void state_restore_mark(rm_state *s)
{
    const rm_config *c = &s->m->cfg;
    if (s->ckpt_pos < 0) return;
    const size_t P = (size_t)c->kda_heads * c->kda_head_dim;
    const size_t nS = (size_t)c->kda_heads * c->kda_head_dim * c->kda_head_dim;
    const size_t nconv = 3 * (size_t)(c->conv_size > 1 ? c->conv_size - 1 : 1) * P;
    for (int l = 0; l < c->num_layers; l++) {
        if (!c->is_kda[l]) continue;
        memcpy(s->kda[l].S, s->kda[l].S0, nS * sizeof *s->kda[l].S);
        memcpy(s->kda[l].conv, s->kda[l].conv0, nconv * sizeof *s->kda[l].conv);
    }
    s->pos = s->ckpt_pos;   /* the MLA cache past pos is overwritten later */
    commit(s);
}

void state_forget_mark(rm_state *s) { commit(s); }

void rm_state_rollback(rm_state *s, int keep)
{
    const rm_config *c = &s->m->cfg;
    if (s->ckpt_pos < 0 || keep >= s->pos - s->ckpt_pos) { commit(s); return; }
    for (int l = 0; l < c->num_layers; l++)
        if (c->is_kda[l]) kda_rollback(c, &s->kda[l], keep);
    s->pos = s->ckpt_pos + keep;     /* the MLA cache past pos is simply overwritten later */
    commit(s);
}

/* Grows every MLA cache to hold at least n tokens. */
int state_reserve(rm_state *s, int n, rm_err *err)
{
    if (n <= s->cap) return 0;
    const rm_config *c = &s->m->cfg;
    const size_t lat = (size_t)c->kv_lora_rank + c->qk_rope;
    int cap = s->cap;
    for (int l = 0; l < c->num_layers; l++) {    /* every cache grows to the same capacity */
        if (c->is_kda[l]) continue;
        cap = s->cap;
        if (rm_grow((void **)&s->mla[l].latent, &cap, n, lat * sizeof(float)))
            return rm_errf(err, "out of memory growing the attention cache to %d tokens", n);
    }
    s->cap = cap > n ? cap : n;
    return 0;
}
