/* cmd_bench.c — `remora bench`: how fast this machine runs this model, and
 * how close that is to what its storage allows. It measures the device's
 * random-read bandwidth at the engine's block size and queue depth, decodes
 * N tokens greedily, and reports s/token (median, p90), bytes read per token
 * (spine / experts), the achieved expert read bandwidth, the time split by
 * phase, and the roofline ratio (all after the expert cache's memory is
 * faulted in, so that the figures are not the first touch of the RAM):
 *   measured s/token ÷ (bytes read per token ÷ device bandwidth),
 * the device measured before and after decoding (shared storage drifts;
 * with the spine streamed, its in-order rate as the ring reads it too);
 * and, with --warm-tokens (a long run first loads the experts its routes
 * choose), the roofline by where each byte lives (storage, host RAM, PCIe,
 * HBM: where_roofline), the one that binds when the model is held in RAM.
 * Without --prompt it decodes after a fixed run of token ids through the
 * model alone; with --prompt it generates through a session (chat format
 * with --chat, speculation per --spec), which is how speculation is
 * measured: tokens/s, acceptance, and GB read per emitted token.
 * With --prompt-tokens N it measures the prompt path instead
 * (bench_prefill.c). With --json the last line of stdout is one JSON
 * object of the figures. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "engine.h"
#include "ui/term_safe.h"
#include "commands.h"
#include "opts.h"
#include "bench_prefill.h"

/* The shared options bench accepts (opts.h). */
#define BENCH_OPTS (OPT_BIT(OPT_MODEL) | OPT_BIT(OPT_GPU) | OPT_BIT(OPT_VRAM) | OPT_BIT(OPT_SPEC) | OPT_BIT(OPT_IO_THREADS) | OPT_BIT(OPT_RAM) | \
                    OPT_BIT(OPT_PREFILL_CHUNK) | OPT_BIT(OPT_MAX_CTX))

static void usage(FILE *f)
{
    static const char *const text[OPT_COUNT] = {
        [OPT_SPEC] = "speculation for --prompt runs (default auto)",
    };
    fprintf(f, "usage: remora bench --model DIR [--tokens N] [--ram GB] [--json] [--device-seconds S]\n"
               "                    [--io-threads N] [--prompt TEXT [--chat] [--spec auto|on|off]]\n"
               "                    [--prompt-tokens N [--prefill-chunk N]]\n");
    opts_help(f, OPT_BIT(OPT_MODEL), text);
    opts_help_line(f, "--tokens N", "tokens to decode (default 16); N in [1, 1000000000]");
    opts_help_line(f, "--json", "end stdout with one JSON object of the figures");
    opts_help_line(f, "--device-seconds S", "how long to measure the device (default 3); S in (0, 3600]");
    opts_help_line(f, "--warm-tokens N", "decode after N seeded ids instead of 8 (a long run loads the experts\n"
                                         "its routes choose: with a budget that holds them, decode from RAM);\n"
                                         "N in [1, 1048576]");
    opts_help_line(f, "--prompt TEXT", "generate from this prompt through a session instead");
    opts_help_line(f, "--chat", "wrap the prompt as a chat turn (reasoning on)");
    opts_help_line(f, "--prompt-tokens N", "measure the prompt path instead: N seeded ids in layer-major\n"
                                           "passes; N in [1, 1048576]");
    opts_help(f, BENCH_OPTS & ~OPT_BIT(OPT_MODEL), text);
    fprintf(f, "exit status: 0 done, 1 runtime failure, 2 bad input\n");
}

/* Per-token figures gathered from either decode path. */
typedef struct collect {
    double *sec;
    int n, cap, verbose;
    double spine, experts, busy, phase[RM_PHASE_COUNT], hits, looks, h2d;
    double xvram;               /* bytes of experts computed from VRAM (placed there) */
    uint64_t pf_issued, pf_used, drafted, accepted;
} collect;

