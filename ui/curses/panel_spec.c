/* panel_spec.c — speculative decoding: tokens drafted and accepted in this
 * turn and the acceptance rate, with a bar; the tokens of a verify pass are
 * marked in the Timing panel's sparkline and the router zoom. */
#include "draw.h"
#include "panel.h"

void ui_panel_spec(ui_rect r, const ui_panel_in *in)
{
    const ui_stats *st = in->stats;
    const ui_summary *s = in->sum;
    ui_put_title(r, "Speculation", 0);
    int x = r.x + 1, w = r.w - 2, y = r.y + 1, end = r.y + r.h;
    if (w <= 0 || !st->have_cur) return;
    if (!s->drafted) {
        if (y < end) ui_put_alt(y, x, w, ui_attr(UI_C_DIM), "no drafts this turn", "no drafts", (char *)NULL);
        return;
    }
    double rate = (double)s->accepted / (double)s->drafted;
    if (y < end) {
        char lbl[240];
        snprintf(lbl, sizeof lbl, "turn: %llu/%llu accepted %.0f%% \v%llu/%llu accepted %.0f%%\v%llu/%llu acc %.0f%%",
                 (unsigned long long)s->accepted, (unsigned long long)s->drafted, rate * 100,
                 (unsigned long long)s->accepted, (unsigned long long)s->drafted, rate * 100,
                 (unsigned long long)s->accepted, (unsigned long long)s->drafted, rate * 100);
        int n = ui_putf_alt(y, x, w, ui_attr(UI_C_VALUE), "%s", lbl);
        if (w - n >= 4) ui_put_bar(y, x + n, w - n, rate, ui_attr(UI_C_BAR), ui_attr(UI_C_BAR_BG));
        y++;
    }
    if (y < end)
        ui_putf_alt(y, x, w, ui_attr(UI_C_DIM), "drafts gave %llu of the turn's %d tokens\v"
                    "drafts gave %llu of %d tokens\v+%llu of %d tok",
                    (unsigned long long)s->accepted, s->tokens, (unsigned long long)s->accepted, s->tokens,
                    (unsigned long long)s->accepted, s->tokens);
}
