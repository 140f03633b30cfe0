/* osc52.h — the terminal's clipboard escape (OSC 52): text put on the
 * clipboard by the terminal itself, so /copy works over SSH and inside tmux
 * (with its set-clipboard option on). */
#ifndef REMORA_UI_OSC52_H
#define REMORA_UI_OSC52_H

#include <stddef.h>
#include "engine.h"

/* Text longer than this is refused: terminals cap the escape (xterm reads
 * at most about a megabyte of it), and a cut copy would be worse than none. */
#define UI_OSC52_MAX (512u << 10)

/* Appends ESC ] 52 ; c ; base64(text) BEL to out. Returns 0, or -1 when
 * out of memory. */
int ui_osc52(const char *text, size_t len, rm_buf *out);

#endif
