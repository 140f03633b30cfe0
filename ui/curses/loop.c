/* loop.c — the UI thread's event loop and frame drawing.
 *
 * One poll() waits on the terminal input, the worker's wake pipe and the
 * signal self-pipe. Whatever arrives only updates the model and sets dirty
 * bits; a frame is drawn at most every FRAME_S seconds from those bits, so a
 * fast token stream costs one redraw per frame however many tokens came in.
 * The panels and the status line, whose figures change with every token,
 * are redrawn at most panel_hz times a second (--panel-hz): at 50 tok/s on
 * the synthetic source at 120x40 they wrote 80 KiB/s to the terminal when
 * redrawn on every frame. A frame is written with the cursor hidden and, on
 * terminals that take it, as one synchronized update (ui_term_frame_begin).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tui.h"
#include "loop.h"
#include "note.h"
#include "overlay.h"
#include "turn.h"
#include "draw.h"
#include "input.h"

#define FRAME_S   (1.0 / 30)
#define ESC_WAIT_S 0.025      /* a lone Esc: wait this long for the rest */
#define INPUT_MAX_ROWS 8

/* ---- drawing ----------------------------------------------------------- */

static void relayout(ui_tui *a)
{
    int rows = LINES, cols = COLS;
    int max_rows = (rows - 1) / 4 > 0 ? (rows - 1) / 4 : 1;
    if (max_rows > INPUT_MAX_ROWS) max_rows = INPUT_MAX_ROWS;
    a->lopt.input_rows = ui_input_rows(cols, max_rows);
    ui_layout_compute(rows, cols, &a->lopt, &a->lay);
    if (a->lay.too_small) return;
    if (ui_pane_resize(&a->answer, a->lay.r[UI_R_ANSWER])) ui_note_lost(a);
    if (a->welcome_pinned) ui_pane_home(&a->answer);
    if (ui_rect_visible(a->lay.r[UI_R_REASONING]) && ui_pane_resize(&a->reasoning, a->lay.r[UI_R_REASONING]))
        ui_note_lost(a);
}

static void draw_rule(ui_rect r)
{
    if (!ui_rect_visible(r)) return;
    attrset(ui_attr(UI_C_RULE));
    for (int y = r.y; y < r.y + r.h; y++) mvaddstr(y, r.x, ui_sym(UI_SYM_VLINE));
    attrset(A_NORMAL);
}

/* The prompt is being processed: no token yet. */
static int prompting(const ui_tui *a)
{
    return a->generating && !a->stats->tokens && a->stats->prompt_state == UI_PROMPT_RUNNING;
}

/* The status line: the state first, then the model, the context meter
 * (tokens in the context; of this turn's prompt, reused and prefilled), the
 * RAM budget, the think switch, markers for hidden panes, and F1. What does
 * not fit is dropped, least useful first (the RAM budget, the context
 * meter, F1 (the hint row says it too), think, the model), so the state is
 * never cut for the rest. */
