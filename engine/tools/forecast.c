/* forecast.c — `remora forecast`: how fast a model would run on this
 * machine, before it is downloaded.
 *
 * The shapes come from a config (Kimi K3's and Kimi-Linear-48B's published
 * ones are built in; `--model DIR` reads a checkpoint's), the machine from
 * short measurements (the disk through the same reader pool and loop as
 * `remora bench`, the DRAM ceiling and the kernels at the model's shapes),
 * and the RAM plan from the planner rm_model_open uses (store_decide for
 * what of the spine is resident, the expert cache, the prefill pass and the
 * overhead), so a forecast and an opened model agree on what is where.
 *
 * Decode, per token: the streamed spine units (all of them, every token,
 * read in order in 2 MB pieces: the probe file read the same way) and the
 * expert misses (random reads of whole experts) come from storage; every
 * spine byte and every chosen expert goes through the gemv at its
 * DRAM-bound rate. The ring reads the spine ahead while earlier units
 * compute, and the expert readers fill slots while the shared experts and
 * later units compute, so a token takes the longer of the two:
 *   decode = max(streamed ÷ in-order rate + misses ÷ random rate,
 *                spine ÷ bf16 gemv + chosen experts ÷ expert gemv)
 * Prefill, per layer-major pass of T tokens: the streamed spine once and
 * every distinct expert the pass's routes choose once (each of the E
 * experts of a layer is chosen with probability 1 − (1 − k/E)^T, and then
 * multiplies the T·k/distinct positions that chose it), against the
 * products, each timed at its own row count from the gemv's rate (one
 * position) and the gemm's measured at 16, 64 and 256 rows, and the work
 * beside the products, timed by the engine's own code at the model's
 * shapes (the GLU, the KDA recurrence, MLA's per-head attention, the
 * first touch of the pass's buffers: beside_s):
 *   pass = max(reads ÷ disk, Σ products + beside)
 * With a GPU (a CUDA build on a machine with one), the spine is placed in
 * VRAM up to its budget and its products run there at the device's
 * measured rates; streamed weights cross PCIe at the measured pinned rate
 * for products of gpu_min_tokens rows or more, and smaller ones (a
 * token's experts) stay on the CPU, as gpu_gemm decides.
 * Routes are taken as uniform, so the expert cache's hit rate is its share
 * of all experts: a real router's preferences can only raise it. The
 * agreement with `remora bench` on synthetic models is checked by
 * tests/sh/forecast.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/statvfs.h>
#include <jansson.h>
#include "engine.h"
#include "tools/bench.h"
#include "format/config.h"
#include "io/store.h"
#include "model/model.h"
#include "model/layers.h"
#include "base/file.h"
#include "base/clock.h"
#include "base/threadpool.h"
#include "gpu/gpu.h"

struct rm_fmodel {
    rm_config cfg;
    rm_fmodel_info info;
    uint64_t *units;                /* [2L+1] spine unit bytes, in use order */
    int nunits;
    uint64_t spine_weights;         /* weights of the spine a position uses (not the head) */
    uint64_t kvb_weights, kvb_bytes;    /* of those, the MLA layers' kv_b: mla_heads' per-head products */
    uint64_t expert_weights;
};

/* ---- the built-in configs --------------------------------------------- */

/* The text_config of moonshotai/Kimi-K3 (kimi-spec.md §1.2): 93 layers,
 * MLA at every fourth and the last, 896 MXFP4 experts of 16 per token. */
static json_t *k3_config(void)
{
    json_t *kda = json_array(), *full = json_array();
    for (int l = 1; l <= 93; l++) json_array_append_new(l % 4 == 0 || l == 93 ? full : kda, json_integer(l));
    json_t *quant = json_pack("{s:{s:{s:[s],s:{s:i,s:s,s:s,s:i,s:b,s:s}}},s:s,s:s}", "config_groups", "group_0",
                              "targets", "Linear", "weights", "num_bits", 4, "type", "float", "strategy", "group",
                              "group_size", 32, "symmetric", 1, "scale_dtype", "torch.uint8", "format",
                              "mxfp4-pack-quantized", "quant_method", "compressed-tensors");
    json_t *lac = json_pack("{s:i,s:i,s:i,s:b,s:f,s:o,s:o}", "num_heads", 96, "head_dim", 128,
                            "short_conv_kernel_size", 4, "use_full_rank_gate", 1, "gate_lower_bound", -5.0,
                            "kda_layers", kda, "full_attn_layers", full);
    json_t *tc = json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:f,s:s,s:f,s:f,s:i,s:i,s:i}", "model_type",
                           "kimi_linear", "vocab_size", 163840, "hidden_size", 7168, "num_hidden_layers", 93,
                           "bos_token_id", 163584, "eos_token_id", 163586, "pad_token_id", 163839,
                           "max_position_embeddings", 1048576, "rms_norm_eps", 1e-5, "hidden_act", "situ",
                           "activation_situ_beta", 4.0, "activation_situ_linear_beta", 25.0, "intermediate_size",
                           33792, "first_k_dense_replace", 1, "moe_layer_freq", 1);
    json_t *more = json_pack("{s:i,s:i,s:i,s:i,s:i,s:b,s:s,s:b,s:f,s:s,s:b,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,"
                             "s:b,s:b,s:i,s:b}",
                             "num_experts", 896, "num_experts_per_token", 16, "num_shared_experts", 2,
                             "moe_intermediate_size", 3072, "routed_expert_hidden_size", 3584, "latent_moe_use_norm",
                             1, "moe_router_activation_func", "sigmoid", "moe_renormalize", 1,
                             "routed_scaling_factor", 1.0, "topk_method", "noaux_tc", "use_grouped_topk", 1,
                             "num_expert_group", 1, "topk_group", 1, "num_attention_heads", 96,
                             "num_key_value_heads", 96, "q_lora_rank", 1536, "kv_lora_rank", 512,
                             "qk_nope_head_dim", 128, "qk_rope_head_dim", 64, "v_head_dim", 128, "mla_use_nope", 1,
                             "mla_use_output_gate", 1, "attn_res_block_size", 12, "tie_word_embeddings", 0);
    if (!tc || !more) { json_decref(tc); json_decref(more); json_decref(lac); json_decref(quant); return NULL; }
    json_object_update(tc, more);
    json_decref(more);
    json_object_set_new(tc, "linear_attn_config", lac);
    json_object_set_new(tc, "quantization_config", quant);
    return json_pack("{s:s,s:o}", "model_type", "kimi_k3", "text_config", tc);
}

