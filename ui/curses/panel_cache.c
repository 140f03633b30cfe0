/* panel_cache.c — cache coverage: the expert hit rate over the turn and
 * for the latest token, the fraction of all experts retained, the bytes per
 * token served from the cache against those read from storage over the last
 * tokens, and how much of the spine and of the expert cache is filled (and
 * of the spine in a GPU's memory, when one computes).
 * Before the first token it shows the prompt's records. */
#include <string.h>
#include "draw.h"
#include "panel.h"

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0; }

/* "spine   1.60 GB / 14.00 GB (11%)", shorter as the panel narrows. */
static void fill_row(int y, int x, int w, const char *what, uint64_t have, uint64_t of)
{
    const ui_bytes_text a = ui_fmt_bytes_both((double)have), b = ui_fmt_bytes_both((double)of);
    int n = (int)strcspn(what, " ");
    ui_putf(y, x, w, ui_attr(UI_C_TEXT), "%s %s / %s (%.0f%%)\v%.*s %s/%s (%.0f%%)\v%.*s %.0f%% of %s\v%.*s %.0f%%",
                what, a.full, b.full, pct(have, of), n, what, a.brief, b.brief, pct(have, of), n, what, pct(have, of),
                b.brief, n, what, pct(have, of));
}

void ui_panel_cache(ui_rect r, const ui_panel_in *in)
{
    const ui_stats *st = in->stats;
    const ui_summary *s = in->sum;
    char title[96];
    if (s->window)
        snprintf(title, sizeof title, "Cache, per tok: last %d\vCache, last %d\vCache", s->window, s->window);
    else snprintf(title, sizeof title, "Cache");
    if (ui_panel_unreported(r, in, UI_FIG_CACHE, (st->have_cur && st->cur.expert_cache_capacity) ||
                            (st->have_pcur && st->pcur.expert_cache_capacity), "Cache"))
        return;
    ui_put_title(r, title, 0);
    int x = r.x + 1, w = r.w - 2, y = r.y + 1, end = r.y + r.h;
    if (w <= 0 || (!st->have_cur && !st->have_pcur)) return;
    const rm_token_stats *c = st->have_cur ? &st->cur : &st->pcur;
    char a[32];
    if (y < end && st->have_cur) {
        char hit[16] = "-", last[16] = "-";
        if (s->hit_rate >= 0) snprintf(hit, sizeof hit, "%.1f%%", s->hit_rate * 100);
        if (s->last_hit_rate >= 0) snprintf(last, sizeof last, "%.0f%%", s->last_hit_rate * 100);
        double kept = c->retained_fraction * 100;
        ui_putf(y++, x, w, ui_attr(UI_C_VALUE),
                    "hit %s turn, %s last  kept %.1f%%\vhit %s turn  kept %.1f%%\vhit %s kept %.1f%%\vhit %s",
                    hit, last, kept, hit, kept, hit, kept, hit);
    } else if (y < end) {
        ui_putf(y++, x, w, ui_attr(UI_C_VALUE), "prompt: kept %.1f%%\vkept %.1f%%", c->retained_fraction * 100,
                    c->retained_fraction * 100);
    }
    if (y < end && s->window) {
        const ui_bytes_text ca = ui_fmt_bytes_both(s->cache_bytes_per_token), rd = ui_fmt_bytes_both(s->bytes_per_token);
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "cache %s  storage %s\vcache %s  read %s\vcache %s read %s\vread %s",
                    ca.full, rd.full, ca.full, rd.full, ca.brief, rd.brief, rd.brief);
    } else if (y < end) {
        rm_fmt_bytes(a, sizeof a, (double)s->prompt_bytes);
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "prompt read %s from storage\vprompt read %s\vread %s", a, a, a);
    }
    if (y < end)
        fill_row(y++, x, w, "spine  ", c->spine_resident_bytes, c->spine_total_bytes);
    if (y < end)
        fill_row(y++, x, w, "experts", c->expert_cache_bytes, c->expert_cache_capacity);
    if (y < end && c->vram_resident_bytes)     /* a GPU computes: the spine placed in its memory */
        fill_row(y++, x, w, "VRAM   ", c->vram_resident_bytes, c->spine_total_bytes);
}
