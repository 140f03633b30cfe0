/* layers.h — the pieces of the forward pass, one file each (kda.c, mla.c,
 * moe.c, norm.c): their weights, their per-sequence state and their entry
 * points. forward.c runs them in the layer loop; load.c binds the weights.
 *
 * All activations are fp32 [T, width] row-major blocks: a forward call
 * carries T consecutive positions of one sequence through a layer at once,
 * so matrix kernels read each weight once per layer, while the recurrent and
 * causal parts still step token by token in order.
 */
#ifndef REMORA_LAYERS_H
#define REMORA_LAYERS_H
#include <math.h>
#include "format/config.h"
#include "format/weights.h"
#include "io/experts.h"
#include "model/phase.h"
#include "kernels/crmath.h"

typedef struct kda_weights {
    wmat q, k, v;               /* [P, D] */
    wmat f_a, f_b;              /* forget gate, low rank: [hd, D], [P, hd] */
    wmat b;                     /* beta [H, D] */
    wmat g, g_a, g_b;           /* output gate: full rank [P, D] or low rank */
    wmat o;                     /* [D, P] */
    float *conv[3];             /* q, k, v depthwise taps [P, W] */
    float *A_log;               /* [H] */
    float *dt_bias;             /* [P] */
    float *o_norm;              /* [hd] */
} kda_weights;

typedef struct mla_weights {
    wmat q;                     /* direct q [nh*dqk, D] when q_lora_rank == 0 */
    wmat q_a, q_b;              /* [q_lora, D], [nh*dqk, q_lora] */
    float *q_a_norm;            /* [q_lora] */
    wmat kv_a;                  /* [kv_lora + rope, D] */
    float *kv_a_norm;           /* [kv_lora] */
    wmat kv_b;                  /* [nh*(nope+v), kv_lora] */
    wmat g;                     /* output gate [nh*v, D] (K3) */
    wmat o;                     /* [D, nh*v] */
} mla_weights;

typedef struct moe_weights {
    wmat router;                /* [E, D] */
    float *bias;                /* e_score_correction_bias [E] */
    wmat lat_down, lat_up;      /* latent MoE: [Z, D], [D, Z] */
    float *lat_norm;            /* [Z] or NULL */
    mlp_weights shared;         /* fused width moe_inter * num_shared */
    mlp_weights *experts;       /* [E]: w1 gate, w3 up, w2 down */
} moe_weights;

typedef struct layer_weights {
    float *in_norm, *post_norm;
    float *attn_res_w, *mlp_res_w;  /* AttnRes: norm weight ⊙ projection */
    kda_weights kda;
    mla_weights mla;
    mlp_weights mlp;                /* dense layers */
    moe_weights moe;
} layer_weights;

/* Per-layer sequence state. */
typedef struct kda_state {
    float *S;                   /* [H][hd][hd], row = key channel */
    float *conv;                /* [3][W-1][P]: last W-1 pre-conv inputs, oldest first */
    /* speculation: the state at a checkpoint and, for each position fed
     * since, the inputs of the convolution and of the recurrence, so the
     * state of any prefix can be rebuilt exactly (kda_rollback) */
    float *S0, *conv0;
    int recording;
    float *rec;                 /* [rec_cap][KDA_REC(P, H)] */
    int nrec, rec_cap;
} kda_state;

/* floats recorded per position: pre-conv q, k, v; alpha, k̂, v; beta */
#define KDA_REC(P, H) (6 * (size_t)(P) + (size_t)(H))

typedef struct mla_state {
    float *latent;              /* [cap][kv_lora + rope]: normalised c, raw k_rot */
    uint64_t gpu_key;           /* the device's copy of it (gpu_mla_core); 0 until the first pass */
    int gpu_rows;               /* rows of that copy still as here: lowered by every write (a pass from
                                   pos0 writes rows from pos0; a restore, all) */
} mla_state;

/* Pieces of the forward pass. Each takes the config, its own weights and
 * its state (`layer` only names the layer in error messages). X is the
 * normalised input [T, D]; the output [T, D] is written to Y. pos0 is the
 * sequence position of row 0. Each returns 0, -1 on error, or 1 when *stop
 * (may be NULL) became non-zero: it is looked at between the products, and
 * the state is then partly updated (forward.c puts it back to its mark). */
int  kda_forward(const rm_config *c, const kda_weights *w, kda_state *st, int layer, const float *X, float *Y, int T,
                 volatile int *stop, rm_err *err);
/* Restores the layer's state to its checkpoint, then replays the first `keep`
 * recorded positions. */
void kda_rollback(const rm_config *c, kda_state *st, int keep);
int  mla_forward(const rm_config *c, const mla_weights *w, mla_state *st, int layer, int pos0, const float *X, float *Y,
                 int T, volatile int *stop, rm_err *err);
/* The GLU MLP of T rows, in blocks; returns 1 when *stop (may be NULL) became
 * non-zero (Y then incomplete). */
int  mlp_forward(const rm_config *c, const mlp_weights *w, int inter, const float *X, float *Y, int T,
                 volatile int *stop, rm_err *err);
/* The MoE block: routes each position (reported through on_route), reads the
 * chosen experts through the expert cache and marks its phases on pt (from
 * the caller's last mark on). last_route receives the topk experts of the
 * last position. next_w (may be NULL): the next MoE layer's, whose experts
 * are guessed from X once this layer's reads are queued. */
int  moe_forward(const rm_config *c, const moe_weights *w, expert_cache *cache, phase_timer *pt, int *last_route,
                 int layer, int pos0, const float *X, float *Y, int T, const moe_weights *next_w, int next_layer,
                 rm_route_fn on_route, void *ud, volatile int *stop, rm_err *err);
/* Whether a pass of T positions guesses its experts before its router runs
 * ($REMORA_PREFETCH_GUESS=0 turns it off), and the guess: Xn's n rows (the
 * layer's normalised mixer input) through the router, the experts they pick
 * prefetched in expert order. */
int  moe_guess_worth(const rm_config *c, int T);
void moe_prefetch_guess(const rm_config *c, const moe_weights *w, expert_cache *cache, int layer, const float *Xn,
                        int n);
/* What moe_forward allocates: per position of a pass, and once per call. */
size_t moe_bytes_per_token(const rm_config *c);
size_t moe_bytes_fixed(const rm_config *c);

/* y = x * rsqrt(mean(x²) + eps) * w over n values */
void norm_rms(const float *x, const float *w, float *y, int n, float eps);
/* Attention-Residual mix of n sources (each [D]) with weight w = norm ⊙ proj. */
void norm_attn_res_mix(const float *const *src, int n, const float *w, float *out, int D, float eps);
/* The GLU activation of the config, in place: g[i] = act(g[i]) * lin(u[i]). */
void norm_glu(const rm_config *c, float *g, const float *u, int n);

/* The work of a prefill pass beside its weight products, timed by the
 * forward pass's own code on synthetic inputs at c's shapes for the
 * forecast (engine/tools/forecast.c): the median seconds (rm_time_median,
 * about `seconds`) of the GLU over n elements, of one KDA layer's
 * convolution and recurrence over T positions, and of one MLA layer's
 * per-head attention (mla_heads) of T positions on a context of T; -1
 * when out of memory. The buffers are allocated once: their first touch is
 * the forecast's to count. mla_score_pairs: the (position, context row)
 * scores mla_heads computes for T positions after pos0. */
double glu_probe_s(const rm_config *c, int n, double seconds);
double kda_probe_s(const rm_config *c, int T, double seconds);
double mla_probe_s(const rm_config *c, int T, double seconds);
double mla_score_pairs(int pos0, int T);

#endif
