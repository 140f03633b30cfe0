/* test_layout.c — the pure layout (ui/layout.c) over every terminal size
 * from 1x1 to 260x80 and every view option with the real panel table
 * (ui/curses/panels.c): nothing off-screen, nothing overlapping, the
 * essential regions present, "too small" exactly below the minimum; and the
 * table-driven panel placement: heights shrink to their minimums in order,
 * a panel that takes the rest goes first, a sixth panel needs only a row. */
#include <stdio.h>
#include <string.h>
#include "tests/unit/test.h"
#include "ui/layout.h"
#include "ui/curses/panel.h"

static int overlap(ui_rect a, ui_rect b)
{
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/* Every rectangle of a layout, fixed regions first, then the panels. */
enum { NRECT = UI_R_COUNT + UI_PANELS_MAX };

static ui_rect rect_of(const ui_layout *L, int i)
{
    return i < UI_R_COUNT ? L->r[i] : L->panel[i - UI_R_COUNT];
}

static const char *name_of(int i)
{
    static char buf[4][32];
    static int k;
    if (i < UI_R_COUNT) return ui_layout_name(i);
    char *b = buf[k++ & 3];
    snprintf(b, sizeof buf[0], "panel %d (%s)", i - UI_R_COUNT,
             i - UI_R_COUNT < ui_npanels ? ui_panels[i - UI_R_COUNT].name : "?");
    return b;
}

static ui_layout_opts table_opts(int reasoning_hidden, int panels_hidden, int input_rows)
{
    static ui_panel_fit fit[UI_PANELS_MAX];
    ui_panels_fit(fit);
    return (ui_layout_opts){ reasoning_hidden, panels_hidden, input_rows, fit, ui_npanels };
}

static int panel_index(const char *name)
{
    for (int i = 0; i < ui_npanels; i++)
        if (!strcmp(ui_panels[i].name, name)) return i;
    return -1;
}

TEST(ui_layout_all_sizes)
{
    int bad = 0;
    for (int rows = 1; rows <= 80 && bad < 10; rows++)
    for (int cols = 1; cols <= 260 && bad < 10; cols++)
    for (int opt = 0; opt < 12; opt++) {
        ui_layout_opts o = table_opts(opt & 1, (opt >> 1) & 1, (int[]){ 1, 3, 20 }[opt >> 2 < 3 ? opt >> 2 : 0]);
        ui_layout L;
        ui_layout_compute(rows, cols, &o, &L);
        int small = rows < UI_MIN_ROWS || cols < UI_MIN_COLS;
        if (L.too_small != small) { bad++; CHECKF(0, "%dx%d too_small=%d", cols, rows, L.too_small); }
        for (int i = 0; i < NRECT; i++) {
            ui_rect r = rect_of(&L, i);
            if (!ui_rect_visible(r)) continue;
            if (small) { bad++; CHECKF(0, "%dx%d: %s visible while too small", cols, rows, name_of(i)); }
            if (r.x < 0 || r.y < 0 || r.x + r.w > cols || r.y + r.h > rows) {
                bad++;
                CHECKF(0, "%dx%d opt %d: %s off-screen (%d,%d %dx%d)", cols, rows, opt,
                       name_of(i), r.x, r.y, r.w, r.h);
            }
            for (int j = i + 1; j < NRECT; j++)
                if (ui_rect_visible(rect_of(&L, j)) && overlap(r, rect_of(&L, j))) {
                    bad++;
                    CHECKF(0, "%dx%d opt %d: %s overlaps %s", cols, rows, opt, name_of(i), name_of(j));
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
        for (int i = 0; i < ui_npanels; i++)
            if (o.panels_hidden && ui_rect_visible(L.panel[i])) { bad++; CHECK(0); }
    }
}

TEST(ui_layout_tiers)
{
    ui_layout_opts o = table_opts(0, 0, 1);
    const int timing = panel_index("timing"), router = panel_index("router");
    REQUIRE(timing >= 0 && router >= 0);
    ui_layout L;
    ui_layout_compute(40, 120, &o, &L);
    CHECK(!L.band && !L.stacked && ui_rect_visible(L.panel[router]) && ui_rect_visible(L.panel[timing]));
    ui_layout_compute(24, 80, &o, &L);
    CHECK(L.band && ui_rect_visible(L.panel[timing]) && !ui_rect_visible(L.panel[router]));
    ui_layout_compute(60, 200, &o, &L);
    CHECK(ui_rect_visible(L.panel[router]) && L.panel[router].h > 20);
    ui_layout_compute(12, 50, &o, &L);
    CHECK(L.stacked && !ui_rect_visible(L.panel[timing]));
    ui_layout_compute(9, 200, &o, &L);
    CHECK(L.too_small);
}

/* The column at 120 columns: body rows = rows - status - hint - input. */
static void column_heights(int rows, const ui_panel_fit *fit, int n, int *h)
{
    ui_layout_opts o = { 0, 0, 1, fit, n };
    ui_layout L;
    ui_layout_compute(rows, 120, &o, &L);
    for (int i = 0; i < n; i++) h[i] = L.panel[i].h;
}

TEST(ui_layout_panel_column_from_the_table)
{
    /* figures like the table's: 6+5+5+3 fixed rows and a rest panel of 4+ */
    const ui_panel_fit fit[] = { { 6, 4 }, { 5, 3 }, { 5, 3 }, { 3, 2 }, { UI_PANEL_REST, 4 } };
    int h[5];
    column_heights(40, fit, 5, h);          /* 37 body rows: all preferred, rest 18 */
    CHECK(h[0] == 6 && h[1] == 5 && h[2] == 5 && h[3] == 3 && h[4] == 18);
    column_heights(26, fit, 5, h);          /* 23 = 19 + 4: no shrinking yet */
    CHECK(h[0] == 6 && h[1] == 5 && h[2] == 5 && h[3] == 3 && h[4] == 4);
    column_heights(25, fit, 5, h);          /* one row short: the one with most to spare gives */
    CHECK(h[0] == 5 && h[1] == 5 && h[2] == 5 && h[3] == 3 && h[4] == 4);
    column_heights(19, fit, 5, h);          /* 16 body rows = 4+3+3+2 + 4: all at minimum */
    CHECK(h[0] == 4 && h[1] == 3 && h[2] == 3 && h[3] == 2 && h[4] == 4);
    column_heights(18, fit, 5, h);          /* one row fewer: the rest panel goes first */
    CHECK(h[0] == 4 && h[1] == 3 && h[2] == 3 && h[3] == 2 && h[4] == 0);
    /* the table's figures: these, but for a Timing panel of 8 rows (the
     * prompt's accounting and the whole turn's speed have rows of their own) and a Speculation panel of
     * 4 (what the passes bought has one) */
    ui_panel_fit real[UI_PANELS_MAX], want[5];
    memcpy(want, fit, sizeof want);
    want[0].pref_h = 8;
    want[3].pref_h = 4;
    ui_panels_fit(real);
    REQUIRE(ui_npanels == 5);
    for (int i = 0; i < 5; i++) CHECK(real[i].pref_h == want[i].pref_h && real[i].min_h == want[i].min_h);
}

TEST(ui_layout_sixth_panel_is_one_row)
{
    /* a sixth panel of fixed height takes its place in the column and in the
     * band; two rest panels share what is left */
    const ui_panel_fit fit[] = { { 6, 4 }, { 5, 3 }, { 5, 3 }, { 3, 2 }, { UI_PANEL_REST, 4 }, { 4, 2 } };
    ui_layout_opts o = { 0, 0, 1, fit, 6 };
    ui_layout L;
    ui_layout_compute(40, 120, &o, &L);
    CHECK(L.panel[5].h == 4 && L.panel[4].h == 14 && L.panel[5].y == L.panel[4].y + L.panel[4].h);
    ui_layout_compute(24, 80, &o, &L);
    CHECK(L.band && ui_rect_visible(L.panel[5]) && !ui_rect_visible(L.panel[4]));
    CHECK(L.panel[5].x + L.panel[5].w == 80 && L.panel[0].w == (80 - 4) / 5);
    const ui_panel_fit two[] = { { 6, 4 }, { UI_PANEL_REST, 4 }, { UI_PANEL_REST, 4 } };
    ui_layout_opts o2 = { 0, 0, 1, two, 3 };
    ui_layout_compute(40, 120, &o2, &L);    /* 37 rows: 6, then 15 and 16 */
    CHECK(L.panel[0].h == 6 && L.panel[1].h == 15 && L.panel[2].h == 16);
}
