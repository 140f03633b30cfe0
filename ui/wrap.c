/* wrap.c — greedy line breaking over glyphs (see wrap.h).
 *
 * Greedy breaking has the property the streaming panes rely on: a line's end
 * depends only on the text up to the glyph that overflowed it, so appending
 * text can only change the last line, and rewrapping from the start of the
 * last line is enough.
 */
#include "text.h"
#include "wrap.h"

void ui_wrap(const char *s, size_t start, size_t n, int width, int mode, int final,
             ui_wrap_emit emit, void *ud)
{
    if (width < 1) width = 1;
    size_t pos = start, line = start;
    int w = 0;
    size_t brk = 0;     /* byte after the last blank on this line, 0 = none */
    int brk_w = 0;
    ui_glyph g;
    while (pos < n && ui_glyph_next(s + pos, n - pos, final, &g)) {
        if (g.kind == UI_GLYPH_NEWLINE) {
            emit(ud, line, pos, w);
            pos += g.len;
            line = pos; w = 0; brk = 0;
            continue;
        }
        if (g.kind == UI_GLYPH_EMPTY) { pos += g.len; continue; }
        if (w + g.width > width && pos > line) {
            if (g.kind == UI_GLYPH_SPACE && mode == UI_WRAP_WORD) {
                /* The blank that overflows is swallowed by the break. */
                emit(ud, line, pos, w);
                pos += g.len;
                line = pos; w = 0; brk = 0;
                continue;
            }
            if (mode == UI_WRAP_WORD && brk > line) {
                emit(ud, line, brk, brk_w);
                line = brk;
                w -= brk_w;
                brk = 0;
                if (w + g.width <= width || pos == line) goto place;
            }
            emit(ud, line, pos, w);
            line = pos; w = 0; brk = 0;
        }
place:
        pos += g.len;
        w += g.width;
        if (g.kind == UI_GLYPH_SPACE) { brk = pos; brk_w = w; }
    }
    if (pos > line) emit(ud, line, pos, w);
}
