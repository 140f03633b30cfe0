/* panel.h — the live panels fed by the engine's per-token statistics.
 *
 * A panel is one record of the table in panels.c (htop's MeterClass): its
 * name, the rows it asks of the layout (preferred and minimum, its title row
 * included), its draw function and its legend (the help page's lines on its
 * figures and colours). Every panel draws with the same
 * signature into its rectangle from the UI's statistics; the first row is
 * its title, and rows that do not fit are left out, most important first,
 * so a panel degrades gracefully as the terminal shrinks. Panels only read
 * what they are given; they hold no state of their own.
 *
 * A new panel is one file defining its draw function, its name on the
 * declaration line below, and one record of the table.
 */
#ifndef REMORA_UI_PANEL_H
#define REMORA_UI_PANEL_H

#include "ui/layout.h"
#include "ui/source.h"
#include "ui/stats.h"

typedef struct ui_router_view {
    int zoom;           /* show one layer over recent tokens */
    int layer;          /* the zoomed MoE layer (index into route_ids) */
} ui_router_view;

/* What every panel may read. */
typedef struct ui_panel_in {
    const ui_stats       *stats;
    const ui_summary     *sum;
    const ui_router_view *router;
    int                   route_layer0, model_layers;  /* router rows as model layers (ui_source) */
    double                probe_seconds;    /* how long the storage ceiling was measured (0: not) */
    double                device_gbps;      /* the median the probe found (0: the records' figure) */
    unsigned              unreported;   /* UI_FIG_* the source may not report (ui_source) */
} ui_panel_in;

/* Draws a panel into a visible rectangle r. */
typedef void ui_panel_draw_fn(ui_rect r, const ui_panel_in *in);

ui_panel_draw_fn ui_panel_timing, ui_panel_cache, ui_panel_io, ui_panel_spec, ui_panel_router;

/* One line of a panel's legend: a term as the panel shows it, what it
 * means, and the colour the term is drawn in (a sample of the panel's). */
typedef struct ui_legend_item {
    const char *term, *what;
    int         role;                   /* UI_C_* */
} ui_legend_item;

typedef struct ui_panel_class {
    const char           *name;
    int                   pref_h, min_h;    /* rows; pref_h UI_PANEL_REST: the rest */
    ui_panel_draw_fn     *draw;
    int                   every;            /* redrawn on every `every`-th panel redraw (1: each) */
    const char           *title;            /* the legend's heading */
    const ui_legend_item *legend;           /* ends with a NULL term */
} ui_panel_class;

/* The panels in stacking order (panels.c). */
extern const ui_panel_class ui_panels[];
extern const int ui_npanels;

/* The title "NAME, last W tok" (shorter forms where it does not fit), or
 * NAME when there is no window yet (panel_title.c). */
void ui_panel_window_title(ui_rect r, const char *name, int window);

/* For a panel whose figures (fig, UI_FIG_*) the source may not report:
 * when it has none (!have), draws the title and "not reported by this
 * endpoint" and returns 1, so the panel draws no zeros. */
int ui_panel_unreported(ui_rect r, const ui_panel_in *in, unsigned fig, int have, const char *title);

/* Fills fit[0 .. ui_npanels) with the table's heights, for the layout. */
void ui_panels_fit(ui_panel_fit *fit);

#endif
