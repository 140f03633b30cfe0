/* slash.c — the slash commands: one record each (name, arguments, help,
 * handler), which /help lists and the line handler dispatches on, and the
 * line handler itself: a line that starts with one slash is a command,
 * anything else (or "//text") a message for turn.c. Typed text is never
 * thrown away: a line that cannot be acted on now (a command that needs the
 * worker while a reply is generated, an unknown command) goes back into the
 * input line, and the hint row says why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tui.h"
#include "autosave.h"
#include "note.h"
#include "overlay.h"
#include "slash.h"
#include "turn.h"
#include "draw.h"
#include "ui/osc52.h"
#include "ui/paths.h"

static void show_stats(ui_tui *a, const char *arg)
{
    if (!strcasecmp(arg, "all")) { ui_overlay_open(a, UI_OVL_TURNS); return; }
    if (*arg) { ui_note_add(a, UI_S_ERROR, "usage: /stats [all]"); return; }
    if (a->generating) { ui_overlay_open(a, UI_OVL_STATS); return; }
    ui_summary s;
    ui_stats_summary(a->stats, &s);
    char prompt[200], sessions[4800], buf[5600];
    ui_autosave_stats(a, sessions, sizeof sessions);
    if (s.prompt_state == UI_PROMPT_NONE) {
        snprintf(buf, sizeof buf, "no statistics yet: send a message first\n%s", sessions);
        ui_note_add(a, UI_S_NOTE, buf);
        return;
    }
    ui_fmt_prompt(prompt, sizeof prompt, &s);
    if (!s.window) {
        snprintf(buf, sizeof buf, "last turn: no tokens; prompt: %s\n%s", prompt, sessions);
        ui_note_add(a, UI_S_NOTE, buf);
        return;
    }
    char med[32], p90[32], io[32], cache[32];
    ui_fmt_secs(med, sizeof med, s.median);
    ui_fmt_secs(p90, sizeof p90, s.p90);
    rm_fmt_bytes(io, sizeof io, s.bytes_per_token);
    rm_fmt_bytes(cache, sizeof cache, s.cache_bytes_per_token);
    snprintf(buf, sizeof buf,
             "last turn: %d tokens at %.1f tok/s; prompt: %s; last %d tokens: median %s, p90 %s per token, "
             "storage %s/token, cache %s/token; hit rate %.1f%% (turn); speculation %llu/%llu accepted\n%s",
             s.tokens, s.tok_per_s, prompt, s.window, med, p90, io, cache,
             s.hit_rate >= 0 ? s.hit_rate * 100 : 0.0,
             (unsigned long long)s.accepted, (unsigned long long)s.drafted, sessions);
    ui_note_add(a, UI_S_NOTE, buf);
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
        ui_note_add(a, UI_S_ERROR, "out of memory: nothing was copied");
    } else if (!text.len) {
        ui_note_add(a, UI_S_ERROR, "/copy: no answer to copy yet");
    } else if (text.len > UI_OSC52_MAX) {
        char msg[160];
        snprintf(msg, sizeof msg, "/copy: the answer is %zu bytes, more than terminals take (%u); nothing was copied",
                 text.len, UI_OSC52_MAX);
        ui_note_add(a, UI_S_ERROR, msg);
    } else if (ui_osc52(text.p, text.len, &esc)) {
        ui_note_add(a, UI_S_ERROR, "out of memory: nothing was copied");
    } else if (ui_term_write(&a->term, esc.p, esc.len)) {
        ui_note_add(a, UI_S_ERROR, "/copy: the terminal could not be written to");
    } else {
        ui_note_hint(a, UI_C_NOTE, "copied the last answer (%zu bytes) to the clipboard (OSC 52: the terminal "
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
    if (!*arg) { ui_note_add(a, UI_S_ERROR, "usage: /find TEXT"); return; }
    ui_doc *d = &a->answer.doc;
    int again = a->find.text && !strcmp(a->find.text, arg) && a->find.block >= 0 && a->find.block < d->nblocks;
    if (!again) {
        free(a->find.text);
        a->find.text = strdup(arg);
        if (!a->find.text) { ui_note_add(a, UI_S_ERROR, "out of memory: /find did not run"); return; }
        a->find.block = d->nblocks - 1;
        a->find.off = (size_t)-1;
    }
    int total = 0, nth = 0, fb = -1;
    long fo = -1;
    for (int b = d->nblocks - 1; b >= 0; b--) {
        const ui_block *blk = &d->blocks[b];
        size_t before = blk->text.len;
        long at;
        while ((at = find_back(blk->text.p, blk->text.len, before, arg)) >= 0) {
            total++;
            int earlier = b < a->find.block || (b == a->find.block && (size_t)at < a->find.off);
            if (fb < 0 && earlier) { fb = b; fo = at; nth = total; }
            before = (size_t)at;
        }
    }
    if (!total) {
        a->answer.mark_block = -1;
        ui_note_hint(a, UI_C_MARK, "/find: \"%.80s\" is not in the transcript", arg);
        a->dirty |= UI_D_ANSWER;
        return;
    }
    if (fb < 0) {       /* past the first match: wrap to the last */
        a->find.block = d->nblocks - 1;
        a->find.off = (size_t)-1;
        find(a, arg);
        return;
    }
    a->find.block = fb;
    a->find.off = (size_t)fo;
    a->answer.mark_block = fb;
    a->answer.mark_start = (size_t)fo;
    a->answer.mark_end = (size_t)fo + strlen(arg);
    a->welcome_pinned = 0;
    ui_pane_show_line(&a->answer, ui_doc_find(d, fb, (size_t)fo));
    ui_note_hint(a, UI_C_NOTE, "/find: match %d of %d, counting back from the end (again: the one before; "
                  "Alt-End returns)", nth, total);
    a->dirty |= UI_D_ANSWER;
}

