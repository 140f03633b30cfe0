/* input.h — the input line: GNU readline driven through its callback
 * interface, inside the curses screen.
 *
 * Readline never touches the terminal here: its terminal preparation and
 * signal handling are off, its output goes to /dev/null, and it reads bytes
 * from a queue that the UI fills with what its key parser did not take. The
 * line is drawn by ui_input_draw() from rl_display_prompt and
 * rl_line_buffer, so readline's own prompts (reverse-i-search) show.
 *
 * The history persists in a file (mode 0600). Each line is appended to it
 * as it is entered (readline's append_history, one write with O_APPEND), so
 * a crash or SIGKILL loses nothing and two chats at once add to the file
 * without overwriting each other; at exit the file is read back whole (the
 * other chats' lines included) and, when it holds more than the history's
 * limit, rewritten with the latest entries, atomically as rm_write_atomic
 * replaces files. The merge holds an exclusive lock on the folder and the
 * appends a shared one (flock, waited for a bounded time). Home and End
 * move in the line, as in bash. Ctrl-X Ctrl-E edits the line in
 * $VISUAL/$EDITOR. Readline is global state: one input at a time, on the UI
 * thread only.
 */
#ifndef REMORA_UI_INPUT_H
#define REMORA_UI_INPUT_H

#include <stddef.h>
#include "engine.h"
#include "ui/layout.h"

/* A complete line (malloc'd, the callee frees it), or NULL at end of input. */
typedef void (*ui_line_fn)(void *ud, char *line);

typedef struct ui_input_hooks {
    ui_line_fn on_line;
    void (*leave_screen)(void *ud);     /* before running the editor */
    void (*enter_screen)(void *ud);     /* after it */
    void *ud;
} ui_input_hooks;

/* history_path may be NULL (no persistent history). Returns 0 or -1. */
int  ui_input_init(const char *history_path, const ui_input_hooks *hooks);
/* Merges the history file (see above) and releases readline. Returns 0,
 * or -1 when a line could not be added to the history file or the merge
 * failed (why in err: the first failure). */
int  ui_input_free(rm_err *err);
/* Hands bytes to readline. Returns 0, or -1 when out of memory (the bytes
 * are not taken: the caller says so). */
int  ui_input_feed(const char *bytes, size_t n);
/* Inserts literal text at the cursor (pastes, Alt-Enter's newline).
 * Returns 0, or -1 when out of memory (nothing is inserted). */
int  ui_input_insert(const char *text, size_t n);
/* What went wrong inside a readline command since the last call (the
 * external editor's text could not be read back), or NULL. */
const char *ui_input_error(void);
int  ui_input_empty(void);
/* Called from the line handler: `line` goes back into the input line once
 * readline is done with the line that was entered. Returns 0, or -1 when
 * out of memory. */
int  ui_input_keep(const char *line);
/* Abandons the line and any search in progress (Ctrl-C). */
void ui_input_cancel(void);
/* Whether readline asked for a redisplay since the last draw. */
int  ui_input_dirty(void);
/* Rows the prompt and text need at this width, at most max_rows. */
int  ui_input_rows(int width, int max_rows);
/* Draws the hint row (first row of r) and the text rows; returns the cursor
 * position through *cy, *cx. */
void ui_input_draw(ui_rect r, const char *hint, int hint_role, int *cy, int *cx);

#endif
