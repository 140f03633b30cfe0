/* config.c — reading config.json for Kimi K3 (nested: root model_type
 * "kimi_k3", text model under "text_config") and Kimi-Linear-48B (flat,
 * model_type "kimi_linear").
 *
 * Only what the forward pass needs is read, and every value is checked: an
 * unknown architecture, a missing key, or a value the engine does not
 * implement (softmax routing, RoPE, another quantisation) is refused with the
 * file and key named. Nothing is guessed.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "format/config.h"
#include "base/jfile.h"
#include "base/caps.h"

typedef struct {
    const char *file;
    rm_err *err;
    int failed;
} cfg_ctx;

static int bad(cfg_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(cfg_ctx *x, const char *fmt, ...)
{
    if (!x->failed) {
        char m[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m, sizeof m, fmt, ap);
        va_end(ap);
        rm_errf_input(x->err, "%s: %s", x->file, m);
    }
    x->failed = 1;
    return 0;
}

/* Integer key; `def` < -1000000 means required. Accepts integral floats. */
#define REQUIRED (-2000000000)
static int get_int(cfg_ctx *x, json_t *o, const char *key, int def, int lo, int hi)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        if (def == REQUIRED) return bad(x, "missing key \"%s\"", key);
        return def;
    }
    double d;
    if (json_is_integer(v)) d = (double)json_integer_value(v);
    /* an integral float, tested before any cast: 1e300 must not reach (long long) */
    else if (json_is_real(v) && fabs(json_real_value(v)) < 1e15 && json_real_value(v) == floor(json_real_value(v)))
        d = json_real_value(v);
    else return bad(x, "\"%s\" must be an integer", key);
    if (d < lo || d > hi) {
        char r[64];
        snprintf(r, sizeof r, " (got %.0f, allowed %d..%d)", d, lo, hi);
        return bad(x, "\"%s\" is out of range%s", key, r);
    }
    return (int)d;
}

static double get_num(cfg_ctx *x, json_t *o, const char *key, double def, int required)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        if (required) bad(x, "missing key \"%s\"", key);
        return def;
    }
    if (!json_is_number(v)) { bad(x, "\"%s\" must be a number", key); return def; }
    return json_number_value(v);
}

static int get_bool(cfg_ctx *x, json_t *o, const char *key, int def)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return def;
    if (!json_is_boolean(v)) return bad(x, "\"%s\" must be true or false", key);
    return json_is_true(v);
}

static const char *get_str(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Marks the one-based layer list `key` of linear_attn_config into map. */
static void layer_list(cfg_ctx *x, json_t *lac, const char *key, int L, unsigned char *map, int val)
{
    json_t *a = json_object_get(lac, key);
    if (!json_is_array(a)) { bad(x, "linear_attn_config.\"%s\" must be an array", key); return; }
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > L) {
            bad(x, "linear_attn_config.\"%s\" holds a layer number outside 1..num_hidden_layers", key);
            return;
        }
        int l = (int)json_integer_value(e) - 1;
        if (map[l] != 2) { bad(x, "linear_attn_config: layer %d is listed twice", l + 1); return; }
        map[l] = (unsigned char)val;
    }
}

static void check_quant(cfg_ctx *x, json_t *q, rm_config *c)
{
    if (!q || json_is_null(q)) return;
    const char *method = get_str(q, "quant_method"), *fmt = get_str(q, "format");
    if (!method || strcmp(method, "compressed-tensors") || !fmt || strcmp(fmt, "mxfp4-pack-quantized")) {
        bad(x, "quantization_config: only compressed-tensors mxfp4-pack-quantized is supported");
        return;
    }
    json_t *groups = json_object_get(q, "config_groups"), *g;
    const char *gk;
    json_object_foreach(groups, gk, g) {
        json_t *w = json_object_get(g, "weights");
        const char *type = get_str(w, "type");
        json_t *bits = json_object_get(w, "num_bits"), *gs = json_object_get(w, "group_size");
        if (!w || !type || strcmp(type, "float") || !json_is_integer(bits) || json_integer_value(bits) != 4 ||
            !json_is_integer(gs) || json_integer_value(gs) != 32) {
            bad(x, "quantization_config.config_groups.%s: weights must be 4-bit float, group size 32", gk);
            return;
        }
    }
    c->experts_mxfp4 = 1;
}

/* The text model's object: the root (kimi_linear) or its text_config
 * (kimi_k3, whose text model must be kimi_linear); sets c->family. NULL
 * with err set for any other model_type. */