static void add_token(collect *c, double seconds, const rm_token_stats *ts)
{
    if (c->n < c->cap) c->sec[c->n] = seconds;
    c->spine += (double)ts->bytes_spine_read;
    c->experts += (double)ts->bytes_expert_read;
    if (ts->read_gbps > 0) c->busy += ts->bytes_expert_read / (ts->read_gbps * 1e9);
    for (int p = 0; p < RM_PHASE_COUNT; p++) c->phase[p] += ts->phase_seconds[p];
    c->hits += (double)ts->expert_hits;
    c->looks += (double)(ts->expert_hits + ts->expert_misses);
    c->h2d += (double)ts->gpu_h2d_bytes;
    c->pf_issued += ts->prefetch_issued;
    c->pf_used += ts->prefetch_used;
    c->drafted = ts->spec_drafted;
    c->accepted = ts->spec_accepted;
    if (c->verbose)
        fprintf(stderr, "token %d: %.3f s, %.3f GB read, %.2f GB/s, depth %d, wait %.3f s\n", c->n, seconds,
                (ts->bytes_spine_read + ts->bytes_expert_read) / 1e9, ts->read_gbps, ts->queue_depth,
                ts->phase_seconds[RM_PHASE_WAIT_IO]);
    c->n++;
}

static void on_stats(void *ud, const rm_token_stats *st)
{
    if (!st->prefill) add_token(ud, st->seconds, st);
}

/* Decodes after a fixed run of `warm` token ids, greedily, through the
 * model. */
static int decode_ids(rm_model *m, collect *col, int warm, int tokens, rm_err *err)
{
    const int V = rm_model_get_info(m)->vocab_size;
    float *logits = malloc((size_t)V * sizeof *logits);
    rm_state *st = rm_state_new(m, err);
    int32_t *prompt = malloc((size_t)warm * sizeof *prompt);
    int rc = -1;
    if (!logits || !st || !prompt) { if (st) rm_errf(err, "out of memory"); goto out; }
    /* the first 8 are the short run's ids; a warm-up's later ones spread
     * over the vocabulary, so its routes choose most experts */
    for (int i = 0; i < warm; i++)
        prompt[i] = (int32_t)(i < 8 ? (i * 7919 + 13) % (V > 256 ? 256 : V) : ((uint64_t)i * 2654435761u) % (uint64_t)V);
    rm_token_stats ts;
    if (rm_forward(m, st, prompt, warm, NULL, logits, NULL, NULL, err)) goto out;
    rm_model_take_stats(m, &ts);
    rm_gpu_figures g0, g1;
    rm_gpu_get(&g0);
    for (int t = 0; t < tokens; t++) {
        int32_t id = 0;
        for (int v = 1; v < V; v++) if (logits[v] > logits[id]) id = v;
        double t0 = rm_now();
        if (rm_forward(m, st, &id, 1, NULL, logits, NULL, NULL, err)) goto out;
        double dt = rm_now() - t0;
        rm_model_take_stats(m, &ts);
        add_token(col, dt, &ts);
    }
    rm_gpu_get(&g1);
    col->xvram = (double)(g1.expert_vram_reads - g0.expert_vram_reads);
    rc = 0;
out:
    free(prompt);
    free(logits);
    rm_state_free(st);
    return rc;
}

/* The figures of a run, from its per-token records and the device. */
typedef struct figures {
    int n;                              /* tokens measured */
    double med, p90, tps, wall;         /* s/token, tokens/s, wall seconds with prefill */
    double gb_spine, gb_exp;            /* GB read per token */
    double read_gbps, dev;              /* achieved expert reads; device ceiling (0: unknown) */
    double spine_dev;                   /* the device reading the spine in order (0: not streamed) */
    double roof, ratio;                 /* roofline s/token; measured / roofline */
    /* where each byte of a token lives, and the seconds its ceiling takes
     * to move them: storage (the roofline above), host RAM (what the CPU
     * computes), PCIe (what is copied to the GPU), HBM (the spine in VRAM) */
    double ram_gbps, h2d_gbps, hbm_gbps;
    double s_storage, s_ram, s_pcie, s_hbm, roof_where, ratio_where;
} figures;

