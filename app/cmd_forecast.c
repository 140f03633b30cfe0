/* cmd_forecast.c — `remora forecast`: how fast Kimi K3 (or Kimi-Linear-48B,
 * or the checkpoint in --model DIR) would run on this machine, answered
 * before the download. It measures the machine (engine/tools/forecast.c:
 * the disk where the model would live, DRAM, the kernels at the model's
 * shapes, free RAM and disk), predicts decode s/token and prefill s per
 * 1000 tokens at the RAM budget given and at a ladder of budgets, says what
 * bounds each figure, what RAM and disk each set-up needs, and ends with
 * what to change. With --json the last line of stdout is one JSON object. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "engine.h"
#include "commands.h"
#include "opts.h"

#define FORECAST_OPTS (OPT_BIT(OPT_MODEL) | OPT_BIT(OPT_RAM) | OPT_BIT(OPT_GPU) | OPT_BIT(OPT_VRAM))
#define MAX_LADDER 16

static void usage(FILE *f)
{
    static const char *const text[OPT_COUNT] = {
        [OPT_MODEL] = "predict this checkpoint (its config.json and index) instead of Kimi K3",
        [OPT_RAM] = "the RAM budget to predict (default: the engine's, 60% of the available RAM)",
        [OPT_GPU] = "the GPU to predict with: auto (default), off or a device number",
        [OPT_VRAM] = "VRAM for weights in GB (default: what the card has, less a margin)",
    };
    fprintf(f, "usage: remora forecast [--model DIR | --kimi-linear] [--ram GB] [--gpu auto|off|N] [--vram GB]\n"
               "                       [--dir DIR] [--json] [--budgets GB,GB,...] [--prompt-tokens N] [--seconds S]\n");
    opts_help(f, FORECAST_OPTS, text);
    opts_help_line(f, "--kimi-linear", "predict Kimi-Linear-48B-A3B instead of Kimi K3");
    opts_help_line(f, "--dir DIR", "where the model would live: its disk is measured (default: --model DIR, else .)");
    opts_help_line(f, "--json", "end stdout with one JSON object of the figures");
    opts_help_line(f, "--budgets LIST", "the ladder of RAM budgets in GB (default 8,16,32,64,128,256)");
    opts_help_line(f, "--prompt-tokens N", "the prompt the prefill figure is for (default 1000); N in [1, 1048576]");
    opts_help_line(f, "--seconds S", "time per measured figure (default 1.5, about 15 s in all); S in (0, 60]");
    fprintf(f, "exit status: 0 done, 1 runtime failure, 2 bad input\n");
}

static int parse_budgets(const char *s, double *out, int *n)
{
    *n = 0;
    char buf[512], *save = NULL;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_LADDER) { fprintf(stderr, "remora forecast: --budgets: at most %d budgets\n", MAX_LADDER); return -1; }
        if (opts_real_arg("forecast", "budgets", t, 0, 1e6, 1, &out[*n])) return -1;
        (*n)++;
    }
    if (!*n) { fprintf(stderr, "remora forecast: --budgets: no budget given\n"); return -1; }
    return 0;
}

/* "12.3 s", "850 ms", "2.1 min", "1.4 h": a duration a reader takes in. */
static const char *dur(char *b, size_t n, double s)
{
    if (s < 1) snprintf(b, n, "%.0f ms", s * 1e3);
    else if (s < 120) snprintf(b, n, "%.*f s", s < 10 ? 2 : 1, s);
    else if (s < 7200) snprintf(b, n, "%.1f min", s / 60);
    else snprintf(b, n, "%.1f h", s / 3600);
    return b;
}

