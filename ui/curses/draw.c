/* draw.c — colours, symbols and clipped text output (see draw.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "draw.h"

static attr_t g_attr[UI_C_COUNT];

/* Role -> foreground colour (-1: default) and attributes. */
static const struct { short fg; attr_t attr; attr_t mono; } roles[UI_C_COUNT] = {
    [UI_C_TEXT]        = { -1, 0, 0 },
    [UI_C_USER]        = { COLOR_CYAN, A_BOLD, A_BOLD },
    [UI_C_REASON]      = { COLOR_BLUE, 0, A_DIM },
    [UI_C_NOTE]        = { COLOR_GREEN, 0, A_DIM },
    [UI_C_ERROR]       = { COLOR_RED, A_BOLD, A_BOLD },
    [UI_C_MARK]        = { COLOR_YELLOW, A_BOLD, A_REVERSE },
    [UI_C_TITLE]       = { -1, A_BOLD, A_BOLD },
    [UI_C_TITLE_FOCUS] = { COLOR_YELLOW, A_BOLD, A_BOLD | A_UNDERLINE },
    [UI_C_STATUS]      = { -1, A_REVERSE, A_REVERSE },
    [UI_C_RULE]        = { -1, A_DIM, A_DIM },
    [UI_C_DIM]         = { -1, A_DIM, A_DIM },
    [UI_C_VALUE]       = { -1, A_BOLD, A_BOLD },
    [UI_C_HEAT_NEW]    = { COLOR_YELLOW, 0, 0 },
    [UI_C_HEAT_REUSE]  = { COLOR_GREEN, A_BOLD, A_BOLD },
    [UI_C_HEAT_READ]   = { COLOR_RED, A_BOLD, A_REVERSE },
    [UI_C_HEAT_FLIGHT] = { COLOR_CYAN, 0, A_UNDERLINE },
    [UI_C_BAR]         = { COLOR_GREEN, 0, A_REVERSE },
    [UI_C_BAR_BG]      = { -1, A_DIM, A_DIM },
    [UI_C_PH0]         = { COLOR_RED, 0, 0 },
    [UI_C_PH1]         = { COLOR_CYAN, 0, A_BOLD },
    [UI_C_PH2]         = { COLOR_MAGENTA, 0, 0 },
    [UI_C_PH3]         = { COLOR_GREEN, 0, A_BOLD },
    [UI_C_PH4]         = { COLOR_YELLOW, 0, 0 },
    [UI_C_SPEC_A]      = { COLOR_MAGENTA, 0, A_UNDERLINE },
    [UI_C_SPEC_B]      = { COLOR_MAGENTA, A_BOLD, A_UNDERLINE | A_BOLD },
};

void ui_theme_init(int color)
{
    short bg = -1;
    if (color && use_default_colors() == ERR) bg = COLOR_BLACK;
    for (int i = 0; i < UI_C_COUNT; i++) {
        if (!color) { g_attr[i] = roles[i].mono; continue; }
        g_attr[i] = roles[i].attr;
        if (roles[i].fg >= 0 || bg != -1) {
            short fg = roles[i].fg >= 0 ? roles[i].fg : (bg == -1 ? -1 : COLOR_WHITE);
            init_pair((short)(i + 1), fg, bg);
            g_attr[i] |= COLOR_PAIR(i + 1);
        }
    }
}

attr_t ui_attr(int role) { return role >= 0 && role < UI_C_COUNT ? g_attr[role] : 0; }

const char *ui_sym(int sym)
{
    static const char *utf8[UI_SYM_COUNT] = { "│", "─", "…", "▼", "›", " · " };
    static const char *ascii[UI_SYM_COUNT] = { "|", "-", "~", "v", ">", " | " };
    return (ui_text_utf8() ? utf8 : ascii)[sym];
}

const char *ui_spark(int level)
{
    static const char *utf8[8] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
    static const char *ascii[8] = { "_", ".", "-", "=", "+", "*", "#", "@" };
    if (level < 0) level = 0;
    if (level > 7) level = 7;
    return (ui_text_utf8() ? utf8 : ascii)[level];
}

const char *ui_heat(int level)
{
    static const char *utf8[5] = { " ", "░", "▒", "▓", "█" };
    static const char *ascii[5] = { " ", ".", ":", "+", "#" };
    if (level < 0) level = 0;
    if (level > 4) level = 4;
    return (ui_text_utf8() ? utf8 : ascii)[level];
}

