/* turn.h — messages become turns; the worker's commands and what their
 * ends put in the transcript (turn.c). */
#ifndef REMORA_UI_CURSES_TURN_H
#define REMORA_UI_CURSES_TURN_H

#include "tui.h"

void ui_turn_submit(ui_tui *a, const char *text);    /* sends a message */
/* A message: sent now, queued behind the storage probe or the autosave,
 * or kept in the input line (line) while the worker is taken. */
void ui_turn_message(ui_tui *a, const char *text, const char *line);
/* Whether the worker is taken; if so, line goes back to the input. */
int  ui_turn_busy(ui_tui *a, const char *line);
/* Starts worker command cmd with arg; the hint says `what` meanwhile. */
void ui_turn_command(ui_tui *a, int cmd, const char *arg, const char *what);
void ui_turn_done(ui_tui *a, const ui_done *d);      /* a worker command ended */
/* Starts the storage probe (a busy command). */
void ui_turn_probe(ui_tui *a);
/* The answer pane's opening note (ui/welcome.h). */
void ui_turn_welcome(ui_tui *a);
/* Records that have arrived: announces a full re-prefill once per turn. */
void ui_turn_records(ui_tui *a);
/* Ctrl-D at an empty prompt: quits, or first asks once when a reply is
 * being generated or turns are not saved. */
void ui_turn_eof(ui_tui *a);

#endif