static void print_machine(const rm_machine *mc, const rm_fmodel_info *fi)
{
    printf("machine (measured in %.1f s):\n", mc->seconds);
    printf("  disk: %.2f GB/s random %s reads of %.1f MB blocks at queue depth %d (experts), %.2f GB/s in order in "
           "2 MB pieces (the spine), in %s\n", mc->disk_gbps, mc->disk_direct ? "O_DIRECT" : "page-cache",
           mc->disk_block / 1e6, mc->disk_qd, mc->spine_gbps, mc->disk_dir);
    printf("  DRAM read %.1f GB/s; decode gemv %.1f GB/s bf16, %.1f GB/s %s; prefill gemm at 256 rows %.0f GFLOP/s "
           "bf16, %.0f GFLOP/s %s (at %d rows %.0f and %.0f); %d compute threads\n", mc->mem_gbps, mc->gemv_bf16_gbps,
           mc->gemv_expert_gbps, fi->expert_mxfp4 ? "MXFP4" : "bf16 experts", mc->gemm_bf16_gflops,
           mc->gemm_expert_gflops, fi->expert_mxfp4 ? "MXFP4" : "bf16 experts", rm_gemm_rows[0],
           mc->gemm_bf16_by_rows[0], mc->gemm_expert_by_rows[0], mc->threads);
    printf("  beside the products: GLU %.1f ns per element, KDA recurrence %.2f ms per token and layer, MLA heads "
           "%.2f ms per token and %.2f ns per score, fresh memory first touched at %.2f GB/s\n",
           mc->glu_s_per_element * 1e9, mc->kda_s_per_token * 1e3, mc->mla_s_per_token * 1e3,
           mc->mla_s_per_score * 1e9, mc->fresh_gbps);
    printf("  RAM %.1f GB, %.1f GB available; disk %.1f GB free\n", mc->ram_total / 1e9, mc->ram_available / 1e9,
           mc->disk_free / 1e9);
    if (!mc->gpu) { printf("  GPU: none (%s)\n", mc->gpu_why); return; }
    printf("  GPU: %s, %.1f GB of VRAM for weights; fp32 FMA peak %.0f GFLOP/s, read %.0f GB/s, host to device "
           "%.1f GB/s (pinned); gemv %.0f GB/s bf16, %.0f GB/s %s; gemm %.0f GFLOP/s bf16, %.0f GFLOP/s %s; "
           "streamed weights go to it from %d rows\n", mc->gpu_name, mc->gpu_vram_budget / 1e9, mc->gpu_fma_gflops,
           mc->gpu_read_gbps, mc->gpu_h2d_gbps, mc->gpu_gemv_bf16_gbps, mc->gpu_gemv_expert_gbps,
           fi->expert_mxfp4 ? "MXFP4" : "bf16 experts", mc->gpu_gemm_bf16_gflops, mc->gpu_gemm_expert_gflops,
           fi->expert_mxfp4 ? "MXFP4" : "bf16 experts", mc->gpu_min_tokens);
}

static void print_model(const rm_fmodel_info *fi)
{
    printf("model %s: %d layers; spine %.1f GB (largest unit %.2f GB); %d MoE layers of %d experts, %d per token, "
           "%.1f MB each (%s), %.1f GB in all\n", fi->name, fi->layers, fi->spine_bytes / 1e9, fi->largest_unit / 1e9,
           fi->moe_layers, fi->experts, fi->topk, fi->expert_slot_bytes / 1e6, fi->expert_mxfp4 ? "MXFP4" : "bf16",
           fi->all_expert_bytes / 1e9);
}