static void compute(collect *col, double dev, double wall, figures *f)
{
    const int n = col->n < col->cap ? col->n : col->cap;
    double decode_s = 0;
    for (int t = 0; t < n; t++) decode_s += col->sec[t];
    qsort(col->sec, (size_t)n, sizeof *col->sec, bench_cmp_double);
    f->n = n;
    f->wall = wall;
    f->dev = dev > 0 ? dev : 0;
    f->med = n % 2 ? col->sec[n / 2] : (col->sec[n / 2 - 1] + col->sec[n / 2]) / 2;
    f->p90 = col->sec[(int)(0.9 * (n - 1) + 0.5)];
    f->gb_spine = col->spine / n / 1e9;
    f->gb_exp = col->experts / n / 1e9;
    f->read_gbps = col->busy > 0 ? col->experts / col->busy / 1e9 : 0;
    f->roof = dev > 0 ? (f->gb_spine + f->gb_exp) / dev : 0;
    f->ratio = f->roof > 0 ? f->med / f->roof : 0;
    f->tps = decode_s > 0 ? n / decode_s : 0;
}

/* The roofline by where each byte lives: a token reads its streamed bytes
 * from storage, the weights the CPU multiplies (every chosen expert of one
 * position not placed in VRAM, the spine not in VRAM) from host RAM, what it
 * copies over PCIe, and the spine placed in VRAM and the experts computed
 * from VRAM from HBM; the four move at once, so a token
 * takes at least the longest. Each ceiling is measured here (the read loop
 * of bench-kernels on all compute threads, and the GPU's read stream and
 * pinned copy). */
static void where_roofline(const collect *col, const rm_model_info *in, figures *f)
{
    rm_gpu_figures g;
    rm_gpu_get(&g);
    const int n = f->n;
    const double expert = in->total_experts ? (double)in->expert_bytes / in->total_experts : 0;
    const double spine_vram = g.active ? (double)(g.vram_resident - g.vram_experts) : 0, xvram = col->xvram / n;
    const double spine_cpu = (double)in->spine_bytes > spine_vram ? (double)in->spine_bytes - spine_vram : 0;
    const double exp_cpu = col->looks / n * expert > xvram ? col->looks / n * expert - xvram : 0;
    const double ram_bytes = exp_cpu + spine_cpu, pcie = col->h2d / n, vram = spine_vram + xvram;
    double fma = 0;
    f->ram_gbps = rm_bench_memory(1.0, 0);
    if (g.active && (rm_gpu_bench_peak(&fma, &f->hbm_gbps) || rm_gpu_bench_h2d(&f->h2d_gbps))) f->hbm_gbps = 0;
    f->s_storage = f->roof;
    f->s_ram = f->ram_gbps > 0 ? ram_bytes / (f->ram_gbps * 1e9) : 0;
    f->s_pcie = f->h2d_gbps > 0 ? pcie / (f->h2d_gbps * 1e9) : 0;
    f->s_hbm = f->hbm_gbps > 0 ? vram / (f->hbm_gbps * 1e9) : 0;
    f->roof_where = f->s_storage;
    if (f->s_ram > f->roof_where) f->roof_where = f->s_ram;
    if (f->s_pcie > f->roof_where) f->roof_where = f->s_pcie;
    if (f->s_hbm > f->roof_where) f->roof_where = f->s_hbm;
    f->ratio_where = f->roof_where > 0 ? f->med / f->roof_where : 0;
}

static void print_model(const char *model, const rm_model_info *in)
{
    printf("model %s: %s, %d layers, %.2f GB of weights (%.2f GB spine, %.2f GB in %d experts)\n", model,
           in->family, in->num_layers, in->total_weight_bytes / 1e9, in->spine_bytes / 1e9,
           in->expert_bytes / 1e9, in->total_experts);
    printf("RAM budget %.2f GB: spine %.2f of %.2f GB resident, expert cache %.2f GB (%d slots), %s reads\n",
           in->ram_budget / 1e9, in->spine_resident_bytes / 1e9, in->spine_bytes / 1e9,
           in->expert_cache_bytes / 1e9, in->expert_cache_slots, in->direct_io ? "O_DIRECT" : "page-cache");
    rm_gpu_figures g;
    rm_gpu_get(&g);
    if (g.active)
        printf("GPU %s: VRAM budget %.2f GB of %.2f GB for weights; streamed weights go to it from %d rows\n",
               g.name, g.vram_budget / 1e9, g.vram_total / 1e9, g.min_tokens);
    else printf("GPU: none (%s)\n", g.why);
}

