/* panel_timing.c — per-token timing: the last token's time and the median
 * and p90 over the last UI_WINDOW tokens, throughput over the turn, the
 * prompt's accounting (context, reused, prefilled), a sparkline of recent
 * token times with the tokens of one speculative verify pass marked, the
 * whole turn's tokens per second (ui_stats_turn_rates) when rows allow, and
 * the split of time by phase as a stacked bar with a legend. While the
 * prompt is processed the panel shows its progress and the prompt's phase
 * split instead; after a stopped prompt, what was done. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "draw.h"
#include "panel.h"

static const char *phase_names[RM_PHASE_COUNT] = { "io", "spine", "attn", "exp", "head" };

/* One bar per token, taller is slower; the tokens of a verify pass share
 * its time, so they are drawn in the pass colours, alternating between
 * passes so that where one ends and the next begins shows. */
static void sparkline(int y, int x, int w, const ui_stats *st)
{
    double t[UI_HIST];
    int pass[UI_HIST];
    int n = ui_stats_times(st, t, pass, w < UI_HIST ? w : UI_HIST);
    double max = 0;
    for (int i = 0; i < n; i++) if (t[i] > max) max = t[i];
    int parity = 0;
    for (int i = 0; i < n; i++) {
        int level = max > 0 ? (int)(t[i] / max * 7.0 + 0.5) : 0;
        if (pass[i] && (i == 0 || pass[i] != pass[i - 1])) parity = !parity;
        attrset(ui_attr(!pass[i] ? UI_C_BAR : parity ? UI_C_SPEC_A : UI_C_SPEC_B));
        mvaddstr(y, x + w - n + i, ui_spark(level));
    }
    attrset(A_NORMAL);
}

/* The whole turn's speed, oldest on the left, taller is faster (the
 * opposite of the recent-token sparkline, so it says "tok/s" first). */
static void turn_rates(int y, int x, int w, const ui_stats *st)
{
    const char *lbl = "tok/s ";
    int lw = (int)strlen(lbl);
    if (w - lw < 8) return;
    double r[UI_TURN_BUCKETS];
    int n = ui_stats_turn_rates(st, r, w - lw < UI_TURN_BUCKETS ? w - lw : UI_TURN_BUCKETS);
    double max = 0;
    for (int i = 0; i < n; i++) if (r[i] > max) max = r[i];
    ui_put(y, x, lw, ui_attr(UI_C_DIM), lbl);
    attrset(ui_attr(UI_C_VALUE));
    for (int i = 0; i < n; i++) mvaddstr(y, x + lw + i, ui_spark(max > 0 ? (int)(r[i] / max * 7.0 + 0.5) : 0));
    attrset(A_NORMAL);
}

static void phase_bar(int y, int x, int w, const ui_summary *s)
{
    int col = 0;
    double acc = 0;
    for (int p = 0; p < RM_PHASE_COUNT; p++) {
        acc += s->phase_frac[p];
        int end = p == RM_PHASE_COUNT - 1 ? w : (int)(acc * w + 0.5);
        attrset(ui_attr(UI_C_PH0 + p) | A_REVERSE);
        for (; col < end && col < w; col++) mvaddch(y, x + col, (chtype)phase_names[p][0]);
    }
    attrset(A_NORMAL);
}

/* The phases' shares: with their names, then short names, then only the
 * three largest. */