static void print_budget(const rm_prediction *p, const rm_fmodel_info *fi)
{
    char a[32], b[32], c[32], d[32];
    printf("at a RAM budget of %.1f GB:\n", p->ram_gb);
    printf("  decode: %s/token, bound by %s; read per token %.2f GB of streamed spine + %.2f GB of experts "
           "(expert cache hit rate %.1f%%)\n", dur(a, sizeof a, p->decode_s), rm_bound_name(p->decode_bound),
           p->gb_spine_per_token, p->gb_experts_per_token, 100 * p->hit_rate);
    printf("  prefill: %s per 1000 tokens, bound by %s (%d tokens in %d pass%s of up to %d, %.1f GB read, "
           "%s of reads and %s of computing, %s of it beside the products)\n", dur(a, sizeof a, p->prefill_s_per_1k_tokens),
           rm_bound_name(p->prefill_bound), p->prompt_tokens, p->prefill_passes, p->prefill_passes == 1 ? "" : "es",
           p->prefill_chunk, p->prefill_gb, dur(b, sizeof b, p->prefill_io_s), dur(c, sizeof c, p->prefill_compute_s),
           dur(d, sizeof d, p->prefill_other_s));
    printf("  RAM: spine %.1f of %.1f GB resident%s, expert cache %.1f GB (%d slots); peak RSS about %.1f GB "
           "(overhead %.1f GB at a 4096-token context)\n", p->spine_resident / 1e9, fi->spine_bytes / 1e9,
           p->ring ? ", the rest streamed through a ring" : "", p->expert_cache / 1e9, p->cache_slots,
           p->peak_rss / 1e9, p->overhead / 1e9);
    if (p->spine_vram) printf("  VRAM: %.1f of the spine's %.1f GB placed, its products on the GPU\n",
                              p->spine_vram / 1e9, fi->spine_bytes / 1e9);
}

/* The ladder with a bar per budget: its length grows with log10 of
 * s/token, so budgets an order of magnitude apart stay on one screen. */
static void print_ladder(const rm_prediction *lad, int n, const rm_machine *mc, const rm_fmodel_info *fi)
{
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++)
        if (lad[i].fits) { lo = fmin(lo, lad[i].decode_s); hi = fmax(hi, lad[i].decode_s); }
    printf("\n  RAM GB   s/token  bound     s/1k prompt  spine resident  decode s/token (log scale)\n");
    for (int i = 0; i < n; i++) {
        const rm_prediction *p = &lad[i];
        if (!p->fits) { printf("  %6.0f   below the model's minimum budget\n", p->ram_gb); continue; }
        const double span = hi > lo ? log10(hi / lo) : 1;
        int w = 2 + (int)(30 * (hi > lo ? log10(p->decode_s / lo) / span : 0) + 0.5);
        char bar[40];
        memset(bar, '#', (size_t)w);
        bar[w] = 0;
        printf("  %6.0f %9.3g  %-8s %12.3g  %13.0f%%  %s%s\n", p->ram_gb, p->decode_s,
               p->decode_bound == RM_BOUND_STORAGE ? "storage" : "memory", p->prefill_s_per_1k_tokens,
               100.0 * p->spine_resident / (double)fi->spine_bytes,
               bar, p->ram_gb * 1e9 > mc->ram_total ? "  (more than this machine has)" : "");
    }
}

static void advice(const rm_fmodel *f, const rm_machine *mc, const rm_prediction *p, const rm_fmodel_info *fi,
                   int prompt_tokens)
{
    char a[32], b[32];
    printf("\nwhat to do:\n");
    rm_prediction q;
    if (p->spine_all_resident) {
        printf("  - the whole spine is resident at this budget; more RAM only grows the expert cache\n");
    } else if (!rm_forecast(f, mc, fi->spine_budget / 1e9 + 0.01, prompt_tokens, &q)) {
        printf("  - the spine fits from a budget of %.0f GB: %s/token there (%s now)%s\n", ceil(fi->spine_budget / 1e9),
               dur(a, sizeof a, q.decode_s), dur(b, sizeof b, p->decode_s),
               fi->spine_budget > mc->ram_total ? ", more RAM than this machine has" : "");
    }
    rm_machine fast = *mc;
    fast.disk_gbps = mc->disk_gbps * 2;
    fast.spine_gbps = mc->spine_gbps * 2;
    if (!rm_forecast(f, &fast, p->ram_gb, prompt_tokens, &q))
        printf("  - a disk twice as fast (%.1f GB/s random reads) gives %s/token and %s per 1000 prompt tokens\n",
               fast.disk_gbps, dur(a, sizeof a, q.decode_s), dur(b, sizeof b, q.prefill_s_per_1k_tokens));
    if (mc->disk_gbps < 7) {
        fast.disk_gbps = fast.spine_gbps = 7;
        if (!rm_forecast(f, &fast, p->ram_gb, prompt_tokens, &q))
            printf("  - a PCIe 4 NVMe drive (about 7 GB/s) gives %s/token\n", dur(a, sizeof a, q.decode_s));
    }
    if (!rm_forecast(f, mc, p->ram_gb * 2, prompt_tokens, &q))
        printf("  - twice the RAM budget (%.0f GB) gives %s/token\n", p->ram_gb * 2, dur(a, sizeof a, q.decode_s));
    const double free_gb = mc->disk_free / 1e9;
    printf("  - disk: full mode needs %.0f GB, stream mode %.0f GB (experts fetched on use), %.0f GB free in %s: %s\n",
           fi->disk_bytes / 1e9, fi->stream_disk_bytes / 1e9, free_gb, mc->disk_dir,
           mc->disk_free >= fi->disk_bytes ? "both fit"
           : mc->disk_free >= fi->stream_disk_bytes ? "only stream mode fits (`remora setup --stream`)"
           : "neither fits: free disk or choose another --dir");
    if (p->ram_gb * 1e9 + p->overhead > mc->ram_available)
        printf("  - this budget and its overhead (%.1f GB) exceed the available RAM (%.1f GB): lower --ram\n",
               (p->ram_gb * 1e9 + p->overhead) / 1e9, mc->ram_available / 1e9);
}

