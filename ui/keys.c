/* keys.c — key binding table and terminal input parser (see keys.h). */
#include <stdlib.h>
#include <string.h>
#include "keys.h"
#include "text.h"

const ui_keybinding ui_keybindings[] = {
    { "Enter",         UI_ACT_READLINE,          "send the message, or run a /command" },
    { "Alt-Enter",     UI_ACT_NEWLINE,           "insert a newline (multi-line message)" },
    { "Ctrl-C",        UI_ACT_INTERRUPT,         "stop generating (the partial answer is kept); "
                                                 "else clear the line; at an empty prompt, say how to quit" },
    { "Ctrl-D",        UI_ACT_EOF,               "quit at an empty prompt; else delete the character under the cursor" },
    { "Ctrl-Z",        UI_ACT_SUSPEND,           "suspend to the shell (resume with fg)" },
    { "Ctrl-L",        UI_ACT_REDRAW,            "redraw the screen" },
    { "Tab",           UI_ACT_FOCUS,             "switch the scrolling keys between the answer and reasoning panes" },
    { "PgUp",          UI_ACT_PAGE_UP,           "scroll the focused pane up a page (it stops following new text)" },
    { "PgDn",          UI_ACT_PAGE_DOWN,         "scroll the focused pane down a page" },
    { "Alt-Home",      UI_ACT_TOP,               "scroll the focused pane to the start of the conversation" },
    { "Ctrl-Home",     UI_ACT_TOP,               "the same as Alt-Home" },
    { "Alt-End",       UI_ACT_BOTTOM,            "scroll the focused pane to the end and follow new text" },
    { "Ctrl-End",      UI_ACT_BOTTOM,            "the same as Alt-End" },
    { "Alt-O",         UI_ACT_UNFOLD,            "open the folded long messages (pastes) whole, or fold them again" },
    { "Wheel-Up",      UI_ACT_WHEEL_UP,          "scroll the pane under the mouse up (with --mouse)" },
    { "Wheel-Down",    UI_ACT_WHEEL_DOWN,        "scroll the pane under the mouse down (with --mouse)" },
    { "F1",            UI_ACT_HELP,              "the help page: keys, commands, what the panels show (F1 or Esc closes)" },
    { "F2",            UI_ACT_TOGGLE_REASONING,  "collapse or expand the reasoning pane" },
    { "Ctrl-T",        UI_ACT_TOGGLE_REASONING,  "collapse or expand the reasoning pane" },
    { "F3",            UI_ACT_TOGGLE_PANELS,     "hide or show the panels" },
    { "F4",            UI_ACT_ZOOM,              "zoom the router map on one layer, or back to all layers" },
    { "Alt-Up",        UI_ACT_LAYER_PREV,        "zoomed router layer: previous layer" },
    { "Alt-Down",      UI_ACT_LAYER_NEXT,        "zoomed router layer: next layer" },
    { "Up",            UI_ACT_READLINE,          "previous history entry" },
    { "Down",          UI_ACT_READLINE,          "next history entry" },
    { "Ctrl-R",        UI_ACT_READLINE,          "search the history backwards" },
    { "Home",          UI_ACT_READLINE,          "move to the start of the line" },
    { "End",           UI_ACT_READLINE,          "move to the end of the line" },
    { "Ctrl-A",        UI_ACT_READLINE,          "move to the start of the line" },
    { "Ctrl-E",        UI_ACT_READLINE,          "move to the end of the line" },
    { "Ctrl-X Ctrl-E", UI_ACT_READLINE,          "edit the message in $VISUAL or $EDITOR" },
};
const int ui_nkeybindings = (int)(sizeof ui_keybindings / sizeof ui_keybindings[0]);

int ui_keys_action(const char *key)
{
    for (int i = 0; i < ui_nkeybindings; i++)
        if (!strcmp(ui_keybindings[i].key, key)) return ui_keybindings[i].action;
    return -1;
}

void ui_keys_print(FILE *f)
{
    for (int i = 0; i < ui_nkeybindings; i++)
        fprintf(f, "%-15s %s\n", ui_keybindings[i].key, ui_keybindings[i].what);
}