/* What the GPU did over the run (nothing without one). */
static void print_gpu(void)
{
    rm_gpu_figures g;
    rm_gpu_get(&g);
    if (!g.active) return;
    printf("GPU: %llu products, %.1f GFLOP in %.2f s (copies included); %d matrices %.2f GB in VRAM (%.2f GB of "
           "them routed experts); copied in %.2f GB, out %.2f GB\n", (unsigned long long)g.products, g.flops / 1e9,
           g.seconds, g.units_resident, g.vram_resident / 1e9, g.vram_experts / 1e9, g.h2d_bytes / 1e9,
           g.d2h_bytes / 1e9);
}

static void print_figures(const figures *f, const collect *col, const rm_model_info *in, int session, uint64_t hwm)
{
    const int n = f->n;
    printf("decode: %.3f s/token median, %.3f p90 over %d tokens; %.2f tokens/s (%.1f s wall with prefill)\n",
           f->med, f->p90, n, f->tps, f->wall);
    printf("read per token: %.3f GB spine + %.3f GB experts; expert hit rate %.1f%%\n", f->gb_spine, f->gb_exp,
           col->looks > 0 ? 100 * col->hits / col->looks : 0);
    printf("early reads: %llu issued, %llu used by the layer that asked\n", (unsigned long long)col->pf_issued,
           (unsigned long long)col->pf_used);
    if (session) printf("speculation: %llu drafted, %llu accepted (%.0f%%)\n", (unsigned long long)col->drafted,
                        (unsigned long long)col->accepted, col->drafted ? 100.0 * col->accepted / col->drafted : 0.0);
    printf("achieved expert read bandwidth: %.3f GB/s (%.0f%% of the device)\n", f->read_gbps,
           f->dev > 0 ? 100 * f->read_gbps / f->dev : 0);
    printf("time per token by phase:");
    for (int p = 0; p < RM_PHASE_COUNT; p++) printf(" %s %.3f s", rm_phase_name(p), col->phase[p] / n);
    printf("\nroofline: %.3f s/token from bytes read at the device's bandwidth; measured/roofline = %.2f\n", f->roof,
           f->ratio);
    if (f->roof_where > 0)
        printf("roofline by where each byte lives: max(storage %.4f s, host RAM %.4f s at %.1f GB/s, PCIe %.4f s "
               "at %.1f GB/s, HBM %.4f s at %.0f GB/s) = %.4f s/token; measured/roofline = %.2f\n", f->s_storage,
               f->s_ram, f->ram_gbps, f->s_pcie, f->h2d_gbps, f->s_hbm, f->hbm_gbps, f->roof_where, f->ratio_where);
    printf("peak RSS %.3f GB; budget %.3f GB + overhead %.3f GB = %.3f GB\n", hwm / 1e9, in->ram_budget / 1e9,
           in->overhead_bytes / 1e9, (in->ram_budget + in->overhead_bytes) / 1e9);
}

