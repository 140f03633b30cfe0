/* layout.h — where everything goes on the screen, as a pure function.
 *
 * ui_layout_compute() turns the terminal size and the user's view options
 * into rectangles: status line, answer and reasoning panes (side by side, or
 * stacked on narrow terminals), the live panels (a column on wide terminals,
 * a band under the panes on medium ones, nothing on small ones) and the input
 * area. It draws nothing and has no state, so tests can check every size for
 * overlaps and off-screen rectangles. A rectangle with h == 0 or w == 0 is
 * hidden.
 */
#ifndef REMORA_UI_LAYOUT_H
#define REMORA_UI_LAYOUT_H

#define UI_MIN_ROWS 10
#define UI_MIN_COLS 40

typedef struct ui_rect { int y, x, h, w; } ui_rect;

enum {
    UI_R_STATUS,
    UI_R_ANSWER,
    UI_R_SEP,           /* vertical rule between answer and reasoning */
    UI_R_REASONING,
    UI_R_PSEP,          /* vertical rule left of the panel column */
    UI_R_TIMING,
    UI_R_CACHE,
    UI_R_IO,
    UI_R_SPEC,
    UI_R_ROUTER,
    UI_R_INPUT,         /* its first row is the hint/rule row */
    UI_R_COUNT
};

typedef struct ui_layout_opts {
    int reasoning_hidden;
    int panels_hidden;
    int input_rows;     /* rows the input text wants (>= 1) */
} ui_layout_opts;

typedef struct ui_layout {
    int rows, cols;
    int too_small;      /* below UI_MIN_ROWS x UI_MIN_COLS: every rect hidden */
    int stacked;        /* reasoning above the answer instead of beside it */
    int band;           /* panels in a band under the panes */
    ui_rect r[UI_R_COUNT];
} ui_layout;

void ui_layout_compute(int rows, int cols, const ui_layout_opts *o, ui_layout *out);
int  ui_rect_visible(ui_rect r);
const char *ui_layout_name(int region);

#endif
