/* panel_router.c — the router map. One row per MoE layer (several layers per
 * row when the panel is shorter than the model), numbered as the model's
 * layers (as --trace numbers them), expert ids bucketed across the panel's
 * width; a cell's shade is how many chosen experts fall in its bucket, and
 * its colour says whether they were also chosen for the previous token
 * (reuse, which is what makes the expert cache work), or, above that, that
 * one of them was read from storage for this token (red) or was already
 * being read (in flight: cyan), from the engine's route_state. The legend's reuse
 * figure is over the last UI_WINDOW tokens, leaving out pairs of tokens from
 * one speculative verify pass (stats.h). The zoom view shows one layer over
 * the recent tokens, newest on top, the tokens of a verify pass dimmed and
 * marked in the first column, with the expert ids on an axis under it and
 * the layer's figures over the turn (reuse, storage bytes per token, its
 * most chosen experts); a wide map ends each row with its layers' turn
 * reuse and bytes per token.
 */
#include <stdio.h>
#include <string.h>
#include "draw.h"
#include "panel.h"

static int chosen_before(const int16_t *prev, int k, int id)
{
    for (int i = 0; i < k; i++) if (prev[i] == id) return 1;
    return 0;
}

/* Accumulates layer `l` of route `cur` into bucket counts over `cols`;
 * state (may be NULL) is how the cache found each choice: a cell with a
 * read is marked by the read (a bucket's value: bit 1 read, bit 2 in flight). */
static void bucket(const int16_t *cur, const int16_t *prev, const uint8_t *state, int k, int experts, int cols,
                   int *count, int *reused, int *io)
{
    for (int i = 0; i < k; i++) {
        int id = cur[i];
        if (id < 0 || id >= experts) continue;
        int c = (int)((long)id * cols / experts);
        count[c]++;
        if (prev && chosen_before(prev, k, id)) reused[c]++;
        if (state && state[i] == RM_ROUTE_READ) io[c] |= 1;
        if (state && state[i] == RM_ROUTE_INFLIGHT) io[c] |= 2;
    }
}

/* Shades a row. A cell of one layer shows its count of chosen experts (1 to
 * 4+); when a row holds several layers (binned), shades are relative to the
 * row's fullest cell, or every cell would be saturated. */
static void draw_row(int y, int x, int cols, const int *count, const int *reused, const int *io, int binned,
                     int dim)
{
    int max = 1;
    for (int c = 0; c < cols; c++) if (count[c] > max) max = count[c];
    for (int c = 0; c < cols; c++) {
        int role = count[c] && reused[c] == count[c] ? UI_C_HEAT_REUSE : UI_C_HEAT_NEW;
        if (io && io[c] & 1) role = UI_C_HEAT_READ;
        else if (io && io[c] & 2) role = UI_C_HEAT_FLIGHT;
        int level = !binned || !count[c] ? count[c] : 1 + 3 * count[c] / max;
        attrset(ui_attr(role) | (dim ? A_DIM : 0));
        mvaddstr(y, x + c, ui_heat(level));
    }
    attrset(A_NORMAL);
}

/* The turn's reuse and bytes read per token over MoE layers [l0, l1). */
static void layer_turn(const ui_stats *st, int l0, int l1, double *reuse, double *bytes)
{
    const ui_layer_figs *f = &st->layers;
    uint64_t hit = 0, n = 0, b = 0;
    for (int l = l0; l < l1 && l < f->layers; l++) { hit += f->reuse_hit[l]; n += f->reuse_n[l]; b += f->bytes[l]; }
    *reuse = n ? (double)hit / (double)n : -1;
    *bytes = f->tokens ? (double)b / (double)f->tokens : 0;
}