/* The --json line: every figure above in one object. */
static void print_json(const char *model, const figures *f, const collect *col, const rm_model_info *in, int block,
                       int qd, uint64_t hwm)
{
    const int n = f->n;
    json_t *j = json_pack("{s:s,s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:i,s:i,s:f}", "model", model,
                          "tokens", n, "s_per_token", f->med, "s_per_token_p90", f->p90, "gb_per_token_spine",
                          f->gb_spine, "gb_per_token_experts", f->gb_exp, "read_gbps", f->read_gbps, "device_gbps",
                          f->dev, "roofline_s_per_token", f->roof, "roofline_ratio", f->ratio, "ram_budget_gb",
                          in->ram_budget / 1e9, "model_gb", in->total_weight_bytes / 1e9, "block_bytes", block,
                          "queue_depth", qd, "tokens_per_s", f->tps);
    json_t *ph = json_object();
    for (int p = 0; p < RM_PHASE_COUNT; p++) json_object_set_new(ph, rm_phase_name(p), json_real(col->phase[p] / n));
    json_object_set_new(j, "phase_seconds", ph);
    json_object_set_new(j, "spine_gbps", json_real(f->spine_dev));
    json_object_set_new(j, "expert_hit_rate", json_real(col->looks > 0 ? col->hits / col->looks : 0));
    json_object_set_new(j, "peak_rss_gb", json_real(hwm / 1e9));
    json_object_set_new(j, "overhead_gb", json_real(in->overhead_bytes / 1e9));
    json_object_set_new(j, "prefill_chunk", json_integer(in->prefill_chunk));
    json_object_set_new(j, "prefill_workspace_gb", json_real(in->prefill_workspace_bytes / 1e9));
    json_object_set_new(j, "spec_drafted", json_integer((json_int_t)col->drafted));
    json_object_set_new(j, "spec_accepted", json_integer((json_int_t)col->accepted));
    if (f->roof_where > 0)
        json_object_set_new(j, "roofline_where", json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "storage_s",
                        f->s_storage, "host_ram_s", f->s_ram, "pcie_s", f->s_pcie, "hbm_s", f->s_hbm, "ram_gbps",
                        f->ram_gbps, "h2d_gbps", f->h2d_gbps, "hbm_gbps", f->hbm_gbps, "s_per_token",
                        f->roof_where, "ratio", f->ratio_where));
    char *str = json_dumps(j, JSON_COMPACT);
    printf("%s\n", str);
    free(str);
    json_decref(j);
}