static void draw_status(ui_tui *a, const ui_summary *s)
{
    ui_rect r = a->lay.r[UI_R_STATUS];
    ui_fill(r, ui_attr(UI_C_STATUS));
    char state[160], prog[128];
    if (a->quit && a->autosaving) {
        snprintf(state, sizeof state, "quitting: saving%s", ui_sym(UI_SYM_ELLIPSIS));
    } else if (a->stopping) {
        snprintf(state, sizeof state, "stopping%s", ui_sym(UI_SYM_ELLIPSIS));
    } else if (prompting(a)) {
        ui_fmt_progress(prog, sizeof prog, &s->prompt);
        snprintf(state, sizeof state, "prompt %s", prog);
    } else if (a->generating && !s->tokens) {
        snprintf(state, sizeof state, "reading the prompt%s", ui_sym(UI_SYM_ELLIPSIS));
    } else if (a->generating) {
        snprintf(state, sizeof state, "generating %.1f tok/s", s->tok_per_s);
    } else if (a->probing) {
        snprintf(state, sizeof state, "measuring the storage%s", ui_sym(UI_SYM_ELLIPSIS));
    } else if (a->busy_cmd) {
        snprintf(state, sizeof state, "working%s", ui_sym(UI_SYM_ELLIPSIS));
    } else {
        snprintf(state, sizeof state, "ready");
    }
    enum { F_STATE, F_MODEL, F_CTX, F_RAM, F_THINK, F_HIDDEN, F_HELP, F_COUNT };
    /* the order they go in when the line is too narrow */
    static const int drop[] = { F_RAM, F_CTX, F_HELP, F_THINK, F_MODEL, F_HIDDEN };
    char f[F_COUNT][272];
    const ui_source *src = a->src;
    snprintf(f[F_STATE], sizeof f[0], "%s", state);
    snprintf(f[F_MODEL], sizeof f[0], "%s", src->label);
    /* a turn's own prompt figures while it runs and once it is in; the
     * context between turns otherwise (a->ctx_tokens) */
    int live = a->generating ? s->prompt_state != UI_PROMPT_NONE && s->prompt_state != UI_PROMPT_STOPPED
                             : a->ctx_from_turn && s->prompt_state == UI_PROMPT_DONE;
    if (live)
        snprintf(f[F_CTX], sizeof f[0], "ctx %d: %d reused, %d prefilled", s->prompt.ctx + s->tokens,
                 s->prompt.reused + s->prompt.restored, s->prompt.total);
    else if (a->ctx_tokens >= 0)
        snprintf(f[F_CTX], sizeof f[0], "ctx %d", a->ctx_tokens);
    else
        f[F_CTX][0] = 0;
    char ram[32];
    rm_fmt_bytes(ram, sizeof ram, (double)src->info.ram_budget);
    if (src->info.ram_budget) snprintf(f[F_RAM], sizeof f[0], "RAM %s", ram);
    else f[F_RAM][0] = 0;
    snprintf(f[F_THINK], sizeof f[0], "think %s", a->gen.think ? "on" : "off");
    snprintf(f[F_HIDDEN], sizeof f[0], "%s%s%s", a->lopt.reasoning_hidden ? "F2 reasoning hidden" : "",
             a->lopt.reasoning_hidden && a->lopt.panels_hidden ? ", " : "",
             a->lopt.panels_hidden ? "F3 panels hidden" : "");
    snprintf(f[F_HELP], sizeof f[0], "F1 help");
    int on[F_COUNT];
    const char *bar = ui_sym(UI_SYM_VLINE);
    int total = 1;
    for (int i = 0; i < F_COUNT; i++) {
        on[i] = f[i][0] != 0;
        if (on[i]) total += ui_text_width(f[i], strlen(f[i])) + (i ? 3 : 0);
    }
    for (size_t k = 0; k < sizeof drop / sizeof drop[0] && total > r.w; k++) {
        int i = drop[k];
        if (!on[i]) continue;
        on[i] = 0;
        total -= ui_text_width(f[i], strlen(f[i])) + 3;
    }
    char line[1400];
    size_t len = (size_t)snprintf(line, sizeof line, " %s", f[F_STATE]);
    for (int i = 1; i < F_COUNT && len < sizeof line; i++)
        if (on[i]) len += (size_t)snprintf(line + len, sizeof line - len, " %s %s", bar, f[i]);
    ui_put(r.y, r.x, r.w, ui_attr(UI_C_STATUS), line);
}

static void draw_panels(ui_tui *a, const ui_summary *s, int all)
{
    const ui_rect *r = a->lay.panel;
    const ui_panel_in in = { a->stats, s, &a->router, a->src->route_layer0, a->src->model_layers,
                             a->probe_seconds, a->device_gbps, a->src->unreported };
    int n = (int)(a->panel_draws++);
    for (int i = 0; i < ui_npanels; i++) {
        if (!ui_rect_visible(r[i]) || (!all && ui_panels[i].every > 1 && n % ui_panels[i].every)) continue;
        ui_fill(r[i], A_NORMAL);
        ui_panels[i].draw(r[i], &in);
    }
}

/* Says so in as many rows as it takes to fit the width: the longest
 * wording that fits, one phrase a row. */
static void draw_too_small(void)
{
    erase();
    char need[32], have[32], one[128];
    snprintf(need, sizeof need, "need %dx%d", UI_MIN_COLS, UI_MIN_ROWS);
    snprintf(have, sizeof have, "have %dx%d", COLS, LINES);
    snprintf(one, sizeof one, "terminal too small: %s, %s", need, have);
    if (ui_text_width(one, strlen(one)) <= COLS || LINES < 2) {
        ui_put(0, 0, COLS, ui_attr(UI_C_ERROR), one);
    } else {
        const char *rows[3] = { COLS >= 18 ? "terminal too small" : "too small", need, have };
        for (int y = 0; y < 3 && y < LINES; y++) ui_put(y, 0, COLS, ui_attr(y ? A_NORMAL : UI_C_ERROR), rows[y]);
    }
    move(0, 0);
}

