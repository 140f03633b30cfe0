/* panels.c — the table of live panels (see panel.h). The order is the order
 * they stack in the panel column and sit in the band; a panel that takes the
 * rest (UI_PANEL_REST) gets the rows the others leave, is the first to go
 * when rows run short, and has no place in the band. A panel can be redrawn
 * less often than the others (`every`); after a layout change, and when a
 * turn starts or ends, all are drawn. Each record holds its panel's legend,
 * which the help page (overlay.c) lists under the record's title and the
 * man page's PANELS says again. */
#include "draw.h"
#include "panel.h"

/* The router map changes in nearly every cell from token to token: it was
 * 28 of the 33 KiB/s the panels wrote to the terminal at 10 redraws a
 * second (synthetic source, 50 tok/s, 120x40), so it is redrawn at half
 * the panels' rate. */
const ui_panel_class ui_panels[] = {
    { .name = "timing", .pref_h = 8, .min_h = 4, .draw = ui_panel_timing, .every = 1, .title = "Timing",
      .legend = (const ui_legend_item[]){
          { "last med p90", "the last token's time; median and 90th percentile per token", UI_C_VALUE },
          { "tok/s", "tokens per second over the turn", UI_C_VALUE },
          { "ctx reused pref", "the prompt: tokens in the context, already computed by earlier turns, "
                               "computed now (and how long it took)", UI_C_VALUE },
          { "▁▃▅█", "recent token times, taller is slower", UI_C_BAR },
          { "▁▃▅█ magenta", "tokens of one speculative verify pass (they share its time)", UI_C_SPEC_A },
          { "io", "phase: waiting for storage", UI_C_PH0 },
          { "spine", "phase: norms, projections, router, shared experts", UI_C_PH1 },
          { "attn", "phase: attention", UI_C_PH2 },
          { "exp", "phase: routed experts", UI_C_PH3 },
          { "head", "phase: the output head", UI_C_PH4 },
          { 0 } } },
    { .name = "cache", .pref_h = 5, .min_h = 3, .draw = ui_panel_cache, .every = 1, .title = "Cache",
      .legend = (const ui_legend_item[]){
          { "hit", "expert-cache hit rate over the turn (and the last token)", UI_C_VALUE },
          { "kept", "share of all experts resident in RAM now", UI_C_VALUE },
          { "cache / storage", "bytes per token served from the cache, and read from storage", UI_C_VALUE },
          { "spine, experts", "how full the resident spine and the expert cache are", UI_C_BAR },
          { 0 } } },
    { .name = "io", .pref_h = 5, .min_h = 3, .draw = ui_panel_io, .every = 1, .title = "I/O",
      .legend = (const ui_legend_item[]){
          { "kB/tok", "storage (or network) bytes read per token", UI_C_VALUE },
          { "spine, experts", "read rates over the window", UI_C_VALUE },
          { "GB/s bar", "the last token's read rate against the storage ceiling (measured at start-up)", UI_C_BAR },
          { 0 } } },
    { .name = "spec", .pref_h = 4, .min_h = 2, .draw = ui_panel_spec, .every = 1, .title = "Speculation",
      .legend = (const ui_legend_item[]){
          { "drafted accepted", "n-gram draft tokens proposed and accepted this turn; the acceptance rate",
            UI_C_VALUE },
          { 0 } } },
    { .name = "router", .pref_h = UI_PANEL_REST, .min_h = 4, .draw = ui_panel_router, .every = 2, .title = "Router",
      .legend = (const ui_legend_item[]){
          { "░▒▓█", "how many of the experts chosen for the last token fall in a cell (one row per MoE "
                    "layer, numbered as the model's layers)", UI_C_TEXT },
          { "green", "experts the previous token chose too (reuse: what the cache lives on)", UI_C_HEAT_REUSE },
          { "yellow", "experts newly chosen", UI_C_HEAT_NEW },
          { "red", "a chosen expert was read from storage for this token (a cache miss)", UI_C_HEAT_READ },
          { "cyan", "a chosen expert was in flight: its read had started before (a prefetch)", UI_C_HEAT_FLIGHT },
          { "reuse", "share of a token's choices the token before made too (verify-pass pairs left out)",
            UI_C_VALUE },
          { "F4", "zoom on one layer: its choices over recent tokens (Alt-Up, Alt-Down: the layer)", UI_C_VALUE },
          { 0 } } },
};
const int ui_npanels = (int)(sizeof ui_panels / sizeof ui_panels[0]);

_Static_assert(sizeof ui_panels / sizeof ui_panels[0] <= UI_PANELS_MAX, "raise UI_PANELS_MAX");

void ui_panels_fit(ui_panel_fit *fit)
{
    for (int i = 0; i < ui_npanels; i++) fit[i] = (ui_panel_fit){ ui_panels[i].pref_h, ui_panels[i].min_h };
}
