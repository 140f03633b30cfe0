/* panel_cache.c — cache coverage: the expert hit rate over the turn and
 * for the latest token, the fraction of all experts retained, the bytes per
 * token served from the cache against those read from storage over the last
 * tokens, and how much of the spine and of the expert cache is filled.
 * Before the first token it shows the prompt's records. */
#include "draw.h"
#include "panel.h"

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0; }

void ui_panel_cache(ui_rect r, const ui_panel_in *in)
{
    const ui_stats *st = in->stats;
    const ui_summary *s = in->sum;
    char title[48];
    if (s->window) snprintf(title, sizeof title, "Cache, per tok: last %d", s->window);
    else snprintf(title, sizeof title, "Cache");
    if (ui_panel_unreported(r, in, UI_FIG_CACHE, (st->have_cur && st->cur.expert_cache_capacity) ||
                            (st->have_pcur && st->pcur.expert_cache_capacity), "Cache"))
        return;
    ui_put_title(r, title, 0);
    int x = r.x + 1, w = r.w - 2, y = r.y + 1, end = r.y + r.h;
    if (w <= 0 || (!st->have_cur && !st->have_pcur)) return;
    const rm_token_stats *c = st->have_cur ? &st->cur : &st->pcur;
    char a[32], b[32];
    if (y < end && st->have_cur) {
        char hit[16] = "-", last[16] = "-";
        if (s->hit_rate >= 0) snprintf(hit, sizeof hit, "%.1f%%", s->hit_rate * 100);
        if (s->last_hit_rate >= 0) snprintf(last, sizeof last, "%.0f%%", s->last_hit_rate * 100);
        ui_putf(y++, x, w, ui_attr(UI_C_VALUE), "hit %s turn, %s last  kept %.1f%%",
                hit, last, c->retained_fraction * 100);
    } else if (y < end) {
        ui_putf(y++, x, w, ui_attr(UI_C_VALUE), "prompt: kept %.1f%%", c->retained_fraction * 100);
    }
    if (y < end && s->window) {
        ui_fmt_bytes(a, sizeof a, s->cache_bytes_per_token);
        ui_fmt_bytes(b, sizeof b, s->bytes_per_token);
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "cache %s  storage %s", a, b);
    } else if (y < end) {
        ui_fmt_bytes(a, sizeof a, (double)s->prompt_bytes);
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "prompt read %s from storage", a);
    }
    if (y < end) {
        ui_fmt_bytes(a, sizeof a, (double)c->spine_resident_bytes);
        ui_fmt_bytes(b, sizeof b, (double)c->spine_total_bytes);
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "spine   %s / %s (%.0f%%)", a, b,
                pct(c->spine_resident_bytes, c->spine_total_bytes));
    }
    if (y < end) {
        ui_fmt_bytes(a, sizeof a, (double)c->expert_cache_bytes);
        ui_fmt_bytes(b, sizeof b, (double)c->expert_cache_capacity);
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "experts %s / %s (%.0f%%)", a, b,
                pct(c->expert_cache_bytes, c->expert_cache_capacity));
    }
}