void ui_fill(ui_rect r, attr_t a)
{
    if (!ui_rect_visible(r)) return;
    attrset(a);
    for (int y = r.y; y < r.y + r.h; y++)
        mvhline(y, r.x, ' ', r.w);
    attrset(A_NORMAL);
}

int ui_put_glyph(int y, int x, int right, const ui_glyph *g, attr_t a)
{
    if (g->kind == UI_GLYPH_SPACE) {
        int w = g->width;
        if (x + w > right) w = right - x;
        if (w <= 0) return 0;
        attrset(a);
        mvhline(y, x, ' ', w);
        return w;
    }
    if (g->kind != UI_GLYPH_TEXT || x + g->width > right) return 0;
    /* The colour pair goes in the cell itself; and a cell without one takes
     * the window's current pair and attributes, so set those too (without
     * both, a line's first word took the colour drawn just before it). */
    attrset(a);
    int xx = x;
    for (int i = 0; i < g->ncells; i++) {
        cchar_t cc;
        if (setcchar(&cc, g->cell[i], a & ~A_COLOR, (short)PAIR_NUMBER(a), NULL) == OK)
            mvadd_wch(y, xx, &cc);
        xx += g->cell_width[i];
    }
    return g->width;
}

int ui_put(int y, int x, int maxw, attr_t a, const char *s)
{
    if (maxw <= 0) return 0;
    size_t n = strlen(s), pos = 0;
    int total = ui_text_width(s, n);
    int limit = maxw;
    const char *ell = ui_sym(UI_SYM_ELLIPSIS);
    int ellw = ui_text_width(ell, strlen(ell));
    if (total > maxw) limit = maxw - ellw;
    int col = 0;
    ui_glyph g;
    while (ui_glyph_next(s + pos, n - pos, 1, &g)) {
        pos += g.len;
        if (g.kind == UI_GLYPH_NEWLINE) { g.kind = UI_GLYPH_SPACE; g.width = 1; }
        if (g.kind == UI_GLYPH_EMPTY) continue;
        if (col + g.width > limit) break;
        col += ui_put_glyph(y, x + col, x + limit, &g, a);
    }
    if (total > maxw && limit >= 0) {
        attrset(a);
        mvaddstr(y, x + col, ell);
        col += ellw;
    }
    attrset(A_NORMAL);
    return col;
}

int ui_put_alt(int y, int x, int maxw, attr_t a, ...)
{
    va_list ap;
    va_start(ap, a);
    const char *t, *last = "";
    while ((t = va_arg(ap, const char *))) {
        last = t;
        if (ui_text_width(t, strlen(t)) <= maxw) break;
    }
    va_end(ap);
    return ui_put(y, x, maxw, a, last);
}

/* The first of the '\v'-separated texts in s that fits, else the last. */
static int put_choice(int y, int x, int maxw, attr_t a, char *s)
{
    char *t = s;
    for (;;) {
        char *v = strchr(t, '\v');
        if (v) *v = 0;
        if (!v || ui_text_width(t, strlen(t)) <= maxw) return ui_put(y, x, maxw, a, t);
        t = v + 1;
    }
}

int ui_putf(int y, int x, int maxw, attr_t a, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return put_choice(y, x, maxw, a, buf);
}

void ui_put_bar(int y, int x, int w, double f, attr_t on, attr_t off)
{
    if (w <= 0) return;
    if (f < 0) f = 0;
    if (f > 1) f = 1;
    int full = (int)(f * w + 0.5);
    const char *fill = ui_text_utf8() ? "█" : "#";
    attrset(on);
    for (int i = 0; i < full; i++) mvaddstr(y, x + i, fill);
    attrset(off);
    for (int i = full; i < w; i++) mvaddstr(y, x + i, ui_text_utf8() ? "░" : "-");
    attrset(A_NORMAL);
}

void ui_put_title(ui_rect r, const char *title, int focused)
{
    if (!ui_rect_visible(r)) return;
    attrset(ui_attr(UI_C_RULE));
    for (int x = r.x; x < r.x + r.w; x++) mvaddstr(r.y, x, ui_sym(UI_SYM_HLINE));
    char buf[512];
    snprintf(buf, sizeof buf, "%s", title);
    put_choice(r.y, r.x + 1, r.w - 2, ui_attr(focused ? UI_C_TITLE_FOCUS : UI_C_TITLE), buf);
    attrset(A_NORMAL);
}
