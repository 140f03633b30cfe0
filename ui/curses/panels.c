/* panels.c — the table of live panels (see panel.h). The order is the order
 * they stack in the panel column and sit in the band; a panel that takes the
 * rest (UI_PANEL_REST) gets the rows the others leave, is the first to go
 * when rows run short, and has no place in the band. */
#include "draw.h"
#include "panel.h"

const ui_panel_class ui_panels[] = {
    /* name       pref_h          min_h  draw */
    { "timing",   7,              4,     ui_panel_timing },
    { "cache",    5,              3,     ui_panel_cache },
    { "io",       5,              3,     ui_panel_io },
    { "spec",     3,              2,     ui_panel_spec },
    { "router",   UI_PANEL_REST,  4,     ui_panel_router },
};
const int ui_npanels = (int)(sizeof ui_panels / sizeof ui_panels[0]);

_Static_assert(sizeof ui_panels / sizeof ui_panels[0] <= UI_PANELS_MAX, "raise UI_PANELS_MAX");

void ui_panels_fit(ui_panel_fit *fit)
{
    for (int i = 0; i < ui_npanels; i++) fit[i] = (ui_panel_fit){ ui_panels[i].pref_h, ui_panels[i].min_h };
}

int ui_panel_unreported(ui_rect r, const ui_panel_in *in, unsigned fig, int have, const char *title)
{
    if (have || !(in->unreported & fig)) return 0;
    ui_put_title(r, title, 0);
    if (r.h > 1 && r.w > 2) ui_put(r.y + 1, r.x + 1, r.w - 2, ui_attr(UI_C_DIM), "not reported by this endpoint");
    return 1;
}