static const char *default_hint(ui_tui *a)
{
    if (a->generating) return "Ctrl-C stops  PgUp/PgDn scroll  F2 reasoning  F1 help";
    return "Enter sends  Alt-Enter newline  Ctrl-D quits  F1 help";
}

/* The prompt's progress where the reply will appear. */
static const ui_pane_tail *answer_tail(ui_tui *a, const ui_summary *s, ui_pane_tail *t, char *buf, size_t n)
{
    if (!prompting(a) || a->stopping) return NULL;
    /* the bar says how far; the pass and layer are the status line's */
    const rm_prompt_figures *p = &s->prompt;
    char eta[32];
    ui_fmt_eta(eta, sizeof eta, p->eta);
    t->frac = ui_prompt_fraction(p);
    snprintf(buf, n / 2, "%.0f%%, ETA %s", 100 * t->frac, eta);
    snprintf(buf + n / 2, n - n / 2, "prompt %.0f%% of the work (%d tok), ETA %s", 100 * t->frac, p->total, eta);
    t->label = buf + n / 2;
    t->short_label = buf;
    return t;
}

/* The parts whose redraw waits for the panel rate. */
#define PANEL_BITS (UI_D_PANELS | UI_D_STATUS)

/* What the status line's state depends on: a change is drawn at once. The
 * context figure is part of it, so that /clear, /load and a finished turn
 * show their context in the frame that shows their note (held for the
 * panel rate, "conversation cleared" stood beside the old "ctx 17"). */
static long state_key(const ui_tui *a)
{
    return a->generating | a->stopping << 1 | a->busy_cmd << 2 | a->probing << 3 | prompting(a) << 4 |
           (a->stats->tokens > 0) << 5 | (a->quit && a->autosaving) << 6 | (long)(a->ctx_tokens + 1) << 7;
}

/* When the next frame is due for what is dirty (0: nothing is). */
static double frame_due(const ui_tui *a)
{
    if (!a->dirty) return 0;
    double at = a->last_frame + FRAME_S;
    if (!(a->dirty & ~PANEL_BITS) && a->panel_hz > 0 && state_key(a) == a->drawn_state) {
        double p = a->last_panels + 1.0 / a->panel_hz;
        if (p > at) at = p;
    }
    return at;
}

static void frame(ui_tui *a)
{
    double now = rm_now();
    unsigned held = 0;
    /* panel figures wait for their rate, unless the layout or the state changed */
    long key = state_key(a);
    if (!(a->dirty & UI_D_LAYOUT) && key == a->drawn_state && a->panel_hz > 0 &&
        now - a->last_panels < 1.0 / a->panel_hz) {
        held = a->dirty & PANEL_BITS;
        a->dirty &= ~PANEL_BITS;
    }
    if (a->hint.until && rm_now() >= a->hint.until) {
        a->hint.text[0] = 0;
        a->hint.until = 0;
        a->dirty |= UI_D_INPUT;
    }
    if (a->dirty & UI_D_INPUT) {
        /* The input may have grown or shrunk a row. */
        int max_rows = (LINES - 1) / 4 > 0 ? (LINES - 1) / 4 : 1;
        if (max_rows > INPUT_MAX_ROWS) max_rows = INPUT_MAX_ROWS;
        if (ui_input_rows(COLS, max_rows) != a->lay.r[UI_R_INPUT].h - 1 && !a->lay.too_small)
            a->dirty |= UI_D_LAYOUT;
    }
    if (a->dirty & UI_D_LAYOUT) {
        relayout(a);
        erase();
        a->dirty = UI_D_ALL | UI_D_LAYOUT;
        held = 0;
    }
    if (a->dirty & PANEL_BITS) a->last_panels = now;
    a->drawn_state = key;
    if (a->lay.too_small) {
        draw_too_small();
    } else if (a->overlay.kind) {
        ui_summary s;
        ui_stats_summary(a->stats, &s);
        if (a->dirty & UI_D_STATUS) draw_status(a, &s);
        /* the stats page is live; the help changes only when scrolled */
        if (a->dirty & (UI_D_LAYOUT | UI_D_OVERLAY) || (a->overlay.kind != UI_OVL_HELP && a->dirty & UI_D_PANELS))
            ui_overlay_draw(a);
        move(LINES - 1, 0);
    } else {
        ui_summary s;
        ui_stats_summary(a->stats, &s);
        if (a->dirty & UI_D_LAYOUT) {
            draw_rule(a->lay.r[UI_R_SEP]);
            draw_rule(a->lay.r[UI_R_PSEP]);
        }
        if (a->dirty & UI_D_STATUS) draw_status(a, &s);
        if (a->dirty & UI_D_ANSWER) {
            ui_pane_tail tail;
            char label[320];
            ui_pane_draw(&a->answer, a->lay.r[UI_R_ANSWER], a->focus == 0, ui_note_role,
                         answer_tail(a, &s, &tail, label, sizeof label));
        }
        if (a->dirty & UI_D_REASONING)
            ui_pane_draw(&a->reasoning, a->lay.r[UI_R_REASONING], a->focus == 1, ui_note_role, NULL);
        if (a->dirty & UI_D_PANELS) {
            draw_panels(a, &s, (a->dirty & UI_D_LAYOUT) || a->panels_all || !a->generating);
            a->panels_all = 0;
        }
        int cy = 0, cx = 0;
        /* The input is drawn last every frame: it owns the cursor. */
        ui_input_draw(a->lay.r[UI_R_INPUT], a->hint.text[0] ? a->hint.text : default_hint(a),
                      a->hint.text[0] ? a->hint.role : UI_C_DIM, &cy, &cx);
        move(cy, cx);
    }
    ui_term_frame_begin(&a->term);
    refresh();
    ui_term_frame_end(&a->term);
    a->dirty = held;
    a->frames++;
    a->last_frame = rm_now();
}