/* Kimi-Linear-48B-A3B-Instruct's config.json (kimi-spec.md §1.1). */
static json_t *kl_config(void)
{
    static const int kda[] = { 1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26 };
    static const int full[] = { 4, 8, 12, 16, 20, 24, 27 };
    json_t *k = json_array(), *f = json_array();
    for (size_t i = 0; i < sizeof kda / sizeof *kda; i++) json_array_append_new(k, json_integer(kda[i]));
    for (size_t i = 0; i < sizeof full / sizeof *full; i++) json_array_append_new(f, json_integer(full[i]));
    json_t *c = json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:f,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:b,s:f,s:b,s:i,"
                          "s:i,s:i,s:i,s:n,s:i,s:i,s:i,s:i,s:b,s:b}",
                          "model_type", "kimi_linear", "vocab_size", 163840, "hidden_size", 2304,
                          "num_hidden_layers", 27, "bos_token_id", 163584, "eos_token_id", 163586, "pad_token_id",
                          163839, "rms_norm_eps", 1e-5, "hidden_act", "silu", "intermediate_size", 9216,
                          "first_k_dense_replace", 1, "moe_layer_freq", 1, "num_experts", 256,
                          "num_experts_per_token", 8, "num_shared_experts", 1, "moe_intermediate_size", 1024,
                          "moe_router_activation_func", "sigmoid", "moe_renormalize", 1, "routed_scaling_factor",
                          2.446, "use_grouped_topk", 1, "num_expert_group", 1, "topk_group", 1,
                          "num_attention_heads", 32, "num_key_value_heads", 32, "q_lora_rank", "kv_lora_rank", 512,
                          "qk_nope_head_dim", 128, "qk_rope_head_dim", 64, "v_head_dim", 128, "mla_use_nope", 1,
                          "tie_word_embeddings", 0);
    json_t *lac = json_pack("{s:i,s:i,s:i,s:o,s:o}", "num_heads", 32, "head_dim", 128, "short_conv_kernel_size", 4,
                            "kda_layers", k, "full_attn_layers", f);
    if (!c || !lac) { json_decref(c); json_decref(lac); return NULL; }
    json_object_set_new(c, "linear_attn_config", lac);
    json_object_set_new(c, "model_max_length", json_integer(1048576));
    return c;
}

/* ---- shapes ------------------------------------------------------------ */

static uint64_t bf16(uint64_t rows, uint64_t cols) { return rows * cols * 2; }

/* One spine unit: its matrices' bytes (bf16) and weights, each span
 * widened to the 4 KiB alignment its O_DIRECT read needs (store.c; runs
 * that touch merge, so this is the most it can take). */
typedef struct unit_sum { uint64_t bytes, weights; } unit_sum;
static void mat(unit_sum *u, uint64_t rows, uint64_t cols)
{
    if (!rows || !cols) return;
    u->bytes += bf16(rows, cols) + RM_ALIGN;
    u->weights += rows * cols;
}

/* The units the loader registers (load.c's register_spine): 2l the mixer,
 * 2l+1 the feed-forward spine, 2L the head. */
