/* draw.h — writing to the screen: colours, symbols and clipped text.
 *
 * Everything that puts characters on the curses screen goes through these
 * helpers, which clip to a rectangle and never write past its right edge
 * (a wide glyph that does not fit is left out). Colours are a small set of
 * roles mapped to the 8 basic colours on the terminal's own background;
 * with NO_COLOR or a terminal without colours the roles become attributes
 * (bold, dim, reverse). Symbols have ASCII fallbacks for non-UTF-8 locales.
 */
#ifndef REMORA_UI_DRAW_H
#define REMORA_UI_DRAW_H

#include <ncursesw/curses.h>
#include "ui/layout.h"
#include "ui/text.h"

enum {
    UI_C_TEXT, UI_C_USER, UI_C_REASON, UI_C_NOTE, UI_C_ERROR, UI_C_MARK,
    UI_C_TITLE, UI_C_TITLE_FOCUS, UI_C_STATUS, UI_C_RULE, UI_C_DIM, UI_C_VALUE,
    UI_C_HEAT_NEW, UI_C_HEAT_REUSE, UI_C_HEAT_READ, UI_C_HEAT_FLIGHT, UI_C_BAR, UI_C_BAR_BG,
    UI_C_PH0, UI_C_PH1, UI_C_PH2, UI_C_PH3, UI_C_PH4,   /* timing phases */
    UI_C_SPEC_A, UI_C_SPEC_B,   /* tokens of a verify pass, alternating between passes */
    UI_C_COUNT
};

enum {
    UI_SYM_VLINE, UI_SYM_HLINE, UI_SYM_ELLIPSIS, UI_SYM_DOWN, UI_SYM_PROMPT,
    UI_SYM_SEP,     /* between the figures of a summary line: " · " */
    UI_SYM_COUNT
};

/* Sets up colour pairs (when color != 0) and the attribute of every role. */
void ui_theme_init(int color);
attr_t ui_attr(int role);
const char *ui_sym(int sym);
/* Level glyphs: sparkline (8 levels) and heat (5 levels, 0 = blank). */
const char *ui_spark(int level);
const char *ui_heat(int level);

/* Blanks a rectangle. */
void ui_fill(ui_rect r, attr_t a);
/* Draws one glyph at (y, x) if it fits before column `right`; returns the
 * columns it took (0 if left out). */
int ui_put_glyph(int y, int x, int right, const ui_glyph *g, attr_t a);
/* Draws UTF-8 text at (y, x), clipped to `maxw` columns, ending with an
 * ellipsis when cut; returns columns used. Newlines draw as blanks. */
int ui_put(int y, int x, int maxw, attr_t a, const char *s);
/* Draws the first of the texts (a NULL-ended list, longest wording first:
 * short labels next, the least useful field dropped after) that fits in
 * `maxw` columns; only when none does is the last one cut. This is how the
 * panels avoid cutting a value at small sizes. Returns columns used. */
int ui_put_alt(int y, int x, int maxw, attr_t a, ...) __attribute__((sentinel));
/* Formatted text, clipped as ui_put; the text may hold shorter wordings
 * after '\v' separators, chosen as ui_put_alt chooses. */
int ui_putf(int y, int x, int maxw, attr_t a, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A horizontal bar of `w` cells filled to fraction f (0..1). */
void ui_put_bar(int y, int x, int w, double f, attr_t on, attr_t off);
/* A panel's title row: " Title " in the title colour, the rest a rule.
 * The title may hold shorter wordings after '\v' (ui_putf). */
void ui_put_title(ui_rect r, const char *title, int focused);

#endif