static json_t *text_config(const char *name, json_t *root, rm_config *c, rm_err *err)
{
    const char *mt = get_str(root, "model_type");
    if (mt && !strcmp(mt, "kimi_k3")) {
        json_t *tc = json_object_get(root, "text_config");
        if (!json_is_object(tc)) { rm_errf_input(err, "%s: kimi_k3 config without a \"text_config\" object", name); return NULL; }
        const char *tmt = get_str(tc, "model_type");
        if (!tmt || strcmp(tmt, "kimi_linear")) {
            rm_errf_input(err, "%s: text_config.model_type is \"%s\", expected \"kimi_linear\"", name, tmt ? tmt : "(missing)");
            return NULL;
        }
        snprintf(c->family, sizeof c->family, "kimi_k3");
        return tc;
    }
    if (mt && !strcmp(mt, "kimi_linear")) {
        snprintf(c->family, sizeof c->family, "kimi_linear");
        return root;
    }
    rm_errf_input(err, "%s: unsupported model_type \"%s\" (expected kimi_k3 or kimi_linear)", name, mt ? mt : "(missing)");
    return NULL;
}

/* Sizes, special ids, the norm eps and the activation. Ids may sit in the
 * text config or at the root. */
static void read_basics(cfg_ctx *x, json_t *root, json_t *tc, rm_config *c)
{
    c->vocab_size = get_int(x, tc, "vocab_size", REQUIRED, 1, 1 << 24);
    c->hidden_size = get_int(x, tc, "hidden_size", REQUIRED, 1, 1 << 16);
    c->num_layers = get_int(x, tc, "num_hidden_layers", REQUIRED, 1, CFG_MAX_LAYERS);
    c->max_pos = get_int(x, tc, "max_position_embeddings", get_int(x, root, "max_position_embeddings", 0, 0, 1 << 30),
                         0, 1 << 30);
    c->bos_id = get_int(x, tc, "bos_token_id", get_int(x, root, "bos_token_id", -1, -1, 1 << 24), -1, 1 << 24);
    c->eos_id = get_int(x, tc, "eos_token_id", get_int(x, root, "eos_token_id", -1, -1, 1 << 24), -1, 1 << 24);
    c->pad_id = get_int(x, tc, "pad_token_id", get_int(x, root, "pad_token_id", -1, -1, 1 << 24), -1, 1 << 24);
    c->rms_eps = get_num(x, tc, "rms_norm_eps", 1e-5, 0);
    if (get_bool(x, tc, "tie_word_embeddings", 0)) bad(x, "\"%s\": tied embeddings are not supported", "tie_word_embeddings");

    const char *act = get_str(tc, "hidden_act");
    if (act && !strcmp(act, "silu")) c->act = ACT_SILU;
    else if (act && !strcmp(act, "situ")) {
        c->act = ACT_SITU;
        c->situ_beta = get_num(x, tc, "activation_situ_beta", 1.0, 0);
        c->situ_linear_beta = get_num(x, tc, "activation_situ_linear_beta", 0.0, 0);
        if (c->situ_beta <= 0 || c->situ_linear_beta < 0) bad(x, "\"%s\": SiTU betas must be positive", "activation_situ_beta");
    } else bad(x, "\"hidden_act\" \"%s\" is not supported (silu or situ)", act ? act : "(missing)");
}

/* Which layers are KDA (the rest MLA), and the KDA widths and gates. */
static void read_kda(cfg_ctx *x, json_t *tc, rm_config *c)
{
    /* Layer map: one-based kda_layers / full_attn_layers partition 1..L. */
    json_t *lac = json_object_get(tc, "linear_attn_config");
    int L = x->failed ? 0 : c->num_layers;
    if (!json_is_object(lac)) bad(x, "missing \"%s\" object", "linear_attn_config");
    else if (L) {
        memset(c->is_kda, 2, sizeof c->is_kda);
        layer_list(x, lac, "kda_layers", L, c->is_kda, 1);
        layer_list(x, lac, "full_attn_layers", L, c->is_kda, 0);
        for (int l = 0; l < L && !x->failed; l++)
            if (c->is_kda[l] == 2) {
                char k[32];
                snprintf(k, sizeof k, "%d", l + 1);
                bad(x, "linear_attn_config: layer %s is in neither kda_layers nor full_attn_layers", k);
            }
        c->kda_heads = get_int(x, lac, "num_heads", REQUIRED, 1, 4096);
        c->kda_head_dim = get_int(x, lac, "head_dim", REQUIRED, 1, 1024);
        c->conv_size = get_int(x, lac, "short_conv_kernel_size", 4, 1, 64);
        c->kda_full_rank_gate = get_bool(x, lac, "use_full_rank_gate", 0);
        json_t *lb = json_object_get(lac, "gate_lower_bound");
        if (lb && !json_is_null(lb)) {
            c->kda_has_lower_bound = 1;
            c->kda_lower_bound = get_num(x, lac, "gate_lower_bound", 0, 1);
            if (c->kda_lower_bound >= 0) bad(x, "linear_attn_config.\"%s\" must be negative", "gate_lower_bound");
        }
    }
}

