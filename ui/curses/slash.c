/* slash.c — what the user's lines do: messages become turns, slash
 * commands change the session or the view, and the transcript (the two
 * panes' documents) records it all. Notes (command output, errors, the
 * marks a reply ends with) are blocks in the answer pane; while a turn
 * streams, the answer block must stay last, so notes then go to the hint
 * row instead.
 *
 * Typed text is never thrown away: a line that cannot be acted on now (a
 * message or a command that needs the worker while a reply is generated, an
 * unknown command) goes back into the input line, and the hint row says
 * why; a message sent while the storage probe or the autosave runs is
 * queued and goes when it ends. Commands check that they can run before
 * they change anything, so the UI's copy of the conversation (the system
 * prompt included) always is the engine's. When a pane's document cannot take text (out of memory),
 * the hint row says so at once, a streaming turn is stopped, and the turn
 * ends with an error note: the transcript never loses text without saying
 * so.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tui.h"
#include "draw.h"
#include "input.h"
#include "ui/osc52.h"
#include "ui/paths.h"
#include "ui/welcome.h"

#define USER_MAX_LINES 12       /* longer messages (pastes) are shown folded */
#define HINT_SECONDS 5.0

int ui_slash_role(int style)
{
    switch (style) {
    case UI_S_USER:      return UI_C_USER;
    case UI_S_REASONING: return UI_C_REASON;
    case UI_S_NOTE:      return UI_C_NOTE;
    case UI_S_ERROR:     return UI_C_ERROR;
    case UI_S_MARK:      return UI_C_MARK;
    case UI_S_HEADER:    return UI_C_TITLE;
    case UI_S_SUMMARY:   return UI_C_DIM;
    default:             return UI_C_TEXT;
    }
}

static void vhint(ui_tui *a, int role, const char *fmt, va_list ap)
{
    vsnprintf(a->hint, sizeof a->hint, fmt, ap);
    a->hint_role = role;
    a->hint_until = rm_now() + HINT_SECONDS;
    a->dirty |= UI_D_INPUT;
}

void ui_slash_hint(ui_tui *a, int role, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vhint(a, role, fmt, ap);
    va_end(ap);
}

void ui_slash_lost(ui_tui *a)
{
    a->text_lost = 1;
    if (a->generating && !a->stopping) {
        ui_worker_stop(a->worker);
        a->stopping = 1;
    }
    ui_slash_hint(a, UI_C_ERROR, "out of memory: the transcript is missing text");
    a->dirty |= UI_D_STATUS;
}

/* rc of a document call: a failure is reported (ui_slash_lost). */
static void doc_rc(ui_tui *a, int rc)
{
    if (rc < 0) ui_slash_lost(a);
}

static void note(ui_tui *a, int style, const char *text)
{
    if (a->generating) {
        ui_slash_hint(a, ui_slash_role(style), "%.*s", (int)strcspn(text, "\n"), text);
        return;
    }
    doc_rc(a, ui_doc_add(&a->answer.doc, style, text, strlen(text), 1, 0));
    if (a->welcome_pinned) ui_pane_changed(&a->answer);    /* the welcome stays in view */
    else ui_pane_end(&a->answer);
    a->dirty |= UI_D_ANSWER;
}

void ui_slash_note(ui_tui *a, int style, const char *text) { note(a, style, text); }

/* Puts a line the UI could not act on back into the input line, and says
 * why in the hint row. */
