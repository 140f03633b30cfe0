/* sessions.h — the chat's autosaved conversations, curses-free (the curses
 * side is ui/curses/autosave.c): $XDG_STATE_HOME/remora/sessions/ holds one
 * transcript per chat, NAME.jsonl, and the snapshot of its state beside it,
 * NAME.state (rm_snapshot_path). NAME is the local time the chat began and
 * its process id (20250101-093000-4242), so two chats never share one.
 *
 * The folder is bounded (REMORA_SESSIONS_GB, default 2 GB): when it is over,
 * the oldest snapshots are removed first (a conversation without its
 * snapshot is only slower to continue: it is computed again), and only when
 * the transcripts alone are over it, the oldest transcripts; never the
 * files of the chat that is saving.
 */
#ifndef REMORA_UI_SESSIONS_H
#define REMORA_UI_SESSIONS_H

#include <stddef.h>
#include <stdint.h>

#define UI_SESSIONS_DEFAULT_GB 2.0

/* The folder, created (0700) when missing, into buf. Returns 0, or -1 when
 * there is no state folder (no home) or it cannot be made. */
int ui_sessions_dir(char *buf, size_t n);
/* The transcript path of a new chat's session (not created). */
int ui_sessions_new(char *buf, size_t n);
/* The most recently saved session's transcript other than `not` (may be
 * NULL). Returns 0, or -1 when there is none. */
int ui_sessions_last(const char *not, char *buf, size_t n);
/* Whether path is a transcript in the sessions folder. */
int ui_sessions_inside(const char *path);

/* What the folder holds. */
typedef struct ui_sessions_usage {
    int sessions;           /* transcripts */
    uint64_t bytes;         /* transcripts and snapshots */
    uint64_t limit;
    int bad_limit;          /* REMORA_SESSIONS_GB was not a size: the default is used */
    int removed;            /* files the last trim removed */
} ui_sessions_usage;

/* The bound, from REMORA_SESSIONS_GB (default 2 GB). */
uint64_t ui_sessions_limit(int *bad);
/* Removes the oldest files until the folder is within the bound (never
 * keep's transcript or snapshot), and fills u with what is left. */
int ui_sessions_trim(const char *keep, ui_sessions_usage *u);
/* Fills u without removing anything. */
int ui_sessions_usage_of(ui_sessions_usage *u);

#endif