/* ---- input ------------------------------------------------------------- */

/* Typed bytes readline could not be given (out of memory). */
static void input_lost(ui_tui *a) { ui_note_hint(a, UI_C_ERROR, "out of memory: typed keys were not taken"); }

static ui_pane *focused(ui_tui *a) { return a->focus ? &a->reasoning : &a->answer; }

static int pane_dirty(ui_tui *a, ui_pane *p) { return p == &a->answer ? UI_D_ANSWER : UI_D_REASONING; }

static ui_pane *pane_at(ui_tui *a, int y, int x)
{
    ui_rect r = a->lay.r[UI_R_REASONING];
    if (ui_rect_visible(r) && y >= r.y && y < r.y + r.h && x >= r.x && x < r.x + r.w)
        return &a->reasoning;
    return &a->answer;
}

static void key_action(ui_tui *a, int act)
{
    ui_pane *p = focused(a);
    if (act >= UI_ACT_PAGE_UP && act <= UI_ACT_WHEEL_DOWN) a->welcome_pinned = 0;
    switch (act) {
    case UI_ACT_INTERRUPT:
        if (a->generating) {
            ui_worker_stop(a->worker);
            a->stopping = 1;
            a->dirty |= UI_D_STATUS;
        } else if (!ui_input_empty()) {
            ui_input_cancel();
        } else {
            ui_input_cancel();
            ui_note_hint(a, UI_C_MARK, "Ctrl-D or /quit exits");
        }
        break;
    case UI_ACT_EOF:
        if (ui_input_empty()) ui_turn_eof(a);
        else if (ui_input_feed("\x04", 1)) input_lost(a);
        break;
    case UI_ACT_SUSPEND:
        ui_term_suspend(&a->term);
        a->dirty |= UI_D_LAYOUT;
        break;
    case UI_ACT_REDRAW:
        clearok(curscr, TRUE);
        a->dirty |= UI_D_LAYOUT;
        break;
    case UI_ACT_NEWLINE: if (ui_input_insert("\n", 1)) input_lost(a); break;
    case UI_ACT_FOCUS:
        a->focus = !a->focus && ui_rect_visible(a->lay.r[UI_R_REASONING]);
        a->dirty |= UI_D_ANSWER | UI_D_REASONING;
        break;
    case UI_ACT_PAGE_UP:   ui_pane_page(p, -1); a->dirty |= pane_dirty(a, p); break;
    case UI_ACT_PAGE_DOWN: ui_pane_page(p, 1); a->dirty |= pane_dirty(a, p); break;
    case UI_ACT_TOP:       ui_pane_home(p); a->dirty |= pane_dirty(a, p); break;
    case UI_ACT_BOTTOM:    ui_pane_end(p); a->dirty |= pane_dirty(a, p); break;
    case UI_ACT_WHEEL_UP:
    case UI_ACT_WHEEL_DOWN:
        p = pane_at(a, a->kp.mouse_y, a->kp.mouse_x);
        ui_pane_scroll(p, act == UI_ACT_WHEEL_UP ? -3 : 3);
        a->dirty |= pane_dirty(a, p);
        break;
    case UI_ACT_HELP: ui_overlay_open(a, UI_OVL_HELP); break;
    case UI_ACT_TOGGLE_REASONING:
        a->lopt.reasoning_hidden = !a->lopt.reasoning_hidden;
        if (a->lopt.reasoning_hidden) a->focus = 0;
        a->dirty |= UI_D_LAYOUT;
        break;
    case UI_ACT_TOGGLE_PANELS:
        a->lopt.panels_hidden = !a->lopt.panels_hidden;
        a->dirty |= UI_D_LAYOUT;
        break;
    case UI_ACT_UNFOLD:
        if (ui_doc_set_unfold(&a->answer.doc, !a->answer.doc.unfold)) ui_note_lost(a);
        ui_note_hint(a, UI_C_NOTE, a->answer.doc.unfold ? "long messages shown whole (Alt-O folds them)"
                                                         : "long messages folded");
        a->dirty |= UI_D_ANSWER;
        break;
    case UI_ACT_ZOOM: a->router.zoom = !a->router.zoom; a->dirty |= UI_D_PANELS; a->panels_all = 1; break;
    case UI_ACT_LAYER_PREV:
        if (a->router.layer > 0) a->router.layer--;
        a->dirty |= UI_D_PANELS;
        a->panels_all = 1;
        break;
    case UI_ACT_LAYER_NEXT:
        if (a->stats->have_cur && a->router.layer < a->stats->cur.route_layers - 1) a->router.layer++;
        a->dirty |= UI_D_PANELS;
        a->panels_all = 1;
        break;
    default: break;
    }
}