static json_t *pred_json(const rm_prediction *p)
{
    if (!p->fits) return json_pack("{s:f,s:b}", "ram_gb", p->ram_gb, "fits", 0);
    json_t *j = json_pack("{s:f,s:b,s:f,s:f,s:s,s:f,s:f,s:f,s:s,s:i,s:i,s:f,s:f,s:f,s:f,s:i,s:f,s:f,s:b}",
                          "ram_gb", p->ram_gb, "fits", 1, "decode_s_per_token", p->decode_s,
                          "prefill_s_per_1k_tokens", p->prefill_s_per_1k_tokens, "decode_bound",
                          rm_bound_name(p->decode_bound), "gb_spine_per_token", p->gb_spine_per_token,
                          "gb_experts_per_token", p->gb_experts_per_token, "prefill_s", p->prefill_s,
                          "prefill_bound", rm_bound_name(p->prefill_bound), "prompt_tokens", p->prompt_tokens,
                          "prefill_chunk", p->prefill_chunk, "prefill_gb", p->prefill_gb, "hit_rate", p->hit_rate,
                          "spine_resident_gb", p->spine_resident / 1e9, "expert_cache_gb", p->expert_cache / 1e9,
                          "cache_slots", p->cache_slots, "overhead_gb", p->overhead / 1e9, "peak_rss_gb",
                          p->peak_rss / 1e9, "spine_all_resident", p->spine_all_resident);
    json_object_set_new(j, "decode_io_s", json_real(p->decode_io_s));
    json_object_set_new(j, "decode_mem_s", json_real(p->decode_mem_s));
    json_object_set_new(j, "prefill_io_s", json_real(p->prefill_io_s));
    json_object_set_new(j, "prefill_compute_s", json_real(p->prefill_compute_s));
    json_object_set_new(j, "prefill_other_s", json_real(p->prefill_other_s));
    json_object_set_new(j, "prefill_passes", json_integer(p->prefill_passes));
    json_object_set_new(j, "ring_gb", json_real(p->ring / 1e9));
    json_object_set_new(j, "spine_vram_gb", json_real(p->spine_vram / 1e9));
    return j;
}

