/* panel_title.c — the title rows panels share (panel.h): a title over the
 * token window the figures cover, and what a panel draws when the source
 * does not report its figures (an endpoint without the stats extension):
 * its title and a dim note instead of zeros. Apart from the table
 * (panels.c), which names every panel's draw function, since each panel
 * calls them. */
#include <stdio.h>
#include "draw.h"
#include "panel.h"

void ui_panel_window_title(ui_rect r, const char *name, int window)
{
    char title[96];
    if (window) snprintf(title, sizeof title, "%s, last %d tok\v%s, %d tok\v%s", name, window, name, window, name);
    else snprintf(title, sizeof title, "%s", name);
    ui_put_title(r, title, 0);
}

int ui_panel_unreported(ui_rect r, const ui_panel_in *in, unsigned fig, int have, const char *title)
{
    if (have || !(in->unreported & fig)) return 0;
    ui_put_title(r, title, 0);
    if (r.h > 1 && r.w > 2) ui_put(r.y + 1, r.x + 1, r.w - 2, ui_attr(UI_C_DIM), "not reported by this endpoint");
    return 1;
}
