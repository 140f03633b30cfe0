/* panel_spec.c — speculative decoding: tokens drafted and accepted in this
 * turn and the acceptance rate, with a bar; verify passes, the drafts each
 * kept on average, the tokens gained against plain decoding (estimated
 * from this turn's plain steps' mean time) and the drafts the cost gate
 * declined; the tokens of a verify pass are marked in the Timing panel's
 * sparkline and the router zoom. */
#include "draw.h"
#include "panel.h"

void ui_panel_spec(ui_rect r, const ui_panel_in *in)
{
    const ui_stats *st = in->stats;
    const ui_summary *s = in->sum;
    if (ui_panel_unreported(r, in, UI_FIG_SPEC, s->drafted > 0, "Speculation")) return;
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
        int n = ui_putf(y, x, w, ui_attr(UI_C_VALUE), "%s", lbl);
        if (w - n >= 4) ui_put_bar(y, x + n, w - n, rate, ui_attr(UI_C_BAR), ui_attr(UI_C_BAR_BG));
        y++;
    }
    /* what speculation bought: drafts kept per verify pass, and the tokens
     * made beyond what plain steps would have made in the passes' time */
    if (y < end && s->spec_passes && y + 1 < end) {
        char gained[48] = "";
        if (s->spec_gained > -1e300 && s->spec_gained != -1)
            snprintf(gained, sizeof gained, "%+.0f tok vs plain", s->spec_gained);
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "%llu passes, %.1f kept each%s%s, %llu declined\v"
                    "%.1f kept/pass%s%s, %llu declined\v%.1f kept/pass%s%s\v%s", (unsigned long long)s->spec_passes,
                    s->spec_mean_accepted, gained[0] ? ", " : "", gained, (unsigned long long)s->spec_declined,
                    s->spec_mean_accepted, gained[0] ? ", " : "", gained, (unsigned long long)s->spec_declined,
                    s->spec_mean_accepted, gained[0] ? ", " : "", gained, gained[0] ? gained : "");
    }
    if (y < end)
        ui_putf(y, x, w, ui_attr(UI_C_DIM), "drafts gave %llu of the turn's %d tokens\v"
                    "drafts gave %llu of %d tokens\v+%llu of %d tok",
                    (unsigned long long)s->accepted, s->tokens, (unsigned long long)s->accepted, s->tokens,
                    (unsigned long long)s->accepted, s->tokens);
}