/* Terminals send CR (or CRLF) for the newlines of a paste. Returns 0, or
 * -1 when out of memory (nothing is inserted). */
static int paste(const char *s, size_t n)
{
    char *t = malloc(n + 1);
    if (!t) return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r') { t[k++] = '\n'; if (i + 1 < n && s[i + 1] == '\n') i++; }
        else t[k++] = s[i];
    }
    int rc = ui_input_insert(t, k);
    free(t);
    return rc;
}

static void on_input(void *ud, int type, const char *data, size_t len)
{
    ui_tui *a = ud;
    if (ui_overlay_key(a, type, data, len)) return;
    if (type == UI_IN_KEY) {
        int act = ui_keys_action(data);
        if (act != UI_ACT_EOF) a->eof_armed = 0;
        if (act >= 0) key_action(a, act);
    } else if (type == UI_IN_PASTE) {
        if (paste(data, len)) ui_note_hint(a, UI_C_ERROR, "paste refused: out of memory");
    } else if (type == UI_IN_ERROR) {
        ui_note_hint(a, UI_C_ERROR, "%.*s", (int)len, data);
    } else {
        a->eof_armed = 0;
        if (ui_input_feed(data, len)) input_lost(a);
    }
    const char *e = ui_input_error();
    if (e) ui_note_hint(a, UI_C_ERROR, "%s", e);
    if (ui_input_dirty()) a->dirty |= UI_D_INPUT;
}

static void read_input(ui_tui *a)
{
    char buf[65536];
    ssize_t n = read(a->in_fd, buf, sizeof buf);
    if (n > 0) ui_keys_feed(&a->kp, buf, (size_t)n, on_input, a);
    else if (n == 0) a->quit = 1;      /* the terminal went away */
}

/* ---- worker output ----------------------------------------------------- */

static void take_worker(ui_tui *a)
{
    ui_drain *d = a->drain;
    ui_worker_drain(a->worker, d);
    /* records first: what they announce (a full re-prefill) goes before
     * the reply's text in the transcript */
    int tokens = a->stats->tokens;
    for (int i = 0; i < d->nsamples; i++) ui_stats_add(a->stats, &d->samples[i]);
    if (d->have_pfull) ui_stats_set_full(a->stats, &d->pfull, NULL);
    if (d->have_full) ui_stats_set_full(a->stats, &d->full, d->have_prev ? &d->full_prev : NULL);
    if (d->have_layers) { a->stats->layers = d->layers; a->stats->have_layers = 1; }
    if (d->nsamples || d->have_full || d->have_pfull) {
        a->dirty |= UI_D_PANELS | UI_D_STATUS;
        if (a->generating && !tokens) a->dirty |= UI_D_ANSWER;     /* the prompt's progress, or its end */
        ui_turn_records(a);
    }
    a->turn_bytes[RM_CHAN_ANSWER] += d->len[RM_CHAN_ANSWER];
    a->turn_bytes[RM_CHAN_REASONING] += d->len[RM_CHAN_REASONING];
    if (d->len[RM_CHAN_ANSWER]) {
        if (ui_doc_append(&a->answer.doc, d->text[RM_CHAN_ANSWER], d->len[RM_CHAN_ANSWER])) ui_note_lost(a);
        ui_pane_changed(&a->answer);
        a->dirty |= UI_D_ANSWER;
    }
    if (d->len[RM_CHAN_REASONING]) {
        if (ui_doc_append(&a->reasoning.doc, d->text[RM_CHAN_REASONING], d->len[RM_CHAN_REASONING]))
            ui_note_lost(a);
        ui_pane_changed(&a->reasoning);
        a->dirty |= UI_D_REASONING;
    }
    if (d->have_done) ui_turn_done(a, &d->done);
}

