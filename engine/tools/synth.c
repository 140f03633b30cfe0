/* synth.c — `remora synth`: a valid Kimi K3 checkpoint with random weights
 * at the real K3 widths, for measuring a machine before downloading 1.5 TB.
 *
 * The layout is K3's: config.json nested under text_config, shards named
 * model-0000N-of-0000MM.safetensors (5-digit index, 6-digit total), shard 1
 * the embedding, one shard per layer, the last shard the final norm, output
 * AttnRes and lm_head; inside a shard the tensors follow the safetensors
 * writer's order (larger dtypes first, then byte-wise name), so each layer's
 * trunk is one run and its routed experts one gap-free run with each
 * expert's six MXFP4 tensors back to back. The vocabulary is a byte-level
 * tiktoken file (256 ranks) plus K3's 256 special ids, so the model runs
 * through the whole product. Weights are random with scales that keep
 * activations O(1), with one structure: lm_head is a scaled copy of the
 * embedding with its rows permuted along one random cycle through the 95
 * printable ASCII bytes. The embedding dominates the final hidden state, so
 * the greedy continuation of such a byte is the next byte on the cycle: the
 * model repeats text it has seen and never repeats itself within 95
 * tokens. Random weights alone never repeat anything, which would leave
 * speculation nothing to accept; the reads and the arithmetic per token are
 * unchanged. Every file is replaced atomically through base/file
 * (temporary name, fsync, size check, rename, folder fsync).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <jansson.h>
#include "engine.h"
#include "base/file.h"
#include "kernels/kernels.h"

/* K3 text widths: the text_config of moonshotai/Kimi-K3's config.json
 * (configuration_kimi_k3.py names the keys) */
enum {
    SY_D = 7168, SY_KDA_H = 96, SY_HD = 128, SY_P = SY_KDA_H * SY_HD, SY_W = 4,
    SY_NH = 96, SY_QL = 1536, SY_KVL = 512, SY_NOPE = 128, SY_ROPE = 64, SY_V = 128,
    SY_DENSE = 33792, SY_MOE_I = 3072, SY_Z = 3584, SY_SHARED = 2, SY_TOPK = 16,
    SY_VOCAB = 512, SY_BLOCK = 12,
    SY_CYCLE_FIRST = 0x20, SY_CYCLE = 0x7f - 0x20    /* printable ASCII */
};

typedef enum { T_F32, T_BF16, T_U8 } sy_dtype;
typedef enum { FILL_NORMAL, FILL_ONES, FILL_ZERO, FILL_CODES, FILL_SCALES, FILL_ALOG, FILL_SMALL, FILL_ROWS } sy_fill;

/* The embedding, generated once, and the cycle lm_head follows. */
typedef struct sy_rows {
    uint16_t *embed;        /* SY_VOCAB x SY_D bf16 */
    int pred[256];          /* the byte before on the cycle, -1 off it */
} sy_rows;

typedef struct sy_tensor {
    char name[160];
    sy_dtype dt;
    int ndim;
    int64_t shape[3];
    sy_fill fill;
    float scale;            /* std for FILL_NORMAL */
    const sy_rows *rows;    /* FILL_ROWS: embedding rows (lm_head permuted) */
    int lm_head;
} sy_tensor;

typedef struct sy_list { sy_tensor *t; int n, cap; } sy_list;

static int add(sy_list *l, sy_dtype dt, sy_fill f, float scale, int ndim, int64_t a, int64_t b, int64_t c,
               const char *fmt, ...) __attribute__((format(printf, 9, 10)));
static int add(sy_list *l, sy_dtype dt, sy_fill f, float scale, int ndim, int64_t a, int64_t b, int64_t c,
               const char *fmt, ...)
{
    if (RM_GROW(l->t, l->cap, l->n + 1)) return -1;
    sy_tensor *t = &l->t[l->n++];
    memset(t, 0, sizeof *t);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
    t->dt = dt;
    t->fill = f;
    t->scale = scale;
    t->ndim = ndim;
    t->shape[0] = a; t->shape[1] = b; t->shape[2] = c;
    return 0;
}

