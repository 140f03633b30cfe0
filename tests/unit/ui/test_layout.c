/* test_ui_layout.c — the pure layout over every terminal size from 1x1 to
 * 260x80 and every view option: nothing off-screen, nothing overlapping, the
 * essential regions present, "too small" exactly below the minimum. */
#include "tests/unit/test.h"
#include "ui/layout.h"

static int overlap(ui_rect a, ui_rect b)
{
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

TEST(ui_layout_all_sizes)
{
    int bad = 0;
    for (int rows = 1; rows <= 80 && bad < 10; rows++)
    for (int cols = 1; cols <= 260 && bad < 10; cols++)
    for (int opt = 0; opt < 12; opt++) {
        ui_layout_opts o = { opt & 1, (opt >> 1) & 1, (int[]){ 1, 3, 20 }[opt >> 2 < 3 ? opt >> 2 : 0] };
        ui_layout L;
        ui_layout_compute(rows, cols, &o, &L);
        int small = rows < UI_MIN_ROWS || cols < UI_MIN_COLS;
        if (L.too_small != small) { bad++; CHECKF(0, "%dx%d too_small=%d", cols, rows, L.too_small); }
        for (int i = 0; i < UI_R_COUNT; i++) {
            ui_rect r = L.r[i];
            if (!ui_rect_visible(r)) continue;
            if (small) { bad++; CHECKF(0, "%dx%d: %s visible while too small", cols, rows, ui_layout_name(i)); }
            if (r.x < 0 || r.y < 0 || r.x + r.w > cols || r.y + r.h > rows) {
                bad++;
                CHECKF(0, "%dx%d opt %d: %s off-screen (%d,%d %dx%d)", cols, rows, opt,
                       ui_layout_name(i), r.x, r.y, r.w, r.h);
            }
            for (int j = i + 1; j < UI_R_COUNT; j++)
                if (ui_rect_visible(L.r[j]) && overlap(r, L.r[j])) {
                    bad++;
                    CHECKF(0, "%dx%d opt %d: %s overlaps %s", cols, rows, opt, ui_layout_name(i),
                           ui_layout_name(j));
                }
        }
        if (small) continue;
        ui_rect a = L.r[UI_R_ANSWER], in = L.r[UI_R_INPUT];
        if (!ui_rect_visible(L.r[UI_R_STATUS]) || a.w < 20 || a.h < 3 || in.h < 2 || in.w != cols) {
            bad++;
            CHECKF(0, "%dx%d opt %d: answer %dx%d input %dx%d", cols, rows, opt, a.w, a.h, in.w, in.h);
        }
        if (ui_rect_visible(L.r[UI_R_REASONING]) == o.reasoning_hidden) {
            bad++;
            CHECKF(0, "%dx%d: reasoning visibility ignores the option", cols, rows);
        }
        if (!o.reasoning_hidden && (L.r[UI_R_REASONING].w < 18 || L.r[UI_R_REASONING].h < 2)) {
            bad++;
            CHECKF(0, "%dx%d: reasoning pane too small", cols, rows);
        }
        if (o.panels_hidden && ui_rect_visible(L.r[UI_R_TIMING])) { bad++; CHECK(0); }
    }
}

TEST(ui_layout_tiers)
{
    ui_layout_opts o = { 0, 0, 1 };
    ui_layout L;
    ui_layout_compute(40, 120, &o, &L);
    CHECK(!L.band && !L.stacked && ui_rect_visible(L.r[UI_R_ROUTER]) && ui_rect_visible(L.r[UI_R_TIMING]));
    ui_layout_compute(24, 80, &o, &L);
    CHECK(L.band && ui_rect_visible(L.r[UI_R_TIMING]) && !ui_rect_visible(L.r[UI_R_ROUTER]));
    ui_layout_compute(60, 200, &o, &L);
    CHECK(ui_rect_visible(L.r[UI_R_ROUTER]) && L.r[UI_R_ROUTER].h > 20);
    ui_layout_compute(12, 50, &o, &L);
    CHECK(L.stacked && !ui_rect_visible(L.r[UI_R_TIMING]));
    ui_layout_compute(9, 200, &o, &L);
    CHECK(L.too_small);
}