static int shapes(rm_fmodel *f, rm_err *err)
{
    const rm_config *c = &f->cfg;
    const uint64_t D = (uint64_t)c->hidden_size, P = (uint64_t)c->kda_heads * c->kda_head_dim,
                   hd = (uint64_t)c->kda_head_dim, nh = (uint64_t)c->mla_heads,
                   dqk = (uint64_t)c->qk_nope + c->qk_rope, Z = c->latent ? (uint64_t)c->latent : D,
                   I = (uint64_t)c->moe_inter, E = (uint64_t)c->num_experts;
    const int L = c->num_layers;
    f->nunits = 2 * L + 1;
    if (!(f->units = calloc((size_t)f->nunits, sizeof *f->units))) return rm_errf(err, "out of memory");
    rm_fmodel_info *in = &f->info;
    in->layers = L;
    in->experts = c->num_experts;
    in->topk = c->topk;
    in->expert_mxfp4 = c->experts_mxfp4;
    for (int l = 0; l < L; l++) {
        unit_sum a = { 0, 0 }, b = { 0, 0 };
        if (c->is_kda[l]) {
            mat(&a, P, D); mat(&a, P, D); mat(&a, P, D);                 /* q, k, v */
            mat(&a, hd, D); mat(&a, P, hd); mat(&a, (uint64_t)c->kda_heads, D);   /* f_a, f_b, b */
            if (c->kda_full_rank_gate) mat(&a, P, D);
            else { mat(&a, hd, D); mat(&a, P, hd); }
            mat(&a, D, P);                                                /* o */
        } else {
            if (c->q_lora_rank) { mat(&a, (uint64_t)c->q_lora_rank, D); mat(&a, nh * dqk, (uint64_t)c->q_lora_rank); }
            else mat(&a, nh * dqk, D);
            mat(&a, (uint64_t)c->kv_lora_rank + c->qk_rope, D);
            const unit_sum before = a;
            mat(&a, nh * ((uint64_t)c->qk_nope + c->v_head_dim), (uint64_t)c->kv_lora_rank);
            f->kvb_weights += a.weights - before.weights;
            f->kvb_bytes += a.bytes - before.bytes;
            if (c->mla_output_gate) mat(&a, nh * c->v_head_dim, D);
            mat(&a, D, nh * c->v_head_dim);
        }
        if (c->is_moe[l]) {
            in->moe_layers++;
            mat(&b, E, D);
            if (c->latent) { mat(&b, Z, D); mat(&b, D, Z); }
            const uint64_t S = I * (uint64_t)c->num_shared;
            mat(&b, S, D); mat(&b, S, D); mat(&b, D, S);
        } else {
            const uint64_t X = (uint64_t)c->intermediate_size;
            mat(&b, X, D); mat(&b, X, D); mat(&b, D, X);
        }
        f->units[2 * l] = a.bytes;
        f->units[2 * l + 1] = b.bytes;
        f->spine_weights += a.weights + b.weights;
    }
    unit_sum h = { 0, 0 };
    mat(&h, (uint64_t)c->vocab_size, D);
    f->units[2 * L] = h.bytes;
    /* one routed expert: three I x Z matrices; MXFP4 stores them (codes and
     * scales) back to back, one read; bf16 ones are three aligned spans */
    f->expert_weights = 3 * I * Z;
    if (c->experts_mxfp4) in->expert_slot_bytes = rm_align_up(3 * (I * Z / 2 + I * Z / 32));
    else in->expert_slot_bytes = 3 * rm_align_up(bf16(I, Z));
    in->all_expert_bytes = (uint64_t)in->moe_layers * E * in->expert_slot_bytes;
    for (int u = 0; u < f->nunits; u++) {
        in->spine_bytes += f->units[u];
        if (f->units[u] > in->largest_unit) in->largest_unit = f->units[u];
    }
    const uint64_t min_cache = in->expert_slot_bytes * (uint64_t)c->topk;
    in->min_budget = 2 * in->largest_unit + min_cache;
    in->spine_budget = in->spine_bytes + min_cache;
    /* the shards: spine, the embedding, and the small vectors (norms, conv
     * and gate vectors: a few MB), then the experts */
    in->stream_disk_bytes = in->spine_bytes + bf16((uint64_t)c->vocab_size, D) + (uint64_t)L * 64 * D;
    in->disk_bytes = in->stream_disk_bytes + in->all_expert_bytes;
    return 0;
}

static int from_json(json_t *j, const char *name, rm_fmodel **out, rm_err *err)
{
    *out = NULL;
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    rm_fmodel *f = calloc(1, sizeof *f);
    int rc = -1;
    if (!text || !f) rm_errf(err, "out of memory");
    else if (!config_parse(text, strlen(text), name, &f->cfg, err) && !shapes(f, err)) rc = 0;
    free(text);
    if (rc) { rm_fmodel_free(f); return -1; }
    snprintf(f->info.name, sizeof f->info.name, "%s", name);
    *out = f;
    return 0;
}

int rm_fmodel_builtin(const char *which, rm_fmodel **out, rm_err *err)
{
    if (!strcmp(which, "k3")) return from_json(k3_config(), "Kimi K3", out, err);
    if (!strcmp(which, "kimi-linear")) return from_json(kl_config(), "Kimi-Linear-48B-A3B", out, err);
    *out = NULL;
    return rm_errf_input(err, "unknown model '%s' (k3 or kimi-linear)", which);
}

/* The index's metadata.total_size, when it has one: the shards' bytes. */
static uint64_t index_total(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    json_t *t = json_object_get(json_object_get(j, "metadata"), "total_size");
    uint64_t n = json_is_integer(t) && json_integer_value(t) > 0 ? (uint64_t)json_integer_value(t) : 0;
    json_decref(j);
    return n;
}

