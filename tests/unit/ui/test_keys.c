/* test_keys.c — the terminal input parser of ui/keys.c: keys split across
 * reads, lone Esc, bracketed paste of 100 KB delivered whole, UTF-8 never
 * cut, mouse wheel reports, and the binding table's consistency. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/test.h"
#include "ui/keys.h"

typedef struct rec {
    char keys[32][32];
    int  nkeys;
    char bytes[4096];
    size_t nbytes;
    int  bytes_events;
    char *paste;
    size_t plen;
    int  npastes;
    char error[128];
    int  nerrors;
} rec;

static void on_event(void *ud, int type, const char *data, size_t len)
{
    rec *r = ud;
    if (type == UI_IN_KEY) {
        if (r->nkeys < 32) { memcpy(r->keys[r->nkeys], data, len); r->keys[r->nkeys][len] = 0; r->nkeys++; }
    } else if (type == UI_IN_BYTES) {
        if (r->nbytes + len < sizeof r->bytes) { memcpy(r->bytes + r->nbytes, data, len); r->nbytes += len; }
        r->bytes_events++;
        /* readline must never get a cut UTF-8 character */
        unsigned char last = (unsigned char)data[len - 1];
        CHECK(last < 0xC0);
    } else if (type == UI_IN_ERROR) {
        snprintf(r->error, sizeof r->error, "%.*s", (int)len, data);
        r->nerrors++;
    } else {
        free(r->paste);
        r->paste = malloc(len + 1);
        memcpy(r->paste, data, len);
        r->plen = len;
        r->npastes++;
    }
}

static void feed_str(ui_keyparser *p, rec *r, const char *s) { ui_keys_feed(p, s, strlen(s), on_event, r); }

TEST(ui_keys_plain_and_control)
{
    ui_keyparser p;
    rec r = { 0 };
    ui_keys_init(&p);
    feed_str(&p, &r, "héllo\x03" "x\x1b[A\x1b[5~");
    CHECK(r.nkeys == 2 && !strcmp(r.keys[0], "Ctrl-C") && !strcmp(r.keys[1], "PgUp"));
    CHECK(r.nbytes == strlen("héllox\x1b[A") && !memcmp(r.bytes, "héllox\x1b[A", r.nbytes));
    CHECK(!ui_keys_pending(&p));
    ui_keys_free(&p);
}

TEST(ui_keys_split_sequences_and_lone_escape)
{
    ui_keyparser p;
    rec r = { 0 };
    ui_keys_init(&p);
    feed_str(&p, &r, "\x1b[");
    CHECK(ui_keys_pending(&p) && r.nkeys == 0 && r.nbytes == 0);
    feed_str(&p, &r, "6~");
    CHECK(r.nkeys == 1 && !strcmp(r.keys[0], "PgDn") && r.nbytes == 0);
    feed_str(&p, &r, "\x1bO");
    feed_str(&p, &r, "Q");
    CHECK(r.nkeys == 2 && !strcmp(r.keys[1], "F2"));
    feed_str(&p, &r, "\x1b");
    CHECK(ui_keys_pending(&p));
    ui_keys_flush(&p, on_event, &r);
    CHECK(r.nbytes == 1 && r.bytes[0] == 0x1b && !ui_keys_pending(&p));
    feed_str(&p, &r, "\x1b\r");
    CHECK(r.nkeys == 3 && !strcmp(r.keys[2], "Alt-Enter"));
    feed_str(&p, &r, "\x1b[1;3A\x1b\x1b[B");
    CHECK(r.nkeys == 5 && !strcmp(r.keys[3], "Alt-Up") && !strcmp(r.keys[4], "Alt-Down"));
    ui_keys_free(&p);
}

TEST(ui_keys_utf8_held_until_complete)
{
    ui_keyparser p;
    rec r = { 0 };
    ui_keys_init(&p);
    feed_str(&p, &r, "a\xe4");
    CHECK(r.nbytes == 1 && ui_keys_pending(&p));
    feed_str(&p, &r, "\xb8");
    feed_str(&p, &r, "\xad");
    CHECK(r.nbytes == 4 && !memcmp(r.bytes, "a中", 4));
    ui_keys_free(&p);
}

TEST(ui_keys_bracketed_paste_100k_is_one_event)
{
    size_t n = 100 * 1024;
    char *text = malloc(n);
    for (size_t i = 0; i < n; i++) text[i] = i % 61 == 60 ? '\r' : (char)('a' + i % 26);
    memcpy(text + 500, "\x1b[A\x03\x04", 5);    /* keys inside a paste are text */
    const char *start = "\x1b[200~", *end = "\x1b[201~";
    size_t total = 6 + n + 6;
    char *all = malloc(total);
    memcpy(all, start, 6);
    memcpy(all + 6, text, n);
    memcpy(all + 6 + n, end, 6);
    for (int chunk = 1; chunk <= 4099; chunk += 1366) {
        ui_keyparser p;
        rec r = { 0 };
        ui_keys_init(&p);
        feed_str(&p, &r, "x");
        for (size_t pos = 0; pos < total; pos += (size_t)chunk)
            ui_keys_feed(&p, all + pos, total - pos < (size_t)chunk ? total - pos : (size_t)chunk, on_event, &r);
        feed_str(&p, &r, "y");
        CHECKF(r.npastes == 1 && r.plen == n && !memcmp(r.paste, text, n), "chunk %d: %d pastes, %zu bytes",
               chunk, r.npastes, r.plen);
        CHECK(r.nkeys == 0 && r.nbytes == 2 && !memcmp(r.bytes, "xy", 2));
        free(r.paste);
        ui_keys_free(&p);
    }
    free(all);
    free(text);
}