/* /save FILE and /load FILE|last: the name expanded (~), a folder refused;
 * "last" is the latest autosaved conversation of another chat. */
static void save_load(ui_tui *a, int load, const char *arg, const char *line)
{
    if (!*arg) { ui_note_add(a, UI_S_ERROR, load ? "usage: /load FILE|last" : "usage: /save FILE"); return; }
    if (ui_turn_busy(a, line)) return;
    char path[4096];
    rm_err err = { "" };
    if (load && !strcasecmp(arg, "last")) {
        if (ui_autosave_resolve(a, arg, path, sizeof path)) { ui_note_add(a, UI_S_ERROR, "no other saved conversation"); return; }
    } else if (ui_path_expand(arg, path, sizeof path, &err) || ui_path_not_dir(path, arg, &err)) {
        ui_note_add(a, UI_S_ERROR, err.msg);
        return;
    }
    if (load) ui_autosave_load(a, path);
    else ui_turn_command(a, UI_CMD_SAVE, path, "saving");
}

static void cmd_quit(ui_tui *a, const char *arg, const char *line) { a->quit = 1; }
static void cmd_help(ui_tui *a, const char *arg, const char *line) { ui_overlay_open(a, UI_OVL_HELP); }

static void cmd_system(ui_tui *a, const char *arg, const char *line)
{
    if (!*arg) {
        char buf[600];
        snprintf(buf, sizeof buf, "system prompt: %s", a->system_text ? a->system_text : "(none)");
        ui_note_add(a, UI_S_NOTE, buf);
        return;
    }
    if (ui_turn_busy(a, line)) return;
    free(a->pending_system);
    a->pending_system = strdup(arg);
    if (!a->pending_system) { ui_note_add(a, UI_S_ERROR, "out of memory: the system prompt was not set"); return; }
    ui_turn_command(a, UI_CMD_SYSTEM, arg, "setting the system prompt");
}

