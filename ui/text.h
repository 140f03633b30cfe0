/* text.h — how UTF-8 text becomes screen cells.
 *
 * One function, ui_glyph_next(), decides for every grapheme cluster what is
 * drawn and how many columns it takes. Word wrapping, the input line and the
 * pane renderer all go through it, so what is measured is exactly what is
 * drawn. Clusters are segmented with utf8proc; widths are those of libc's
 * wcwidth() (the function ncurses uses to advance the cursor), and a code
 * point on which wcwidth and utf8proc disagree is drawn as U+FFFD so the
 * terminal, ncurses and our layout cannot drift apart (the full list of
 * rules opens text.c).
 */
#ifndef REMORA_UI_TEXT_H
#define REMORA_UI_TEXT_H

#include <stddef.h>
#include <wchar.h>

enum {
    UI_GLYPH_TEXT,          /* drawn cells */
    UI_GLYPH_SPACE,         /* breakable blank, `width` columns */
    UI_GLYPH_NEWLINE,       /* paragraph break, no columns */
    UI_GLYPH_EMPTY          /* consumes bytes, draws nothing */
};

#define UI_GLYPH_CELLS 2    /* a flag is two regional-indicator cells */
#define UI_CELL_CHARS  5    /* ncurses CCHARW_MAX: base + 4 combining */

typedef struct ui_glyph {
    size_t  len;            /* bytes consumed */
    int     kind;
    int     width;          /* display columns */
    int     ncells;
    wchar_t cell[UI_GLYPH_CELLS][UI_CELL_CHARS + 1];   /* NUL-terminated */
    int     cell_width[UI_GLYPH_CELLS];
} ui_glyph;

/* Chooses between UTF-8 drawing and the ASCII fallback (non-UTF-8 locale),
 * where every non-ASCII cluster is drawn as '?'. */
void ui_text_set_utf8(int on);
int  ui_text_utf8(void);

/* Decodes the glyph at s[0..n). Returns 1 and fills *g, or 0 when n == 0 or
 * when s ends inside a UTF-8 sequence and `final` is 0 (more bytes are on
 * their way). Invalid bytes and, when final, truncated tails become U+FFFD. */
int ui_glyph_next(const char *s, size_t n, int final, ui_glyph *g);

/* Display width of s[0..n) on one line (newlines count 0). */
int ui_text_width(const char *s, size_t n);

/* Length of the longest prefix of s[0..n) that does not end inside a UTF-8
 * sequence. */
size_t ui_utf8_complete(const char *s, size_t n);

#endif
