/* bench_prefill.c — `remora bench --prompt-tokens N`: how fast this machine
 * takes a prompt, and how close that is to what its storage and its cores
 * allow.
 *
 * It waits until the expert cache's memory is faulted in (the first touch
 * of RAM is the process's cost, not the prompt's; the wait is printed),
 * then feeds N seeded token ids through the model in the planner's
 * layer-major passes (or --prefill-chunk) and reports: prefill s/token;
 * expert bytes per prompt token; passes over the experts it chose (expert
 * bytes read ÷ the bytes of the distinct experts the routes chose: 1.00 when
 * every chosen expert is read once); spine bytes per prompt token; the pass
 * size; the GFLOP/s of the matrix products (their counted flops ÷ the
 * seconds not spent waiting for reads) next to the gemm kernel's own rate
 * at T = 256 (bf16 at 7168 columns, the experts' encoding at K3's expert
 * shape, sampled right after the prompt, the median used); and
 * the roofline
 *   max(bytes of the chosen experts (read once) and the spine read ÷ device
 *       bandwidth, spine flops ÷ bf16 ceiling +
 *       expert flops ÷ expert ceiling)
 * with the measured/roofline ratio. The device's random-read bandwidth is
 * measured before and after (shared storage drifts) and the mean is used.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "engine.h"
#include "bench_prefill.h"

/* Which experts the routes chose: one flag per (layer, expert), and how
 * many (position, expert) choices there were. */
typedef struct chosen {
    int layers, experts;
    unsigned char *hit;
    uint64_t choices;
} chosen;

static void on_route(void *ud, int layer, int pos, const int *ids, const float *w, int k, float margin)
{
    (void)pos; (void)w; (void)margin;
    chosen *c = ud;
    for (int i = 0; i < k; i++)
        if (layer >= 0 && layer < c->layers && ids[i] >= 0 && ids[i] < c->experts)
            c->hit[(size_t)layer * c->experts + ids[i]] = 1;
    c->choices += (uint64_t)k;
}

/* The gemm kernel's rate at T = 256, measured as close as possible to the
 * conditions of the prompt: right after it, before the device is probed
 * again. The shared host's cores run in two states here: one second's best
 * rate was 156-162 GFLOP/s in most measurements and 194-201 in the others,
 * sometimes for minutes, while the 2048-token prompt took 97-105 s in every
 * run; a ceiling caught in the faster state alone moved a run's ratio from
 * about 1.2 to 1.4. Three samples of half a second, the median used, and
 * their range printed, so a reader sees which state the ceiling met. */
#define CEILING_SAMPLES 3

/* With a GPU computing the products the ceiling is its product's rate at
 * the same shape (gpu rows of bench-kernels; a median of 7 launches each). */
static void ceiling_samples(int mxfp4, int rows, int cols, double *out)
{
    rm_gpu_figures g;
    rm_gpu_get(&g);
    for (int i = 0; i < CEILING_SAMPLES; i++) {
        double gbs;
        if (!g.active || rm_gpu_bench_product(mxfp4 ? 3 : 2, rows, cols, 256, &out[i], &gbs))
            out[i] = rm_bench_gemm(mxfp4, 256, rows, cols, 0.5);
    }
}

int bench_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n samples (n odd) and their range; -1 when a sample
 * failed. */
static double median_of(double *v, int n, double *lo, double *hi)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    *lo = v[0];
    *hi = v[n - 1];
    return v[0] > 0 ? v[n / 2] : -1;
}

uint64_t bench_peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb * 1024;
}

/* The figures of one run. */
typedef struct prefill_figures {
    int tokens, chunk, passes;
    double seconds, s_per_token, wait_s;
    double gb_experts_per_token, gb_spine_per_token, passes_over_chosen, chosen_gb;
    double gflops, gflop, bf16_ceiling, expert_ceiling;   /* medians of the samples */
    double bf16_lo, bf16_hi, expert_lo, expert_hi;         /* their range */
    double dev, roof_io, roof_compute, roofline, ratio;
    double phase[RM_PHASE_COUNT];
    uint64_t hwm;
    uint64_t guessed, guessed_used;     /* expert reads started before the router, and those it chose */
} prefill_figures;