int rm_fmodel_open(const char *dir, rm_fmodel **out, rm_err *err)
{
    *out = NULL;
    rm_fmodel *f = calloc(1, sizeof *f);
    if (!f) return rm_errf(err, "out of memory");
    if (config_load(dir, &f->cfg, err) || shapes(f, err)) { rm_fmodel_free(f); return -1; }
    snprintf(f->info.name, sizeof f->info.name, "%s", dir);
    const uint64_t total = index_total(dir);
    if (total > f->info.all_expert_bytes) {
        f->info.disk_bytes = total;
        f->info.stream_disk_bytes = total - f->info.all_expert_bytes;
    }
    *out = f;
    return 0;
}

void rm_fmodel_free(rm_fmodel *f)
{
    if (!f) return;
    free(f->units);
    free(f);
}

const rm_fmodel_info *rm_fmodel_get_info(const rm_fmodel *f) { return &f->info; }

/* ---- the machine ------------------------------------------------------- */

static void meminfo(uint64_t *total, uint64_t *avail)
{
    FILE *fp = fopen("/proc/meminfo", "r");
    unsigned long long v;
    char key[64];
    *total = *avail = 0;
    while (fp && fscanf(fp, "%63s %llu kB\n", key, &v) == 2) {
        if (!strcmp(key, "MemTotal:")) *total = v * 1024ull;
        if (!strcmp(key, "MemAvailable:")) *avail = v * 1024ull;
    }
    if (fp) fclose(fp);
}

/* The folder of dir that exists: dir itself, else its nearest parent. */
static void existing_dir(const char *dir, char *out, size_t cap)
{
    snprintf(out, cap, "%s", dir && *dir ? dir : ".");
    for (;;) {
        struct statvfs sv;
        if (!statvfs(out, &sv)) return;
        char *slash = strrchr(out, '/');
        if (!slash) { snprintf(out, cap, "."); return; }
        if (slash == out) { out[1] = 0; return; }
        *slash = 0;
    }
}

/* The probe file: `blocks` expert-sized blocks of bytes that no storage
 * layer can compress or skip, flushed to the device and dropped from the
 * page cache, then opened with O_DIRECT as the engine opens its shards. */
#define PROBE_BYTES (512ull << 20)
#define SPINE_PIECE (2u << 20)     /* store.c's READ_CHUNK */
static double probe_disk(const char *dir, uint64_t block, double seconds, rm_machine *mc, rm_err *err)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/.remora-forecast-%ld.tmp", dir, (long)getpid());
    int blocks = (int)(PROBE_BYTES / block);
    if (blocks < 8) blocks = 8;
    if ((uint64_t)blocks * block * 4 > mc->disk_free) blocks = (int)(mc->disk_free / 4 / block);
    if (blocks < 2) return rm_errf_runtime(err, "%s: too little free disk for a probe of the device", dir), -1.0;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return rm_errf_runtime(err, "%s: cannot write a probe file: %s", path, strerror(errno)), -1.0;
    uint64_t *buf = malloc(block);
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    int ok = buf != NULL;
    for (int b = 0; b < blocks && ok; b++) {
        for (size_t i = 0; i < block / 8; i++) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; buf[i] = rng; }
        ok = file_write_all(fd, buf, block) == 0;
    }
    ok = ok && fsync(fd) == 0;
    if (ok) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    free(buf);
    double gbps = -1;
    if (!ok) { rm_errf_runtime(err, "%s: cannot write a probe file: %s", path, strerror(errno)); goto out; }
    mc->disk_direct = 1;
    if ((fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC)) < 0 && errno == EINVAL) {
        mc->disk_direct = 0;            /* tmpfs and some others refuse O_DIRECT, as for the shards */
        fd = open(path, O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0) { rm_errf_runtime(err, "%s: %s", path, strerror(errno)); goto out; }
    io_pool *io = io_pool_new(8);       /* the engine's reader threads: experts.c's and store.c's default */
    const int pieces = (int)((uint64_t)blocks * block / SPINE_PIECE);
    io_span *spans = calloc((size_t)(pieces > blocks ? pieces : blocks), sizeof *spans);
    if (io && spans) {
        for (int b = 0; b < blocks; b++) spans[b] = (io_span){ fd, (uint64_t)b * block, block };
        gbps = io_read_rate(io, spans, blocks, 0, block, seconds, err);
        mc->disk_qd = io_threads(io);
        for (int b = 0; b < pieces; b++) spans[b] = (io_span){ fd, (uint64_t)b * SPINE_PIECE, SPINE_PIECE };
        if (gbps > 0) mc->spine_gbps = io_read_rate(io, spans, pieces, 1, SPINE_PIECE, seconds / 2, err);
        if (mc->spine_gbps <= 0) gbps = -1;
    } else {
        rm_errf(err, "out of memory");
    }
    free(spans);
    io_pool_free(io);
    close(fd);
out:
    unlink(path);
    return gbps;
}

/* The first touch of fresh memory, in GB/s: a 40 MB buffer (beyond glibc's
 * largest mmap threshold, 32 MB, so its pages are new each time) written a
 * byte per page. The layers allocate their activations per call and glibc
 * gives most of them back between calls, so a pass pays this for the
 * bytes fresh_bytes counts: in a 64-token pass on the 16-expert synthetic
 * model, clear_page held 3% of the samples of the whole bench run. */