static void cmd_think(ui_tui *a, const char *arg, const char *line)
{
    if (!strcasecmp(arg, "on")) a->gen.think = 1;
    else if (!strcasecmp(arg, "off")) a->gen.think = 0;
    else if (*arg) { ui_note_add(a, UI_S_ERROR, "usage: /think on|off"); return; }
    ui_note_hint(a, UI_C_NOTE, "thinking %s", a->gen.think ? "on" : "off");
    a->dirty |= UI_D_STATUS;
}

static void cmd_clear(ui_tui *a, const char *arg, const char *line)
{
    if (ui_turn_busy(a, line)) return;
    ui_doc_clear(&a->answer.doc);
    ui_doc_clear(&a->reasoning.doc);
    ui_pane_end(&a->answer);
    ui_pane_end(&a->reasoning);
    ui_stats_reset(a->stats);
    a->turns = 0;
    a->turn_recs.n = 0;
    a->answer.mark_block = -1;
    a->find.block = -1;
    a->dirty |= UI_D_ANSWER | UI_D_REASONING | UI_D_PANELS;
    ui_turn_command(a, UI_CMD_CLEAR, NULL, "clearing");
}

static void cmd_save(ui_tui *a, const char *arg, const char *line) { save_load(a, 0, arg, line); }
static void cmd_load(ui_tui *a, const char *arg, const char *line) { save_load(a, 1, arg, line); }
static void cmd_stats(ui_tui *a, const char *arg, const char *line) { show_stats(a, arg); }
static void cmd_copy(ui_tui *a, const char *arg, const char *line) { copy(a); }
static void cmd_find(ui_tui *a, const char *arg, const char *line) { find(a, arg); }

/* One record per command, in /help's order (the man page lists them too). */
const ui_command ui_commands[] = {
    { "help",   NULL,   NULL,        "this page (F1); Esc closes it", cmd_help },
    { "system", NULL,   "[TEXT]",    "set the system prompt; without TEXT, show it", cmd_system },
    { "think",  NULL,   "on|off",    "open the reasoning channel in the next turns, or not", cmd_think },
    { "clear",  NULL,   NULL,        "forget the conversation", cmd_clear },
    { "save",   NULL,   "FILE",      "write the conversation to FILE (JSON lines) and its state to FILE's "
                                     "snapshot, atomically", cmd_save },
    { "load",   NULL,   "FILE|last", "replace the conversation with FILE's (last: the latest autosaved one of "
                                     "another chat), only when all of it is valid; its snapshot is used when "
                                     "it fits", cmd_load },
    { "stats",  NULL,   "[all]",     "the last turn's figures (while a reply streams: a live page); all: a page "
                                     "with every turn of the conversation as a table", cmd_stats },
    { "copy",   NULL,   NULL,        "put the last answer on the clipboard (OSC 52: works over SSH; in tmux, "
                                     "set-clipboard on)", cmd_copy },
    { "find",   NULL,   "TEXT",      "show the transcript's last match of TEXT, reversed; again: the one "
                                     "before", cmd_find },
    { "quit",   "exit", NULL,        "leave (also /exit, and Ctrl-D at an empty prompt)", cmd_quit },
};
const int ui_ncommands = (int)(sizeof ui_commands / sizeof ui_commands[0]);

/* "/NAME ARG": the command's record runs it; an unknown name goes back
 * into the input line. */
static void slash(ui_tui *a, char *line, const char *orig)
{
    char *arg = line + strcspn(line, " \t");
    if (*arg) *arg++ = 0;
    arg += strspn(arg, " \t");
    const char *cmd = line + 1;
    for (int i = 0; i < ui_ncommands; i++) {
        const ui_command *c = &ui_commands[i];
        if (!strcasecmp(cmd, c->name) || (c->alias && !strcasecmp(cmd, c->alias))) {
            c->run(a, arg, orig);
            return;
        }
    }
    ui_note_keep(a, UI_C_ERROR, orig, "unknown command /%.60s: /help lists the commands; //%.60s sends it as a message",
                 cmd, cmd);
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
        ui_turn_message(a, line[0] == '/' ? line + 1 : line, line);
    }
    free(line);
}
