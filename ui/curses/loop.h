/* loop.h — the event loop (loop.c): one poll(), dirty bits, at most one
 * frame per 1/30 s. */
#ifndef REMORA_UI_CURSES_LOOP_H
#define REMORA_UI_CURSES_LOOP_H

#include "tui.h"

/* Runs the chat until it quits: 0, or -1 when poll() fails. */
int  ui_loop_run(ui_tui *a);
/* After a quit: while the autosave writes (a large snapshot on a slow disk
 * takes long), the screen stays up, its status line and hint row say what
 * is waited for, and the save's end is taken as in the loop (its note, the
 * session kept clean); at most WORKER_SAVE_WAIT_S. */
void ui_loop_finish_save(ui_tui *a);

#endif