/* Byte sequences of the keys the UI handles itself. */
static const struct { const char *seq; const char *key; } seqs[] = {
    { "\x03", "Ctrl-C" }, { "\x04", "Ctrl-D" }, { "\x1a", "Ctrl-Z" }, { "\x0c", "Ctrl-L" },
    { "\x14", "Ctrl-T" }, { "\t", "Tab" },
    { "\x1b\r", "Alt-Enter" }, { "\x1b\n", "Alt-Enter" },
    { "\x1b[5~", "PgUp" }, { "\x1b[6~", "PgDn" },
    /* Home and End themselves go to readline (the input line) */
    { "\x1b[1;3H", "Alt-Home" }, { "\x1b[1;3F", "Alt-End" }, { "\x1b[1;3~", "Alt-Home" },
    { "\x1b[4;3~", "Alt-End" }, { "\x1b\x1b[1~", "Alt-Home" }, { "\x1b\x1b[4~", "Alt-End" },
    { "\x1b\x1b[H", "Alt-Home" }, { "\x1b\x1b[F", "Alt-End" }, { "\x1b\x1bOH", "Alt-Home" },
    { "\x1b\x1bOF", "Alt-End" }, { "\x1b\x1b[7~", "Alt-Home" }, { "\x1b\x1b[8~", "Alt-End" },
    { "\x1b[1;5H", "Ctrl-Home" }, { "\x1b[1;5F", "Ctrl-End" }, { "\x1b[1;5~", "Ctrl-Home" },
    { "\x1b[4;5~", "Ctrl-End" }, { "\x1b[7^", "Ctrl-Home" }, { "\x1b[8^", "Ctrl-End" },
    { "\x1bo", "Alt-O" },
    { "\x1bOP", "F1" }, { "\x1b[11~", "F1" }, { "\x1bOQ", "F2" }, { "\x1b[12~", "F2" },
    { "\x1bOR", "F3" }, { "\x1b[13~", "F3" }, { "\x1bOS", "F4" }, { "\x1b[14~", "F4" },
    /* the Linux console */
    { "\x1b[[A", "F1" }, { "\x1b[[B", "F2" }, { "\x1b[[C", "F3" }, { "\x1b[[D", "F4" }, { "\x1b[[E", "F5" },
    /* unbound function keys: taken, not typed */
    { "\x1b[15~", "F5" }, { "\x1b[17~", "F6" }, { "\x1b[18~", "F7" }, { "\x1b[19~", "F8" },
    { "\x1b[20~", "F9" }, { "\x1b[21~", "F10" }, { "\x1b[23~", "F11" }, { "\x1b[24~", "F12" },
    { "\x1b[1;3A", "Alt-Up" }, { "\x1b\x1b[A", "Alt-Up" },
    { "\x1b[1;3B", "Alt-Down" }, { "\x1b\x1b[B", "Alt-Down" },
};
#define NSEQS (int)(sizeof seqs / sizeof seqs[0])

static const char PASTE_START[] = "\x1b[200~";
static const char PASTE_END[] = "\x1b[201~";

void ui_keys_init(ui_keyparser *p)
{
    memset(p, 0, sizeof *p);
    p->paste.max = UI_PASTE_MAX;
}

void ui_keys_free(ui_keyparser *p) { rm_buf_free(&p->paste); memset(p, 0, sizeof *p); }

int ui_keys_add(ui_keyparser *p, const char *seq, const char *key)
{
    size_t n = strlen(seq);
    if (n < 2 || seq[0] != 0x1b || n >= sizeof p->extra[0].seq || strlen(key) >= sizeof p->extra[0].key ||
        p->nextra == UI_KEYS_EXTRA)
        return -1;
    for (int i = 0; i < p->nextra; i++)
        if (!strcmp(p->extra[i].seq, seq)) return 0;
    snprintf(p->extra[p->nextra].seq, sizeof p->extra[0].seq, "%s", seq);
    snprintf(p->extra[p->nextra].key, sizeof p->extra[0].key, "%s", key);
    p->nextra++;
    return 0;
}

