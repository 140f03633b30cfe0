/* slash.c — what the user's lines do: messages become turns, slash
 * commands change the session or the view, and the transcript (the two
 * panes' documents) records it all. Notes (command output, errors, the
 * interrupted mark) are blocks in the answer pane; while a turn streams, the
 * answer block must stay last, so notes then go to the hint row instead.
 * When a pane's document cannot take text (out of memory), the hint row
 * says so at once, a streaming turn is stopped, and the turn ends with an
 * error note: the transcript never loses text without saying so.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tui.h"
#include "draw.h"
#include "input.h"

#define USER_MAX_LINES 12       /* longer messages (pastes) are shown cut */
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
    default:             return UI_C_TEXT;
    }
}

void ui_slash_hint(ui_tui *a, int role, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->hint, sizeof a->hint, fmt, ap);
    va_end(ap);
    a->hint_role = role;
    a->hint_until = rm_now() + HINT_SECONDS;
    a->dirty |= UI_D_INPUT;
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
    ui_pane_end(&a->answer);
    a->dirty |= UI_D_ANSWER;
}

/* Opens the blocks of a new turn: the user's message and an empty answer in
 * the answer pane, a header and an empty reasoning block in the other. */
static void open_turn(ui_tui *a, const char *text)
{
    a->turns++;
    rm_buf u = { 0 };
    if (rm_buf_addf(&u, "%s %s", ui_sym(UI_SYM_PROMPT), text)) ui_slash_lost(a);
    else doc_rc(a, ui_doc_add(&a->answer.doc, UI_S_USER, u.p, u.len, 1, USER_MAX_LINES));
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

static int busy(ui_tui *a)
{
    if (!a->generating && !a->busy_cmd) return 0;
    ui_slash_hint(a, UI_C_MARK, "busy: %s", a->generating ? "Ctrl-C stops the answer" : "a command is running");
    return 1;
}

void ui_slash_submit(ui_tui *a, const char *text)
{
    if (busy(a)) return;
    if (ui_worker_submit(a->worker, UI_CMD_TURN, text, &a->gen)) {
        note(a, UI_S_ERROR, "cannot start the turn");
        return;
    }
    open_turn(a, text);
    ui_stats_reset(a->stats);
    a->generating = 1;
    a->dirty |= UI_D_STATUS | UI_D_PANELS;
}

static void command(ui_tui *a, int cmd, const char *arg, const char *what)
{
    if (busy(a)) return;
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

void ui_slash_done(ui_tui *a, const ui_done *d)
{
    char buf[1200];
    if (d->cmd == UI_CMD_TURN) {
        a->generating = a->stopping = 0;
        doc_rc(a, ui_doc_finish(&a->answer.doc));
        doc_rc(a, ui_doc_finish(&a->reasoning.doc));
        if (a->text_lost) {
            note(a, UI_S_ERROR, "out of memory: the transcript above is missing text");
            a->text_lost = 0;
        }
        if (d->rc) note(a, UI_S_ERROR, d->msg);
        else if (d->interrupted) {
            doc_rc(a, ui_doc_add(&a->answer.doc, UI_S_MARK, "[interrupted]", 13, 0, 0));
            ui_pane_changed(&a->answer);
        }
        if (a->bench) a->quit = 1;
        a->dirty |= UI_D_ANSWER | UI_D_REASONING | UI_D_STATUS | UI_D_INPUT;
        return;
    }
    a->busy_cmd = 0;
    a->hint[0] = 0;
    a->hint_until = 0;
    a->dirty |= UI_D_STATUS | UI_D_INPUT;
    if (d->rc) { note(a, UI_S_ERROR, d->msg); return; }
    switch (d->cmd) {
    case UI_CMD_SYSTEM: note(a, UI_S_NOTE, "system prompt set"); break;
    case UI_CMD_CLEAR:  note(a, UI_S_NOTE, "conversation cleared"); break;
    case UI_CMD_SAVE:   note(a, UI_S_NOTE, "conversation saved"); break;
    case UI_CMD_LOAD:
        rebuild(a);
        snprintf(buf, sizeof buf, "conversation loaded: %d turns", a->turns);
        note(a, UI_S_NOTE, buf);
        a->dirty |= UI_D_ANSWER | UI_D_REASONING;
        break;
    }
}

void ui_slash_help(ui_tui *a)
{
    rm_buf s = { 0 };
    int bad = rm_buf_adds(&s,
        "Commands: /help, /system TEXT, /think on|off, /clear, /save FILE, /load FILE, /stats, /quit "
        "(//text sends a message that starts with /).\nKeys:");
    for (int i = 0; i < ui_nkeybindings && !bad; i++)
        bad = rm_buf_addf(&s, "\n  %-14s %s", ui_keybindings[i].key, ui_keybindings[i].what);
    if (bad) ui_slash_lost(a);
    else note(a, UI_S_NOTE, s.p);
    rm_buf_free(&s);
}

static void show_stats(ui_tui *a)
{
    ui_summary s;
    ui_stats_summary(a->stats, &s);
    if (!s.tokens) { note(a, UI_S_NOTE, "no statistics yet: send a message first"); return; }
    char med[32], p90[32], pre[32], io[32], cache[32], buf[512];
    ui_fmt_secs(med, sizeof med, s.median);
    ui_fmt_secs(p90, sizeof p90, s.p90);
    ui_fmt_secs(pre, sizeof pre, s.prefill_seconds);
    ui_fmt_bytes(io, sizeof io, s.bytes_per_token);
    ui_fmt_bytes(cache, sizeof cache, s.cache_bytes_per_token);
    snprintf(buf, sizeof buf,
             "last turn: %d tokens at %.1f tok/s (median %s, p90 %s per token); prompt %d tokens in %s; "
             "storage %s/token, cache %s/token, hit rate %.1f%%; speculation %llu/%llu accepted",
             s.tokens, s.tok_per_s, med, p90, s.prompt_tokens, pre, io, cache,
             s.hit_rate >= 0 ? s.hit_rate * 100 : 0.0,
             (unsigned long long)s.accepted, (unsigned long long)s.drafted);
    note(a, UI_S_NOTE, buf);
}

static void slash(ui_tui *a, char *line)
{
    char *arg = line + strcspn(line, " \t");
    if (*arg) *arg++ = 0;
    arg += strspn(arg, " \t");
    const char *cmd = line + 1;
    if (!strcmp(cmd, "quit") || !strcmp(cmd, "exit")) {
        a->quit = 1;
    } else if (!strcmp(cmd, "help")) {
        ui_slash_help(a);
    } else if (!strcmp(cmd, "system")) {
        if (!*arg) {
            char buf[600];
            snprintf(buf, sizeof buf, "system prompt: %s", a->system_text ? a->system_text : "(none)");
            note(a, UI_S_NOTE, buf);
            return;
        }
        free(a->system_text);
        a->system_text = strdup(arg);
        command(a, UI_CMD_SYSTEM, arg, "setting the system prompt");
    } else if (!strcmp(cmd, "think")) {
        if (!strcmp(arg, "on")) a->gen.think = 1;
        else if (!strcmp(arg, "off")) a->gen.think = 0;
        else if (*arg) { note(a, UI_S_ERROR, "usage: /think on|off"); return; }
        ui_slash_hint(a, UI_C_NOTE, "thinking %s", a->gen.think ? "on" : "off");
        a->dirty |= UI_D_STATUS;
    } else if (!strcmp(cmd, "clear")) {
        if (busy(a)) return;
        ui_doc_clear(&a->answer.doc);
        ui_doc_clear(&a->reasoning.doc);
        ui_pane_end(&a->answer);
        ui_pane_end(&a->reasoning);
        ui_stats_reset(a->stats);
        a->turns = 0;
        a->dirty |= UI_D_ANSWER | UI_D_REASONING | UI_D_PANELS;
        command(a, UI_CMD_CLEAR, NULL, "clearing");
    } else if (!strcmp(cmd, "save") || !strcmp(cmd, "load")) {
        if (!*arg) { note(a, UI_S_ERROR, cmd[0] == 's' ? "usage: /save FILE" : "usage: /load FILE"); return; }
        command(a, cmd[0] == 's' ? UI_CMD_SAVE : UI_CMD_LOAD, arg, cmd[0] == 's' ? "saving" : "loading");
    } else if (!strcmp(cmd, "stats")) {
        show_stats(a);
    } else {
        char buf[256];
        snprintf(buf, sizeof buf, "unknown command /%.100s: /help lists the commands", cmd);
        note(a, UI_S_ERROR, buf);
    }
}

void ui_slash_line(void *ud, char *line)
{
    ui_tui *a = ud;
    if (!line) { a->quit = 1; return; }
    if (line[0] == '/' && line[1] != '/') slash(a, line);
    else if (line[strspn(line, " \t\n")]) ui_slash_submit(a, line[0] == '/' ? line + 1 : line);
    free(line);
}