static void print_text(const prefill_figures *f, const rm_model_info *in)
{
    printf("prefill: %d tokens in %.1f s, %.4f s/token, in %d layer-major pass%s of up to %d tokens\n", f->tokens,
           f->seconds, f->s_per_token, f->passes, f->passes == 1 ? "" : "es", f->chunk);
    printf("read per prompt token: %.4f GB experts + %.4f GB spine; passes over the chosen experts %.3f "
           "(%.2f GB chosen)\n", f->gb_experts_per_token, f->gb_spine_per_token, f->passes_over_chosen, f->chosen_gb);
    if (f->guessed)
        printf("experts read before their router ran (guessed from the layer's input): %llu, %llu of them chosen\n",
               (unsigned long long)f->guessed, (unsigned long long)f->guessed_used);
    rm_gpu_figures g;
    rm_gpu_get(&g);
    printf("products: %.1f GFLOP at %.1f GFLOP/s (compute seconds); %s at T=256 right after the prompt, "
           "median of %d: bf16 %.1f (%.1f-%.1f), %s %.1f (%.1f-%.1f) GFLOP/s\n",
           f->gflop, f->gflops, g.active ? "GPU gemm" : "gemm kernel", CEILING_SAMPLES, f->bf16_ceiling, f->bf16_lo,
           f->bf16_hi,
           in->expert_mxfp4 ? "MXFP4" : "bf16", f->expert_ceiling, f->expert_lo, f->expert_hi);
    printf("time by phase:");
    for (int p = 0; p < RM_PHASE_COUNT; p++) printf(" %s %.1f s", rm_phase_name(p), f->phase[p]);
    printf("\nroofline: max(%.1f s of reads at %.3f GB/s, %.1f s of products at the kernel's rate) = %.1f s; "
           "measured/roofline = %.2f\n", f->roof_io, f->dev, f->roof_compute, f->roofline, f->ratio);
    printf("peak RSS %.3f GB; budget %.3f GB + overhead %.3f GB (prefill workspace %.3f GB) = %.3f GB\n",
           f->hwm / 1e9, in->ram_budget / 1e9, in->overhead_bytes / 1e9, in->prefill_workspace_bytes / 1e9,
           (in->ram_budget + in->overhead_bytes) / 1e9);
}

static void print_json(const char *model, const prefill_figures *f, const rm_model_info *in)
{
    json_t *j = json_pack("{s:s,s:i,s:i,s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "model", model,
                          "prompt_tokens", f->tokens, "chunk_tokens", f->chunk, "passes", f->passes,
                          "prefill_seconds", f->seconds, "prefill_s_per_token", f->s_per_token,
                          "gb_experts_per_prompt_token", f->gb_experts_per_token, "gb_spine_per_prompt_token",
                          f->gb_spine_per_token, "passes_over_chosen_experts", f->passes_over_chosen, "gflops",
                          f->gflops, "gemm_bf16_gflops", f->bf16_ceiling, "gemm_expert_gflops", f->expert_ceiling,
                          "device_gbps", f->dev, "roofline_io_s", f->roof_io, "roofline_compute_s", f->roof_compute,
                          "roofline_s", f->roofline, "roofline_ratio", f->ratio);
    json_object_set_new(j, "peak_rss_gb", json_real(f->hwm / 1e9));
    json_object_set_new(j, "ram_budget_gb", json_real(in->ram_budget / 1e9));
    json_object_set_new(j, "overhead_gb", json_real(in->overhead_bytes / 1e9));
    json_object_set_new(j, "prefill_workspace_gb", json_real(in->prefill_workspace_bytes / 1e9));
    json_object_set_new(j, "wait_io_s", json_real(f->wait_s));
    json_object_set_new(j, "gemm_bf16_gflops_min", json_real(f->bf16_lo));
    json_object_set_new(j, "gemm_bf16_gflops_max", json_real(f->bf16_hi));
    json_object_set_new(j, "gemm_expert_gflops_min", json_real(f->expert_lo));
    json_object_set_new(j, "gemm_expert_gflops_max", json_real(f->expert_hi));
    char *str = json_dumps(j, JSON_COMPACT);
    if (str) printf("%s\n", str);
    free(str);
    json_decref(j);
}

