/* layout.h — where everything goes on the screen, as a pure function.
 *
 * ui_layout_compute() turns the terminal size, the user's view options and
 * the heights the live panels ask for into rectangles: status line, answer
 * and reasoning panes (side by side, or stacked on narrow terminals), the
 * live panels (a column on wide terminals, a band under the panes on medium
 * ones, nothing on small ones) and the input area. It draws nothing and has
 * no state, so tests can check every size for overlaps and off-screen
 * rectangles. A rectangle with h == 0 or w == 0 is hidden.
 *
 * The panels themselves are not known here: the front end passes their
 * heights in table order (ui/curses/panels.c) and gets one rectangle per
 * panel back, in the same order.
 */
#ifndef REMORA_UI_LAYOUT_H
#define REMORA_UI_LAYOUT_H

#define UI_MIN_ROWS 10
#define UI_MIN_COLS 40
#define UI_PANELS_MAX 8

typedef struct ui_rect { int y, x, h, w; } ui_rect;

enum {
    UI_R_STATUS,
    UI_R_ANSWER,
    UI_R_SEP,           /* vertical rule between answer and reasoning */
    UI_R_REASONING,
    UI_R_PSEP,          /* vertical rule left of the panel column */
    UI_R_INPUT,         /* its first row is the hint/rule row */
    UI_R_COUNT
};

/* pref_h of a panel that takes the rows the others leave in the column. */
#define UI_PANEL_REST 0

/* The rows one panel asks for, its title row included. In the column a
 * panel gets pref_h rows, or fewer down to min_h when rows run short; a
 * UI_PANEL_REST panel gets what is left, when that is at least min_h. The
 * band shows the panels of fixed height side by side. */
typedef struct ui_panel_fit {
    int pref_h, min_h;
} ui_panel_fit;

typedef struct ui_layout_opts {
    int reasoning_hidden;
    int panels_hidden;
    int input_rows;     /* rows the input text wants (>= 1) */
    const ui_panel_fit *panels;     /* in stacking order */
    int npanels;                    /* at most UI_PANELS_MAX */
} ui_layout_opts;

typedef struct ui_layout {
    int rows, cols;
    int too_small;      /* below UI_MIN_ROWS x UI_MIN_COLS: every rect hidden */
    int stacked;        /* reasoning above the answer instead of beside it */
    int band;           /* panels in a band under the panes */
    ui_rect r[UI_R_COUNT];
    ui_rect panel[UI_PANELS_MAX];   /* one per ui_layout_opts.panels entry */
} ui_layout;

void ui_layout_compute(int rows, int cols, const ui_layout_opts *o, ui_layout *out);
int  ui_rect_visible(ui_rect r);
const char *ui_layout_name(int region);

#endif
