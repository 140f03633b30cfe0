/* pane.c — scrolling and drawing of a transcript pane (see pane.h). */
#include <stdio.h>
#include <string.h>
#include "draw.h"
#include "pane.h"

void ui_pane_init(ui_pane *p, const char *title)
{
    ui_doc_init(&p->doc, 40);
    p->title = title;
    p->top = 0;
    p->follow = 1;
    p->view_h = 1;
    p->unseen = 0;
    p->mark_block = -1;
}

void ui_pane_free(ui_pane *p) { ui_doc_free(&p->doc); }

static int max_top(const ui_pane *p)
{
    int m = p->doc.nlines - p->view_h;
    return m > 0 ? m : 0;
}

/* First visible line. */
static int top_line(const ui_pane *p) { return p->follow ? max_top(p) : p->top; }

int ui_pane_resize(ui_pane *p, ui_rect r)
{
    int rc;
    int h = r.h - 1, w = r.w - 1;   /* the last column is for the scroll marker */
    if (h < 1) h = 1;
    if (w < 1) w = 1;
    if (w != p->doc.width && !p->follow && p->doc.nlines > 0) {
        const ui_line *l = &p->doc.lines[p->top < p->doc.nlines ? p->top : p->doc.nlines - 1];
        int block = (int)l->block;
        size_t off = l->start;
        rc = ui_doc_set_width(&p->doc, w);
        p->top = ui_doc_find(&p->doc, block, off);
    } else {
        rc = ui_doc_set_width(&p->doc, w);
    }
    p->view_h = h;
    if (!p->follow && p->top > max_top(p)) p->top = max_top(p);
    return rc;
}

void ui_pane_scroll(ui_pane *p, int lines)
{
    int top = top_line(p) + lines;
    if (top < 0) top = 0;
    if (top >= max_top(p)) { ui_pane_end(p); return; }
    p->top = top;
    p->follow = 0;
}

void ui_pane_page(ui_pane *p, int pages)
{
    int step = p->view_h > 2 ? p->view_h - 1 : 1;
    ui_pane_scroll(p, pages * step);
}

void ui_pane_home(ui_pane *p)
{
    p->top = 0;
    p->follow = max_top(p) == 0;
}

void ui_pane_show_line(ui_pane *p, int line)
{
    int top = line - p->view_h / 3;
    if (top > max_top(p)) top = max_top(p);
    if (top < 0) top = 0;
    p->top = top;
    p->follow = 0;
}

void ui_pane_end(ui_pane *p)
{
    p->follow = 1;
    p->unseen = 0;
}

void ui_pane_changed(ui_pane *p)
{
    if (!p->follow && p->doc.nlines > p->top + p->view_h) p->unseen = 1;
}

static void draw_line(const ui_pane *p, const ui_line *l, int y, int x, int w, ui_role_fn role)
{
    const ui_doc *d = &p->doc;
    if (l->kind == UI_LINE_GAP) return;
    const ui_block *b = &d->blocks[l->block];
    attr_t a = ui_attr(role(b->style));
    if (l->kind == UI_LINE_MORE) {
        size_t bytes = b->text.len - (size_t)b->head;
        const char *e = ui_sym(UI_SYM_ELLIPSIS);
        if (l->end)
            ui_putf(y, x, w, ui_attr(UI_C_DIM), "%s %u more line%s (%zu bytes in all; Alt-O opens)\v"
                        "%s %u more line%s (%zu bytes in all)\v%s %u more line%s (Alt-O opens)\v%s %u more line%s", e, l->end,
                        l->end == 1 ? "" : "s", bytes, e, l->end, l->end == 1 ? "" : "s", bytes, e, l->end,
                        l->end == 1 ? "" : "s", e, l->end, l->end == 1 ? "" : "s");
        else
            ui_putf(y, x, w, ui_attr(UI_C_DIM), "%s the rest of the line (%zu bytes in all; Alt-O opens)\v"
                        "%s the rest of the line (Alt-O opens)\v%s the rest of the line", e, bytes, e, e);
        return;
    }
    size_t pos = l->start;
    int col = 0;
    ui_glyph g;
    int marked = p->mark_block == (int)l->block;
    while (pos < l->end && ui_glyph_next(b->text.p + pos, l->end - pos, b->final, &g)) {
        size_t at = pos;
        pos += g.len;
        if (g.kind == UI_GLYPH_NEWLINE || g.kind == UI_GLYPH_EMPTY) continue;
        if (col + g.width > w) break;
        int in_mark = marked && at >= p->mark_start && at < p->mark_end;
        ui_put_glyph(y, x + col, x + w, &g, in_mark ? a | A_REVERSE : a);
        col += g.width;
    }
}

/* The tail row: a bar of 8 to 24 cells, then the label that leaves room
 * for it. */
static void draw_tail(const ui_pane_tail *t, int y, int x, int w)
{
    const char *label = t->label;
    int lw = ui_text_width(label, strlen(label));
    if (t->short_label && w - lw - 1 < 8) {
        label = t->short_label;
        lw = ui_text_width(label, strlen(label));
    }
    int col = 0, bw = w - lw - 1 < 24 ? w - lw - 1 : 24;
    if (t->frac >= 0 && bw >= 8) {
        ui_put_bar(y, x, bw, t->frac, ui_attr(UI_C_BAR), ui_attr(UI_C_BAR_BG));
        col = bw + 1;
    }
    ui_put(y, x + col, w - col, ui_attr(UI_C_MARK), label);
}

void ui_pane_draw(const ui_pane *p, ui_rect r, int focused, ui_role_fn role, const ui_pane_tail *tail)
{
    if (!ui_rect_visible(r)) return;
    ui_fill(r, A_NORMAL);
    char title[256];
    int top = top_line(p);
    /* following, the view ends one row earlier so that the tail shows */
    if (tail && p->follow && top > 0 && p->doc.nlines - top >= p->view_h) top++;
    if (p->follow || p->doc.nlines <= p->view_h)
        snprintf(title, sizeof title, "%s", p->title);
    else
        snprintf(title, sizeof title, "%s  [%d/%d]%s\v%s  [%d/%d]%s\v%s [%d/%d]", p->title, top + p->view_h,
                 p->doc.nlines, p->unseen ? "  new output below (Alt-End)" : "", p->title, top + p->view_h,
                 p->doc.nlines, p->unseen ? "  new below" : "", p->title, top + p->view_h, p->doc.nlines);
    ui_put_title(r, title, focused);
    int i = 0;
    for (; i < r.h - 1; i++) {
        int li = top + i;
        if (li >= p->doc.nlines) break;
        draw_line(p, &p->doc.lines[li], r.y + 1 + i, r.x, r.w, role);
    }
    if (tail && i < r.h - 1 && top + i == p->doc.nlines) draw_tail(tail, r.y + 1 + i, r.x, r.w - 1);
    if (p->unseen && !p->follow)
        ui_put(r.y + r.h - 1, r.x + r.w - 2, 2, ui_attr(UI_C_MARK), ui_sym(UI_SYM_DOWN));
}
