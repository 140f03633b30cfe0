/* keys.h — the key bindings and the terminal input parser.
 *
 * ui_keybindings[] is the one table of keys: the dispatcher looks actions up
 * in it, `remora chat --keys` and /help print it, and tests/sh/man.sh checks
 * it against the man page. Keys marked UI_ACT_READLINE are GNU readline's
 * own (they reach readline as bytes); the others are handled by the UI.
 *
 * The parser turns raw terminal bytes into key names (for sequences the UI
 * handles), pasted text (bracketed paste, delivered whole however many reads
 * it spans; a paste that cannot be kept whole, past UI_PASTE_MAX or out of
 * memory, is refused with an error event, never cut), mouse wheel events,
 * and runs of plain bytes for readline. It is
 * pure, so it is unit-tested without a terminal. An escape sequence cut at
 * the end of a read is held back; ui_keys_flush() releases it when no more
 * bytes come (a lone Esc).
 *
 * Sequences come from a built-in table (xterm, rxvt, the Linux console's
 * "ESC [ [ A" for F1...) and from the terminal's own description: the front
 * end adds what terminfo says F1..F12 send (ui_keys_add), so keys work on
 * terminals the table does not know. Function keys without a binding are
 * taken and ignored rather than typed into the line.
 */
#ifndef REMORA_UI_KEYS_H
#define REMORA_UI_KEYS_H

#include <stddef.h>
#include <stdio.h>
#include "engine.h"

enum {
    UI_ACT_READLINE,            /* readline's own binding */
    UI_ACT_INTERRUPT, UI_ACT_EOF, UI_ACT_SUSPEND, UI_ACT_REDRAW,
    UI_ACT_NEWLINE, UI_ACT_FOCUS,
    UI_ACT_PAGE_UP, UI_ACT_PAGE_DOWN, UI_ACT_TOP, UI_ACT_BOTTOM,
    UI_ACT_WHEEL_UP, UI_ACT_WHEEL_DOWN,
    UI_ACT_HELP, UI_ACT_TOGGLE_REASONING, UI_ACT_TOGGLE_PANELS,
    UI_ACT_ZOOM, UI_ACT_LAYER_PREV, UI_ACT_LAYER_NEXT,
    UI_ACT_UNFOLD,
};

typedef struct ui_keybinding {
    const char *key;            /* as written in the man page: "Ctrl-C", "PgUp" */
    int         action;
    const char *what;
} ui_keybinding;

extern const ui_keybinding ui_keybindings[];
extern const int ui_nkeybindings;

/* Action bound to a key name, or -1. */
int  ui_keys_action(const char *key);
/* Prints the table, one "KEY<TAB>WHAT" line per binding. */
void ui_keys_print(FILE *f);

enum { UI_IN_KEY, UI_IN_BYTES, UI_IN_PASTE, UI_IN_ERROR };

#define UI_PASTE_MAX (64u << 20)    /* bytes of one bracketed paste */

/* type UI_IN_KEY: data is the key name; BYTES/PASTE: len bytes of input;
 * ERROR: a message (a paste was refused). */
typedef void (*ui_key_fn)(void *ud, int type, const char *data, size_t len);

#define UI_KEYS_EXTRA 24       /* sequences ui_keys_add can add */

typedef struct ui_keyparser {
    struct { char seq[16]; char key[8]; } extra[UI_KEYS_EXTRA];
    int    nextra;
    char   pend[64];
    size_t npend;
    int    in_paste;
    int    paste_failed;        /* the paste in progress could not be kept */
    rm_buf paste;               /* max: UI_PASTE_MAX (tests lower it) */
    int    mouse_x, mouse_y;    /* position of the last wheel event, 0-based */
} ui_keyparser;

void ui_keys_init(ui_keyparser *p);
void ui_keys_free(ui_keyparser *p);
/* Teaches the parser that `seq` (an escape sequence, as terminfo gives it)
 * is the key `key` ("F1"). Returns 0, or -1 when the sequence is unusable
 * or the table is full. */
int  ui_keys_add(ui_keyparser *p, const char *seq, const char *key);
void ui_keys_feed(ui_keyparser *p, const char *buf, size_t n, ui_key_fn fn, void *ud);
/* Bytes held back waiting for the rest of a sequence (not during a paste). */
int  ui_keys_pending(const ui_keyparser *p);
void ui_keys_flush(ui_keyparser *p, ui_key_fn fn, void *ud);

#endif