#define FRESH_BYTES ((size_t)40 << 20)
static void touch_fresh(void *ud)
{
    (void)ud;
    volatile char *p = malloc(FRESH_BYTES);
    for (size_t i = 0; p && i < FRESH_BYTES; i += 4096) p[i] = 1;
    free((void *)p);
}

/* The work of a prefill pass beside its products (layers.h's probes): the
 * GLU over 2^20 elements, a KDA layer's recurrence over 32 positions, and
 * MLA's per-head attention at 16 and 64 positions, whose two costs (per
 * position: the absorbed queries and W_UV; per score: the scores, softmax
 * and weighted sums) are solved from the two runs. Sizes of 10-60 ms a run
 * here, so that make test's forecasts (0.05 s a figure) take little more.
 * -1: out of memory. */
static int probe_beside(const rm_config *c, double seconds, rm_machine *mc)
{
    const int glu_n = 1 << 20, kda_T = 32, t1 = 16, t2 = 64;
    const double g = glu_probe_s(c, glu_n, seconds);
    const double k = c->kda_heads ? kda_probe_s(c, kda_T, seconds) : 0;
    const double m1 = c->mla_heads ? mla_probe_s(c, t1, seconds) : 0, m2 = c->mla_heads ? mla_probe_s(c, t2, seconds) : 0;
    if (g < 0 || k < 0 || m1 < 0 || m2 < 0) return -1;
    mc->glu_s_per_element = g / glu_n;
    mc->kda_s_per_token = k / kda_T;
    const double p1 = mla_score_pairs(0, t1), p2 = mla_score_pairs(0, t2);
    double b = (t1 * m2 - t2 * m1) / (t1 * p2 - t2 * p1), a = (m1 - b * p1) / t1;
    if (b < 0) { b = 0; a = m2 / t2; }      /* noise: one cost explains both runs */
    if (a < 0) { a = 0; b = m2 / p2; }
    mc->mla_s_per_token = a;
    mc->mla_s_per_score = b;
    mc->fresh_gbps = FRESH_BYTES / rm_time_median(touch_fresh, NULL, seconds) / 1e9;
    return 0;
}

/* The GPU the products would go to (the first gpu_open of the process
 * decides: forecast's --gpu, else auto): its ceilings and its products at
 * the model's shapes, timed on the device as bench-kernels' GPU rows are,
 * and the pinned host-to-device rate the staged weights cross. */
static void probe_gpu(const rm_config *c, rm_machine *mc)
{
    gpu_open(GPU_AUTO, 0, 0);
    gpu_status g;
    gpu_status_get(&g);
    snprintf(mc->gpu_why, sizeof mc->gpu_why, "%s", g.active ? "" : g.why);
    if (!g.active) return;
    snprintf(mc->gpu_name, sizeof mc->gpu_name, "%s", g.name);
    mc->gpu_vram_budget = g.vram_budget;
    mc->gpu_min_tokens = gpu_min_tokens();
    const int D = c->hidden_size, P = c->kda_heads * c->kda_head_dim, I = c->moe_inter;
    const int Z = c->latent ? c->latent : D;
    const gpu_wkind ek = c->experts_mxfp4 ? GPU_W_MXFP4 : GPU_W_BF16;
    double gf = 0, gb = 0;
    int ok = !gpu_bench_peak(&mc->gpu_fma_gflops, &mc->gpu_read_gbps) && !gpu_bench_h2d(&mc->gpu_h2d_gbps);
    ok = ok && !gpu_bench_product(GPU_W_BF16, P, D, 1, &gf, &mc->gpu_gemv_bf16_gbps);
    ok = ok && !gpu_bench_product(GPU_W_BF16, 1024, D, 256, &mc->gpu_gemm_bf16_gflops, &gb);
    if (c->num_experts) {
        ok = ok && !gpu_bench_product(ek, I, Z, 1, &gf, &mc->gpu_gemv_expert_gbps);
        ok = ok && !gpu_bench_product(ek, I, Z, 256, &mc->gpu_gemm_expert_gflops, &gb);
    }
    if (ok) mc->gpu = 1;
    else snprintf(mc->gpu_why, sizeof mc->gpu_why, "%s: a measurement on the device failed", g.name);
}

