/* doc.h — the text model behind a transcript pane.
 *
 * A document is a list of styled blocks of UTF-8 (a user message, an answer,
 * a note) and the display lines they wrap to at the pane's width. Text is
 * only ever appended to the last block, the streaming one; an append rewraps
 * from the start of that block's last line, so the cost of a token does not
 * grow with the length of the conversation. A block may cap its height
 * (long pasted prompts): it is folded, and its last shown line says how
 * many lines of its text (not wrapped rows) and bytes it holds; unfolding
 * the document shows every block whole. Every call that adds text or lines returns -1 when
 * it runs out of memory; the caller must say so, as the document then
 * lacks text or lines.
 */
#ifndef REMORA_UI_DOC_H
#define REMORA_UI_DOC_H

#include <stddef.h>
#include <stdint.h>
#include "engine.h"

enum { UI_LINE_TEXT, UI_LINE_GAP, UI_LINE_MORE };

typedef struct ui_line {
    uint32_t block;
    uint32_t start, end;    /* byte range in the block; MORE: end = text lines hidden */
    uint16_t width;
    uint8_t  kind;
} ui_line;

typedef struct ui_block {
    int     style;
    rm_buf  text;           /* text.p, text.len */
    int     gap;            /* blank line before the block */
    int     max_lines;      /* 0 = unlimited */
    int     head;           /* bytes of a prefix that is not the block's text (the "› " of a message) */
    int     final;          /* no more appends: a truncated tail becomes U+FFFD */
    int     first_line, nlines;
} ui_block;

typedef struct ui_doc {
    ui_block *blocks;
    int       nblocks, bcap;
    ui_line  *lines;
    int       nlines, lcap;
    int       width;
    int       unfold;       /* capped blocks are shown whole */
} ui_doc;

void ui_doc_init(ui_doc *d, int width);
void ui_doc_free(ui_doc *d);
void ui_doc_clear(ui_doc *d);
/* Adds a block (finishing the previous one). Returns its index or -1 (OOM). */
int  ui_doc_add(ui_doc *d, int style, const char *text, size_t len, int gap, int max_lines);
/* Appends to the last block. Returns 0, or -1 when out of memory. */
int  ui_doc_append(ui_doc *d, const char *text, size_t len);
/* Marks the last block complete. Returns 0, or -1 when out of memory. */
int  ui_doc_finish(ui_doc *d);
/* Sets the prefix bytes of block b (see ui_block.head). */
void ui_doc_set_head(ui_doc *d, int b, int bytes);
/* Shows capped blocks whole (on) or folded again. Returns 0, or -1 as
 * ui_doc_set_width. */
int  ui_doc_set_unfold(ui_doc *d, int on);
/* Rewraps everything when the width changes. Returns 0, or -1 when out of
 * memory (lines are missing until the next successful rewrap). */
int  ui_doc_set_width(ui_doc *d, int width);
/* Index of the first line showing block `b` at or after byte `off`, or the
 * last line before it; used to keep the scroll position across rewraps. */
int  ui_doc_find(const ui_doc *d, int b, size_t off);

#endif
