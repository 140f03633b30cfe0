/* panel_io.c — I/O bandwidth: bytes read per token and the spine and
 * expert read rates over the last tokens (over the prompt so far before the
 * first token, with what the pass in progress has read), and the latest
 * achieved read rate as a bar against the device's ceiling (the median of
 * the probe at start-up), labelled with how long it was measured; with a
 * GPU computing, the rate of what is copied to it. */
#include <stdio.h>
#include "draw.h"
#include "panel.h"

void ui_panel_io(ui_rect r, const ui_panel_in *in)
{
    const ui_summary *s = in->sum;
    ui_panel_window_title(r, "I/O", s->window);
    int x = r.x + 1, w = r.w - 2, y = r.y + 1, end = r.y + r.h;
    if (w <= 0 || (!s->window && s->prompt_state == UI_PROMPT_NONE)) return;
    char a[32], b[32];
    if (y < end && s->window) {
        rm_fmt_bytes(a, sizeof a, s->bytes_per_token);
        ui_putf(y++, x, w, ui_attr(UI_C_VALUE), "%s/tok  (%.3f GB/tok)\v%s/tok", a, s->bytes_per_token / 1e9, a);
    } else if (y < end) {
        const rm_prompt_figures *p = &s->prompt;
        rm_fmt_bytes(a, sizeof a, (double)p->chunk_bytes_read);
        rm_fmt_bytes(b, sizeof b, (double)(p->chunk_bytes_read + p->chunk_bytes_left));
        if (s->prompt_state == UI_PROMPT_RUNNING)
            ui_putf(y++, x, w, ui_attr(UI_C_VALUE), "pass %d: read %s of ~%s\vread %s of ~%s\vread %s",
                        p->chunk + 1, a, b, a, b, a);
        else {
            rm_fmt_bytes(a, sizeof a, (double)s->prompt_bytes);
            ui_putf(y++, x, w, ui_attr(UI_C_VALUE), "prompt read %s\vread %s", a, a);
        }
    }
    if ((in->unreported & UI_FIG_STORAGE) && s->spine_bps + s->expert_bps <= 0) {
        /* an endpoint's figures: the bytes are the network's */
        if (y < end) {
            rm_fmt_bytes(a, sizeof a, s->bytes_per_token * s->tok_per_s);
            ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "network %s/s", a);
        }
        if (y < end) ui_put(y, x, w, ui_attr(UI_C_DIM), "storage not reported by this endpoint");
        return;
    }
    if (y < end) {
        const ui_bytes_text sp = ui_fmt_bytes_both(s->spine_bps), ex = ui_fmt_bytes_both(s->expert_bps);
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "spine %s/s  expert %s/s\vspine %s/s exp %s/s\vsp %s ex %s/s\vexp %s/s",
                    sp.full, ex.full, sp.brief, ex.brief, sp.brief, ex.brief, ex.brief);
    }
    if (y < end && (s->gpu_in_bps > 0 || s->vram_resident)) {    /* a GPU computes: what it was sent */
        rm_fmt_bytes(a, sizeof a, s->gpu_in_bps);
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "to the GPU %s/s\vGPU %s/s", a, a);
    }
    double ceiling = in->device_gbps > 0 ? in->device_gbps : s->device_gbps;
    if (y < end) {
        if (ceiling > 0) {
            char lbl[48];
            int n = snprintf(lbl, sizeof lbl, " %.2f/%.1f GB/s", s->read_gbps, ceiling);
            int bw = w - n;
            if (bw >= 4) ui_put_bar(y, x, bw, s->read_gbps / ceiling,
                                    ui_attr(UI_C_BAR), ui_attr(UI_C_BAR_BG));
            ui_put(y, x + (bw >= 4 ? bw : 0), w - (bw >= 4 ? bw : 0), ui_attr(UI_C_TEXT), lbl);
        } else {
            ui_putf(y, x, w, ui_attr(UI_C_TEXT), "read %.2f GB/s (ceiling unknown)\vread %.2f GB/s", s->read_gbps,
                        s->read_gbps);
        }
        y++;
    }
    if (y < end && ceiling > 0) {
        if (in->probe_seconds > 0)
            ui_putf(y, x, w, ui_attr(UI_C_DIM), "ceiling: median of a %.1f s probe\vceiling: %.1f s probe\v"
                        "%.1f s probe", in->probe_seconds, in->probe_seconds, in->probe_seconds);
        else
            ui_put_alt(y, x, w, ui_attr(UI_C_DIM), "ceiling: the engine's figure", "engine's ceiling", (char *)NULL);
    }
}
