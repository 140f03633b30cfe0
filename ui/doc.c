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
    for (int i = 0; i < d->nblocks; i++) free(d->blocks[i].text);
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
    if (d->nlines == d->lcap) {
        int nc = d->lcap ? d->lcap * 2 : 256;
        ui_line *p = realloc(d->lines, (size_t)nc * sizeof *p);
        if (!p) return -1;
        d->lines = p;
        d->lcap = nc;
    }
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

/* Applies the block's height cap to its freshly wrapped lines. */
static void cap_lines(ui_doc *d, int bi)
{
    ui_block *b = &d->blocks[bi];
    int text0 = b->first_line + (b->gap && bi > 0 ? 1 : 0);
    int ntext = d->nlines - text0;
    if (b->max_lines < 2 || ntext <= b->max_lines) return;
    int keep = b->max_lines - 1;
    /* start keeps lines ordered by (block, start) for ui_doc_find */
    ui_line more = { (uint32_t)bi, d->lines[text0 + keep - 1].end, (uint32_t)(ntext - keep), 0,
                     UI_LINE_MORE };
    d->nlines = text0 + keep;
    push_line(d, more);
}

/* Wraps block bi from byte `from` onwards, its lines starting at d->nlines. */
static int wrap_block(ui_doc *d, int bi, size_t from)
{
    ui_block *b = &d->blocks[bi];
    struct emit_ctx c = { d, (uint32_t)bi, 0 };
    ui_wrap(b->text, from, b->len, d->width, UI_WRAP_WORD, b->final, emit_line, &c);
    cap_lines(d, bi);
    b->nlines = d->nlines - b->first_line;
    return c.oom ? -1 : 0;
}

static void rewrap_block_start(ui_doc *d, int bi)
{
    ui_block *b = &d->blocks[bi];
    d->nlines = b->first_line;
    if (b->gap && bi > 0) {
        ui_line gap = { (uint32_t)bi, 0, 0, 0, UI_LINE_GAP };
        push_line(d, gap);
    }
    wrap_block(d, bi, 0);
}

void ui_doc_set_width(ui_doc *d, int width)
{
    if (width < 1) width = 1;
    if (width == d->width) return;
    d->width = width;
    d->nlines = 0;
    for (int i = 0; i < d->nblocks; i++) {
        d->blocks[i].first_line = d->nlines;
        rewrap_block_start(d, i);
    }
}

/* Rewraps the last block from its last text line; a capped block is redone
 * whole. */
static int rewrap_tail(ui_doc *d)
{
    int bi = d->nblocks - 1;
    ui_block *b = &d->blocks[bi];
    int text0 = b->first_line + (b->gap && bi > 0 ? 1 : 0);
    if (b->max_lines || d->nlines <= text0) {
        rewrap_block_start(d, bi);
        return 0;
    }
    size_t from = d->lines[d->nlines - 1].start;
    d->nlines--;
    return wrap_block(d, bi, from);
}

static int reserve_text(ui_block *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return 0;
    size_t nc = b->cap ? b->cap : 64;
    while (nc < b->len + extra + 1) nc *= 2;
    char *p = realloc(b->text, nc);
    if (!p) return -1;
    b->text = p;
    b->cap = nc;
    return 0;
}

int ui_doc_add(ui_doc *d, int style, const char *text, size_t len, int gap, int max_lines)
{
    if (d->nblocks) ui_doc_finish(d);
    if (d->nblocks == d->bcap) {
        int nc = d->bcap ? d->bcap * 2 : 32;
        ui_block *p = realloc(d->blocks, (size_t)nc * sizeof *p);
        if (!p) return -1;
        d->blocks = p;
        d->bcap = nc;
    }
    ui_block *b = &d->blocks[d->nblocks];
    memset(b, 0, sizeof *b);
    b->style = style;
    b->gap = gap;
    b->max_lines = max_lines;
    if (reserve_text(b, len)) return -1;
    memcpy(b->text, text, len);
    b->len = len;
    b->text[len] = 0;
    b->first_line = d->nlines;
    d->nblocks++;
    rewrap_block_start(d, d->nblocks - 1);
    return d->nblocks - 1;
}

int ui_doc_append(ui_doc *d, const char *text, size_t len)
{
    if (!d->nblocks || !len) return 0;
    int bi = d->nblocks - 1;
    ui_block *b = &d->blocks[bi];
    if (reserve_text(b, len)) return -1;
    memcpy(b->text + b->len, text, len);
    b->len += len;
    b->text[b->len] = 0;
    return rewrap_tail(d);
}

void ui_doc_finish(ui_doc *d)
{
    if (!d->nblocks) return;
    ui_block *b = &d->blocks[d->nblocks - 1];
    if (b->final) return;
    b->final = 1;
    rewrap_tail(d);
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
