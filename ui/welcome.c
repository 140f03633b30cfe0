/* welcome.c — the answer pane's opening note (see welcome.h). Figures come
 * from the source's rm_model_info, as the engine planned them at open: the
 * spine's resident share and the expert cache are the RAM plan, the
 * routed experts' bytes are what storage has to deliver. The storage
 * ceiling is measured after the chat opens (ui/curses/turn.c adds it when
 * the probe ends). */
#include <stdio.h>
#include <string.h>
#include "welcome.h"
#include "stats.h"

void ui_fmt_count(char *buf, size_t n, double c)
{
    static const char *unit[] = { "", " k", " M", " B", " T" };
    int u = 0;
    while (c >= 999.5 && u < 4) { c /= 1000; u++; }
    if (u == 0) snprintf(buf, n, "%.0f", c);
    else snprintf(buf, n, c < 9.995 ? "%.2f%s" : c < 99.95 ? "%.1f%s" : "%.0f%s", c, unit[u]);
}

int ui_welcome(const ui_source *s, rm_buf *out)
{
    const rm_model_info *mi = &s->info;
    char params[32], total[32], spine[32], cache[32], experts[32], budget[32];
    ui_fmt_count(params, sizeof params, (double)mi->num_params);
    rm_fmt_bytes(total, sizeof total, (double)mi->total_weight_bytes);
    rm_fmt_bytes(spine, sizeof spine, (double)mi->spine_bytes);
    rm_fmt_bytes(cache, sizeof cache, (double)mi->expert_cache_bytes);
    rm_fmt_bytes(experts, sizeof experts, (double)mi->expert_bytes);
    rm_fmt_bytes(budget, sizeof budget, (double)mi->ram_budget);
    int moe = mi->num_experts ? mi->num_layers - (mi->first_moe_layer > 0 ? mi->first_moe_layer : 0) : 0;
    double resident = mi->spine_bytes ? 100.0 * (double)mi->spine_resident_bytes / (double)mi->spine_bytes : 0;
    double cached = mi->total_experts ? 100.0 * mi->expert_cache_slots / mi->total_experts : 0;
    if (cached > 100) cached = 100;
    if (!mi->num_layers)    /* an endpoint: the API says nothing of the model's shape or RAM */
        return rm_buf_addf(out, "Endpoint %s: the panels show the figures it reports.\n"
                           "F1: the keys, the commands and what the panels show.", s->label) ? -1 : 0;
    int bad = rm_buf_addf(out, "%s: %s parameters in %s; %d layers", s->name, params, total, mi->num_layers);
    if (!bad && moe > 0)
        bad = rm_buf_addf(out, ", %d with %d routed experts (%d a token, %s)", moe, mi->num_experts,
                          mi->experts_per_token, mi->expert_mxfp4 ? "MXFP4" : "BF16");
    if (!bad)
        bad = rm_buf_addf(out, ".\nRAM (budget %s): spine %s, %.0f%% resident; expert cache %s, %d slots = "
                          "%.0f%% of the experts; %s of experts on storage, whose ceiling is being measured.",
                          budget, spine, resident, cache, mi->expert_cache_slots, cached, experts);
    rm_gpu_figures g;
    rm_gpu_get(&g);
    if (!bad && g.active) {     /* a CUDA build on a machine without one says nothing: the CPU computes, as ever */
        char vram[32];
        rm_fmt_bytes(vram, sizeof vram, (double)g.vram_budget);
        bad = rm_buf_addf(out, "\nGPU %s computes the products (the same bits as the CPU): up to %s of the "
                          "spine in VRAM, the rest copied in per pass.", g.name, vram);
    }
    if (!bad && !strcmp(s->name, UI_EMBEDDED_MODEL))
        bad = rm_buf_adds(out,
            "\nA small demonstration model: arithmetic, counting, sorting, unit conversion, dates, spelling "
            "and short word problems, in conversations of up to four turns, with /think on or off (off is "
            "quicker but often wrong on arithmetic and dates); anything else gets a short reply saying what "
            "it is. One question a message, in the phrasings below (quote the word to count in): follow-ups "
            "such as \"Add 10 to that answer.\" are not understood. Try:\n"
            "  What is 37*12?\n"
            "  How many times does the letter \"r\" appear in \"strawberry\"?\n"
            "  Put in ascending order: 63, 7, 71, 17, 22.\n"
            "  What date is 38 days after 2022-01-07?");
    if (!bad) bad = rm_buf_adds(out, "\nF1: the keys, the commands and what the panels show.");
    return bad ? -1 : 0;
}