static void print_json(const rm_fmodel_info *fi, const rm_machine *mc, const rm_prediction *p,
                       const rm_prediction *lad, int n)
{
    json_t *j = pred_json(p);
    json_object_set_new(j, "model", json_string(fi->name));
    json_object_set_new(j, "disk_full_gb", json_real(fi->disk_bytes / 1e9));
    json_object_set_new(j, "disk_stream_gb", json_real(fi->stream_disk_bytes / 1e9));
    json_object_set_new(j, "min_budget_gb", json_real(fi->min_budget / 1e9));
    json_object_set_new(j, "spine_budget_gb", json_real(fi->spine_budget / 1e9));
    json_object_set_new(j, "machine", json_pack("{s:f,s:f,s:I,s:i,s:b,s:f,s:f,s:f,s:f,s:f,s:i,s:f,s:f,s:f,s:s,s:f,s:n}",
        "disk_gbps", mc->disk_gbps, "spine_gbps", mc->spine_gbps, "disk_block", (json_int_t)mc->disk_block, "disk_queue_depth", mc->disk_qd,
        "disk_direct", mc->disk_direct, "mem_gbps", mc->mem_gbps, "gemv_bf16_gbps", mc->gemv_bf16_gbps,
        "gemv_expert_gbps", mc->gemv_expert_gbps, "gemm_bf16_gflops", mc->gemm_bf16_gflops, "gemm_expert_gflops",
        mc->gemm_expert_gflops, "threads", mc->threads, "ram_total_gb", mc->ram_total / 1e9, "ram_available_gb",
        mc->ram_available / 1e9, "disk_free_gb", mc->disk_free / 1e9, "disk_dir", mc->disk_dir, "seconds",
        mc->seconds, "gpu"));
    /* the best windows: what `remora bench --prompt-tokens` reports as its ceilings (tests/sh/forecast.sh
     * scales the products by them, like for like) */
    json_object_set_new(json_object_get(j, "machine"), "gemm_bf16_best_gflops", json_real(mc->gemm_bf16_best_gflops));
    json_object_set_new(json_object_get(j, "machine"), "gemm_expert_best_gflops",
                        json_real(mc->gemm_expert_best_gflops));
    json_object_set_new(json_object_get(j, "machine"), "beside_products",
                        json_pack("{s:f,s:f,s:f,s:f,s:f}", "glu_ns_per_element", mc->glu_s_per_element * 1e9,
                                  "kda_ms_per_token", mc->kda_s_per_token * 1e3, "mla_ms_per_token",
                                  mc->mla_s_per_token * 1e3, "mla_ns_per_score", mc->mla_s_per_score * 1e9,
                                  "fresh_gbps", mc->fresh_gbps));
    json_t *rows = json_array(), *gb = json_array(), *ge = json_array();
    for (int i = 0; i < RM_GEMM_POINTS; i++) {
        json_array_append_new(rows, json_integer(rm_gemm_rows[i]));
        json_array_append_new(gb, json_real(mc->gemm_bf16_by_rows[i]));
        json_array_append_new(ge, json_real(mc->gemm_expert_by_rows[i]));
    }
    json_object_set_new(json_object_get(j, "machine"), "gemm_rows", rows);
    json_object_set_new(json_object_get(j, "machine"), "gemm_bf16_gflops_by_rows", gb);
    json_object_set_new(json_object_get(j, "machine"), "gemm_expert_gflops_by_rows", ge);
    if (mc->gpu)
        json_object_set_new(json_object_get(j, "machine"), "gpu",
            json_pack("{s:s,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:i}", "name", mc->gpu_name, "vram_budget_gb",
                      mc->gpu_vram_budget / 1e9, "fma_gflops", mc->gpu_fma_gflops, "read_gbps", mc->gpu_read_gbps,
                      "h2d_gbps", mc->gpu_h2d_gbps, "gemv_bf16_gbps", mc->gpu_gemv_bf16_gbps, "gemv_expert_gbps",
                      mc->gpu_gemv_expert_gbps, "gemm_bf16_gflops", mc->gpu_gemm_bf16_gflops, "gemm_expert_gflops",
                      mc->gpu_gemm_expert_gflops, "min_tokens", mc->gpu_min_tokens));
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(arr, pred_json(&lad[i]));
    json_object_set_new(j, "ladder", arr);
    char *s = json_dumps(j, JSON_COMPACT);
    if (s) printf("%s\n", s);
    free(s);
    json_decref(j);
}

