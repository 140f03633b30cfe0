/* layout.c — terminal size and view options to rectangles (see layout.h).
 *
 * Tiers, from wide to small: a panel column at >= 100 columns (panels shrink
 * to their minimum heights, then the router and the lower panels drop out as
 * rows run short); a band of four panels under the panes at >= 72 columns
 * with enough rows; no panels below that. The panes sit side by side when the
 * text area has >= 60 columns, otherwise the reasoning pane is stacked above
 * the answer.
 */
#include <string.h>
#include "layout.h"

static ui_rect rect(int y, int x, int h, int w)
{
    ui_rect r = { y, x, h > 0 ? h : 0, w > 0 ? w : 0 };
    if (!r.h || !r.w) r.h = r.w = 0;
    return r;
}

int ui_rect_visible(ui_rect r) { return r.h > 0 && r.w > 0; }

const char *ui_layout_name(int region)
{
    static const char *names[UI_R_COUNT] = {
        "status", "answer", "sep", "reasoning", "psep",
        "timing", "cache", "io", "spec", "router", "input" };
    return region >= 0 && region < UI_R_COUNT ? names[region] : "?";
}

/* Stacks the panels in a column of height h: preferred heights first, then
 * shrink toward minimums, then drop panels from the bottom of the list. The
 * router (last) takes what is left when it gets at least its minimum. */
static void panel_column(ui_layout *L, int y, int x, int h, int w)
{
    static const int ids[] = { UI_R_TIMING, UI_R_CACHE, UI_R_IO, UI_R_SPEC };
    static const int pref[] = { 6, 5, 5, 3 };
    static const int minh[] = { 4, 3, 3, 2 };
    enum { N = 4, ROUTER_MIN = 4 };
    int hh[N], n = N, router = 1;
    memcpy(hh, pref, sizeof hh);
    for (;;) {
        int sum = 0;
        for (int i = 0; i < n; i++) sum += hh[i];
        if (sum + (router ? ROUTER_MIN : 0) <= h) break;
        int big = -1;
        for (int i = 0; i < n; i++)
            if (hh[i] > minh[i] && (big < 0 || hh[i] - minh[i] > hh[big] - minh[big])) big = i;
        if (big >= 0) hh[big]--;
        else if (router) router = 0;
        else if (n > 0) n--;
        else break;
    }
    int yy = y;
    for (int i = 0; i < n; i++) {
        L->r[ids[i]] = rect(yy, x, hh[i], w);
        yy += hh[i];
    }
    if (router) L->r[UI_R_ROUTER] = rect(yy, x, y + h - yy, w);
}

static void panel_band(ui_layout *L, int y, int h, int cols)
{
    static const int ids[] = { UI_R_TIMING, UI_R_CACHE, UI_R_IO, UI_R_SPEC };
    int gap = 1, w = (cols - 3 * gap) / 4;
    for (int i = 0; i < 4; i++) {
        int x = i * (w + gap);
        int ww = i == 3 ? cols - x : w;
        L->r[ids[i]] = rect(y, x, h, ww);
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
        int pw = cols * 3 / 10;
        if (pw < 34) pw = 34;
        if (pw > 46) pw = 46;
        text_w = cols - pw - 1;
        L->r[UI_R_PSEP] = rect(body_y, text_w, body_h, 1);
        panel_column(L, body_y, text_w + 1, body_h, pw);
    } else if (!o->panels_hidden && cols >= 72 && body_h >= 16) {
        int band_h = 5;
        text_h = body_h - band_h;
        L->band = 1;
        panel_band(L, body_y + text_h, band_h, cols);
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