/* A sequence the terminal's description taught (ui_keys_add) at s: sets
 * *len and returns its key; returns "" when s is a cut start of one (wait
 * for more), NULL when none matches. */
static const char *learned(const ui_keyparser *p, const char *s, size_t n, size_t *len)
{
    int partial = 0;
    for (int i = 0; i < p->nextra; i++) {
        size_t l = strlen(p->extra[i].seq);
        if (n >= l && !memcmp(s, p->extra[i].seq, l)) { *len = l; return p->extra[i].key; }
        if (n < l && !memcmp(s, p->extra[i].seq, n)) partial = 1;
    }
    return partial ? "" : NULL;
}

int ui_keys_pending(const ui_keyparser *p) { return p->npend > 0 && !p->in_paste; }

static const char *lookup(const char *s, size_t n)
{
    for (int i = 0; i < NSEQS; i++)
        if (strlen(seqs[i].seq) == n && !memcmp(seqs[i].seq, s, n)) return seqs[i].key;
    return NULL;
}

/* Length of the escape sequence at s[0] == ESC, or 0 if it is cut short. */
static size_t esc_len(const char *s, size_t n)
{
    if (n < 2) return 0;
    if (s[1] == '[' && n >= 3 && s[2] == '[') return n < 4 ? 0 : 4;    /* the Linux console's F1..F5 */
    if (s[1] == '[') {
        for (size_t j = 2; j < n; j++) {
            unsigned char c = (unsigned char)s[j];
            if (c >= 0x40 && c <= 0x7E) return j + 1;
            if (c < 0x20 || c > 0x3F) return j;     /* malformed: stop before it */
        }
        return 0;
    }
    if (s[1] == 'O') return n < 3 ? 0 : 3;
    if (s[1] == 0x1b) {
        size_t k = esc_len(s + 1, n - 1);
        return k ? k + 1 : (n >= 3 ? 2 : 0);
    }
    return 2;
}

/* Keeps pasted bytes; once some cannot be kept the whole paste is refused
 * (its bytes are let go, the rest of it is consumed up to the end marker). */
static void paste_add(ui_keyparser *p, const char *s, size_t n)
{
    if (p->paste_failed || !n) return;
    if (rm_buf_add(&p->paste, s, n) == 0) return;
    p->paste_failed = p->paste.max && p->paste.len + n > p->paste.max ? 1 : 2;
    rm_buf_free(&p->paste);                 /* keeps max */
}

/* The end of a paste: its text, or why it was refused. */
static void paste_end(ui_keyparser *p, ui_key_fn fn, void *ud)
{
    if (p->paste_failed) {
        char msg[128];
        size_t max = p->paste.max;
        if (p->paste_failed == 1 && max % (1u << 20) == 0)
            snprintf(msg, sizeof msg, "paste refused: more than %zu MB", max >> 20);
        else if (p->paste_failed == 1)
            snprintf(msg, sizeof msg, "paste refused: more than %zu bytes", max);
        else
            snprintf(msg, sizeof msg, "paste refused: out of memory");
        fn(ud, UI_IN_ERROR, msg, strlen(msg));
    } else {
        fn(ud, UI_IN_PASTE, p->paste.p ? p->paste.p : "", p->paste.len);
    }
    rm_buf_reset(&p->paste);
    p->paste_failed = 0;
    p->in_paste = 0;
}

/* Handles a complete mouse report ESC [ < b ; x ; y (M|m). */
static void mouse(ui_keyparser *p, const char *s, size_t n, ui_key_fn fn, void *ud)
{
    char buf[32];
    if (n >= sizeof buf) return;
    memcpy(buf, s + 3, n - 3);
    buf[n - 3] = 0;
    int b, x, y;
    if (sscanf(buf, "%d;%d;%d", &b, &x, &y) != 3) return;
    p->mouse_x = x - 1;
    p->mouse_y = y - 1;
    b &= ~(4 | 8 | 16);     /* modifiers */
    if (b == 64) fn(ud, UI_IN_KEY, "Wheel-Up", 8);
    else if (b == 65) fn(ud, UI_IN_KEY, "Wheel-Down", 10);
}

