/* term.h — the terminal while the chat owns it.
 *
 * Opens curses on a pair of streams (the tty, or a pty for the benchmark) in
 * raw mode, so Ctrl-C, Ctrl-Z and Ctrl-D arrive as bytes and the UI decides
 * what they mean. Signal handlers only record the signal and write to a
 * self-pipe the loop polls. While the screen is in use, fd 2 goes to a log
 * file so engine messages cannot corrupt it; leaving (exit, suspend, the
 * external editor) restores the terminal modes and fd 2. A terminal that
 * cannot address the cursor (TERM=dumb, hardcopy) is refused: the chat
 * cannot draw on it, and `remora run` is the command for it.
 */
#ifndef REMORA_UI_TERM_H
#define REMORA_UI_TERM_H

#include <stdio.h>
#include "ui/keys.h"

enum { UI_SIG_WINCH = 1, UI_SIG_INT = 2, UI_SIG_TERM = 4, UI_SIG_CONT = 8, UI_SIG_HUP = 16 };

typedef struct ui_term {
    void *screen;           /* SCREEN * */
    FILE *out, *in;
    int   mouse;
    int   color;
    int   saved_stderr;     /* -1 when fd 2 is not redirected */
    int   log_fd;
    int   active;           /* curses mode is on */
    int   sync;             /* frames are sent as DEC mode 2026 synchronized updates */
    const char *civis, *cnorm;  /* terminfo: hide and show the cursor (NULL: cannot) */
} ui_term;

/* log_path NULL: leave fd 2 alone. Returns 0, -1 (message in err), or -2
 * when the terminal cannot address the cursor (message in err). */
int  ui_term_open(ui_term *t, FILE *out, FILE *in, int mouse, const char *log_path,
                  char *err, size_t errlen);
/* Adds the terminal's own F1..F12 sequences (terminfo kf1..kf12) to kp. */
void ui_term_learn_keys(ui_keyparser *kp);
void ui_term_close(ui_term *t);
/* Gives the terminal back (editor, suspend) and takes it again. */
void ui_term_leave(ui_term *t);
void ui_term_enter(ui_term *t);
/* Ctrl-Z: leaves, stops the process, and comes back when continued. */
void ui_term_suspend(ui_term *t);
/* The read end of the signal self-pipe, and the signals seen since the
 * last call (UI_SIG_* bits). */
int  ui_term_signal_fd(void);
int  ui_term_take_signals(void);
/* Writes bytes straight to the terminal (an escape curses does not know,
 * such as OSC 52), after what curses has drawn. Returns 0 or -1. */
int  ui_term_write(ui_term *t, const char *s, size_t n);
/* Around a frame's refresh(): hide the cursor and open a synchronized
 * update (DEC private mode 2026: the terminal shows the frame whole, never
 * half drawn), then close it and show the cursor where curses put it. */
void ui_term_frame_begin(ui_term *t);
void ui_term_frame_end(ui_term *t);
/* Applies the terminal's current size to curses. */
void ui_term_resize(ui_term *t);

#endif
