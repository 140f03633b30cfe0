/* panel_io.c — I/O bandwidth: spine and expert read rates over the recent
 * window, bytes read per token, and the latest token's achieved read rate
 * as a bar against the device's measured ceiling. */
#include "draw.h"
#include "panel.h"

void ui_panel_io(ui_rect r, const ui_panel_in *in)
{
    const ui_summary *s = in->sum;
    ui_put_title(r, "I/O", 0);
    int x = r.x + 1, w = r.w - 2, y = r.y + 1, end = r.y + r.h;
    if (w <= 0 || !s->tokens) return;
    char a[32], b[32];
    if (y < end) {
        ui_fmt_bytes(a, sizeof a, s->bytes_per_token);
        ui_putf(y++, x, w, ui_attr(UI_C_VALUE), "%s/tok  (%.3f GB/tok)", a, s->bytes_per_token / 1e9);
    }
    if (y < end) {
        ui_fmt_bytes(a, sizeof a, s->spine_bps);
        ui_fmt_bytes(b, sizeof b, s->expert_bps);
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "spine %s/s  expert %s/s", a, b);
    }
    if (y < end) {
        if (s->device_gbps > 0) {
            char lbl[48];
            int n = snprintf(lbl, sizeof lbl, " %.2f/%.1f GB/s", s->read_gbps, s->device_gbps);
            int bw = w - n;
            if (bw >= 4) ui_put_bar(y, x, bw, s->read_gbps / s->device_gbps,
                                    ui_attr(UI_C_BAR), ui_attr(UI_C_BAR_BG));
            ui_put(y, x + (bw >= 4 ? bw : 0), w - (bw >= 4 ? bw : 0), ui_attr(UI_C_TEXT), lbl);
        } else {
            ui_putf(y, x, w, ui_attr(UI_C_TEXT), "read %.2f GB/s (ceiling unknown)", s->read_gbps);
        }
        y++;
    }
}
