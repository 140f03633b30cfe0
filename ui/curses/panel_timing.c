/* panel_timing.c — per-token timing: a sparkline of recent token times,
 * last / median / p90, throughput, and the split of time by phase as a
 * stacked bar with a legend. */
#include <stdio.h>
#include "draw.h"
#include "panel.h"

static const char *phase_names[RM_PHASE_COUNT] = { "io", "spine", "attn", "exp", "head" };

static void sparkline(int y, int x, int w, const ui_stats *st)
{
    double t[UI_HIST];
    int n = ui_stats_times(st, t, w < UI_HIST ? w : UI_HIST);
    double max = 0;
    for (int i = 0; i < n; i++) if (t[i] > max) max = t[i];
    attrset(ui_attr(UI_C_BAR));
    for (int i = 0; i < n; i++) {
        int level = max > 0 ? (int)(t[i] / max * 7.0 + 0.5) : 0;
        mvaddstr(y, x + w - n + i, ui_spark(level));
    }
    attrset(A_NORMAL);
}

static void phase_bar(int y, int x, int w, const ui_summary *s)
{
    int col = 0;
    double acc = 0;
    for (int p = 0; p < RM_PHASE_COUNT; p++) {
        acc += s->phase_frac[p];
        int end = p == RM_PHASE_COUNT - 1 ? w : (int)(acc * w + 0.5);
        attrset(ui_attr(UI_C_PH0 + p) | A_REVERSE);
        for (; col < end && col < w; col++) mvaddch(y, x + col, (chtype)phase_names[p][0]);
    }
    attrset(A_NORMAL);
}

void ui_panel_timing(ui_rect r, const ui_panel_in *in)
{
    const ui_stats *st = in->stats;
    const ui_summary *s = in->sum;
    ui_put_title(r, "Timing", 0);
    int x = r.x + 1, w = r.w - 2, y = r.y + 1, end = r.y + r.h;
    if (w <= 0) return;
    if (!s->tokens) {
        if (y < end) ui_put(y, x, w, ui_attr(UI_C_DIM), "waiting for tokens");
        return;
    }
    /* One unit for the three figures, chosen by the largest. */
    double scale = s->p90 >= 1 ? 1 : 1e3;
    const char *unit = s->p90 >= 1 ? "s" : "ms";
    if (y < end)
        ui_putf(y++, x, w, ui_attr(UI_C_VALUE), "last %.1f  med %.1f  p90 %.1f %s",
                s->last * scale, s->median * scale, s->p90 * scale, unit);
    if (y < end) {
        char pre[32];
        ui_fmt_secs(pre, sizeof pre, s->prefill_seconds);
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "%.1f tok/s  %d tok  prompt %d in %s",
                s->tok_per_s, s->tokens, s->prompt_tokens, pre);
    }
    if (y < end && s->tokens) sparkline(y++, x, w, st);
    else if (y < end) y++;
    if (y < end && s->tokens) phase_bar(y++, x, w, s);
    if (y < end && s->tokens) {
        char buf[160];
        int len = 0;
        for (int p = 0; p < RM_PHASE_COUNT && len < (int)sizeof buf - 1; p++)
            len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s %.0f%%", p ? " " : "",
                            phase_names[p], s->phase_frac[p] * 100);
        ui_put(y++, x, w, ui_attr(UI_C_DIM), buf);
    }
}