/* A paste past the parser's limit is refused whole with an error event,
 * never cut short; the keys after it and the next paste are intact. */
TEST(ui_keys_paste_past_the_limit_is_refused_not_cut)
{
    ui_keyparser p;
    rec r = { 0 };
    ui_keys_init(&p);
    CHECK(p.paste.max == UI_PASTE_MAX);
    p.paste.max = 1000;
    char big[3000];
    memset(big, 'z', sizeof big);
    feed_str(&p, &r, "\x1b[200~");
    for (int i = 0; i < 3; i++) ui_keys_feed(&p, big, 1000, on_event, &r);   /* over in the 2nd read */
    feed_str(&p, &r, "\x1b[201~" "\x03");
    CHECKF(r.npastes == 0 && r.nerrors == 1 && !strcmp(r.error, "paste refused: more than 1000 bytes"),
           "%d pastes, %d errors: %s", r.npastes, r.nerrors, r.error);
    CHECK(r.nkeys == 1 && !strcmp(r.keys[0], "Ctrl-C"));
    feed_str(&p, &r, "\x1b[200~" "fits" "\x1b[201~");
    CHECK(r.npastes == 1 && r.plen == 4 && !memcmp(r.paste, "fits", 4) && r.nerrors == 1);
    /* exactly at the limit is kept */
    memset(big, 'q', 1000);
    feed_str(&p, &r, "\x1b[200~");
    ui_keys_feed(&p, big, 1000, on_event, &r);
    feed_str(&p, &r, "\x1b[201~");
    CHECK(r.npastes == 2 && r.plen == 1000 && r.nerrors == 1);
    free(r.paste);
    ui_keys_free(&p);
}

TEST(ui_keys_mouse_wheel)
{
    ui_keyparser p;
    rec r = { 0 };
    ui_keys_init(&p);
    feed_str(&p, &r, "\x1b[<64;10;5M\x1b[<65;3;7M");
    CHECK(r.nkeys == 2 && !strcmp(r.keys[0], "Wheel-Up") && !strcmp(r.keys[1], "Wheel-Down"));
    CHECK(p.mouse_x == 2 && p.mouse_y == 6);
    feed_str(&p, &r, "\x1b[<0;1;1M\x1b[<0;1;1m\x1b[<80;1;1M");    /* clicks, Ctrl-wheel */
    CHECK(r.nkeys == 3 && !strcmp(r.keys[2], "Wheel-Up") && r.nbytes == 0);
    ui_keys_free(&p);
}

TEST(ui_keys_table_consistent)
{
    /* Every key the parser can report is bound (F5..F12 are reported to be
     * taken and ignored), and names are unique. */
    const char *reported[] = { "Ctrl-C", "Ctrl-D", "Ctrl-Z", "Ctrl-L", "Ctrl-T", "Tab", "Alt-Enter",
                               "PgUp", "PgDn", "Alt-Home", "Alt-End", "Ctrl-Home", "Ctrl-End", "Alt-O",
                               "F1", "F2", "F3", "F4", "Alt-Up", "Alt-Down", "Wheel-Up", "Wheel-Down" };
    for (size_t i = 0; i < sizeof reported / sizeof *reported; i++)
        CHECKF(ui_keys_action(reported[i]) > 0, "%s", reported[i]);
    for (int i = 0; i < ui_nkeybindings; i++) {
        /* `remora chat --keys` pads names to 15 columns; man.sh splits at two spaces */
        CHECK(strlen(ui_keybindings[i].key) < 15 && !strstr(ui_keybindings[i].key, "  "));
        for (int j = i + 1; j < ui_nkeybindings; j++)
            CHECK(strcmp(ui_keybindings[i].key, ui_keybindings[j].key));
    }
}

TEST(ui_keys_linux_console_terminfo_and_home_end)
{
    ui_keyparser p;
    rec r = { 0 };
    ui_keys_init(&p);
    /* the Linux console's F1..F5 are keys, not "ESC [ [" and a letter typed */
    feed_str(&p, &r, "\x1b[[A\x1b[[C\x1b[[E");
    CHECK(r.nkeys == 3 && !strcmp(r.keys[0], "F1") && !strcmp(r.keys[1], "F3") && !strcmp(r.keys[2], "F5"));
    CHECK(r.nbytes == 0);
    /* a sequence the terminal's description teaches, whole or cut across reads */
    CHECK(ui_keys_add(&p, "\x1b[99z", "F1") == 0 && ui_keys_add(&p, "x", "F2") == -1);
    feed_str(&p, &r, "\x1b[9");
    CHECK(ui_keys_pending(&p) && r.nkeys == 3);
    feed_str(&p, &r, "9z");
    CHECK(r.nkeys == 4 && !strcmp(r.keys[3], "F1") && r.nbytes == 0);
    /* Home and End go to readline (the input line); with Alt or Ctrl they scroll */
    feed_str(&p, &r, "\x1b[H\x1b[4~\x1b[1;3H\x1b[1;5F\x1bo");
    CHECK(r.nbytes == strlen("\x1b[H\x1b[4~") && !memcmp(r.bytes, "\x1b[H\x1b[4~", r.nbytes));
    CHECK(r.nkeys == 7 && !strcmp(r.keys[4], "Alt-Home") && !strcmp(r.keys[5], "Ctrl-End") &&
          !strcmp(r.keys[6], "Alt-O"));
    CHECK(ui_keys_action("Home") == UI_ACT_READLINE && ui_keys_action("Alt-Home") == UI_ACT_TOP);
    ui_keys_free(&p);
}