int rm_machine_probe(const rm_fmodel *f, const char *dir, double seconds, rm_machine *mc, rm_err *err)
{
    memset(mc, 0, sizeof *mc);
    const double t0 = rm_now(), s = seconds > 0 ? seconds : 1.5;
    const rm_config *c = &f->cfg;
    pool_init(0);
    mc->threads = pool_threads();
    meminfo(&mc->ram_total, &mc->ram_available);
    existing_dir(dir, mc->disk_dir, sizeof mc->disk_dir);
    mc->disk_free = file_free_space(mc->disk_dir);
    mc->disk_block = f->info.expert_slot_bytes;
    if ((mc->disk_gbps = probe_disk(mc->disk_dir, mc->disk_block, 2 * s, mc, err)) <= 0) return -1;
    mc->mem_gbps = rm_bench_memory(s / 2, 1);
    /* decode: the widest spine matrix and the expert's, through an arena
     * four times the size of the largest cache */
    const int D = c->hidden_size, P = c->kda_heads * c->kda_head_dim, I = c->moe_inter;
    const int Z = c->latent ? c->latent : D;
    mc->gemv_bf16_gbps = rm_bench_gemv(0, P, D, (size_t)512 << 20, s / 2, 1);
    mc->gemv_expert_gbps = c->num_experts ? rm_bench_gemv(c->experts_mxfp4, I, Z, (size_t)512 << 20, s / 2, 1) : 0;
    /* prefill: bench_prefill.c's ceilings, the same shapes, at the row
     * counts of rm_gemm_rows; the last is T = 256 */
    for (int i = 0; i < RM_GEMM_POINTS; i++) {
        const int T = rm_gemm_rows[i], last = i == RM_GEMM_POINTS - 1;
        mc->gemm_bf16_by_rows[i] = rm_bench_gemm_rate(0, T, 1024, D, s / 2, 1, last ? &mc->gemm_bf16_best_gflops : NULL);
        mc->gemm_expert_by_rows[i] = c->num_experts ? rm_bench_gemm_rate(c->experts_mxfp4, T, I, Z, s / 2, 1,
                                                                          last ? &mc->gemm_expert_best_gflops : NULL)
                                                    : 0;
        if (mc->gemm_bf16_by_rows[i] <= 0 || (c->num_experts && mc->gemm_expert_by_rows[i] <= 0))
            return rm_errf_runtime(err, "out of memory for the kernel measurements");
    }
    if (probe_beside(c, s / 2, mc)) return rm_errf_runtime(err, "out of memory for the kernel measurements");
    mc->gemm_bf16_gflops = mc->gemm_bf16_by_rows[RM_GEMM_POINTS - 1];
    mc->gemm_expert_gflops = mc->gemm_expert_by_rows[RM_GEMM_POINTS - 1];
    probe_gpu(c, mc);
    mc->seconds = rm_now() - t0;
    if (mc->mem_gbps <= 0 || mc->gemv_bf16_gbps <= 0 || mc->gemm_bf16_gflops <= 0 ||
        (c->num_experts && (mc->gemv_expert_gbps <= 0 || mc->gemm_expert_gflops <= 0)))
        return rm_errf_runtime(err, "out of memory for the kernel measurements");
    return 0;
}

/* ---- the prediction ---------------------------------------------------- */

const char *rm_bound_name(int bound)
{
    return bound == RM_BOUND_STORAGE ? "storage" : bound == RM_BOUND_MEMORY ? "memory bandwidth" : "compute";
}

/* A product's rates: the gemv's at T = 1 and the gemm's at n row counts. */
typedef struct rates {
    double gemv_gbps;
    const double *gflops;
    const int *rows;
    int n;
} rates;

const int rm_gemm_rows[RM_GEMM_POINTS] = { 16, 64, 256 };
static const int gpu_rows[1] = { 256 };

/* Bytes a pass of T positions touches fresh: the activations each layer
 * allocates per call (kda_forward's q, k, v, g, gate, o, low and beta;
 * mla_forward's q, latent rows, q_a, attention and gate; the dense GLU's
 * and the shared experts' two blocks, and moe_forward's per position and
 * in blocks of moe.c's FFN_BLOCK of 256 rows, as far as T fills them),
 * and forward.c's rows per position. */
static double fresh_bytes(const rm_config *c, double T)
{
    const double P = (double)c->kda_heads * c->kda_head_dim, hd = c->kda_head_dim, nh = c->mla_heads;
    const double lat = (double)c->kv_lora_rank + c->qk_rope, dv = c->v_head_dim, I = c->moe_inter;
    const double Z = c->latent ? c->latent : c->hidden_size, B = T < 256 ? T : 256;
    double floats = 0, bytes = T * (double)forward_bytes_per_token(c);
    for (int l = 0; l < c->num_layers; l++) {
        if (c->is_kda[l]) floats += T * (6 * P + hd + c->kda_heads);
        else floats += T * (nh * (c->qk_nope + c->qk_rope) + lat + 2 * nh * dv + c->q_lora_rank);
        if (!c->is_moe[l]) { floats += B * 2.0 * c->intermediate_size; continue; }
        bytes += T * (double)moe_bytes_per_token(c);
        floats += B * (c->num_experts + 2 * Z + 2 * I + 2 * I * c->num_shared + (c->latent ? c->hidden_size : 0));
    }
    return bytes + floats * sizeof(float);
}

/* Seconds of the work of a pass of T positions after `done` beside its
 * products (probe_beside's figures): the GLU of every dense and shared
 * and routed expert product that runs on the CPU, each KDA layer's
 * recurrence, each MLA layer's per-head attention (its scores on the
 * device when the pass goes there) and the first touch of the buffers.
 * In a 64-token pass on the 16-expert synthetic model these were about
 * 17% of the prompt's time (GLU ~4%, the recurrence ~3.5%, the per-head
 * products far below the gemm's rate, the page faults) that the products
 * alone left out: predicted/measured prefill was 0.81-0.98. */
