/* panel.h — the live panels fed by the engine's per-token statistics.
 *
 * Each panel draws itself into its rectangle from the UI's statistics (the
 * first row is its title); rows that do not fit are left out, most important
 * first, so a panel degrades gracefully as the terminal shrinks. Panels only
 * read ui_stats and ui_summary; they hold no state of their own.
 */
#ifndef REMORA_UI_PANEL_H
#define REMORA_UI_PANEL_H

#include "ui/layout.h"
#include "ui/stats.h"

typedef struct ui_router_view {
    int zoom;           /* show one layer over recent tokens */
    int layer;          /* the zoomed MoE layer (index into route_ids) */
} ui_router_view;

void ui_panel_timing(ui_rect r, const ui_stats *st, const ui_summary *sum);
void ui_panel_cache(ui_rect r, const ui_stats *st, const ui_summary *sum);
void ui_panel_io(ui_rect r, const ui_stats *st, const ui_summary *sum);
void ui_panel_spec(ui_rect r, const ui_stats *st, const ui_summary *sum);
void ui_panel_router(ui_rect r, const ui_stats *st, const ui_router_view *v);

#endif