static void keep(ui_tui *a, int role, const char *line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void keep(ui_tui *a, int role, const char *line, const char *fmt, ...)
{
    if (ui_input_keep(line)) ui_slash_lost(a);
    va_list ap;
    va_start(ap, fmt);
    vhint(a, role, fmt, ap);
    va_end(ap);
}

/* Opens the blocks of a new turn: the user's message and an empty answer in
 * the answer pane, a header and an empty reasoning block in the other. */
static void open_turn(ui_tui *a, const char *text)
{
    a->turns++;
    a->welcome_pinned = 0;
    rm_buf u = { 0 };
    const char *sym = ui_sym(UI_SYM_PROMPT);
    if (rm_buf_addf(&u, "%s %s", sym, text)) {
        ui_slash_lost(a);
    } else {
        int b = ui_doc_add(&a->answer.doc, UI_S_USER, u.p, u.len, 1, USER_MAX_LINES);
        doc_rc(a, b);
        if (b >= 0) ui_doc_set_head(&a->answer.doc, b, strlen(sym) + 1);
    }
    rm_buf_free(&u);
    doc_rc(a, ui_doc_add(&a->answer.doc, UI_S_ANSWER, "", 0, 0, 0));
    char hdr[64];
    snprintf(hdr, sizeof hdr, "turn %d", a->turns);
    doc_rc(a, ui_doc_add(&a->reasoning.doc, UI_S_HEADER, hdr, strlen(hdr), a->turns > 1, 0));
    doc_rc(a, ui_doc_add(&a->reasoning.doc, UI_S_REASONING, "", 0, 0, 0));
    ui_pane_end(&a->answer);
    ui_pane_end(&a->reasoning);
    a->dirty |= UI_D_ANSWER | UI_D_REASONING;
}

/* Whether the worker is taken; if so, `line` goes back to the input. */
static int busy(ui_tui *a, const char *line)
{
    if (!a->generating && !a->busy_cmd) return 0;
    if (a->generating)
        keep(a, UI_C_MARK, line, "a reply is being generated: this waits in the input line (Ctrl-C stops the reply)");
    else
        keep(a, UI_C_MARK, line, "busy: %s; this waits in the input line",
             a->probing ? "measuring the storage" : "a command is running");
    return 1;
}

void ui_slash_submit(ui_tui *a, const char *text)
{
    if (ui_worker_submit(a->worker, UI_CMD_TURN, text, &a->gen)) {
        note(a, UI_S_ERROR, "cannot start the turn");
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
static void message(ui_tui *a, const char *text, const char *line)
{
    if (ui_autosave_queue(a, text)) return;
    if (a->probing && !a->generating && !a->queued) {
        a->queued = strdup(text);
        if (!a->queued) { keep(a, UI_C_ERROR, line, "out of memory: the message waits in the input line"); return; }
        ui_worker_stop(a->worker);         /* the probe ends after its current piece */
        ui_slash_hint(a, UI_C_MARK, "measuring the storage: the message goes when it ends");
        return;
    }
    if (busy(a, line)) return;
    ui_slash_submit(a, text);
}

static void command(ui_tui *a, int cmd, const char *arg, const char *what)
{
    if (ui_worker_submit(a->worker, cmd, arg, &a->gen)) {
        note(a, UI_S_ERROR, "cannot start the command");
        return;
    }
    a->busy_cmd = 1;
    ui_slash_hint(a, UI_C_DIM, "%s%s", what, ui_sym(UI_SYM_ELLIPSIS));
    a->dirty |= UI_D_STATUS;
}

/* Rebuilds both panes from the source's conversation (after /load). */
static void rebuild(ui_tui *a)
{
    const rm_chat_msg *m;
    int n = a->src->vt->messages(a->src, &m);
    ui_doc_clear(&a->answer.doc);
    ui_doc_clear(&a->reasoning.doc);
    a->turns = 0;
    a->nturn_recs = 0;
    a->answer.mark_block = -1;
    a->find_block = -1;
    free(a->system_text);
    a->system_text = NULL;
    for (int i = 0; i < n; i++) {
        if (!strcmp(m[i].role, "user")) {
            open_turn(a, m[i].content);
        } else if (!strcmp(m[i].role, "assistant") && a->turns) {
            doc_rc(a, ui_doc_append(&a->answer.doc, m[i].content, strlen(m[i].content)));
            if (m[i].reasoning_content)
                doc_rc(a, ui_doc_append(&a->reasoning.doc, m[i].reasoning_content, strlen(m[i].reasoning_content)));
        } else if (!strcmp(m[i].role, "system")) {
            free(a->system_text);
            a->system_text = strdup(m[i].content);
        }
    }
    doc_rc(a, ui_doc_finish(&a->answer.doc));
    doc_rc(a, ui_doc_finish(&a->reasoning.doc));
}

/* The marks a reply ends with, when it did not end as a complete answer. */
static void end_marks(ui_tui *a, const ui_done *d)
{
    char mark[160] = "";
    if (d->interrupted == RM_STOPPED_PROMPT) {
        snprintf(mark, sizeof mark, "[interrupted during prompt processing]");
    } else if (d->interrupted) {
        snprintf(mark, sizeof mark, "[interrupted]");
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
    if (mark[0]) {
        doc_rc(a, ui_doc_add(&a->answer.doc, UI_S_MARK, mark, strlen(mark), 0, 0));
        ui_pane_changed(&a->answer);
    }
}

/* The turn's figures in one line under it, kept for /stats all. */
static void turn_summary(ui_tui *a, const ui_done *d)
{
    ui_turn_rec r;
    ui_stats_turn(a->stats, a->turns, d->interrupted, &r);
    /* the worker counted every record; the UI's samples may have missed
     * some when it was away (a full ring), which leaves the rates right */
    if (d->tokens > r.tokens) r.tokens = d->tokens;
    if (!RM_GROW(a->turn_recs, a->cap_turn_recs, a->nturn_recs + 1)) a->turn_recs[a->nturn_recs++] = r;
    char line[300];
    ui_fmt_turn(line, sizeof line, &r, ui_sym(UI_SYM_SEP));
    doc_rc(a, ui_doc_add(&a->answer.doc, UI_S_SUMMARY, line, strlen(line), 0, 0));
    ui_pane_changed(&a->answer);
}

void ui_slash_records(ui_tui *a)
{
    const rm_prompt_figures *p = &a->stats->prompt;
    if (!a->generating || a->reprefill_said || !p->reprefill || a->turn_bytes[RM_CHAN_ANSWER]) return;
    a->reprefill_said = 1;
    char buf[200];
    snprintf(buf, sizeof buf,
             "the whole conversation is computed again (%d tokens): the state could not be reused", p->total);
    /* the note goes before the reply, which opens a block of its own after it */
    doc_rc(a, ui_doc_add(&a->answer.doc, UI_S_NOTE, buf, strlen(buf), 0, 0));
    doc_rc(a, ui_doc_add(&a->answer.doc, UI_S_ANSWER, "", 0, 0, 0));
    ui_pane_changed(&a->answer);
    ui_slash_hint(a, UI_C_NOTE, "%s", buf);
    a->dirty |= UI_D_ANSWER;
}

void ui_slash_done(ui_tui *a, const ui_done *d)
{
    char buf[1200];
    if (d->cmd == UI_CMD_TURN) {
        a->generating = a->stopping = 0;
        if (d->interrupted == RM_STOPPED_PROMPT) ui_stats_prompt_stopped(a->stats);
        doc_rc(a, ui_doc_finish(&a->answer.doc));
        doc_rc(a, ui_doc_finish(&a->reasoning.doc));
        if (a->text_lost) {
            note(a, UI_S_ERROR, "out of memory: the transcript above is missing text");
            a->text_lost = 0;
        }
        if (d->rc) note(a, UI_S_ERROR, d->msg);
        else end_marks(a, d);
        if (!d->rc) turn_summary(a, d);
        a->unsaved++;
        if (a->bench) a->quit = 1;
        ui_autosave_turn(a);
        a->dirty |= UI_D_ANSWER | UI_D_REASONING | UI_D_STATUS | UI_D_INPUT | UI_D_PANELS;
        return;
    }
    a->busy_cmd = 0;
    a->hint[0] = 0;
    a->hint_until = 0;
    a->dirty |= UI_D_STATUS | UI_D_INPUT | UI_D_PANELS;
    if (d->cmd == UI_CMD_PROBE) {
        a->probing = 0;
        if (d->gbps > 0) {
            a->device_gbps = d->gbps;
            a->probe_seconds = d->probed;
            /* the welcome's last figure, in the transcript before a message
             * that waited for it */
            snprintf(buf, sizeof buf, "storage ceiling: %.2f GB/s (median of a %.1f s probe)", d->gbps, d->probed);
            note(a, UI_S_NOTE, buf);
        } else {
            note(a, UI_S_NOTE, "storage ceiling: could not be measured (the I/O panel uses the engine's figure)");
        }
        if (a->queued) {
            char *q = a->queued;
            a->queued = NULL;
            ui_slash_submit(a, q);
            free(q);
        }
        return;
    }
    if (ui_autosave_done(a, d)) return;
    if (d->cmd == UI_CMD_LOAD && a->resuming) {       /* --resume's load: the probe comes now */
        a->resuming = 0;
        ui_main_probe(a);
    }
    if (d->rc) {
        note(a, UI_S_ERROR, d->msg);
        free(a->pending_system);
        a->pending_system = NULL;
        return;
    }
    switch (d->cmd) {
    case UI_CMD_SYSTEM:
        free(a->system_text);
        a->system_text = a->pending_system;
        a->pending_system = NULL;
        note(a, UI_S_NOTE, "system prompt set");
        ui_autosave_changed(a);
        break;
    case UI_CMD_CLEAR:
        note(a, UI_S_NOTE, "conversation cleared");
        a->unsaved = 0;
        ui_autosave_changed(a);
        break;
    case UI_CMD_SAVE:   note(a, UI_S_NOTE, "conversation saved with its state"); a->unsaved = 0; break;
    case UI_CMD_LOAD:
        rebuild(a);
        ui_pane_end(&a->answer);
        ui_pane_end(&a->reasoning);
        a->unsaved = 0;
        ui_autosave_loaded(a);
        /* the source's note says where the state comes from */
        snprintf(buf, sizeof buf, "conversation loaded: %d turns, from %.400s%s%.600s", a->turns, a->load_path,
                 d->msg[0] ? "; " : "", d->msg);
        note(a, UI_S_NOTE, buf);
        a->dirty |= UI_D_ANSWER | UI_D_REASONING;
        break;
    }
}

void ui_slash_eof(ui_tui *a)
{
    /* turns the autosave keeps are not at risk: only a reply is asked about */
    if (a->eof_armed || (!a->generating && (a->unsaved == 0 || ui_autosave_covers(a)))) { a->quit = 1; return; }
    a->eof_armed = 1;
    if (a->generating)
        ui_slash_hint(a, UI_C_MARK, "a reply is being generated: Ctrl-D again to quit");
    else
        ui_slash_hint(a, UI_C_MARK, "%d turn%s not saved (/save FILE): Ctrl-D again to quit", a->unsaved,
                      a->unsaved == 1 ? "" : "s");
}

void ui_slash_welcome(ui_tui *a)
{
    rm_buf w = { 0 };
    if (ui_welcome(a->src, &w)) ui_slash_lost(a);
    else note(a, UI_S_NOTE, w.p);
    rm_buf_free(&w);
    a->welcome_pinned = 1;
}

const ui_command ui_commands[] = {
    { "/help",          "this page (F1); Esc closes it" },
    { "/system [TEXT]", "set the system prompt; without TEXT, show it" },
    { "/think on|off",  "open the reasoning channel in the next turns, or not" },
    { "/clear",         "forget the conversation" },
    { "/save FILE",     "write the conversation to FILE (JSON lines) and its state to FILE's snapshot, "
                        "atomically" },
    { "/load FILE|last", "replace the conversation with FILE's (last: the latest autosaved one of "
                         "another chat), only when all of it is valid; its snapshot is used when it fits" },
    { "/stats [all]",   "the last turn's figures (while a reply streams: a live page); all: a page "
                        "with every turn of the conversation as a table" },
    { "/copy",          "put the last answer on the clipboard (OSC 52: works over SSH; in tmux, "
                        "set-clipboard on)" },
    { "/find TEXT",     "show the transcript's last match of TEXT, reversed; again: the one before" },
    { "/quit",          "leave (also /exit, and Ctrl-D at an empty prompt)" },
};
const int ui_ncommands = (int)(sizeof ui_commands / sizeof ui_commands[0]);

static void show_stats(ui_tui *a, const char *arg)
{
    if (!strcasecmp(arg, "all")) { ui_overlay_open(a, UI_OVL_TURNS); return; }
    if (*arg) { note(a, UI_S_ERROR, "usage: /stats [all]"); return; }
    if (a->generating) { ui_overlay_open(a, UI_OVL_STATS); return; }
    ui_summary s;
    ui_stats_summary(a->stats, &s);
    char prompt[200], sessions[4800], buf[5600];
    ui_autosave_stats(a, sessions, sizeof sessions);
    if (s.prompt_state == UI_PROMPT_NONE) {
        snprintf(buf, sizeof buf, "no statistics yet: send a message first\n%s", sessions);
        note(a, UI_S_NOTE, buf);
        return;
    }
    ui_fmt_prompt(prompt, sizeof prompt, &s);
    if (!s.window) {
        snprintf(buf, sizeof buf, "last turn: no tokens; prompt: %s\n%s", prompt, sessions);
        note(a, UI_S_NOTE, buf);
        return;
    }
    char med[32], p90[32], io[32], cache[32];
    ui_fmt_secs(med, sizeof med, s.median);
    ui_fmt_secs(p90, sizeof p90, s.p90);
    ui_fmt_bytes(io, sizeof io, s.bytes_per_token);
    ui_fmt_bytes(cache, sizeof cache, s.cache_bytes_per_token);
    snprintf(buf, sizeof buf,
             "last turn: %d tokens at %.1f tok/s; prompt: %s; last %d tokens: median %s, p90 %s per token, "
             "storage %s/token, cache %s/token; hit rate %.1f%% (turn); speculation %llu/%llu accepted\n%s",
             s.tokens, s.tok_per_s, prompt, s.window, med, p90, io, cache,
             s.hit_rate >= 0 ? s.hit_rate * 100 : 0.0,
             (unsigned long long)s.accepted, (unsigned long long)s.drafted, sessions);
    note(a, UI_S_NOTE, buf);
}

/* /copy: the last answer (every answer block after the last message) to
 * the terminal's clipboard through OSC 52. */
static void copy(ui_tui *a)
{
    const ui_doc *d = &a->answer.doc;
    int first = d->nblocks;
    while (first > 0 && d->blocks[first - 1].style != UI_S_USER) first--;
    rm_buf text = { 0 }, esc = { 0 };
    int bad = 0;
    for (int i = first; i < d->nblocks && !bad; i++)
        if (d->blocks[i].style == UI_S_ANSWER && d->blocks[i].text.len)
            bad = rm_buf_add(&text, d->blocks[i].text.p, d->blocks[i].text.len);
    if (bad) {
        note(a, UI_S_ERROR, "out of memory: nothing was copied");
    } else if (!text.len) {
        note(a, UI_S_ERROR, "/copy: no answer to copy yet");
    } else if (text.len > UI_OSC52_MAX) {
        char msg[160];
        snprintf(msg, sizeof msg, "/copy: the answer is %zu bytes, more than terminals take (%u); nothing was copied",
                 text.len, UI_OSC52_MAX);
        note(a, UI_S_ERROR, msg);
    } else if (ui_osc52(text.p, text.len, &esc)) {
        note(a, UI_S_ERROR, "out of memory: nothing was copied");
    } else if (ui_term_write(&a->term, esc.p, esc.len)) {
        note(a, UI_S_ERROR, "/copy: the terminal could not be written to");
    } else {
        ui_slash_hint(a, UI_C_NOTE, "copied the last answer (%zu bytes) to the clipboard (OSC 52: the terminal "
                      "must allow it; in tmux, set-clipboard on)", text.len);
    }
    rm_buf_free(&text);
    rm_buf_free(&esc);
}

/* Where `needle` occurs in s[0..n) last before `before`, ignoring ASCII
 * case; -1 when nowhere. */
static long find_back(const char *s, size_t n, size_t before, const char *needle)
{
    size_t k = strlen(needle);
    if (k == 0 || k > n) return -1;
    size_t i = before < n - k + 1 ? before : n - k + 1;
    while (i-- > 0)
        if (!strncasecmp(s + i, needle, k)) return (long)i;
    return -1;
}

/* /find TEXT: the transcript's last match before the previous one (the
 * first /find of a text: the last match of all), shown and reversed in the
 * answer pane; the hint says which of how many it is. */
static void find(ui_tui *a, const char *arg)
{
    if (!*arg) { note(a, UI_S_ERROR, "usage: /find TEXT"); return; }
    ui_doc *d = &a->answer.doc;
    int again = a->find_text && !strcmp(a->find_text, arg) && a->find_block >= 0 && a->find_block < d->nblocks;
    if (!again) {
        free(a->find_text);
        a->find_text = strdup(arg);
        if (!a->find_text) { note(a, UI_S_ERROR, "out of memory: /find did not run"); return; }
        a->find_block = d->nblocks - 1;
        a->find_off = (size_t)-1;
    }
    int total = 0, nth = 0, fb = -1;
    long fo = -1;
    for (int b = d->nblocks - 1; b >= 0; b--) {
        const ui_block *blk = &d->blocks[b];
        size_t before = blk->text.len;
        long at;
        while ((at = find_back(blk->text.p, blk->text.len, before, arg)) >= 0) {
            total++;
            int earlier = b < a->find_block || (b == a->find_block && (size_t)at < a->find_off);
            if (fb < 0 && earlier) { fb = b; fo = at; nth = total; }
            before = (size_t)at;
        }
    }
    if (!total) {
        a->answer.mark_block = -1;
        ui_slash_hint(a, UI_C_MARK, "/find: \"%.80s\" is not in the transcript", arg);
        a->dirty |= UI_D_ANSWER;
        return;
    }
    if (fb < 0) {       /* past the first match: wrap to the last */
        a->find_block = d->nblocks - 1;
        a->find_off = (size_t)-1;
        find(a, arg);
        return;
    }
    a->find_block = fb;
    a->find_off = (size_t)fo;
    a->answer.mark_block = fb;
    a->answer.mark_start = (size_t)fo;
    a->answer.mark_end = (size_t)fo + strlen(arg);
    a->welcome_pinned = 0;
    ui_pane_show_line(&a->answer, ui_doc_find(d, fb, (size_t)fo));
    ui_slash_hint(a, UI_C_NOTE, "/find: match %d of %d, counting back from the end (again: the one before; "
                  "Alt-End returns)", nth, total);
    a->dirty |= UI_D_ANSWER;
}

/* /save FILE and /load FILE|last: the name expanded (~), a folder refused;
 * "last" is the latest autosaved conversation of another chat. */
static void save_load(ui_tui *a, int load, const char *arg, const char *line)
{
    if (!*arg) { note(a, UI_S_ERROR, load ? "usage: /load FILE|last" : "usage: /save FILE"); return; }
    if (busy(a, line)) return;
    char path[4096];
    rm_err err = { "" };
    if (load && !strcasecmp(arg, "last")) {
        if (ui_autosave_resolve(a, arg, path, sizeof path)) { note(a, UI_S_ERROR, "no other saved conversation"); return; }
    } else if (ui_path_expand(arg, path, sizeof path, &err) || ui_path_not_dir(path, arg, &err)) {
        note(a, UI_S_ERROR, err.msg);
        return;
    }
    if (load) ui_autosave_load(a, path);
    else command(a, UI_CMD_SAVE, path, "saving");
}

static void slash(ui_tui *a, char *line, const char *orig)
{
    char *arg = line + strcspn(line, " \t");
    if (*arg) *arg++ = 0;
    arg += strspn(arg, " \t");
    const char *cmd = line + 1;
    if (!strcasecmp(cmd, "quit") || !strcasecmp(cmd, "exit")) {
        a->quit = 1;
    } else if (!strcasecmp(cmd, "help")) {
        ui_overlay_open(a, UI_OVL_HELP);
    } else if (!strcasecmp(cmd, "system")) {
        if (!*arg) {
            char buf[600];
            snprintf(buf, sizeof buf, "system prompt: %s", a->system_text ? a->system_text : "(none)");
            note(a, UI_S_NOTE, buf);
            return;
        }
        if (busy(a, orig)) return;
        free(a->pending_system);
        a->pending_system = strdup(arg);
        if (!a->pending_system) { note(a, UI_S_ERROR, "out of memory: the system prompt was not set"); return; }
        command(a, UI_CMD_SYSTEM, arg, "setting the system prompt");
    } else if (!strcasecmp(cmd, "think")) {
        if (!strcasecmp(arg, "on")) a->gen.think = 1;
        else if (!strcasecmp(arg, "off")) a->gen.think = 0;
        else if (*arg) { note(a, UI_S_ERROR, "usage: /think on|off"); return; }
        ui_slash_hint(a, UI_C_NOTE, "thinking %s", a->gen.think ? "on" : "off");
        a->dirty |= UI_D_STATUS;
    } else if (!strcasecmp(cmd, "clear")) {
        if (busy(a, orig)) return;
        ui_doc_clear(&a->answer.doc);
        ui_doc_clear(&a->reasoning.doc);
        ui_pane_end(&a->answer);
        ui_pane_end(&a->reasoning);
        ui_stats_reset(a->stats);
        a->turns = 0;
        a->nturn_recs = 0;
        a->answer.mark_block = -1;
        a->find_block = -1;
        a->dirty |= UI_D_ANSWER | UI_D_REASONING | UI_D_PANELS;
        command(a, UI_CMD_CLEAR, NULL, "clearing");
    } else if (!strcasecmp(cmd, "save") || !strcasecmp(cmd, "load")) {
        save_load(a, tolower((unsigned char)cmd[0]) == 'l', arg, orig);
    } else if (!strcasecmp(cmd, "copy")) {
        copy(a);
    } else if (!strcasecmp(cmd, "find")) {
        find(a, arg);
    } else if (!strcasecmp(cmd, "stats")) {
        show_stats(a, arg);
    } else {
        keep(a, UI_C_ERROR, orig, "unknown command /%.60s: /help lists the commands; //%.60s sends it as a message",
             cmd, cmd);
    }
}

void ui_slash_line(void *ud, char *line)
{
    ui_tui *a = ud;
    if (!line) { a->quit = 1; return; }
    a->eof_armed = 0;
    if (line[0] == '/' && line[1] != '/') {
        char *orig = strdup(line);
        slash(a, line, orig ? orig : "");
        free(orig);
    } else if (line[strspn(line, " \t\n")]) {
        message(a, line[0] == '/' ? line + 1 : line, line);
    }
    free(line);
}