static double beside_s(const rm_config *c, const rm_machine *mc, int done, int T, int gpu_pass, int gpu_experts)
{
    double s = fresh_bytes(c, T) / (mc->fresh_gbps * 1e9), glu = 0;
    const double scores = mla_score_pairs(done, T);
    for (int l = 0; l < c->num_layers; l++) {
        if (c->is_kda[l]) s += T * mc->kda_s_per_token;
        else s += T * mc->mla_s_per_token + (gpu_pass ? 0 : scores * mc->mla_s_per_score);
        if (!c->is_moe[l]) glu += gpu_pass ? 0 : (double)T * c->intermediate_size;
        else glu += (gpu_pass ? 0 : (double)T * c->moe_inter * c->num_shared) +
                    (gpu_experts ? 0 : (double)T * c->moe_inter * c->topk);
    }
    return s + glu * mc->glu_s_per_element;
}

/* Seconds of one product of T positions over a matrix of `weights`
 * weights (`bytes` of them): the gemv's time at T = 1 (DRAM-bound), the
 * gemm's measured at each row count of r, in between linearly in T, and
 * past the last in proportion to T (the kernel takes inputs in blocks of
 * at most 192, each block paying the same per input). The row counts
 * matter: the kernel decodes each weight once per block of inputs and its
 * tiles take 6 inputs at a time, so a weight costs more per input in a
 * small block; per CPU-second on the 2-core development machine (1024 x
 * 7168 bf16, 3072 x 3584 MXFP4; two runs) 16 rows ran at 0.65-0.69 (bf16)
 * and 0.78-0.84 (MXFP4) of 256 rows' rate, 64 rows at 1.04-1.13 of it, so
 * the line from the gemv at T = 1 to the gemm at 256 that stood here put
 * 64 rows (the synthetic test's passes) 1.1-1.3x too slow. */
static double product_s(double weights, double bytes, double T, const rates *r)
{
    if (T <= 0) return 0;
    double t0 = bytes / (r->gemv_gbps * 1e9), x0 = 1;
    for (int i = 0; i < r->n; i++) {
        const double x1 = r->rows[i], t1 = 2 * weights * x1 / (r->gflops[i] * 1e9);
        if (T <= x1) return t0 + (T - x0) / (x1 - x0) * (t1 > t0 ? t1 - t0 : 0);
        t0 = t1;
        x0 = x1;
    }
    return t0 * T / x0;
}