static void phase_legend(int y, int x, int w, const ui_summary *s, const char *what)
{
    static const char *shortn[RM_PHASE_COUNT] = { "io", "sp", "at", "ex", "hd" };
    char full[160], brief[120], top[80];
    int lf = what ? snprintf(full, sizeof full, "%s:", what) : 0, lb = 0, lt = 0;
    for (int p = 0; p < RM_PHASE_COUNT; p++) {
        lf += snprintf(full + lf, sizeof full - (size_t)lf, "%s%s %.0f%%", lf ? " " : "", phase_names[p],
                       s->phase_frac[p] * 100);
        lb += snprintf(brief + lb, sizeof brief - (size_t)lb, "%s%s%.0f", lb ? " " : "", shortn[p],
                       s->phase_frac[p] * 100);
    }
    int order[RM_PHASE_COUNT];
    for (int p = 0; p < RM_PHASE_COUNT; p++) order[p] = p;
    for (int i = 1; i < RM_PHASE_COUNT; i++)
        for (int j = i; j > 0 && s->phase_frac[order[j]] > s->phase_frac[order[j - 1]]; j--) {
            int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
    for (int i = 0; i < 3; i++)
        lt += snprintf(top + lt, sizeof top - (size_t)lt, "%s%s%.0f", lt ? " " : "", shortn[order[i]],
                       s->phase_frac[order[i]] * 100);
    ui_put_alt(y, x, w, ui_attr(UI_C_DIM), full, brief, top, (char *)NULL);
}

/* Draws text on one row; else the first of the shorter wordings `alt`
 * ('\v'-separated, may be NULL) whose first one fits (it drops only the
 * least useful field), so the panel keeps its rows for other figures; else
 * on two rows split at the ", " nearest its middle when a second row is
 * there; returns the next row. */
static int put_split(int y, int x, int w, int end, attr_t a, const char *text, const char *alt)
{
    size_t n = strlen(text);
    if (ui_text_width(text, n) <= w) { ui_put(y, x, w, a, text); return y + 1; }
    size_t one = alt ? strcspn(alt, "\v") : 0;
    if (alt && (ui_text_width(alt, one) <= w || y + 1 >= end)) {
        ui_putf(y, x, w, a, "%s\v%s", text, alt);
        return y + 1;
    }
    if (y + 1 >= end) {
        ui_put(y, x, w, a, text);
        return y + 1;
    }
    const char *best = NULL;
    for (const char *c = strstr(text, ", "); c; c = strstr(c + 1, ", "))
        if (!best || labs((long)(c - text) - (long)n / 2) < labs((long)(best - text) - (long)n / 2)) best = c;
    if (!best) { ui_put(y, x, w, a, text); return y + 1; }
    char first[200];
    snprintf(first, sizeof first, "%.*s,", (int)(best - text), text);
    ui_put(y, x, w, a, first);
    ui_put(y + 1, x, w, a, best + 2);
    return y + 2;
}

/* Whether any phase figure came (an endpoint without the stats extension
 * reports none). */
static int phases_known(const ui_summary *s)
{
    for (int p = 0; p < RM_PHASE_COUNT; p++) if (s->phase_frac[p] > 0) return 1;
    return 0;
}

/* Before the first token: the prompt's progress, or how it ended. */
static void prompt_rows(int y, int x, int w, int end, const ui_summary *s, int no_phases)
{
    char buf[200], alt[200] = "";
    const rm_prompt_figures *p = &s->prompt;
    if (s->prompt_state == UI_PROMPT_NONE) {
        if (y < end) ui_put_alt(y, x, w, ui_attr(UI_C_DIM), "waiting for the prompt", "waiting", (char *)NULL);
        return;
    }
    if (s->prompt_state == UI_PROMPT_RUNNING) {
        char eta[32];
        ui_fmt_eta(eta, sizeof eta, p->eta);
        const double pc = 100 * ui_prompt_fraction(p);
        if (y < end)
            ui_putf(y++, x, w, ui_attr(UI_C_VALUE), "prompt %.0f%% of the work, %d tok\vprompt %.0f%% of the work\v"
                    "%.0f%% of the work\v%.0f%%", pc, p->total, pc, pc, pc);
        if (y < end) ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "ETA %s", eta);
        snprintf(buf, sizeof buf, "pass %d/%d, layer %d/%d, ctx %d, %d reused", p->chunk + 1,
                 p->chunks > 0 ? p->chunks : 1, p->layer, p->layers, p->ctx, p->reused);
        snprintf(alt, sizeof alt, "pass %d/%d, layer %d/%d\vpass %d/%d", p->chunk + 1, p->chunks > 0 ? p->chunks : 1,
                 p->layer, p->layers, p->chunk + 1, p->chunks > 0 ? p->chunks : 1);
    } else {
        ui_fmt_prompt(buf, sizeof buf, s);
        if (p->tok_per_s > 0) {
            size_t l = strlen(buf);
            snprintf(buf + l, sizeof buf - l, ", %.0f tok/s", p->tok_per_s);
        }
    }
    int role = s->prompt_state == UI_PROMPT_STOPPED ? UI_C_MARK : UI_C_TEXT;
    if (y < end) y = put_split(y, x, w, end - y >= 4 ? y + 2 : y + 1, ui_attr(role), buf, alt[0] ? alt : NULL);
    if (y < end && no_phases) {
        ui_put(y, x, w, ui_attr(UI_C_DIM), "phases not reported by this endpoint");
        return;
    }
    if (y < end) phase_bar(y++, x, w, s);
    if (y < end) phase_legend(y, x, w, s, "prompt");
}

