/* layout.c — terminal size and view options to rectangles (see layout.h).
 *
 * Tiers, from wide to small: a panel column at >= 100 columns (panels shrink
 * to their minimum heights, then the panel that takes the rest, the router,
 * and then the lower panels drop out as rows run short); a band of the
 * panels of fixed height under the panes at >= 72 columns with enough rows;
 * no panels below that. The panes sit side by side when the
 * text area has >= 60 columns, otherwise the reasoning pane is stacked above
 * the answer.
 */
#include <string.h>
#include "layout.h"

#define BAND_H 5        /* rows of the panel band */

static ui_rect rect(int y, int x, int h, int w)
{
    ui_rect r = { y, x, h > 0 ? h : 0, w > 0 ? w : 0 };
    if (!r.h || !r.w) r.h = r.w = 0;
    return r;
}

int ui_rect_visible(ui_rect r) { return r.h > 0 && r.w > 0; }

const char *ui_layout_name(int region)
{
    static const char *names[UI_R_COUNT] = { "status", "answer", "sep", "reasoning", "psep", "input" };
    return region >= 0 && region < UI_R_COUNT ? names[region] : "?";
}

static int npanels(const ui_layout_opts *o)
{
    return o->npanels < 0 ? 0 : o->npanels > UI_PANELS_MAX ? UI_PANELS_MAX : o->npanels;
}

/* Stacks the panels in a column of height h: preferred heights first, then
 * shrink toward minimums (the panel with the most rows to spare first),
 * then drop the panels that take the rest, then the others from the bottom
 * of the table. The rows left over go to the panels that take the rest. */
static void panel_column(ui_layout *L, const ui_layout_opts *o, int y, int x, int h, int w)
{
    const ui_panel_fit *p = o->panels;
    const int n = npanels(o);
    int hh[UI_PANELS_MAX], shown[UI_PANELS_MAX];
    for (int i = 0; i < n; i++) {
        hh[i] = p[i].pref_h == UI_PANEL_REST ? p[i].min_h : p[i].pref_h;
        shown[i] = 1;
    }
    for (;;) {
        int sum = 0;
        for (int i = 0; i < n; i++) if (shown[i]) sum += hh[i];
        if (sum <= h) break;
        int big = -1, rest = -1, fixed = -1;
        for (int i = 0; i < n; i++) {
            if (!shown[i]) continue;
            if (p[i].pref_h == UI_PANEL_REST) { rest = i; continue; }
            fixed = i;
            if (hh[i] > p[i].min_h && (big < 0 || hh[i] - p[i].min_h > hh[big] - p[big].min_h)) big = i;
        }
        if (big >= 0) hh[big]--;
        else if (rest >= 0) shown[rest] = 0;
        else if (fixed >= 0) shown[fixed] = 0;
        else break;
    }
    int used = 0, nrest = 0;
    for (int i = 0; i < n; i++) {
        if (!shown[i]) continue;
        if (p[i].pref_h == UI_PANEL_REST) nrest++;
        else used += hh[i];
    }
    int left = h - used, yy = y;
    for (int i = 0; i < n; i++) {
        if (!shown[i]) continue;
        int ph = hh[i];
        if (p[i].pref_h == UI_PANEL_REST) { ph = left / nrest--; left -= ph; }
        L->panel[i] = rect(yy, x, ph, w);
        yy += ph;
    }
}

/* The panels of fixed height side by side in equal widths, the last one
 * taking the columns left over; the others do not show. */
static void panel_band(ui_layout *L, const ui_layout_opts *o, int y, int h, int cols)
{
    const int n = npanels(o);
    int nb = 0;
    for (int i = 0; i < n; i++) nb += o->panels[i].pref_h != UI_PANEL_REST;
    if (!nb) return;
    int gap = 1, w = (cols - (nb - 1) * gap) / nb, k = 0;
    for (int i = 0; i < n; i++) {
        if (o->panels[i].pref_h == UI_PANEL_REST) continue;
        int x = k * (w + gap);
        int ww = k == nb - 1 ? cols - x : w;
        L->panel[i] = rect(y, x, h, ww);
        k++;
    }
}

void ui_layout_compute(int rows, int cols, const ui_layout_opts *o, ui_layout *L)
{
    memset(L, 0, sizeof *L);
    L->rows = rows;
    L->cols = cols;
    if (rows < UI_MIN_ROWS || cols < UI_MIN_COLS) { L->too_small = 1; return; }

    L->r[UI_R_STATUS] = rect(0, 0, 1, cols);
    int in_rows = o->input_rows < 1 ? 1 : o->input_rows;
    int in_max = (rows - 1) / 4;
    if (in_max < 1) in_max = 1;
    if (in_rows > in_max) in_rows = in_max;
    int in_h = 1 + in_rows;
    L->r[UI_R_INPUT] = rect(rows - in_h, 0, in_h, cols);

    int body_y = 1, body_h = rows - 1 - in_h;
    int text_w = cols, text_h = body_h;
    if (!o->panels_hidden && cols >= 100 && body_h >= 14) {
        /* 30% of the width up to 160 columns, then half of every column
         * past it: at 250 columns the router gets 90 cells, 10 experts
         * of 896 a cell, where a cap of 46 left it 40 */
        int pw = cols <= 160 ? cols * 3 / 10 : 48 + (cols - 160) / 2;
        if (pw < 34) pw = 34;
        text_w = cols - pw - 1;
        L->r[UI_R_PSEP] = rect(body_y, text_w, body_h, 1);
        panel_column(L, o, body_y, text_w + 1, body_h, pw);
    } else if (!o->panels_hidden && cols >= 72 && body_h >= 16) {
        text_h = body_h - BAND_H;
        L->band = 1;
        panel_band(L, o, body_y + text_h, BAND_H, cols);
    }

    if (o->reasoning_hidden) {
        L->r[UI_R_ANSWER] = rect(body_y, 0, text_h, text_w);
    } else if (text_w >= 60) {
        int aw = (text_w - 1) * 55 / 100;
        L->r[UI_R_ANSWER] = rect(body_y, 0, text_h, aw);
        L->r[UI_R_SEP] = rect(body_y, aw, text_h, 1);
        L->r[UI_R_REASONING] = rect(body_y, aw + 1, text_h, text_w - aw - 1);
    } else {
        int rh = text_h / 3;
        if (rh < 2) rh = 2;
        L->stacked = 1;
        L->r[UI_R_REASONING] = rect(body_y, 0, rh, text_w);
        L->r[UI_R_ANSWER] = rect(body_y + rh, 0, text_h - rh, text_w);
    }
}
