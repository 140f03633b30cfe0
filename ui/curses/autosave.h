/* autosave.h — the conversation kept on disk: saved after every turn and on
 * every way out; --resume and /load (autosave.c). */
#ifndef REMORA_UI_CURSES_AUTOSAVE_H
#define REMORA_UI_CURSES_AUTOSAVE_H

#include "tui.h"

/* Picks this chat's session file; resume (NULL: none, "": the last session,
 * else a transcript) is loaded through the worker. */
void ui_autosave_open(ui_tui *a, const char *resume);
/* Loads a transcript and its snapshot through the worker (/load, --resume). */
void ui_autosave_load(ui_tui *a, const char *path);
/* The file /load ARG means: ARG, or for "last" the latest other session.
 * Returns 0, or -1 when there is none. */
int  ui_autosave_resolve(ui_tui *a, const char *arg, char *out, size_t n);
/* A load worked: a session brought back goes on in its own file. */
void ui_autosave_loaded(ui_tui *a);
/* The conversation changed (a message, /system, /clear). */
void ui_autosave_changed(ui_tui *a);
/* A turn ended: the worker saves the conversation with its state. */
void ui_autosave_turn(ui_tui *a);
/* A message sent while the autosave writes the snapshot (a large model's
 * takes a while) is queued (a->queued) and goes when it ends: returns 1
 * then. */
int  ui_autosave_queue(ui_tui *a, const char *text);
/* 1 when d was the autosave (a failure is a note; the chat goes on; the
 * caller sends a queued message). */
int  ui_autosave_done(ui_tui *a, const ui_done *d);
/* Whether a quit keeps every turn: the autosave works and saves at the end. */
int  ui_autosave_covers(const ui_tui *a);
/* On the way out, the worker stopped: saves what the last autosave did
 * not hold and says where in a->quit_note. -1 when it could not. */
int  ui_autosave_close(ui_tui *a);
/* The /stats line of the sessions folder. */
void ui_autosave_stats(ui_tui *a, char *buf, size_t n);

#endif