void ui_panel_timing(ui_rect r, const ui_panel_in *in)
{
    const ui_stats *st = in->stats;
    const ui_summary *s = in->sum;
    /* the window of the per-token figures; turn-wide ones say "turn" */
    ui_panel_window_title(r, "Timing", s->window);
    int x = r.x + 1, w = r.w - 2, y = r.y + 1, end = r.y + r.h;
    if (w <= 0) return;
    if (!s->window) {
        prompt_rows(y, x, w, end, s, (in->unreported & UI_FIG_PHASES) && !phases_known(s));
        return;
    }
    /* One unit for the three figures, chosen by the largest. */
    double scale = s->p90 >= 1 ? 1 : 1e3;
    const char *unit = s->p90 >= 1 ? "s" : "ms";
    if (y < end)
        ui_putf(y++, x, w, ui_attr(UI_C_VALUE),
                    "last %.1f  med %.1f  p90 %.1f %s\vlast %.1f med %.1f p90 %.1f%s\vmed %.1f p90 %.1f %s\v"
                    "med %.0f p90 %.0f %s\vp90 %.0f %s",
                    s->last * scale, s->median * scale, s->p90 * scale, unit,
                    s->last * scale, s->median * scale, s->p90 * scale, unit,
                    s->median * scale, s->p90 * scale, unit, s->median * scale, s->p90 * scale, unit,
                    s->p90 * scale, unit);
    if (y < end)
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "turn %d tok  %.1f tok/s\v%d tok %.1f tok/s\v%.1f tok/s",
                    s->tokens, s->tok_per_s, s->tokens, s->tok_per_s, s->tok_per_s);
    /* the prompt's line takes a second row only when the panel has rows to spare */
    if (y < end && s->prompt_state != UI_PROMPT_NONE) {
        char buf[200], alt[300];
        ui_fmt_prompt(buf, sizeof buf, s);
        const rm_prompt_figures *p = &s->prompt;
        /* the time goes first, then the restored count is told apart from
         * the reused one as long as it fits, then the reused count, then
         * the new tokens */
        if (p->restored)
            snprintf(alt, sizeof alt, "ctx %d, %d reused, %d restored, %d prefilled\vctx %d, %d reused, %d restored, "
                     "%d new\vctx %d, %d reused, %d new\vctx %d, %d new\vctx %d",
                     p->ctx, p->reused, p->restored, p->total, p->ctx, p->reused, p->restored, p->total, p->ctx,
                     p->reused + p->restored, p->total, p->ctx, p->total, p->ctx);
        else
            snprintf(alt, sizeof alt, "ctx %d, %d reused, %d prefilled\vctx %d, %d reused, %d new\vctx %d, %d new\vctx %d",
                     p->ctx, p->reused, p->total, p->ctx, p->reused, p->total, p->ctx, p->total, p->ctx);
        y = put_split(y, x, w, end - y >= 5 ? y + 2 : y + 1, ui_attr(UI_C_TEXT), buf,
                      s->prompt_state == UI_PROMPT_STOPPED ? NULL : alt);
    }
    if (y < end && (in->unreported & UI_FIG_PHASES))
        /* an endpoint: counted from the chunks as they came, the prompt's time is to the first text */
        ui_putf(y++, x, w, ui_attr(UI_C_TEXT), "reasoning %d  answer %d tok", s->reasoning_tokens,
                s->answer_tokens);
    if (y < end) sparkline(y++, x, w, st);
    /* the whole turn's speed, when the phase bar and its legend still fit */
    if (y + 2 < end) turn_rates(y++, x, w, st);
    if (y < end && (in->unreported & UI_FIG_PHASES) && !phases_known(s)) {
        ui_put(y, x, w, ui_attr(UI_C_DIM), "phases not reported by this endpoint");
        return;
    }
    if (y < end) phase_bar(y++, x, w, s);
    if (y < end) phase_legend(y, x, w, s, NULL);
}
