/* turn.c — the conversation's turns as the chat runs them: a message
 * becomes a turn (or waits behind the storage probe or the autosave, or
 * goes back into the input line while the worker is taken), the worker's
 * commands start with a hint, and what the worker reports at their end
 * lands in the transcript: the reply's end marks and figures, the probe's
 * ceiling, a load's conversation rebuilt into both panes. The UI's copy of
 * the conversation (the system prompt included) always is the engine's:
 * commands check that they can run before they change anything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tui.h"
#include "autosave.h"
#include "note.h"
#include "turn.h"
#include "draw.h"
#include "ui/welcome.h"

#define USER_MAX_LINES 12       /* longer messages (pastes) are shown folded */

/* Opens the blocks of a new turn: the user's message and an empty answer in
 * the answer pane, a header and an empty reasoning block in the other. */
static void open_turn(ui_tui *a, const char *text)
{
    a->turns++;
    a->welcome_pinned = 0;
    rm_buf u = { 0 };
    const char *sym = ui_sym(UI_SYM_PROMPT);
    if (rm_buf_addf(&u, "%s %s", sym, text)) {
        ui_note_lost(a);
    } else {
        int b = ui_doc_add(&a->answer.doc, UI_S_USER, u.p, u.len, 1, USER_MAX_LINES);
        ui_note_check(a, b);
        if (b >= 0) ui_doc_set_head(&a->answer.doc, b, strlen(sym) + 1);
    }
    rm_buf_free(&u);
    ui_note_check(a, ui_doc_add(&a->answer.doc, UI_S_ANSWER, "", 0, 0, 0));
    char hdr[64];
    snprintf(hdr, sizeof hdr, "turn %d", a->turns);
    ui_note_check(a, ui_doc_add(&a->reasoning.doc, UI_S_HEADER, hdr, strlen(hdr), a->turns > 1, 0));
    ui_note_check(a, ui_doc_add(&a->reasoning.doc, UI_S_REASONING, "", 0, 0, 0));
    ui_pane_end(&a->answer);
    ui_pane_end(&a->reasoning);
    a->dirty |= UI_D_ANSWER | UI_D_REASONING;
}

/* Whether the worker is taken; if so, `line` goes back to the input. */
int ui_turn_busy(ui_tui *a, const char *line)
{
    if (!a->generating && !a->busy_cmd) return 0;
    if (a->generating)
        ui_note_keep(a, UI_C_MARK, line, "a reply is being generated: this waits in the input line (Ctrl-C stops the reply)");
    else
        ui_note_keep(a, UI_C_MARK, line, "busy: %s; this waits in the input line",
             a->probing ? "measuring the storage" : "a command is running");
    return 1;
}

void ui_turn_submit(ui_tui *a, const char *text)
{
    if (ui_worker_submit(a->worker, UI_CMD_TURN, text, &a->gen)) {
        ui_note_add(a, UI_S_ERROR, "cannot start the turn");
        return;
    }
    open_turn(a, text);
    ui_stats_reset(a->stats);
    memset(a->turn_bytes, 0, sizeof a->turn_bytes);
    a->reprefill_said = 0;
    a->generating = 1;
    a->eof_armed = 0;
    ui_autosave_changed(a);
    a->dirty |= UI_D_STATUS | UI_D_PANELS;
}

/* A message: sent now, queued behind the storage probe or the autosave,
 * or kept. */
void ui_turn_message(ui_tui *a, const char *text, const char *line)
{
    if (ui_autosave_queue(a, text)) return;
    if (a->probing && !a->generating && !a->queued) {
        a->queued = strdup(text);
        if (!a->queued) { ui_note_keep(a, UI_C_ERROR, line, "out of memory: the message waits in the input line"); return; }
        ui_worker_stop(a->worker);         /* the probe ends after its current piece */
        ui_note_hint(a, UI_C_MARK, "measuring the storage: the message goes when it ends");
        return;
    }
    if (ui_turn_busy(a, line)) return;
    ui_turn_submit(a, text);
}

void ui_turn_command(ui_tui *a, int cmd, const char *arg, const char *what)
{
    if (ui_worker_submit(a->worker, cmd, arg, &a->gen)) {
        ui_note_add(a, UI_S_ERROR, "cannot start the command");
        return;
    }
    a->busy_cmd = 1;
    ui_note_hint(a, UI_C_DIM, "%s%s", what, ui_sym(UI_SYM_ELLIPSIS));
    a->dirty |= UI_D_STATUS;
}

/* The mark of a reply stopped before its end (RM_STOPPED_*), "" for none. */
static void stopped_mark(char *mark, size_t n, int interrupted)
{
    snprintf(mark, n, "%s", interrupted == RM_STOPPED_PROMPT ? "[interrupted during prompt processing]"
                            : interrupted ? "[interrupted]" : "");
}

static void add_mark(ui_tui *a, const char *mark)
{
    ui_note_check(a, ui_doc_add(&a->answer.doc, UI_S_MARK, mark, strlen(mark), 0, 0));
    ui_pane_changed(&a->answer);
}