int bench_prefill(rm_model *m, const char *model, int n, int chunk, double dev_s, int json, rm_err *err)
{
    const rm_model_info *in = rm_model_get_info(m);
    prefill_figures f = { .tokens = n, .chunk = chunk > 0 ? chunk : in->prefill_chunk };
    if (f.chunk > n) f.chunk = n;
    f.passes = (n + f.chunk - 1) / f.chunk;
    /* the prompt path, not the first touch of the budget's RAM: the expert
     * cache's memory is faulted in first (the wait is printed) */
    const double mem_s = rm_model_wait_memory(m);
    if (mem_s >= 0.05) printf("waited %.1f s for the expert cache's memory to be faulted in\n", mem_s);
    int block = 0, qd = 0;
    double dev = in->total_experts ? rm_bench_device(m, dev_s, &block, &qd, err) : -1;
    if (dev > 0) printf("device random read: %.3f GB/s at %.1f MB blocks, queue depth %d\n", dev, block / 1e6, qd);
    int32_t *ids = malloc((size_t)n * sizeof *ids);
    chosen ch = { in->num_layers, in->num_experts, calloc((size_t)in->num_layers * (in->num_experts ? in->num_experts : 1), 1), 0 };
    float *last = malloc((size_t)in->vocab_size * sizeof *last);
    rm_state *st = rm_state_new(m, err);
    int rc = 1;
    if (!ids || !ch.hit || !last || !st) { if (st) rm_errf(err, "out of memory"); goto out; }
    uint64_t x = 0x9E3779B97F4A7C15ull;         /* seeded ids over the vocabulary */
    for (int i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        ids[i] = (int32_t)(x % (uint64_t)in->vocab_size);
    }
    double bf16_s[CEILING_SAMPLES], expert_s[CEILING_SAMPLES];
    rm_token_stats ts;
    rm_model_take_stats(m, &ts);                /* what the device probe read is not the prompt's */
    rm_forward_ctl ctl = { .chunk_tokens = f.chunk };
    const double t0 = rm_now();
    if (rm_forward_ex(m, st, ids, n, NULL, last, on_route, &ch, &ctl, NULL, err)) goto out;
    f.seconds = rm_now() - t0;
    rm_model_take_stats(m, &ts);
    /* the peak RSS is the prompt's: the kernel's ceiling is measured after
     * it is read, on buffers of its own, at K3's widths but few enough rows
     * (1024 x 7168 bf16, 15 MB) to stay inside a budget + overhead memory
     * limit; at 256 positions the product is compute-bound, so the rows do
     * not change the rate (bench-kernels times the full 12288-row shapes).
     * It is measured right after the prompt, before the device is probed
     * again (ceiling_samples says why). */
    f.hwm = bench_peak_rss();
    ceiling_samples(0, 1024, 7168, bf16_s);
    ceiling_samples(in->expert_mxfp4, 3072, 3584, expert_s);
    f.bf16_ceiling = median_of(bf16_s, CEILING_SAMPLES, &f.bf16_lo, &f.bf16_hi);
    f.expert_ceiling = median_of(expert_s, CEILING_SAMPLES, &f.expert_lo, &f.expert_hi);
    if (dev > 0) {
        rm_err e2;
        double dev2 = rm_bench_device(m, dev_s, &block, &qd, &e2);
        if (dev2 > 0) {
            printf("device random read after the prompt: %.3f GB/s; using the mean, %.3f GB/s\n", dev2, (dev + dev2) / 2);
            dev = (dev + dev2) / 2;
        }
    }
    uint64_t chosen_bytes = 0;
    for (int l = 0; l < in->num_layers; l++)
        for (int e = 0; e < in->num_experts; e++)
            if (ch.hit[(size_t)l * in->num_experts + e]) chosen_bytes += rm_model_expert_read_bytes(m, l, e);
    f.s_per_token = f.seconds / n;
    f.wait_s = ts.phase_seconds[RM_PHASE_WAIT_IO];
    for (int p = 0; p < RM_PHASE_COUNT; p++) f.phase[p] = ts.phase_seconds[p];
    f.gb_experts_per_token = ts.bytes_expert_read / 1e9 / n;
    f.gb_spine_per_token = ts.bytes_spine_read / 1e9 / n;
    f.chosen_gb = chosen_bytes / 1e9;
    f.passes_over_chosen = chosen_bytes ? (double)ts.bytes_expert_read / chosen_bytes : 0;
    f.gflop = ts.flops / 1e9;
    f.gflops = f.seconds - f.wait_s > 0 ? f.gflop / (f.seconds - f.wait_s) : 0;
    f.dev = dev > 0 ? dev : 0;
    /* each chosen expert read once: a read started on a guess the router did
     * not confirm is the run's cost, not the roofline's (it shows in the
     * passes over the chosen experts) */
    const uint64_t roof_expert = ts.bytes_expert_read < chosen_bytes ? ts.bytes_expert_read : chosen_bytes;
    f.roof_io = f.dev > 0 ? (roof_expert + ts.bytes_spine_read) / 1e9 / f.dev : 0;
    f.guessed = ts.prefetch_issued;
    f.guessed_used = ts.prefetch_used;
    /* the experts' products by their own kernel, the rest by bf16's */
    const double expert_flops = 2.0 * (double)in->expert_weights * (double)ch.choices;
    const double spine_flops = ts.flops > expert_flops ? ts.flops - expert_flops : 0;
    f.roof_compute = (f.bf16_ceiling > 0 ? spine_flops / 1e9 / f.bf16_ceiling : 0) +
                     (f.expert_ceiling > 0 ? expert_flops / 1e9 / f.expert_ceiling : 0);
    f.roofline = f.roof_io > f.roof_compute ? f.roof_io : f.roof_compute;
    f.ratio = f.roofline > 0 ? f.seconds / f.roofline : 0;
    print_text(&f, in);
    if (json) print_json(model, &f, in);
    rc = 0;
out:
    free(ids);
    free(ch.hit);
    free(last);
    rm_state_free(st);
    return rc;
}