static void read_mla(cfg_ctx *x, json_t *tc, rm_config *c)
{
    c->mla_heads = get_int(x, tc, "num_attention_heads", REQUIRED, 1, 4096);
    int kvh = get_int(x, tc, "num_key_value_heads", c->mla_heads, 1, 4096);
    if (kvh != c->mla_heads) bad(x, "\"%s\" must equal num_attention_heads for MLA", "num_key_value_heads");
    c->q_lora_rank = get_int(x, tc, "q_lora_rank", 0, 0, 1 << 16);
    c->kv_lora_rank = get_int(x, tc, "kv_lora_rank", REQUIRED, 1, 1 << 16);
    c->qk_nope = get_int(x, tc, "qk_nope_head_dim", REQUIRED, 0, 4096);
    c->qk_rope = get_int(x, tc, "qk_rope_head_dim", REQUIRED, 0, 4096);
    c->v_head_dim = get_int(x, tc, "v_head_dim", REQUIRED, 1, 4096);
    c->mla_output_gate = get_bool(x, tc, "mla_use_output_gate", 0);
    if (!get_bool(x, tc, "mla_use_nope", 0)) bad(x, "\"%s\" must be true: rotary embeddings are not supported", "mla_use_nope");
}

/* The dense MLP, the MoE router and experts, which layers are MoE,
 * Attention Residuals and the routed experts' quantisation. */
static void read_ffn(cfg_ctx *x, json_t *root, json_t *tc, rm_config *c)
{
    c->intermediate_size = get_int(x, tc, "intermediate_size", REQUIRED, 1, 1 << 20);
    c->num_experts = get_int(x, tc, "num_experts", 0, 0, 1 << 16);
    int fkdr = get_int(x, tc, "first_k_dense_replace", 0, 0, CFG_MAX_LAYERS);
    int freq = get_int(x, tc, "moe_layer_freq", 1, 1, CFG_MAX_LAYERS);
    if (c->num_experts) {
        c->topk = get_int(x, tc, "num_experts_per_token", REQUIRED, 1, RM_MAX_TOPK);
        if (!x->failed && c->topk > c->num_experts) bad(x, "\"%s\" exceeds num_experts", "num_experts_per_token");
        c->num_shared = get_int(x, tc, "num_shared_experts", 0, 0, 64);
        c->moe_inter = get_int(x, tc, "moe_intermediate_size", REQUIRED, 1, 1 << 20);
        c->latent = get_int(x, tc, "routed_expert_hidden_size", 0, 0, 1 << 16);
        c->latent_norm = get_bool(x, tc, "latent_moe_use_norm", 0);
        c->renormalize = get_bool(x, tc, "moe_renormalize", 1);
        c->routed_scaling = get_num(x, tc, "routed_scaling_factor", 1.0, 0);
        const char *ra = get_str(tc, "moe_router_activation_func");
        if (ra && strcmp(ra, "sigmoid")) bad(x, "\"%s\" \"%s\" is not supported (sigmoid only)", "moe_router_activation_func", ra);
        const char *tm = get_str(tc, "topk_method");
        if (tm && strcmp(tm, "noaux_tc")) bad(x, "\"%s\" \"%s\" is not supported (noaux_tc only)", "topk_method", tm);
        c->noaux_tc = tm != NULL;
        c->n_group = 1;
        c->topk_group = 1;
        if (get_bool(x, tc, "use_grouped_topk", 0)) {
            c->n_group = get_int(x, tc, "num_expert_group", 1, 1, 1024);
            c->topk_group = get_int(x, tc, "topk_group", 1, 1, c->n_group);
            if (!x->failed && c->num_experts % c->n_group)
                bad(x, "\"%s\" must divide num_experts", "num_expert_group");
        }
    }
    for (int l = 0; l < c->num_layers && !x->failed; l++)
        c->is_moe[l] = c->num_experts > 0 && l >= fkdr && l % freq == 0;
    c->attn_res_block = get_int(x, tc, "attn_res_block_size", 0, 0, CFG_MAX_LAYERS);
    check_quant(x, json_object_get(tc, "quantization_config"), c);
    if (!c->experts_mxfp4) check_quant(x, json_object_get(root, "quantization_config"), c);
}

/* The config of a parsed config.json (root stays the caller's). */
static int config_of(json_t *root, const char *name, rm_config *c, rm_err *err)
{
    cfg_ctx x = { name, err, 0 };
    if (!json_is_object(root)) return rm_errf_input(err, "%s: not a JSON object", name);
    json_t *tc = text_config(name, root, c, err);
    if (!tc) return -1;
    read_basics(&x, root, tc, c);
    read_kda(&x, tc, c);
    read_mla(&x, tc, c);
    read_ffn(&x, root, tc, c);
    return x.failed ? -1 : 0;
}

int config_parse(const char *json, size_t len, const char *name, rm_config *c, rm_err *err)
{
    memset(c, 0, sizeof *c);
    json_t *root = jfile_parse(json, len, name, err);
    int rc = root ? config_of(root, name, c, err) : -1;
    json_decref(root);
    return rc;
}

int config_load(const char *dir, rm_config *c, rm_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    memset(c, 0, sizeof *c);
    json_t *root = jfile_read(path, CAP_CONFIG, err);
    int rc = root ? config_of(root, path, c, err) : -1;
    json_decref(root);
    return rc;
}
