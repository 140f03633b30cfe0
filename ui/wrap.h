/* wrap.h — breaking UTF-8 text into display lines.
 *
 * Word wrap for the transcript panes (break after blanks, a word wider than
 * the line is cut at a grapheme boundary) and character wrap for the input
 * line. Both walk ui_glyph_next(), so a line's measured width is what gets
 * drawn. A '\n' ends a line and is not part of it; a trailing '\n' does not
 * open an empty line until text follows it, which is what streaming wants.
 */
#ifndef REMORA_UI_WRAP_H
#define REMORA_UI_WRAP_H

#include <stddef.h>

enum { UI_WRAP_WORD, UI_WRAP_CHAR };

/* Called once per line with its byte range [a, b) and width in columns. */
typedef void (*ui_wrap_emit)(void *ud, size_t a, size_t b, int width);

/* Wraps s[start..n) at `width` columns (>= 1). With final == 0 a truncated
 * UTF-8 tail is left out (it is not drawn either). */
void ui_wrap(const char *s, size_t start, size_t n, int width, int mode, int final,
             ui_wrap_emit emit, void *ud);

#endif