int cmd_forecast(int argc, char **argv)
{
    int json = 0, kl = 0, prompt_tokens = 1000, nlad = 6;
    double seconds = 1.5, ladder[MAX_LADDER] = { 8, 16, 32, 64, 128, 256 };
    const char *dir = NULL;
    opts_shared so = { 0 };
    enum { O_JSON = 256, O_KL, O_DIR, O_BUDGETS, O_PROMPT_TOKENS, O_SECONDS, O_HELP };
    static const struct option own[] = {
        { "json", no_argument, 0, O_JSON }, { "kimi-linear", no_argument, 0, O_KL },
        { "dir", required_argument, 0, O_DIR }, { "budgets", required_argument, 0, O_BUDGETS },
        { "prompt-tokens", required_argument, 0, O_PROMPT_TOKENS }, { "seconds", required_argument, 0, O_SECONDS },
        { "help", no_argument, 0, O_HELP }, { 0, 0, 0, 0 } };
    const struct option *opts = opts_longopts(own, FORECAST_OPTS);
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int taken = opts_take("forecast", c, optarg, &so);
        if (taken < 0) return 2;
        if (taken) continue;
        switch (c) {
        case O_JSON: json = 1; break;
        case O_KL: kl = 1; break;
        case O_DIR: dir = optarg; break;
        case O_BUDGETS: if (parse_budgets(optarg, ladder, &nlad)) return 2; break;
        case O_PROMPT_TOKENS:
            if (opts_int_arg("forecast", "prompt-tokens", optarg, 1, 1048576, &prompt_tokens)) return 2;
            break;
        case O_SECONDS: if (opts_real_arg("forecast", "seconds", optarg, 0, 60, 1, &seconds)) return 2; break;
        case O_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc || (kl && so.model)) { usage(stderr); return 2; }
    rm_err err = { "" };
    rm_fmodel *f = NULL;
    if (so.model ? rm_fmodel_open(so.model, &f, &err) : rm_fmodel_builtin(kl ? "kimi-linear" : "k3", &f, &err)) {
        fprintf(stderr, "remora forecast: %s\n", err.msg);
        return rm_err_status(&err, 2);
    }
    const rm_fmodel_info *fi = rm_fmodel_get_info(f);
    rm_prediction p, lad[MAX_LADDER];
    const double ram = so.open.ram_gb;
    if (rm_forecast(f, NULL, ram, prompt_tokens, &p)) {     /* bad input: said before a minute of measuring */
        fprintf(stderr, "remora forecast: a RAM budget of %.2f GB%s is below the minimum of %s, %.2f GB\n", p.ram_gb,
                ram > 0 ? "" : " (the default)", fi->name, fi->min_budget / 1e9);
        rm_fmodel_free(f);
        return 2;
    }
    if (!json) fprintf(stderr, "remora forecast: measuring this machine for %s (about %.0f s)...\n", fi->name, 10 * seconds);
    rm_machine mc;
    rm_gpu_open(so.open.gpu, so.open.gpu_device, so.open.vram_gb);     /* the probe's device */
    if (rm_machine_probe(f, dir ? dir : so.model ? so.model : ".", seconds, &mc, &err)) {
        fprintf(stderr, "remora forecast: %s\n", err.msg);
        rm_fmodel_free(f);
        return rm_err_status(&err, 1);
    }
    rm_forecast(f, &mc, ram, prompt_tokens, &p);
    for (int i = 0; i < nlad; i++) rm_forecast(f, &mc, ladder[i], prompt_tokens, &lad[i]);
    print_machine(&mc, fi);
    print_model(fi);
    print_budget(&p, fi);
    print_ladder(lad, nlad, &mc, fi);
    advice(f, &mc, &p, fi, prompt_tokens);
    printf("\nthe forecast takes routes as uniform (a real router's preferences only raise the cache's hit rate) "
           "and a context of a few thousand tokens; `remora bench` measures a model that is here\n");
    if (json) print_json(fi, &mc, &p, lad, nlad);
    rm_fmodel_free(f);
    return 0;
}