static uint64_t numel(const sy_tensor *t)
{
    uint64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= (uint64_t)t->shape[i];
    return n;
}

static uint64_t nbytes(const sy_tensor *t) { return numel(t) * (t->dt == T_F32 ? 4 : t->dt == T_BF16 ? 2 : 1); }

static int is_mla(int l, int L) { return (l + 1) % 4 == 0 || l == L - 1; }

#define PRE "language_model.model."

/* The tensors of layer l (or, l < 0, of the embedding shard, or l == L the head). */
static int layer_tensors(sy_list *ls, int l, int L, int E, const sy_rows *rows)
{
    const float wd = 1.0f / sqrtf((float)SY_D);
    int rc = 0;
    if (l < 0) {
        rc = add(ls, T_BF16, FILL_ROWS, 1.0f, 2, SY_VOCAB, SY_D, 0, PRE "embed_tokens.weight");
        if (!rc) ls->t[ls->n - 1].rows = rows;
        return rc;
    }
    if (l == L) {
        rc |= add(ls, T_BF16, FILL_ONES, 0, 1, SY_D, 0, 0, PRE "norm.weight");
        rc |= add(ls, T_BF16, FILL_ONES, 0, 1, SY_D, 0, 0, PRE "output_attn_res_norm.weight");
        rc |= add(ls, T_BF16, FILL_NORMAL, wd, 2, 1, SY_D, 0, PRE "output_attn_res_proj.weight");
        rc |= add(ls, T_BF16, FILL_ROWS, wd, 2, SY_VOCAB, SY_D, 0, "language_model.lm_head.weight");
        if (!rc) { ls->t[ls->n - 1].rows = rows; ls->t[ls->n - 1].lm_head = 1; }
        return rc;
    }
#define LT(dt, f, s, nd, a, b, c, suffix) rc |= add(ls, dt, f, s, nd, a, b, c, PRE "layers.%d." suffix, l)
    LT(T_BF16, FILL_ONES, 0, 1, SY_D, 0, 0, "input_layernorm.weight");
    LT(T_BF16, FILL_ONES, 0, 1, SY_D, 0, 0, "post_attention_layernorm.weight");
    LT(T_BF16, FILL_ONES, 0, 1, SY_D, 0, 0, "self_attention_res_norm.weight");
    LT(T_BF16, FILL_NORMAL, wd, 2, 1, SY_D, 0, "self_attention_res_proj.weight");
    LT(T_BF16, FILL_ONES, 0, 1, SY_D, 0, 0, "mlp_res_norm.weight");
    LT(T_BF16, FILL_NORMAL, wd, 2, 1, SY_D, 0, "mlp_res_proj.weight");
    if (!is_mla(l, L)) {
        LT(T_BF16, FILL_NORMAL, wd, 2, SY_P, SY_D, 0, "self_attn.q_proj.weight");
        LT(T_BF16, FILL_NORMAL, wd, 2, SY_P, SY_D, 0, "self_attn.k_proj.weight");
        LT(T_BF16, FILL_NORMAL, wd, 2, SY_P, SY_D, 0, "self_attn.v_proj.weight");
        LT(T_BF16, FILL_NORMAL, wd, 2, SY_P, SY_D, 0, "self_attn.g_proj.weight");
        LT(T_F32, FILL_NORMAL, 0.5f, 3, SY_P, 1, SY_W, "self_attn.q_conv1d.weight");
        LT(T_F32, FILL_NORMAL, 0.5f, 3, SY_P, 1, SY_W, "self_attn.k_conv1d.weight");
        LT(T_F32, FILL_NORMAL, 0.5f, 3, SY_P, 1, SY_W, "self_attn.v_conv1d.weight");
        LT(T_BF16, FILL_NORMAL, wd, 2, SY_HD, SY_D, 0, "self_attn.f_a_proj.weight");
        LT(T_BF16, FILL_NORMAL, 1.0f / sqrtf(SY_HD), 2, SY_P, SY_HD, 0, "self_attn.f_b_proj.weight");
        LT(T_BF16, FILL_NORMAL, wd, 2, SY_KDA_H, SY_D, 0, "self_attn.b_proj.weight");
        LT(T_F32, FILL_ALOG, 0, 1, SY_HD, 0, 0, "self_attn.A_log");
        LT(T_F32, FILL_SMALL, 0, 1, SY_P, 0, 0, "self_attn.dt_bias");
        LT(T_F32, FILL_ONES, 0, 1, SY_HD, 0, 0, "self_attn.o_norm.weight");
        LT(T_BF16, FILL_NORMAL, 1.0f / sqrtf(SY_P), 2, SY_D, SY_P, 0, "self_attn.o_proj.weight");
    } else {
        LT(T_BF16, FILL_NORMAL, wd, 2, SY_QL, SY_D, 0, "self_attn.q_a_proj.weight");
        LT(T_BF16, FILL_ONES, 0, 1, SY_QL, 0, 0, "self_attn.q_a_layernorm.weight");
        LT(T_BF16, FILL_NORMAL, 1.0f / sqrtf(SY_QL), 2, SY_NH * (SY_NOPE + SY_ROPE), SY_QL, 0, "self_attn.q_b_proj.weight");
        LT(T_BF16, FILL_NORMAL, wd, 2, SY_KVL + SY_ROPE, SY_D, 0, "self_attn.kv_a_proj_with_mqa.weight");
        LT(T_BF16, FILL_ONES, 0, 1, SY_KVL, 0, 0, "self_attn.kv_a_layernorm.weight");
        LT(T_BF16, FILL_NORMAL, 1.0f / sqrtf(SY_KVL), 2, SY_NH * (SY_NOPE + SY_V), SY_KVL, 0, "self_attn.kv_b_proj.weight");
        LT(T_BF16, FILL_NORMAL, wd, 2, SY_NH * SY_V, SY_D, 0, "self_attn.g_proj.weight");
        LT(T_BF16, FILL_NORMAL, 1.0f / sqrtf(SY_NH * SY_V), 2, SY_D, SY_NH * SY_V, 0, "self_attn.o_proj.weight");
    }
    if (l == 0) {
        LT(T_BF16, FILL_NORMAL, wd, 2, SY_DENSE, SY_D, 0, "mlp.gate_proj.weight");
        LT(T_BF16, FILL_NORMAL, wd, 2, SY_DENSE, SY_D, 0, "mlp.up_proj.weight");
        LT(T_BF16, FILL_NORMAL, 1.0f / sqrtf(SY_DENSE), 2, SY_D, SY_DENSE, 0, "mlp.down_proj.weight");
        return rc;
    }
    const int IS = SY_MOE_I * SY_SHARED;
    LT(T_BF16, FILL_NORMAL, wd, 2, E, SY_D, 0, "block_sparse_moe.gate.weight");
    LT(T_F32, FILL_ZERO, 0, 1, E, 0, 0, "block_sparse_moe.gate.e_score_correction_bias");
    LT(T_BF16, FILL_NORMAL, wd, 2, SY_Z, SY_D, 0, "block_sparse_moe.routed_expert_down_proj.weight");
    LT(T_BF16, FILL_ONES, 0, 1, SY_Z, 0, 0, "block_sparse_moe.routed_expert_norm.weight");
    LT(T_BF16, FILL_NORMAL, 1.0f / sqrtf(SY_Z), 2, SY_D, SY_Z, 0, "block_sparse_moe.routed_expert_up_proj.weight");
    LT(T_BF16, FILL_NORMAL, wd, 2, IS, SY_D, 0, "block_sparse_moe.shared_experts.gate_proj.weight");
    LT(T_BF16, FILL_NORMAL, wd, 2, IS, SY_D, 0, "block_sparse_moe.shared_experts.up_proj.weight");
    LT(T_BF16, FILL_NORMAL, 1.0f / sqrtf(IS), 2, SY_D, IS, 0, "block_sparse_moe.shared_experts.down_proj.weight");
#undef LT
    for (int e = 0; e < E; e++) {
        const char *f = PRE "layers.%d.block_sparse_moe.experts.%d.%s";
        rc |= add(ls, T_U8, FILL_CODES, 0, 2, SY_MOE_I, SY_Z / 2, 0, f, l, e, "w1.weight_packed");
        rc |= add(ls, T_U8, FILL_SCALES, 0, 2, SY_MOE_I, SY_Z / 32, 0, f, l, e, "w1.weight_scale");
        rc |= add(ls, T_U8, FILL_CODES, 0, 2, SY_Z, SY_MOE_I / 2, 0, f, l, e, "w2.weight_packed");
        rc |= add(ls, T_U8, FILL_SCALES, 0, 2, SY_Z, SY_MOE_I / 32, 0, f, l, e, "w2.weight_scale");
        rc |= add(ls, T_U8, FILL_CODES, 0, 2, SY_MOE_I, SY_Z / 2, 0, f, l, e, "w3.weight_packed");
        rc |= add(ls, T_U8, FILL_SCALES, 0, 2, SY_MOE_I, SY_Z / 32, 0, f, l, e, "w3.weight_scale");
    }
    return rc;
}