/* Rebuilds both panes from the source's conversation (after /load). */
static void rebuild(ui_tui *a)
{
    const rm_chat_msg *m;
    int n = a->src->vt->messages(a->src, &m);
    ui_doc_clear(&a->answer.doc);
    ui_doc_clear(&a->reasoning.doc);
    a->turns = 0;
    a->turn_recs.n = 0;
    a->answer.mark_block = -1;
    a->find.block = -1;
    free(a->system_text);
    a->system_text = NULL;
    for (int i = 0; i < n; i++) {
        if (!strcmp(m[i].role, "user")) {
            open_turn(a, m[i].content);
        } else if (!strcmp(m[i].role, "assistant") && a->turns) {
            ui_note_check(a, ui_doc_append(&a->answer.doc, m[i].content, strlen(m[i].content)));
            if (m[i].reasoning_content)
                ui_note_check(a, ui_doc_append(&a->reasoning.doc, m[i].reasoning_content, strlen(m[i].reasoning_content)));
            /* a reply stopped before its end says so, as it did live */
            char mark[64];
            stopped_mark(mark, sizeof mark, a->src->vt->interrupted(a->src, i));
            if (mark[0]) add_mark(a, mark);
        } else if (!strcmp(m[i].role, "system")) {
            free(a->system_text);
            a->system_text = strdup(m[i].content);
        }
    }
    ui_note_check(a, ui_doc_finish(&a->answer.doc));
    ui_note_check(a, ui_doc_finish(&a->reasoning.doc));
}

/* The marks a reply ends with, when it did not end as a complete answer. */
static void end_marks(ui_tui *a, const ui_done *d)
{
    char mark[160] = "";
    if (d->interrupted) {
        stopped_mark(mark, sizeof mark, d->interrupted);
    } else {
        int cut = a->gen.max_new > 0 && d->tokens >= a->gen.max_new;
        int no_answer = !a->turn_bytes[RM_CHAN_ANSWER] && a->turn_bytes[RM_CHAN_REASONING];
        if (no_answer && cut)
            snprintf(mark, sizeof mark, "[no answer: stopped while reasoning] [stopped at %d tokens]", d->tokens);
        else if (no_answer)
            snprintf(mark, sizeof mark, "[no answer: stopped while reasoning]");
        else if (cut)
            snprintf(mark, sizeof mark, "[stopped at %d tokens]", d->tokens);
    }
    if (mark[0]) add_mark(a, mark);
}

/* The turn's figures in one line under it, kept for /stats all. */
static void turn_summary(ui_tui *a, const ui_done *d)
{
    ui_turn_rec r;
    ui_stats_turn(a->stats, a->turns, d->interrupted, &r);
    /* the worker counted every record; the UI's samples may have missed
     * some when it was away (a full ring), which leaves the rates right */
    if (d->tokens > r.tokens) r.tokens = d->tokens;
    if (!RM_GROW(a->turn_recs.v, a->turn_recs.cap, a->turn_recs.n + 1)) a->turn_recs.v[a->turn_recs.n++] = r;
    char line[300];
    ui_fmt_turn(line, sizeof line, &r, ui_sym(UI_SYM_SEP));
    ui_note_check(a, ui_doc_add(&a->answer.doc, UI_S_SUMMARY, line, strlen(line), 0, 0));
    ui_pane_changed(&a->answer);
}

void ui_turn_records(ui_tui *a)
{
    const rm_prompt_figures *p = &a->stats->prompt;
    if (!a->generating || a->reprefill_said || !p->reprefill || a->turn_bytes[RM_CHAN_ANSWER]) return;
    a->reprefill_said = 1;
    char buf[200];
    snprintf(buf, sizeof buf,
             "the whole conversation is computed again (%d tokens): the state could not be reused", p->total);
    /* the note goes before the reply, which opens a block of its own after it */
    ui_note_check(a, ui_doc_add(&a->answer.doc, UI_S_NOTE, buf, strlen(buf), 0, 0));
    ui_note_check(a, ui_doc_add(&a->answer.doc, UI_S_ANSWER, "", 0, 0, 0));
    ui_pane_changed(&a->answer);
    ui_note_hint(a, UI_C_NOTE, "%s", buf);
    a->dirty |= UI_D_ANSWER;
}

/* A message that waited for the storage probe or the autosave goes now. */
static void send_queued(ui_tui *a)
{
    char *q = a->queued;
    a->queued = NULL;
    if (q) ui_turn_submit(a, q);
    free(q);
}

