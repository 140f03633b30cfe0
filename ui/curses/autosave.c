/* autosave.c — the chat's conversation kept on disk as it goes: after every
 * turn the worker saves it with its state (transcript and snapshot, through
 * the source's save) into this chat's session file (ui/sessions.h); every
 * way out saves what the last autosave did not hold (a turn stopped by the
 * quit itself) and says where; `remora chat --resume [FILE]` and
 * `/load last` bring a session back.
 *
 * A failed save (a full disk, a folder that cannot be written) is a note in
 * the transcript pane; the chat goes on, and the files of the last save
 * that worked are left as they were (the engine's save is atomic, the
 * transcript written before its snapshot).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tui.h"
#include "autosave.h"
#include "note.h"
#include "draw.h"
#include "ui/sessions.h"

void ui_autosave_open(ui_tui *a, const char *resume)
{
    char path[4096];
    a->saved_clean = 1;
    if (ui_sessions_new(a->session, sizeof a->session)) {
        a->session[0] = 0;
        ui_note_add(a, UI_S_ERROR, "no folder for the autosaved conversation ($XDG_STATE_HOME or $HOME): "
                                     "conversations are kept only with /save FILE");
    }
    if (!resume) return;
    if (!*resume && ui_sessions_last(NULL, path, sizeof path)) {
        ui_note_add(a, UI_S_NOTE, "no saved conversation to resume: this is a new one");
        return;
    }
    ui_autosave_load(a, *resume ? resume : path);
    a->resuming = a->busy_cmd;
}

void ui_autosave_load(ui_tui *a, const char *path)
{
    snprintf(a->load_path, sizeof a->load_path, "%s", path);
    if (ui_worker_submit(a->worker, UI_CMD_LOAD, path, &a->gen)) {
        ui_note_add(a, UI_S_ERROR, "cannot start loading the conversation");
        return;
    }
    a->busy_cmd = 1;
    ui_note_hint(a, UI_C_DIM, "loading %s", path);
}

int ui_autosave_resolve(ui_tui *a, const char *arg, char *out, size_t n)
{
    if (strcasecmp(arg, "last")) {
        snprintf(out, n, "%s", arg);
        return 0;
    }
    return ui_sessions_last(a->session[0] ? a->session : NULL, out, n);
}

void ui_autosave_loaded(ui_tui *a)
{
    /* a session brought back goes on in its own file */
    if (ui_sessions_inside(a->load_path)) snprintf(a->session, sizeof a->session, "%s", a->load_path);
    a->saved_clean = 0;
}

void ui_autosave_changed(ui_tui *a) { a->saved_clean = 0; }

void ui_autosave_turn(ui_tui *a)
{
    a->saved_clean = 0;
    if (!a->session[0] || a->quit || ui_worker_submit(a->worker, UI_CMD_SAVE, a->session, &a->gen)) return;
    a->busy_cmd = a->autosaving = 1;
}

int ui_autosave_queue(ui_tui *a, const char *text)
{
    if (!a->autosaving || a->generating || a->queued) return 0;
    if (!(a->queued = strdup(text))) return 0;
    ui_note_hint(a, UI_C_MARK, "saving the conversation: the message goes when it is saved");
    return 1;
}

int ui_autosave_done(ui_tui *a, const ui_done *d)
{
    if (d->cmd != UI_CMD_SAVE || !a->autosaving) return 0;
    a->autosaving = 0;
    a->autosave_failed = d->rc != 0;
    if (d->rc) {
        char buf[1300];
        snprintf(buf, sizeof buf, "autosave: %s", d->msg);
        ui_note_add(a, UI_S_ERROR, buf);
    } else {
        a->saved_clean = 1;
        a->unsaved = 0;
        ui_sessions_usage u;
        if (ui_sessions_trim(a->session, &u) == 0 && u.removed)
            ui_note_hint(a, UI_C_DIM, "sessions: %d old files removed to keep within %.1f GB", u.removed,
                          u.limit / 1e9);
    }
    return 1;
}

int ui_autosave_covers(const ui_tui *a) { return a->session[0] && !a->autosave_failed; }

int ui_autosave_close(ui_tui *a)
{
    const rm_chat_msg *m;
    if (!a->session[0]) return 0;
    if (a->worker_stuck) {
        /* the source is still the worker's: what the last autosave wrote stands */
        if (a->saved_clean) return 0;
        snprintf(a->quit_note, sizeof a->quit_note, "the engine did not stop in time: the last turn was not saved; "
                 "%s holds what the last autosave wrote", a->session);
        return -1;
    }
    if (a->src->vt->messages(a->src, &m) == 0) return 0;
    rm_err err = { "" };
    if (!a->saved_clean && a->src->vt->save(a->src, a->session, &err)) {
        snprintf(a->quit_note, sizeof a->quit_note, "the conversation could not be saved: %s", err.msg);
        return -1;
    }
    snprintf(a->quit_note, sizeof a->quit_note, "the conversation is saved in %s (%s goes on from it)", a->session,
             a->resume_cmd ? a->resume_cmd : "remora chat --resume");
    return 0;
}

void ui_autosave_stats(ui_tui *a, char *buf, size_t n)
{
    ui_sessions_usage u;
    if (!a->session[0] || ui_sessions_usage_of(&u)) {
        snprintf(buf, n, "sessions: not autosaved (no state folder)");
        return;
    }
    char used[32];
    rm_fmt_bytes(used, sizeof used, (double)u.bytes);
    snprintf(buf, n, "sessions: autosaved to %s; %d kept, %s of %.1f GB%s (the oldest snapshots go first)",
             a->session, u.sessions, used, u.limit / 1e9, u.bad_limit ? " (REMORA_SESSIONS_GB is not a size)" : "");
}