int rm_forecast(const rm_fmodel *f, const rm_machine *mc, double ram_gb, int prompt_tokens, rm_prediction *p)
{
    memset(p, 0, sizeof *p);
    const rm_config *c = &f->cfg;
    const rm_fmodel_info *in = &f->info;
    const uint64_t budget = ram_gb > 0 ? (uint64_t)(ram_gb * 1e9) : model_default_budget();
    p->ram_gb = budget / 1e9;
    const uint64_t slot = in->expert_slot_bytes, min_cache = slot * (uint64_t)c->topk;
    store_decision d;
    if (store_decide(f->units, f->nunits, budget, min_cache, NULL, &d)) return -1;
    p->fits = 1;
    p->spine_resident = d.resident;
    p->ring = d.ring;
    p->units_streamed = d.streamed;
    p->spine_all_resident = d.streamed == 0;
    /* experts_alloc: as many slots as the rest holds, at least one, at most all */
    const uint64_t all = (uint64_t)in->moe_layers * (uint64_t)c->num_experts;
    uint64_t slots = slot ? d.cache / slot : 0;
    if (slots > all) slots = all;
    if (all && slots < 1) slots = 1;
    p->cache_slots = (int)slots;
    p->expert_cache = slots * slot;
    p->hit_rate = all ? (double)slots / (double)all : 0;
    if (!mc) return 0;
    const double disk = mc->disk_gbps * 1e9, seq = mc->spine_gbps * 1e9;
    const double spine_bytes = (double)d.total, streamed = (double)(d.total - d.resident);
    const double exp_w = (double)f->expert_weights;
    /* decode: the reads (streamed spine in order, expert misses at random)
     * run beside the arithmetic: the ring reads ahead, and the expert
     * readers fill the slots while the shared experts and the next units
     * compute, so a token takes the longer of the two */
    const double chosen = (double)in->moe_layers * c->topk;           /* experts a token computes */
    const double miss_bytes = chosen * (1 - p->hit_rate) * (double)slot;
    p->gb_spine_per_token = streamed / 1e9;
    p->gb_experts_per_token = miss_bytes / 1e9;
    p->decode_io_s = streamed / seq + miss_bytes / disk;
    /* with a GPU the spine is placed in VRAM as its products first run, up
     * to the budget (gpu_gemm), and computed there at HBM speed; what does
     * not fit, and every expert of a token (one position, fewer than
     * gpu_min_tokens), stays on the CPU. A streamed unit is still read from
     * storage each token even when VRAM holds it (the store does not yet
     * skip placed units), so the reads do not change. */
    const double vram = mc->gpu ? fmin((double)mc->gpu_vram_budget, spine_bytes) : 0;
    const double fv = spine_bytes > 0 ? vram / spine_bytes : 0;
    p->spine_vram = (uint64_t)vram;
    p->decode_mem_s = (spine_bytes - vram) / (mc->gemv_bf16_gbps * 1e9) +
                      (vram > 0 ? vram / (mc->gpu_gemv_bf16_gbps * 1e9) : 0) +
                      (all ? chosen * (double)slot / (mc->gemv_expert_gbps * 1e9) : 0);
    p->decode_s = p->decode_io_s > p->decode_mem_s ? p->decode_io_s : p->decode_mem_s;
    p->decode_bound = p->decode_io_s > p->decode_mem_s ? RM_BOUND_STORAGE : RM_BOUND_MEMORY;
    /* prefill of the prompt in the planner's passes */
    p->prompt_tokens = prompt_tokens > 0 ? prompt_tokens : 1000;
    p->prefill_chunk = model_plan_pass(c, budget, 0);
    if (p->prefill_chunk > p->prompt_tokens) p->prefill_chunk = p->prompt_tokens;
    p->prefill_passes = (p->prompt_tokens + p->prefill_chunk - 1) / p->prefill_chunk;
    double io = 0, compute = 0, total_s = 0;
    for (int done = 0; done < p->prompt_tokens; done += p->prefill_chunk) {
        const int T = p->prompt_tokens - done < p->prefill_chunk ? p->prompt_tokens - done : p->prefill_chunk;
        /* each of a layer's E experts is chosen by some position of the
         * pass with probability 1 - (1 - k/E)^T, and then computes the
         * T k / distinct positions that chose it in one product */
        const double distinct = all ? (double)c->num_experts * (1 - pow(1 - (double)c->topk / c->num_experts, T)) : 0;
        const double per_expert = distinct > 0 ? (double)T * c->topk / distinct : 0;
        const double reads = streamed + (double)in->moe_layers * distinct * (1 - p->hit_rate) * (double)slot;
        const double pio = streamed / seq + (reads - streamed) / disk;
        /* kv_b's products are mla_heads' per-head ones, in beside_s */
        const double body = spine_bytes - (double)f->units[f->nunits - 1] - (double)f->kvb_bytes;
        const double sw = (double)(f->spine_weights - f->kvb_weights);
        const rates cpu_spine = { mc->gemv_bf16_gbps, mc->gemm_bf16_by_rows, rm_gemm_rows, RM_GEMM_POINTS };
        const rates cpu_expert = { mc->gemv_expert_gbps, mc->gemm_expert_by_rows, rm_gemm_rows, RM_GEMM_POINTS };
        const rates dev_spine = { mc->gpu_gemv_bf16_gbps, &mc->gpu_gemm_bf16_gflops, gpu_rows, 1 };
        const rates dev_expert = { mc->gpu_gemv_expert_gbps, &mc->gpu_gemm_expert_gflops, gpu_rows, 1 };
        double pc, other;
        if (!mc->gpu) {
            other = beside_s(c, mc, done, T, 0, 0);
            pc = other + product_s(sw, body, T, &cpu_spine) +
                 (all ? (double)in->moe_layers * distinct *
                            product_s(exp_w, (double)slot, per_expert, &cpu_expert)
                      : 0);
        } else {
            /* the placed spine on the device; the rest staged over PCIe once
             * a product has gpu_min_tokens rows, else on the CPU; an expert
             * likewise by the rows that chose it */
            const double gpu_spine = product_s(sw * fv, body * fv, T, &dev_spine);
            const double rest = T >= mc->gpu_min_tokens
                ? product_s(sw * (1 - fv), body * (1 - fv), T, &dev_spine) +
                      body * (1 - fv) / (mc->gpu_h2d_gbps * 1e9)
                : product_s(sw * (1 - fv), body * (1 - fv), T, &cpu_spine);
            const double one = per_expert >= mc->gpu_min_tokens
                ? product_s(exp_w, (double)slot, per_expert, &dev_expert) +
                      (double)slot / (mc->gpu_h2d_gbps * 1e9)
                : product_s(exp_w, (double)slot, per_expert, &cpu_expert);
            other = beside_s(c, mc, done, T, T >= mc->gpu_min_tokens, per_expert >= mc->gpu_min_tokens);
            pc = other + gpu_spine + rest + (all ? (double)in->moe_layers * distinct * one : 0);
        }
        p->prefill_gb += reads / 1e9;
        io += pio;
        compute += pc;
        p->prefill_other_s += other;
        total_s += pio > pc ? pio : pc;
    }
    /* the head, for the last position only */
    total_s += (double)f->units[f->nunits - 1] / ((fv >= 1 ? mc->gpu_gemv_bf16_gbps : mc->gemv_bf16_gbps) * 1e9);
    p->prefill_io_s = io;
    p->prefill_compute_s = compute;
    p->prefill_s = total_s;
    p->prefill_s_per_1k_tokens = total_s * 1000.0 / p->prompt_tokens;
    p->prefill_bound = io > compute ? RM_BOUND_STORAGE : RM_BOUND_COMPUTE;
    p->overhead = model_overhead(c, 4096, model_pass_workspace(c, model_plan_pass(c, budget, 0)));
    p->peak_rss = d.resident + d.ring + p->expert_cache + p->overhead;
    return 0;
}
