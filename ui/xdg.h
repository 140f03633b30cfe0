/* xdg.h — where remora keeps its state: $XDG_STATE_HOME/remora (by default
 * ~/.local/state/remora), holding the input history and the log of engine
 * messages written while the screen is in use. */
#ifndef REMORA_UI_XDG_H
#define REMORA_UI_XDG_H

#include <stddef.h>

/* Writes "<state dir>/remora/<name>" into buf, creating the directories.
 * Returns 0, or -1 when no home is known or a directory cannot be made. */
int ui_xdg_path(char *buf, size_t n, const char *name);

#endif
