/* loop.h — the event loop (loop.c): one poll(), dirty bits, at most one
 * frame per 1/30 s. */
#ifndef REMORA_UI_CURSES_LOOP_H
#define REMORA_UI_CURSES_LOOP_H

#include "tui.h"

/* Runs the chat until it quits: 0, or -1 when poll() fails. */
int  ui_loop_run(ui_tui *a);

#endif
