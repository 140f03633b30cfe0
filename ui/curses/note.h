/* note.h — transcript notes and the hint row; text a pane could not take
 * (note.c). */
#ifndef REMORA_UI_CURSES_NOTE_H
#define REMORA_UI_CURSES_NOTE_H

#include "tui.h"

void ui_note_hint(ui_tui *a, int role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Puts a line the UI could not act on back into the input line, and says
 * why in the hint row. */
void ui_note_keep(ui_tui *a, int role, const char *line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A pane's document could not take text (out of memory): says so, stops a
 * streaming turn, and leaves an error note when the turn ends. */
void ui_note_lost(ui_tui *a);
/* rc of a document call: a failure is reported (ui_note_lost). */
void ui_note_check(ui_tui *a, int rc);
int  ui_note_role(int style);
/* A note in the transcript pane (the hint row while a reply streams). */
void ui_note_add(ui_tui *a, int style, const char *text);

#endif
