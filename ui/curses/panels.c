/* panels.c — the table of live panels (see panel.h). The order is the order
 * they stack in the panel column and sit in the band; a panel that takes the
 * rest (UI_PANEL_REST) gets the rows the others leave, is the first to go
 * when rows run short, and has no place in the band. A panel can be redrawn
 * less often than the others (`every`); after a layout change, and when a
 * turn starts or ends, all are drawn. */
#include "draw.h"
#include "panel.h"

/* The router map changes in nearly every cell from token to token: it was
 * 28 of the 33 KiB/s the panels wrote to the terminal at 10 redraws a
 * second (synthetic source, 50 tok/s, 120x40), so it is redrawn at half
 * the panels' rate. */
const ui_panel_class ui_panels[] = {
    /* name       pref_h          min_h  draw              every */
    { "timing",   8,              4,     ui_panel_timing,  1 },
    { "cache",    5,              3,     ui_panel_cache,   1 },
    { "io",       5,              3,     ui_panel_io,      1 },
    { "spec",     4,              2,     ui_panel_spec,    1 },
    { "router",   UI_PANEL_REST,  4,     ui_panel_router,  2 },
};
const int ui_npanels = (int)(sizeof ui_panels / sizeof ui_panels[0]);

_Static_assert(sizeof ui_panels / sizeof ui_panels[0] <= UI_PANELS_MAX, "raise UI_PANELS_MAX");

void ui_panels_fit(ui_panel_fit *fit)
{
    for (int i = 0; i < ui_npanels; i++) fit[i] = (ui_panel_fit){ ui_panels[i].pref_h, ui_panels[i].min_h };
}