void ui_turn_done(ui_tui *a, const ui_done *d)
{
    char buf[1200];
    if (d->cmd == UI_CMD_TURN) {
        a->generating = a->stopping = 0;
        if (d->interrupted == RM_STOPPED_PROMPT) ui_stats_prompt_stopped(a->stats);
        ui_summary s;
        ui_stats_summary(a->stats, &s);
        a->ctx_from_turn = s.prompt_state == UI_PROMPT_DONE;
        if (a->ctx_from_turn) a->ctx_tokens = s.prompt.ctx + s.tokens;
        ui_note_check(a, ui_doc_finish(&a->answer.doc));
        ui_note_check(a, ui_doc_finish(&a->reasoning.doc));
        if (a->text_lost) {
            ui_note_add(a, UI_S_ERROR, "out of memory: the transcript above is missing text");
            a->text_lost = 0;
        }
        if (d->rc) ui_note_add(a, UI_S_ERROR, d->msg);
        else end_marks(a, d);
        if (!d->rc) turn_summary(a, d);
        if (!d->rc && d->msg[0]) ui_note_add(a, UI_S_NOTE, d->msg);     /* the source's note on a turn that worked */
        a->unsaved++;
        if (a->bench) a->quit = 1;
        ui_autosave_turn(a);
        a->dirty |= UI_D_ANSWER | UI_D_REASONING | UI_D_STATUS | UI_D_INPUT | UI_D_PANELS;
        return;
    }
    a->busy_cmd = 0;
    a->hint.text[0] = 0;
    a->hint.until = 0;
    a->dirty |= UI_D_STATUS | UI_D_INPUT | UI_D_PANELS;
    if (d->cmd == UI_CMD_PROBE) {
        a->probing = 0;
        if (d->gbps > 0) {
            a->device_gbps = d->gbps;
            a->probe_seconds = d->probed;
            /* the welcome's last figure, in the transcript before a message
             * that waited for it */
            snprintf(buf, sizeof buf, "storage ceiling: %.2f GB/s (median of a %.1f s probe)", d->gbps, d->probed);
            ui_note_add(a, UI_S_NOTE, buf);
        } else {
            ui_note_add(a, UI_S_NOTE, "storage ceiling: could not be measured (the I/O panel uses the engine's figure)");
        }
        send_queued(a);
        return;
    }
    if (ui_autosave_done(a, d)) { send_queued(a); return; }
    if (d->cmd == UI_CMD_LOAD && a->resuming) {       /* --resume's load: the probe comes now */
        a->resuming = 0;
        ui_turn_probe(a);
    }
    if (d->rc) {
        ui_note_add(a, UI_S_ERROR, d->msg);
        free(a->pending_system);
        a->pending_system = NULL;
        return;
    }
    switch (d->cmd) {
    case UI_CMD_SYSTEM:
        free(a->system_text);
        a->system_text = a->pending_system;
        a->pending_system = NULL;
        ui_note_add(a, UI_S_NOTE, "system prompt set");
        ui_autosave_changed(a);
        break;
    case UI_CMD_CLEAR:
        a->ctx_tokens = a->ctx_from_turn = 0;
        ui_note_add(a, UI_S_NOTE, "conversation cleared");
        a->unsaved = 0;
        ui_autosave_changed(a);
        break;
    case UI_CMD_SAVE:   ui_note_add(a, UI_S_NOTE, "conversation saved with its state"); a->unsaved = 0; break;
    case UI_CMD_LOAD:
        a->ctx_tokens = d->ctx;
        a->ctx_from_turn = 0;
        rebuild(a);
        ui_pane_end(&a->answer);
        ui_pane_end(&a->reasoning);
        a->unsaved = 0;
        ui_autosave_loaded(a);
        /* the source's note says where the state comes from */
        snprintf(buf, sizeof buf, "conversation loaded: %d turns, from %.400s%s%.600s", a->turns, a->load_path,
                 d->msg[0] ? "; " : "", d->msg);
        ui_note_add(a, UI_S_NOTE, buf);
        a->dirty |= UI_D_ANSWER | UI_D_REASONING;
        break;
    }
}

void ui_turn_eof(ui_tui *a)
{
    /* turns the autosave keeps are not at risk: only a reply is asked about */
    if (a->eof_armed || (!a->generating && (a->unsaved == 0 || ui_autosave_covers(a)))) { a->quit = 1; return; }
    a->eof_armed = 1;
    if (a->generating)
        ui_note_hint(a, UI_C_MARK, "a reply is being generated: Ctrl-D again to quit");
    else
        ui_note_hint(a, UI_C_MARK, "%d turn%s not saved (/save FILE): Ctrl-D again to quit", a->unsaved,
                      a->unsaved == 1 ? "" : "s");
}

void ui_turn_welcome(ui_tui *a)
{
    rm_buf w = { 0 };
    if (ui_welcome(a->src, &w)) ui_note_lost(a);
    else ui_note_add(a, UI_S_NOTE, w.p);
    rm_buf_free(&w);
    a->welcome_pinned = 1;
}

void ui_turn_probe(ui_tui *a)
{
    /* the storage ceiling of the I/O panel, measured long enough to be
     * stable while the user types the first message */
    char secs[32];
    snprintf(secs, sizeof secs, "%.1f", UI_PROBE_SECONDS);
    if (ui_worker_submit(a->worker, UI_CMD_PROBE, secs, NULL) == 0) a->probing = a->busy_cmd = 1;
}