static void draw_zoom(ui_rect r, const ui_stats *st, int layer, int k, int experts)
{
    int x = r.x + 1, w = r.w - 2, y = r.y + 1, end = r.y + r.h;
    const int16_t (*cur)[RM_MAX_TOPK] = ui_stats_route(st, 0, NULL);
    if (!cur) return;
    /* the ids that fit, and how many did not */
    char ids[256];
    int len = snprintf(ids, sizeof ids, "ids");
    for (int i = 0; i < k; i++) {
        char one[16];
        int n = snprintf(one, sizeof one, " %d", cur[layer][i]);
        int rest = k - i - 1;
        if (len + n + (rest ? 5 : 0) > w || len + n >= (int)sizeof ids - 8) {
            snprintf(ids + len, sizeof ids - (size_t)len, " +%d", k - i);
            break;
        }
        memcpy(ids + len, one, (size_t)n + 1);
        len += n;
    }
    if (y < end) ui_put(y++, x, w, ui_attr(UI_C_VALUE), ids);
    /* the layer over the whole turn: reuse, bytes read per token, hot experts */
    if (y < end && st->have_layers && layer < st->layers.layers) {
        double reuse, bytes;
        layer_turn(st, layer, layer + 1, &reuse, &bytes);
        char b[16], hot[64] = "";
        ui_fmt_bytes_short(b, sizeof b, bytes);
        int hl = 0;
        for (int h = 0; h < UI_HOT && st->layers.hot_n[layer][h]; h++)
            hl += snprintf(hot + hl, sizeof hot - (size_t)hl, " %d", st->layers.hot[layer][h]);
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "turn: reuse %.0f%%, read %s/tok, hot%s\v"
                    "reuse %.0f%% read %s/tok hot%s\vreuse %.0f%% read %s/tok\vreuse %.0f%%",
                    reuse * 100, b, hot, reuse * 100, b, hot, reuse * 100, b, reuse * 100);
    }
    int count[512], reused[512];
    int cols = w - 1 < 512 ? w - 1 : 512;
    if (cols <= 0) return;
    /* the expert-id axis under the map, when there are rows for it */
    if (end - y >= 4) {
        end--;
        char lo[16], mid[16], hi[16];
        snprintf(lo, sizeof lo, "0");
        snprintf(mid, sizeof mid, "%d", experts / 2);
        snprintf(hi, sizeof hi, "%d", experts - 1);
        int mx = x + 1 + cols / 2 - (int)strlen(mid) / 2, hx = x + 1 + cols - (int)strlen(hi);
        ui_put(end, x + 1, cols, ui_attr(UI_C_DIM), lo);
        if (mx > x + 3 && mx + (int)strlen(mid) < hx - 1) ui_put(end, mx, (int)strlen(mid), ui_attr(UI_C_DIM), mid);
        if (hx > x + 2) ui_put(end, hx, (int)strlen(hi), ui_attr(UI_C_DIM), hi);
    }
    for (int age = 0; y < end; age++, y++) {
        int pass = 0;
        const int16_t (*rt)[RM_MAX_TOPK] = ui_stats_route(st, age, &pass);
        if (!rt) break;
        const int16_t (*pv)[RM_MAX_TOPK] = ui_stats_route(st, age + 1, NULL);
        memset(count, 0, sizeof count);
        memset(reused, 0, sizeof reused);
        bucket(rt[layer], pv ? pv[layer] : NULL, NULL, k, experts, cols, count, reused, NULL);
        if (pass) ui_put(y, x, 1, ui_attr(age & 1 ? UI_C_SPEC_A : UI_C_SPEC_B), ui_text_utf8() ? "┆" : ":");
        draw_row(y, x + 1, cols, count, reused, NULL, 0, pass);
    }
}

