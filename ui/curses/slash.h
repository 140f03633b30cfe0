/* slash.h — the slash commands, one record each (slash.c). */
#ifndef REMORA_UI_CURSES_SLASH_H
#define REMORA_UI_CURSES_SLASH_H

#include "tui.h"

/* The commands, in /help's order (ui_command: tui.h). */
extern const ui_command ui_commands[];
extern const int ui_ncommands;

/* Readline's line handler (a command, or a message for turn.c). */
void ui_slash_line(void *ud, char *line);

#endif
