/* config.h — the model configuration read from config.json, in one flat
 * struct for both family members. K3 keeps its text model under
 * text_config (root model_type "kimi_k3"); Kimi-Linear-48B is flat. Every
 * K3 feature is switched on by its key, as in the official code. */
#ifndef REMORA_CONFIG_H
#define REMORA_CONFIG_H
#include "engine.h"

#define CFG_MAX_LAYERS 512

typedef enum { ACT_SILU, ACT_SITU } cfg_act;

typedef struct rm_config {
    char family[32];            /* "kimi_k3" or "kimi_linear" */
    int  vocab_size, hidden_size, num_layers;
    int  max_pos;               /* max_position_embeddings; 0 = not given */
    int  bos_id, eos_id, pad_id;
    double rms_eps;
    cfg_act act;
    double situ_beta, situ_linear_beta; /* linear_beta 0 = not applied */
    /* layer types */
    unsigned char is_kda[CFG_MAX_LAYERS];   /* 1 KDA, 0 MLA */
    unsigned char is_moe[CFG_MAX_LAYERS];
    /* dense MLP */
    int  intermediate_size;
    /* KDA */
    int  kda_heads, kda_head_dim, conv_size;
    int  kda_full_rank_gate;    /* g_proj instead of g_a/g_b */
    int  kda_has_lower_bound;
    double kda_lower_bound;
    /* MLA */
    int  mla_heads, q_lora_rank, kv_lora_rank, qk_nope, qk_rope, v_head_dim;
    int  mla_output_gate;
    /* MoE */
    int  num_experts, topk, num_shared, moe_inter;
    int  latent;                /* routed_expert_hidden_size; 0 = no latent MoE */
    int  latent_norm;
    int  renormalize;
    double routed_scaling;
    int  n_group, topk_group;
    int  noaux_tc;              /* topk_method "noaux_tc": the router needs its score correction bias */
    /* Attention Residuals; 0 = plain residual stream */
    int  attn_res_block;
    /* MXFP4 routed experts (compressed-tensors) */
    int  experts_mxfp4;
} rm_config;

/* Reads DIR/config.json. Unknown architectures and unsupported values are
 * refused with a message naming the file and the key. */
int config_load(const char *dir, rm_config *c, rm_err *err);
/* Same, from a JSON text (for tests and fuzzing); `name` names it in errors. */
int config_parse(const char *json, size_t len, const char *name, rm_config *c, rm_err *err);

#endif