/* Parses s[0..n); returns how many bytes were used (the rest is held back). */
static size_t parse(ui_keyparser *p, const char *s, size_t n, ui_key_fn fn, void *ud)
{
    size_t i = 0;
    while (i < n) {
        if (p->in_paste) {
            const char *end = memmem(s + i, n - i, PASTE_END, sizeof PASTE_END - 1);
            if (end) {
                paste_add(p, s + i, (size_t)(end - (s + i)));
                paste_end(p, fn, ud);
                i = (size_t)(end - s) + sizeof PASTE_END - 1;
                continue;
            }
            /* Keep a possible start of the end marker for the next read. */
            size_t keep = 0;
            for (size_t k = sizeof PASTE_END - 2; k > 0; k--)
                if (n - i >= k && !memcmp(s + n - k, PASTE_END, k)) { keep = k; break; }
            paste_add(p, s + i, n - i - keep);
            return n - keep;
        }
        unsigned char c = (unsigned char)s[i];
        if (c == 0x1b) {
            size_t l = 0;
            const char *tk = learned(p, s + i, n - i, &l);
            if (tk && !*tk) return i;
            if (tk) {
                fn(ud, UI_IN_KEY, tk, strlen(tk));
                i += l;
                continue;
            }
            l = esc_len(s + i, n - i);
            if (!l) return i;
            if (l == sizeof PASTE_START - 1 && !memcmp(s + i, PASTE_START, l)) {
                p->in_paste = 1;
                p->paste_failed = 0;
                rm_buf_reset(&p->paste);
            } else if (l > 3 && s[i + 1] == '[' && s[i + 2] == '<') {
                mouse(p, s + i, l, fn, ud);
            } else {
                const char *key = lookup(s + i, l);
                if (key) fn(ud, UI_IN_KEY, key, strlen(key));
                else fn(ud, UI_IN_BYTES, s + i, l);
            }
            i += l;
            continue;
        }
        const char *key = lookup(s + i, 1);
        if (key) { fn(ud, UI_IN_KEY, key, strlen(key)); i++; continue; }
        size_t j = i + 1;
        while (j < n && (unsigned char)s[j] != 0x1b && !lookup(s + j, 1)) j++;
        size_t run = j - i;
        if (j == n) run = ui_utf8_complete(s + i, run);     /* hold a cut character */
        if (!run) return i;
        fn(ud, UI_IN_BYTES, s + i, run);
        i += run;
    }
    return i;
}

void ui_keys_feed(ui_keyparser *p, const char *buf, size_t n, ui_key_fn fn, void *ud)
{
    /* Join held-back bytes with the start of this read, a chunk at a time. */
    while (p->npend && n) {
        size_t take = sizeof p->pend - p->npend;
        if (take > n) take = n;
        char tmp[sizeof p->pend];
        memcpy(tmp, p->pend, p->npend);
        memcpy(tmp + p->npend, buf, take);
        size_t have = p->npend + take, used = parse(p, tmp, have, fn, ud);
        size_t old = p->npend;
        p->npend = 0;
        if (used < old) {               /* still cut short: keep waiting */
            memcpy(p->pend, tmp + used, have - used);
            p->npend = have - used;
            if (p->npend == sizeof p->pend) ui_keys_flush(p, fn, ud);
            buf += take; n -= take;
            continue;
        }
        buf += used - old;
        n -= used - old;
    }
    size_t used = parse(p, buf, n, fn, ud);
    if (used < n) {
        size_t left = n - used;
        if (left > sizeof p->pend) left = sizeof p->pend;   /* cannot happen: sequences are short */
        memcpy(p->pend, buf + used, left);
        p->npend = left;
    }
}

void ui_keys_flush(ui_keyparser *p, ui_key_fn fn, void *ud)
{
    if (!p->npend || p->in_paste) return;
    fn(ud, UI_IN_BYTES, p->pend, p->npend);
    p->npend = 0;
}