static void take_signals(ui_tui *a)
{
    int s = ui_term_take_signals();
    if (s & (UI_SIG_WINCH | UI_SIG_CONT)) {
        ui_term_resize(&a->term);
        if (s & UI_SIG_CONT) clearok(curscr, TRUE);
        a->dirty |= UI_D_LAYOUT;
    }
    if (s & UI_SIG_INT) key_action(a, UI_ACT_INTERRUPT);
    if (s & (UI_SIG_TERM | UI_SIG_HUP)) {
        a->quit = 1;
        a->exit_status = 128 + (s & UI_SIG_TERM ? SIGTERM : SIGHUP);
    }
}

void ui_loop_finish_save(ui_tui *a)
{
    if (!a->autosaving) return;
    /* the user quit: a message that waited for the save is not sent */
    free(a->queued);
    a->queued = NULL;
    ui_note_hint(a, UI_C_MARK, "quitting: waiting for the autosave to finish writing %s", a->session);
    a->hint.until = 0;          /* held until the save ends */
    a->dirty |= UI_D_STATUS | UI_D_INPUT;
    const double t0 = rm_now();
    while (a->autosaving && rm_now() - t0 < WORKER_SAVE_WAIT_S) {
        if (a->dirty && rm_now() >= frame_due(a)) frame(a);
        struct pollfd fds[2] = { { ui_term_signal_fd(), POLLIN, 0 }, { a->wake_fd, POLLIN, 0 } };
        int r = poll(fds, 2, 100);
        if (r < 0 && errno != EINTR) break;
        if (r > 0 && fds[0].revents) take_signals(a);      /* a second quit changes nothing: the save cannot be cut */
        if (r > 0 && fds[1].revents) take_worker(a);
    }
    a->hint.text[0] = 0;
}

int ui_loop_run(ui_tui *a)
{
    double pend_since = 0;      /* when the key parser started holding bytes */
    a->dirty |= UI_D_LAYOUT;
    while (!a->quit) {
        double now = rm_now();
        double wait = -1;
        if (a->dirty) {
            wait = frame_due(a) - now;
            if (wait < 0) wait = 0;
        }
        if (ui_keys_pending(&a->kp) && (wait < 0 || wait > ESC_WAIT_S)) wait = ESC_WAIT_S;
        if (a->hint.until && (wait < 0 || wait > a->hint.until - now))
            wait = a->hint.until > now ? a->hint.until - now : 0;
        int timeout = wait < 0 ? -1 : (int)(wait * 1000 + 0.999);
        struct pollfd fds[3] = {
            { ui_term_signal_fd(), POLLIN, 0 },
            { a->wake_fd, POLLIN, 0 },
            { a->in_fd, POLLIN, 0 },
        };
        int nfds = a->in_fd >= 0 ? 3 : 2;
        int r = poll(fds, (nfds_t)nfds, timeout);
        if (r < 0 && errno != EINTR) return -1;
        if (r > 0 && fds[0].revents) take_signals(a);
        if (r > 0 && fds[1].revents) take_worker(a);
        if (r > 0 && nfds == 3 && fds[2].revents) {
            if (fds[2].revents & POLLIN) read_input(a);
            else a->quit = 1;                   /* hangup */
        }
        if (!ui_keys_pending(&a->kp)) pend_since = 0;
        else if (!pend_since) pend_since = rm_now();
        else if (rm_now() - pend_since >= ESC_WAIT_S) {
            ui_keys_flush(&a->kp, on_input, a);
            pend_since = 0;
        }
        if (a->dirty && rm_now() >= frame_due(a)) frame(a);
    }
    return 0;
}