/* safetensors writer order: larger dtypes first, then byte-wise name */
static int cmp_tensor(const void *a, const void *b)
{
    const sy_tensor *x = a, *y = b;
    int sx = x->dt == T_F32 ? 0 : x->dt == T_BF16 ? 1 : 2, sy = y->dt == T_F32 ? 0 : y->dt == T_BF16 ? 1 : 2;
    if (sx != sy) return sx - sy;
    return strcmp(x->name, y->name);
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return *s = x;
}

static uint16_t to_bf16(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static float normal(uint64_t *rng)
{
    /* sum of four uniforms: mean 0, variance 1/3 → scaled to std 1 */
    uint64_t r = rng_next(rng);
    float u = (float)(r & 0xffff) + (float)((r >> 16) & 0xffff) + (float)((r >> 32) & 0xffff) + (float)(r >> 48);
    return (u / 65536.0f - 2.0f) * 1.7320508f;
}

/* The embedding, and one random cycle through the printable ASCII bytes
 * (so what the model writes is plain text that can be pasted back). */
static int rows_init(sy_rows *r, uint64_t *rng)
{
    if (!(r->embed = malloc((size_t)SY_VOCAB * SY_D * sizeof *r->embed))) return -1;
    for (size_t i = 0; i < (size_t)SY_VOCAB * SY_D; i++) r->embed[i] = to_bf16(normal(rng));
    int order[SY_CYCLE];
    for (int i = 0; i < SY_CYCLE; i++) order[i] = SY_CYCLE_FIRST + i;
    for (int i = SY_CYCLE - 1; i > 0; i--) {
        int j = (int)(rng_next(rng) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < 256; i++) r->pred[i] = -1;
    for (int i = 0; i < SY_CYCLE; i++) r->pred[order[(i + 1) % SY_CYCLE]] = order[i];
    return 0;
}

/* Row `row` of the embedding, or of lm_head: there, the row of byte u is the
 * embedding of pred(u) times the scale, so byte b's logit peaks at the byte
 * after b on the cycle; every other id gets a zero row and is never chosen
 * after a byte of the cycle. */
static void fill_row(const sy_tensor *t, uint64_t row, uint16_t *dst)
{
    if (!t->lm_head) { memcpy(dst, t->rows->embed + row * SY_D, SY_D * sizeof *dst); return; }
    if (row >= 256 || t->rows->pred[row] < 0) { memset(dst, 0, SY_D * sizeof *dst); return; }
    const uint16_t *src = t->rows->embed + (size_t)t->rows->pred[row] * SY_D;
    for (int i = 0; i < SY_D; i++) dst[i] = to_bf16(bf16_to_f32(src[i]) * t->scale);
}

static void fill(const sy_tensor *t, uint8_t *buf, uint64_t first, uint64_t n, uint64_t *rng)
{
    if (t->fill == FILL_CODES || t->fill == FILL_SCALES) {
        /* eight bytes per draw: experts are most of the bytes written */
        for (uint64_t i = 0; i < n; i += 8) {
            uint64_t r = rng_next(rng);
            for (uint64_t j = 0; j < 8 && i + j < n; j++, r >>= 8)
                buf[i + j] = t->fill == FILL_CODES ? (uint8_t)r : (uint8_t)(119 + (r & 3));
        }
        return;
    }
    if (t->fill == FILL_ROWS) {     /* whole rows: the writer's chunks hold whole rows */
        for (uint64_t i = 0; i < n; i += SY_D) fill_row(t, (first + i) / SY_D, (uint16_t *)(void *)(buf + 2 * i));
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        float v = 0;
        switch (t->fill) {
        case FILL_ONES: v = 1.0f; break;
        case FILL_ZERO: v = 0.0f; break;
        case FILL_ALOG: v = (first + i) < SY_KDA_H ? logf(1.0f + (float)((first + i) % 16)) : 0.0f; break;
        case FILL_SMALL: v = ((float)(rng_next(rng) >> 40) / (float)(1 << 24) - 0.5f) * 0.2f; break;
        case FILL_NORMAL: v = normal(rng) * t->scale; break;
        default: break;
        }
        if (t->dt == T_F32) memcpy(buf + 4 * i, &v, 4);
        else { uint16_t h = to_bf16(v); memcpy(buf + 2 * i, &h, 2); }
    }
}

static int write_shard(const char *dir, const char *fname, sy_list *ls, uint64_t *rng, volatile int *stop, rm_err *err)
{
    qsort(ls->t, (size_t)ls->n, sizeof *ls->t, cmp_tensor);
    json_t *h = json_object();
    json_object_set_new(h, "__metadata__", json_pack("{s:s}", "format", "pt"));
    uint64_t off = 0;
    for (int i = 0; i < ls->n; i++) {
        const sy_tensor *t = &ls->t[i];
        json_t *shape = json_array();
        for (int d = 0; d < t->ndim; d++) json_array_append_new(shape, json_integer(t->shape[d]));
        json_object_set_new(h, t->name, json_pack("{s:s,s:o,s:[I,I]}", "dtype",
                            t->dt == T_F32 ? "F32" : t->dt == T_BF16 ? "BF16" : "U8", "shape", shape,
                            "data_offsets", (json_int_t)off, (json_int_t)(off + nbytes(t))));
        off += nbytes(t);
    }
    char *hs = json_dumps(h, JSON_COMPACT);
    json_decref(h);
    if (!hs) return rm_errf(err, "out of memory");
    size_t hl = strlen(hs), padded = (hl + 7) & ~(size_t)7;
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s", dir, fname);
    file_tmp_name(tmp, sizeof tmp, path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) { free(hs); return rm_errf(err, "%s: cannot create: %s", tmp, strerror(errno)); }
    uint8_t len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (uint8_t)((uint64_t)padded >> (8 * i));
    int bad = file_write_all(fd, len8, 8) || file_write_all(fd, hs, hl);
    for (size_t i = hl; i < padded && !bad; i++) bad = file_write_all(fd, " ", 1);
    free(hs);
    const size_t CH = 8u << 20;
    uint8_t *buf = malloc(CH);
    for (int i = 0; i < ls->n && !bad && buf; i++) {
        const sy_tensor *t = &ls->t[i];
        const uint64_t es = nbytes(t) / numel(t), n = numel(t);
        const uint64_t step = t->fill == FILL_ROWS ? CH / es / SY_D * SY_D : CH / es;
        for (uint64_t first = 0; first < n && !bad; first += step) {
            if (stop && *stop) { bad = 1; errno = EINTR; break; }      /* Ctrl-C: the partial shard goes */
            uint64_t k = n - first < step ? n - first : step;
            fill(t, buf, first, k, rng);
            bad = file_write_all(fd, buf, k * es);
        }
    }
    if (!buf) bad = 1;
    free(buf);
    if (bad) {
        int e = errno;
        close(fd);
        unlink(tmp);
        if (e == EINTR) return rm_errf(err, "%s: stopped; its partial file was removed", path);
        return rm_errf(err, "%s: write failed: %s", path, e == ENOSPC ? "disk full" : strerror(e ? e : EIO));
    }
    return file_commit(fd, tmp, path, 8 + padded + off, err);
}

static int write_text(const char *dir, const char *name, const char *text, rm_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return rm_write_atomic(path, text, strlen(text), 0644, err);
}

static const char *special_names[][2] = {
    { "0", "[BOS]" }, { "1", "[EOS]" }, { "2", "<|end_of_msg|>" }, { "3", "<|open|>" }, { "4", "<|close|>" },
    { "5", "<|sep|>" }, { "6", "[start_header_id]" }, { "7", "[end_header_id]" }, { "9", "[EOT]" },
    { "18", "<|media_begin|>" }, { "19", "<|media_content|>" }, { "20", "<|media_end|>" }, { "21", "<|media_pad|>" },
    { "65", "<osagent_mode>" }, { "254", "[UNK]" }, { "255", "[PAD]" },
};

static int write_tokenizer(const char *dir, rm_err *err)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *text = malloc(256 * 16);
    if (!text) return rm_errf(err, "out of memory");
    size_t o = 0;
    for (int b = 0; b < 256; b++)
        o += (size_t)sprintf(text + o, "%c%c== %d\n", b64[b >> 2], b64[(b & 3) << 4], b);
    int rc = write_text(dir, "tiktoken.model", text, err);
    free(text);
    if (rc) return rc;
    json_t *dec = json_object();
    for (size_t i = 0; i < sizeof special_names / sizeof special_names[0]; i++) {
        char id[16];
        snprintf(id, sizeof id, "%d", 256 + atoi(special_names[i][0]));
        const char *c = special_names[i][1];
        int sp = strcmp(c, "<|open|>") && strcmp(c, "<|close|>") && strcmp(c, "<|sep|>");
        json_object_set_new(dec, id, json_pack("{s:s,s:b,s:b,s:b,s:b,s:b}", "content", c, "lstrip", 0,
                                               "normalized", 0, "rstrip", 0, "single_word", 0, "special", sp));
    }
    json_t *cfg = json_pack("{s:o,s:s,s:s,s:s}", "added_tokens_decoder", dec, "bos_token", "[BOS]",
                            "eos_token", "[EOS]", "tokenizer_class", "TikTokenTokenizer");
    char *s = json_dumps(cfg, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(cfg);
    rc = s ? write_text(dir, "tokenizer_config.json", s, err) : rm_errf(err, "out of memory");
    free(s);
    return rc;
}

static int write_config(const char *dir, int L, int E, rm_err *err)
{
    json_t *kda = json_array(), *full = json_array();
    for (int l = 0; l < L; l++) json_array_append_new(is_mla(l, L) ? full : kda, json_integer(l + 1));
    json_t *quant = json_pack(
        "{s:{s:{s:s,s:[s],s:{s:i,s:s,s:s,s:i,s:b,s:s,s:b}}},s:s,s:[s,s,s,s,s,s],s:s,s:s}",
        "config_groups", "group_0", "format", "mxfp4-pack-quantized", "targets", "Linear", "weights",
        "num_bits", 4, "type", "float", "strategy", "group", "group_size", 32, "symmetric", 1,
        "scale_dtype", "torch.uint8", "dynamic", 0, "format", "mxfp4-pack-quantized", "ignore",
        "re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*", "re:.*lm_head.*",
        "re:.*vision_tower.*", "re:.*mm_projector.*", "quant_method", "compressed-tensors",
        "quantization_status", "compressed");
    json_t *tc = json_object();
    json_object_set_new(tc, "model_type", json_string("kimi_linear"));
    json_object_set_new(tc, "architectures", json_pack("[s]", "KimiLinearForCausalLM"));
    json_object_set_new(tc, "vocab_size", json_integer(SY_VOCAB));
    json_object_set_new(tc, "hidden_size", json_integer(SY_D));
    json_object_set_new(tc, "num_hidden_layers", json_integer(L));
    json_object_set_new(tc, "bos_token_id", json_integer(256));
    json_object_set_new(tc, "eos_token_id", json_integer(258));
    json_object_set_new(tc, "pad_token_id", json_integer(511));
    json_object_set_new(tc, "rms_norm_eps", json_real(1e-5));
    json_object_set_new(tc, "hidden_act", json_string("situ"));
    json_object_set_new(tc, "activation_situ_beta", json_real(4.0));
    json_object_set_new(tc, "activation_situ_linear_beta", json_real(25.0));
    json_object_set_new(tc, "intermediate_size", json_integer(SY_DENSE));
    json_object_set_new(tc, "first_k_dense_replace", json_integer(1));
    json_object_set_new(tc, "moe_layer_freq", json_integer(1));
    json_object_set_new(tc, "num_experts", json_integer(E));
    json_object_set_new(tc, "num_experts_per_token", json_integer(SY_TOPK));
    json_object_set_new(tc, "num_shared_experts", json_integer(SY_SHARED));
    json_object_set_new(tc, "moe_intermediate_size", json_integer(SY_MOE_I));
    json_object_set_new(tc, "routed_expert_hidden_size", json_integer(SY_Z));
    json_object_set_new(tc, "latent_moe_use_norm", json_true());
    json_object_set_new(tc, "moe_router_activation_func", json_string("sigmoid"));
    json_object_set_new(tc, "moe_renormalize", json_true());
    json_object_set_new(tc, "routed_scaling_factor", json_real(1.0));
    json_object_set_new(tc, "topk_method", json_string("noaux_tc"));
    json_object_set_new(tc, "use_grouped_topk", json_true());
    json_object_set_new(tc, "num_expert_group", json_integer(1));
    json_object_set_new(tc, "topk_group", json_integer(1));
    json_object_set_new(tc, "num_attention_heads", json_integer(SY_NH));
    json_object_set_new(tc, "num_key_value_heads", json_integer(SY_NH));
    json_object_set_new(tc, "q_lora_rank", json_integer(SY_QL));
    json_object_set_new(tc, "kv_lora_rank", json_integer(SY_KVL));
    json_object_set_new(tc, "qk_nope_head_dim", json_integer(SY_NOPE));
    json_object_set_new(tc, "qk_rope_head_dim", json_integer(SY_ROPE));
    json_object_set_new(tc, "v_head_dim", json_integer(SY_V));
    json_object_set_new(tc, "mla_use_nope", json_true());
    json_object_set_new(tc, "mla_use_output_gate", json_true());
    json_object_set_new(tc, "attn_res_block_size", json_integer(SY_BLOCK));
    json_object_set_new(tc, "tie_word_embeddings", json_false());
    json_object_set_new(tc, "linear_attn_config", json_pack("{s:i,s:i,s:i,s:b,s:f,s:o,s:o}", "num_heads", SY_KDA_H,
                        "head_dim", SY_HD, "short_conv_kernel_size", SY_W, "use_full_rank_gate", 1,
                        "gate_lower_bound", -5.0, "kda_layers", kda, "full_attn_layers", full));
    json_object_set_new(tc, "quantization_config", quant);
    json_t *root = json_pack("{s:s,s:[s],s:i,s:i,s:i,s:o,s:b,s:s}", "model_type", "kimi_k3", "architectures",
                             "KimiK3ForConditionalGeneration", "bos_token_id", 256, "eos_token_id", 258,
                             "pad_token_id", 511, "text_config", tc, "tie_word_embeddings", 0, "remora_note",
                             "synthetic random weights written by remora synth");
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(root);
    int rc = s ? write_text(dir, "config.json", s, err) : rm_errf(err, "out of memory");
    free(s);
    return rc;
}

/* Bytes of the whole checkpoint for L layers and E experts. */
static uint64_t plan_bytes(int L, int E)
{
    uint64_t total = 0;
    sy_list ls = { 0 };
    for (int l = -1; l <= L; l++) {
        ls.n = 0;
        layer_tensors(&ls, l, L, E, NULL);
        for (int i = 0; i < ls.n; i++) total += nbytes(&ls.t[i]);
    }
    free(ls.t);
    return total;
}

static uint64_t phys_ram(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), ps = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && ps > 0 ? (uint64_t)pages * (uint64_t)ps : 0;
}

int rm_synth_plan(const char *dir, int layers, int experts, rm_synth_info *p, rm_err *err)
{
    memset(p, 0, sizeof *p);
    if (mkdir(dir, 0755) && errno != EEXIST) return rm_errf(err, "%s: cannot create: %s", dir, strerror(errno));
    struct statvfs vs;
    if (statvfs(dir, &vs)) return rm_errf(err, "%s: cannot read free space: %s", dir, strerror(errno));
    const uint64_t free_b = (uint64_t)vs.f_bavail * vs.f_frsize, ram = phys_ram();
    int L = layers > 0 ? layers : 3, E = experts;
    if (L < 2) return rm_errf(err, "--layers must be at least 2 (layer 0 is dense)");
    if (E <= 0) {
        /* larger than RAM when the disk allows, never more than half the free disk */
        uint64_t target = ram + ram / 4, cap = free_b / 2;
        if (target > cap) target = cap;
        uint64_t base = plan_bytes(L, SY_TOPK), per = (plan_bytes(L, SY_TOPK + 1) - base);
        E = target > base ? (int)(SY_TOPK + (target - base) / per) : SY_TOPK;
        if (E > 896) E = 896;
    }
    if (E < SY_TOPK) return rm_errf(err, "--experts must be at least %d (the top-k)", SY_TOPK);
    p->layers = L;
    p->experts = E;
    p->bytes = plan_bytes(L, E);
    /* layers 1.. are MoE; an expert is three MXFP4 matrices, codes and scales */
    p->expert_bytes = (uint64_t)(L - 1) * (uint64_t)E * 3 * ((uint64_t)SY_MOE_I * SY_Z / 2 + (uint64_t)SY_MOE_I * SY_Z / 32);
    p->disk_free = free_b;
    p->ram = ram;
    if (p->bytes > free_b / 2)
        return rm_errf(err, "%s: the model would take %.1f GB, more than half of the %.1f GB free", dir, p->bytes / 1e9,
                       free_b / 1e9);
    return 0;
}

int rm_synth_k3(const char *dir, int layers, int experts, uint64_t seed, void (*progress)(void *, const char *, double),
                void *ud, volatile int *stop, rm_err *err)
{
    rm_synth_info plan;
    if (rm_synth_plan(dir, layers, experts, &plan, err)) return -1;
    const int L = plan.layers, E = plan.experts;
    const uint64_t need = plan.bytes;
    char fname[128];
    uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 12345, done = 0;
    sy_rows rows;
    if (rows_init(&rows, &rng)) return rm_errf(err, "out of memory");
    json_t *wm = json_object();
    const int nsh = L + 2;
    int rc = 0;
    for (int l = -1; l <= L && !rc; l++) {
        sy_list ls = { 0 };
        if (layer_tensors(&ls, l, L, E, &rows)) { free(ls.t); rc = rm_errf(err, "out of memory"); break; }
        snprintf(fname, sizeof fname, "model-%05d-of-%06d.safetensors", l + 2, nsh);
        for (int i = 0; i < ls.n; i++) {
            json_object_set_new(wm, ls.t[i].name, json_string(fname));
            done += nbytes(&ls.t[i]);
        }
        rc = write_shard(dir, fname, &ls, &rng, stop, err);
        free(ls.t);
        if (progress) progress(ud, fname, (double)done / (double)need);
    }
    if (!rc) {
        json_t *idx = json_pack("{s:{s:I},s:o}", "metadata", "total_size", (json_int_t)need, "weight_map", wm);
        char *s = json_dumps(idx, JSON_INDENT(2) | JSON_SORT_KEYS);
        json_decref(idx);
        rc = s ? write_text(dir, "model.safetensors.index.json", s, err) : rm_errf(err, "out of memory");
        free(s);
    } else {
        json_decref(wm);
    }
    free(rows.embed);
    if (!rc) rc = write_config(dir, L, E, err);
    if (!rc) rc = write_tokenizer(dir, err);
    return rc;
}
