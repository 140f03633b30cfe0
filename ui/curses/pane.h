/* pane.h — a scrollable transcript pane (answer or reasoning).
 *
 * A pane draws the visible slice of its document into a rectangle whose
 * first row is the title. It follows the tail while the user has not
 * scrolled; once the user scrolls up it stays where it is as text streams in
 * (showing a "new output" marker) until End or scrolling to the bottom turns
 * following back on. Across a rewrap (resize) the first visible line keeps
 * showing the same text.
 */
#ifndef REMORA_UI_PANE_H
#define REMORA_UI_PANE_H

#include "ui/doc.h"
#include "ui/layout.h"

typedef struct ui_pane {
    ui_doc  doc;
    const char *title;
    int     top;            /* first visible line when not following */
    int     follow;
    int     view_h;         /* text rows at the last layout */
    int     unseen;         /* text arrived below the view since scrolling */
    int     mark_block;     /* /find's match, drawn reversed: block (-1 none) and bytes */
    size_t  mark_start, mark_end;
} ui_pane;

/* Styles of a block map to colour roles. */
typedef int (*ui_role_fn)(int style);

/* A row drawn after the document while there is something to say where
 * the next text will appear (the prompt's progress): a bar filled to
 * `frac` (none when frac < 0) and a label after it, or the short label
 * when the long one leaves too little room for the bar. */
typedef struct ui_pane_tail {
    double      frac;
    const char *label, *short_label;
} ui_pane_tail;

void ui_pane_init(ui_pane *p, const char *title);
void ui_pane_free(ui_pane *p);
/* Applies a new rectangle (rewraps on width change, keeps the view).
 * Returns 0, or -1 when the rewrap ran out of memory. */
int  ui_pane_resize(ui_pane *p, ui_rect r);
void ui_pane_scroll(ui_pane *p, int lines);     /* negative = up */
void ui_pane_page(ui_pane *p, int pages);
void ui_pane_home(ui_pane *p);
void ui_pane_end(ui_pane *p);
/* Scrolls so that `line` shows a third of the way down, and stops following. */
void ui_pane_show_line(ui_pane *p, int line);
/* Call after appending to the document. */
void ui_pane_changed(ui_pane *p);
/* tail may be NULL. */
void ui_pane_draw(const ui_pane *p, ui_rect r, int focused, ui_role_fn role, const ui_pane_tail *tail);

#endif