void ui_panel_router(ui_rect r, const ui_panel_in *in)
{
    const ui_stats *st = in->stats;
    const ui_router_view *v = in->router;
    const rm_token_stats *c = &st->cur;
    int layers = st->have_cur ? c->route_layers : 0;
    if (layers > RM_MAX_ROUTE_LAYERS) layers = RM_MAX_ROUTE_LAYERS;
    int k = c->route_k < RM_MAX_TOPK ? c->route_k : RM_MAX_TOPK;
    int experts = c->num_experts;
    char title[256];
    if (layers <= 0 || k <= 0 || experts <= 0) {
        if (!ui_panel_unreported(r, in, UI_FIG_ROUTER, 0, "Router")) ui_put_title(r, "Router", 0);
        return;
    }
    int zl = v->layer < 0 ? 0 : v->layer >= layers ? layers - 1 : v->layer;
    int l0 = in->route_layer0;
    if (v->zoom) {
        snprintf(title, sizeof title, "Router layer %d, zoom (%d-%d)", l0 + zl, l0, l0 + layers - 1);
        ui_put_title(r, title, 1);
        draw_zoom(r, st, zl, k, experts);
        return;
    }
    int x = r.x + 1, w = r.w - 2, y = r.y + 1;
    int rows = r.h - 1;
    int legend = rows >= 6;
    if (legend) rows--;
    if (rows <= 0 || w <= 4) { ui_put_title(r, "Router", 0); return; }
    int lpr = (layers + rows - 1) / rows;
    if (lpr > 1)
        snprintf(title, sizeof title, "Router layers %d-%d x %d, %d layers/row\vRouter layers %d-%d, %d/row\v"
                 "Router %d-%d", l0, l0 + layers - 1, experts, lpr, l0, l0 + layers - 1, lpr, l0, l0 + layers - 1);
    else
        snprintf(title, sizeof title, "Router layers %d-%d x %d experts\vRouter layers %d-%d\vRouter %d-%d", l0,
                 l0 + layers - 1, experts, l0, l0 + layers - 1, l0, l0 + layers - 1);
    ui_put_title(r, title, 0);
    int lw = w >= 24 ? 3 : 0;
    /* on a wide map, each row ends with the turn's reuse and bytes read per
     * token of its layers */
    int sw = st->have_layers && w - lw >= 60 ? 11 : 0;
    int cols = w - lw - sw;
    if (cols > 512) cols = 512;
    int count[512], reused[512], io[512];
    for (int row0 = 0; row0 < layers && y < r.y + 1 + rows; row0 += lpr, y++) {
        memset(count, 0, sizeof count);
        memset(reused, 0, sizeof reused);
        memset(io, 0, sizeof io);
        for (int l = row0; l < row0 + lpr && l < layers; l++)
            bucket(c->route_ids[l], st->have_prev ? st->prev.route_ids[l] : NULL, c->route_state[l], k, experts,
                   cols, count, reused, io);
        if (lw) ui_putf(y, x, lw, ui_attr(UI_C_DIM), "%2d", (l0 + row0) % 100);
        draw_row(y, x + lw, cols, count, reused, io, lpr > 1, 0);
        if (sw) {
            double reuse, bytes;
            layer_turn(st, row0, row0 + lpr, &reuse, &bytes);
            char b[16];
            ui_fmt_bytes_short(b, sizeof b, bytes);
            if (reuse >= 0) ui_putf(y, x + lw + cols, sw, ui_attr(UI_C_DIM), " %3.0f%% %5s", reuse * 100, b);
            else ui_putf(y, x + lw + cols, sw, ui_attr(UI_C_DIM), "    - %5s", b);
        }
    }
    if (legend) {
        int ly = r.y + r.h - 1;
        int col = ui_put(ly, x, w, ui_attr(UI_C_HEAT_REUSE), ui_heat(4));
        col += ui_put(ly, x + col, w - col, ui_attr(UI_C_DIM), " reused ");
        col += ui_put(ly, x + col, w - col, ui_attr(UI_C_HEAT_NEW), ui_heat(4));
        /* the residency marks, where the legend has room for them */
        if (w >= 60) {
            col += ui_put(ly, x + col, w - col, ui_attr(UI_C_DIM), " new ");
            col += ui_put(ly, x + col, w - col, ui_attr(UI_C_HEAT_READ), ui_heat(4));
            col += ui_put(ly, x + col, w - col, ui_attr(UI_C_DIM), " read ");
            col += ui_put(ly, x + col, w - col, ui_attr(UI_C_HEAT_FLIGHT), ui_heat(4));
            col += ui_put(ly, x + col, w - col, ui_attr(UI_C_DIM), " in flight");
        }
        const ui_summary *s = in->sum;
        char reuse[48] = "-";
        if (s->reuse >= 0) snprintf(reuse, sizeof reuse, "%.0f%%", 100 * s->reuse);
        const char *n = w >= 60 ? "" : " new";
        ui_putf(ly, x + col, w - col, ui_attr(UI_C_DIM), "%s  reuse %s last %d  F4 zoom%s\v"
                    "%s  reuse %s last %d  F4 zoom\v%s  reuse %s last %d\v%s  reuse %s\v%s", n, reuse, s->window,
                    sw ? "  right: turn reuse, read/tok" : "", n, reuse, s->window, n, reuse, s->window, n, reuse, n);
    }
}
