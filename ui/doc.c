/* doc.c — blocks of styled text and their wrapped lines (see doc.h). */
#include <stdlib.h>
#include <string.h>
#include "doc.h"
#include "wrap.h"

void ui_doc_init(ui_doc *d, int width)
{
    memset(d, 0, sizeof *d);
    d->width = width > 0 ? width : 1;
}

void ui_doc_clear(ui_doc *d)
{
    for (int i = 0; i < d->nblocks; i++) rm_buf_free(&d->blocks[i].text);
    d->nblocks = 0;
    d->nlines = 0;
}

void ui_doc_free(ui_doc *d)
{
    ui_doc_clear(d);
    free(d->blocks);
    free(d->lines);
    memset(d, 0, sizeof *d);
}

static int push_line(ui_doc *d, ui_line l)
{
    if (RM_GROW(d->lines, d->lcap, d->nlines + 1)) return -1;
    d->lines[d->nlines++] = l;
    return 0;
}

struct emit_ctx { ui_doc *d; uint32_t block; int oom; };

static void emit_line(void *ud, size_t a, size_t b, int w)
{
    struct emit_ctx *c = ud;
    ui_line l = { c->block, (uint32_t)a, (uint32_t)b, (uint16_t)(w > 65535 ? 65535 : w), UI_LINE_TEXT };
    if (push_line(c->d, l)) c->oom = 1;
}

/* Text lines (as '\n' separates them) that start at or after byte `from`. */
static uint32_t lines_from(const ui_block *b, size_t from)
{
    uint32_t n = 0;
    const char *p = b->text.p, *end = p + b->text.len;
    for (const char *q = p + from; q < end; q++) {
        if (q == p + from && from > 0 && q[-1] != '\n') continue;   /* inside a shown line */
        if (q == p + from || q[-1] == '\n') n++;
    }
    return n;
}

/* Applies the block's height cap to its freshly wrapped lines. */
static int cap_lines(ui_doc *d, int bi)
{
    ui_block *b = &d->blocks[bi];
    int text0 = b->first_line + (b->gap && bi > 0 ? 1 : 0);
    int ntext = d->nlines - text0;
    if (d->unfold || b->max_lines < 2 || ntext <= b->max_lines) return 0;
    int keep = b->max_lines - 1;
    uint32_t cut = d->lines[text0 + keep - 1].end;
    /* start keeps lines ordered by (block, start) for ui_doc_find */
    ui_line more = { (uint32_t)bi, cut, lines_from(b, cut), 0, UI_LINE_MORE };
    d->nlines = text0 + keep;
    return push_line(d, more);
}

void ui_doc_set_head(ui_doc *d, int b, int bytes)
{
    if (b >= 0 && b < d->nblocks) d->blocks[b].head = bytes;
}


/* Wraps block bi from byte `from` onwards, its lines starting at d->nlines. */
static int wrap_block(ui_doc *d, int bi, size_t from)
{
    ui_block *b = &d->blocks[bi];
    struct emit_ctx c = { d, (uint32_t)bi, 0 };
    ui_wrap(b->text.p, from, b->text.len, d->width, UI_WRAP_WORD, b->final, emit_line, &c);
    int rc = cap_lines(d, bi);
    b->nlines = d->nlines - b->first_line;
    return c.oom || rc ? -1 : 0;
}

static int rewrap_block_start(ui_doc *d, int bi)
{
    ui_block *b = &d->blocks[bi];
    d->nlines = b->first_line;
    if (b->gap && bi > 0) {
        ui_line gap = { (uint32_t)bi, 0, 0, 0, UI_LINE_GAP };
        if (push_line(d, gap)) return -1;
    }
    return wrap_block(d, bi, 0);
}

static int rewrap_all(ui_doc *d)
{
    d->nlines = 0;
    int rc = 0;
    for (int i = 0; i < d->nblocks; i++) {
        d->blocks[i].first_line = d->nlines;
        if (rewrap_block_start(d, i)) rc = -1;
    }
    return rc;
}

int ui_doc_set_width(ui_doc *d, int width)
{
    if (width < 1) width = 1;
    if (width == d->width) return 0;
    d->width = width;
    return rewrap_all(d);
}

int ui_doc_set_unfold(ui_doc *d, int on)
{
    if (d->unfold == !!on) return 0;
    d->unfold = !!on;
    return rewrap_all(d);
}

/* Rewraps the last block from its last text line; a capped block is redone
 * whole. */
static int rewrap_tail(ui_doc *d)
{
    int bi = d->nblocks - 1;
    ui_block *b = &d->blocks[bi];
    int text0 = b->first_line + (b->gap && bi > 0 ? 1 : 0);
    if (b->max_lines || d->nlines <= text0) return rewrap_block_start(d, bi);
    size_t from = d->lines[d->nlines - 1].start;
    d->nlines--;
    return wrap_block(d, bi, from);
}

int ui_doc_add(ui_doc *d, int style, const char *text, size_t len, int gap, int max_lines)
{
    int rc = d->nblocks ? ui_doc_finish(d) : 0;
    if (RM_GROW(d->blocks, d->bcap, d->nblocks + 1)) return -1;
    ui_block *b = &d->blocks[d->nblocks];
    memset(b, 0, sizeof *b);
    b->style = style;
    b->gap = gap;
    b->max_lines = max_lines;
    if (rm_buf_add(&b->text, text, len)) { rm_buf_free(&b->text); return -1; }
    b->first_line = d->nlines;
    d->nblocks++;
    if (rewrap_block_start(d, d->nblocks - 1) || rc) return -1;
    return d->nblocks - 1;
}

int ui_doc_append(ui_doc *d, const char *text, size_t len)
{
    if (!d->nblocks || !len) return 0;
    ui_block *b = &d->blocks[d->nblocks - 1];
    if (rm_buf_add(&b->text, text, len)) return -1;
    return rewrap_tail(d);
}

int ui_doc_finish(ui_doc *d)
{
    if (!d->nblocks) return 0;
    ui_block *b = &d->blocks[d->nblocks - 1];
    if (b->final) return 0;
    b->final = 1;
    return rewrap_tail(d);
}

int ui_doc_find(const ui_doc *d, int b, size_t off)
{
    int lo = 0, hi = d->nlines - 1, ans = 0;
    /* Lines are ordered by (block, start): binary search the last <= target. */
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const ui_line *l = &d->lines[mid];
        int le = (int)l->block < b || ((int)l->block == b && l->start <= off);
        if (le) { ans = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return ans;
}
