/* model.h — the engine's internal view of a loaded model (struct rm_model)
 * and of a sequence's state (struct rm_state): the config, the typed weights
 * of every layer (layers.h), where their bytes are (the spine store and the
 * expert cache), stream mode, and the counters behind rm_token_stats.
 */
#ifndef REMORA_MODEL_H
#define REMORA_MODEL_H
#include "model/layers.h"
#include "io/store.h"
#include "io/experts.h"

/* Time and work since the last model_take_stats (engine-internal). */
typedef struct model_counters {
    double phase[RM_PHASE_COUNT];
    uint64_t tokens;
    uint64_t flops0;            /* wmat_flops() at the last take */
    uint64_t gpu_h2d0;          /* gpu_status's h2d_bytes and seconds then */
    double gpu_s0;
} model_counters;

struct rm_model {
    rm_config cfg;
    rm_model_info info;
    st_set *st;
    wmat embed;                 /* [V, D] */
    wmat lm_head;               /* [V, D] */
    float *final_norm;
    float *out_res_w;           /* output AttnRes weight, K3 */
    layer_weights *layers;
    /* test hook (model_test_hidden): when set, rows [L+1][T][D] of the
     * hidden states of the last forward call are written here */
    float *test_hidden;
    /* where the weights are: spine units and the expert cache */
    store store;
    expert_cache experts;
    struct remote *remote;      /* stream mode (remote/source.h), or NULL */
    int *prev_route;            /* [L][topk] experts of the last position */
    int prefill_chunk;          /* the planner's pass size in tokens (load.c) */
    model_counters ctr;         /* since the last model_take_stats */
    uint8_t fingerprint[16];    /* rm_model_fingerprint, once computed */
    int fingerprint_done;
};

struct rm_state {
    rm_model *m;
    int pos;                    /* tokens consumed */
    int ckpt_pos;               /* position of the checkpoint, -1 when none */
    int cap;                    /* MLA cache capacity in tokens */
    kda_state *kda;             /* [L] */
    mla_state *mla;             /* [L] */
};

/* Grows every MLA cache of s to hold at least n tokens (state.c). */
int  state_reserve(rm_state *s, int n, rm_err *err);
/* A pass of a long prompt changes the KDA states layer by layer before the
 * position moves, so a stop in the middle must put them back: state_mark
 * saves them (no recording, unlike rm_state_checkpoint), state_restore_mark
 * puts the state back to the mark whatever was fed since, and
 * state_forget_mark drops it once the pass is complete. */
int  state_mark(rm_state *s, rm_err *err);
void state_restore_mark(rm_state *s);
void state_forget_mark(rm_state *s);
/* Snapshots (session/snapshot.c) hold a state layer by layer: layer l's
 * part at position pos is, for a KDA layer, its recurrent state S then its
 * convolution history; for an MLA layer, its latent cache rows [0, pos).
 * state_layer_bytes is its size; state_layer_io hands each array of it to
 * io(ud, p, n) in that order (to write from, or to read into once the
 * state holds pos rows: state_reserve), stopping at the first non-zero
 * return. state_set_pos makes a state read that way hold pos tokens. */
uint64_t state_layer_bytes(const rm_config *c, int l, int pos);
int  state_layer_io(rm_state *s, int l, int pos, int (*io)(void *ud, void *p, size_t n), void *ud);
void state_set_pos(rm_state *s, int pos);

/* The planner's figures of a pass (forward.c): bytes the layer loop keeps
 * per position, and the positions of one block of per-position work. */
size_t forward_bytes_per_token(const rm_config *c);
int    forward_block_tokens(void);

/* The planner's decisions (load.c), for the model rm_model_open opens and
 * for the forecast of one not downloaded (tools/forecast.c): the budget
 * when none is given, the largest prefill pass (`want` tokens when > 0),
 * a pass's workspace, and the RAM used beside the budget. */
uint64_t model_default_budget(void);
int      model_plan_pass(const rm_config *c, uint64_t budget, int want);
uint64_t model_pass_workspace(const rm_config *c, int tokens);
uint64_t model_overhead(const rm_config *c, int ctx, uint64_t workspace);

/* Fills the storage, cache and phase figures of st from the counters
 * accumulated since the last call, and resets them. `tick` advances the
 * expert cache's decay clock (once per token: progress records of a long
 * prompt take figures after every layer without ageing the cache). */
void model_take_stats(rm_model *m, rm_token_stats *st, int tick);
/* Fills st->route_state from st->route_ids: how the cache last found each. */
void model_route_states(const rm_model *m, rm_token_stats *st);

#ifdef REMORA_TEST
/* Test hooks, declared only for the unit tests (which are compiled with
 * -DREMORA_TEST): the library always carries them, production code cannot
 * name them. rows [L+1][n][D] (or NULL) receives, for the next rm_forward
 * of n tokens, the hidden state after each layer and after the final norm. */
void model_test_hidden(rm_model *m, float *rows);
#endif

/* ---- engine-internal parts of rm_model and rm_state (no front end calls
 * them: the snapshot, the prefix cache and the speculation use them) ---- */
/* What a snapshot names its model by: 128 bits (FNV-1a) over config.json,
 * the weight index, the tokenizer files, every shard header's tensor table
 * and a CRC-32 of every tensor's bytes (in stream mode the routed experts
 * by their shard's ETag instead; fingerprint.c says why and what it
 * costs). Computed at the first call, which reads every local tensor byte
 * unless the shard's digest is cached for its file identity
 * ($XDG_CACHE_HOME/remora/fingerprint/). */
int  rm_model_fingerprint(rm_model *m, uint8_t fp[16], rm_err *err);
/* The sequence state's position, a reset, and the speculation's undo:
 * checkpoint remembers the state now; rollback(keep) makes the state
 * exactly (bit for bit) that of having fed only the first `keep` tokens
 * since the checkpoint, and forgets the checkpoint (keep >= the tokens fed
 * since: nothing is undone). */
void      rm_state_reset(rm_state *s);
int       rm_state_pos(const rm_state *s);
int       rm_state_checkpoint(rm_state *s, rm_err *err);
void      rm_state_rollback(rm_state *s, int keep);

#endif
