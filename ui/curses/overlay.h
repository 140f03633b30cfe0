/* overlay.h — full-screen pages over the chat: the help, /stats and /stats
 * all (overlay.c). */
#ifndef REMORA_UI_CURSES_OVERLAY_H
#define REMORA_UI_CURSES_OVERLAY_H

#include "tui.h"

/* Opens page `kind` (or closes it when it is the one open);
 * draws the open page below the status line; takes a key while a page is
 * open (returns 1 when the key was the page's). */
void ui_overlay_open(ui_tui *a, int kind);
void ui_overlay_draw(ui_tui *a);
int  ui_overlay_key(ui_tui *a, int type, const char *data, size_t len);

#endif