int cmd_bench(int argc, char **argv)
{
    const char *prompt = NULL;
    int tokens = 16, json = 0, chat = 0, prompt_tokens = 0, warm = 8, warm_given = 0;
    double dev_s = 3;
    opts_shared so = { .gen = { .spec = RM_SPEC_AUTO } };
    enum { O_TOKENS = 256, O_JSON, O_DEVICE_S, O_PROMPT, O_CHAT, O_PROMPT_TOKENS, O_WARM, O_HELP };
    static const struct option own[] = {
        { "tokens", required_argument, 0, O_TOKENS }, { "json", no_argument, 0, O_JSON },
        { "prompt-tokens", required_argument, 0, O_PROMPT_TOKENS }, { "warm-tokens", required_argument, 0, O_WARM },
        { "device-seconds", required_argument, 0, O_DEVICE_S }, { "prompt", required_argument, 0, O_PROMPT },
        { "chat", no_argument, 0, O_CHAT }, { "help", no_argument, 0, O_HELP }, { 0, 0, 0, 0 } };
    const struct option *opts = opts_longopts(own, BENCH_OPTS);
    int c;
    while ((c = opts_next("bench", argc, argv, opts, &so)) >= 0) {
        switch (c) {
        case O_TOKENS: if (opts_int_arg("bench", "tokens", optarg, 1, 1000000000, &tokens)) return 2; break;
        case O_DEVICE_S: if (opts_real_arg("bench", "device-seconds", optarg, 0, 3600, 1, &dev_s)) return 2; break;
        case O_JSON: json = 1; break;
        case O_WARM:
            if (opts_int_arg("bench", "warm-tokens", optarg, 1, 1048576, &warm)) return 2;
            warm_given = 1;
            break;
        case O_PROMPT_TOKENS:
            if (opts_int_arg("bench", "prompt-tokens", optarg, 1, 1048576, &prompt_tokens)) return 2;
            break;
        case O_PROMPT: prompt = optarg; break;
        case O_CHAT: chat = 1; break;
        case O_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (c == OPTS_REFUSED) return 2;
    const char *model = so.model;
    const int spec = so.gen.spec;
    if (!model || optind != argc || (prompt && prompt_tokens)) { usage(stderr); return 2; }
    rm_err err = { "" };
    rm_model *m = NULL;
    rm_session *s = NULL;
    /* no prefix cache: a repeated run would measure it instead of the prompt */
    const rm_open_opts oo = { .ram_gb = so.open.ram_gb, .io_threads = so.open.io_threads,
                              .prefill_chunk = so.open.prefill_chunk, .prefix_cache_gb = -1,
                              .gpu = so.open.gpu, .gpu_device = so.open.gpu_device, .vram_gb = so.open.vram_gb };
    if (prompt ? rm_session_open(model, &oo, &s, &err) : rm_model_open(model, &oo, &m, &err)) {
        ui_safe_errorf("remora bench", "%s", err.msg);
        return 2;
    }
    if (s) m = rm_session_model(s);
    const rm_model_info *in = rm_model_get_info(m);
    print_model(model, in);
    if (prompt_tokens) {
        int rc = bench_prefill(m, model, prompt_tokens, so.open.prefill_chunk, dev_s, json, &err);
        if (rc) ui_safe_errorf("remora bench", "%s", err.msg);
        else if (!json) print_gpu();
        rm_model_free(m);
        return rc;
    }
    /* decode, not the first touch of the budget's RAM: the expert cache's
     * memory is faulted in first, as for the prompt path (with the default
     * 16 tokens, 31% of the samples were in the kernel's clear_page) */
    const double mem_s = rm_model_wait_memory(m);
    printf("decode measured after the expert cache's memory was faulted in (waited %.1f s)\n", mem_s);
    int block = 0, qd = 0;
    double dev = in->total_experts ? rm_bench_device(m, dev_s, &block, &qd, &err) : -1;
    if (dev > 0) printf("device random read: %.3f GB/s at %.1f MB blocks, queue depth %d\n", dev, block / 1e6, qd);
    /* a streamed spine is read in order in the ring's pieces, a pattern the
     * random reads above do not measure (tests/sh/forecast.sh judges the
     * forecast's in-order figure by it): measured likewise, before and after */
    const int streams = in->spine_resident_bytes < in->spine_bytes;
    double spine_dev = streams ? rm_bench_spine(m, dev_s, &err) : -1;
    collect col = { 0 };
    col.cap = tokens;
    col.verbose = !json;
    int rc = 0;
    if (!(col.sec = malloc((size_t)tokens * sizeof *col.sec))) { fprintf(stderr, "remora bench: out of memory\n"); rc = 1; goto out; }
    const double t0 = rm_now();
    if (s) {
        rm_gen_opts go = { .max_new = tokens, .think = 1, .spec = spec };
        rm_gen_events ev = { &col, NULL, on_stats };
        rc = chat ? rm_session_turn(s, prompt, &go, &ev, NULL, &err) : rm_session_complete(s, prompt, &go, &ev, NULL, &err);
    } else {
        rc = decode_ids(m, &col, warm, tokens, &err);
    }
    const double wall = rm_now() - t0;
    if (rc || col.n == 0) { fprintf(stderr, "remora bench: %s\n", rc ? err.msg : "no token was generated"); rc = 1; goto out; }
    /* shared storage drifts: measure the ceiling again after decoding and
     * judge the run against the mean of both */
    if (dev > 0) {
        double dev2 = rm_bench_device(m, dev_s, &block, &qd, &err);
        if (dev2 > 0) {
            printf("device random read after decoding: %.3f GB/s; using the mean, %.3f GB/s\n", dev2, (dev + dev2) / 2);
            dev = (dev + dev2) / 2;
        }
    }
    if (spine_dev > 0) {
        const double s1 = spine_dev, s2 = rm_bench_spine(m, dev_s, &err);
        spine_dev = s2 > 0 ? (s1 + s2) / 2 : s1;
        printf("device in-order read of the spine (2 MB pieces, as the ring reads): %.3f GB/s before decoding, %.3f "
               "after; using the mean, %.3f GB/s\n", s1, s2, spine_dev);
    }
    figures f = { .spine_dev = spine_dev > 0 ? spine_dev : 0 };
    compute(&col, dev, wall, &f);
    const uint64_t hwm = bench_peak_rss();     /* before the ceilings' own buffers */
    /* only for a run that asked to decode from RAM: the read loop's 1 GiB
     * buffer is beyond a small budget's overhead (ram_limit.sh's cgroup) */
    if (warm_given) where_roofline(&col, in, &f);
    print_figures(&f, &col, in, s != NULL, hwm);
    if (!json) print_gpu();
    if (json) print_json(model, &f, &col, in, block, qd, hwm);
out:
    free(col.sec);
    if (s) rm_session_free(s);
    else rm_model_free(m);
    return rc;
}
