/* test_utf8.c — text/utf8.c, streamed token bytes into UTF-8: characters
 * split over several feeds are joined, invalid bytes, truncated characters,
 * surrogates and overlongs become U+FFFD (one per maximal invalid subpart),
 * and a flush turns a pending tail into U+FFFD. */
#include <string.h>
#include "tests/unit/test.h"
#include "engine.h"

static size_t feed_str(rm_utf8_stream *s, const char *in, size_t n, char *out, int flush)
{
    return rm_utf8_stream_feed(s, in, n, out, 3 * (n + 4), flush);
}

TEST(utf8_stream_joins_split_characters)
{
    rm_utf8_stream s = { { 0 }, 0 };
    char out[64];
    const char *zh = "\xe4\xbd\xa0";                    /* 你 */
    CHECK(feed_str(&s, zh, 1, out, 0) == 0);
    CHECK(feed_str(&s, zh + 1, 1, out, 0) == 0);
    size_t n = feed_str(&s, zh + 2, 1, out, 0);
    CHECK(n == 3 && !memcmp(out, zh, 3));
    const char *emoji = "a\xf0\x9f\x98\x80z";           /* a😀z, split 2 + 4 */
    n = feed_str(&s, emoji, 2, out, 0);
    CHECK(n == 1 && out[0] == 'a');
    n = feed_str(&s, emoji + 2, 4, out, 0);
    CHECK(n == 5 && !memcmp(out, emoji + 1, 5));
    rm_utf8_stream t = { { 0 }, 0 };
    n = feed_str(&t, emoji, 3, out, 0);
    n += feed_str(&t, emoji + 3, 3, out + n, 0);
    CHECK(n == 6 && !memcmp(out, emoji, 6));
}

TEST(utf8_stream_replaces_invalid)
{
    rm_utf8_stream s = { { 0 }, 0 };
    char out[64];
    size_t n = feed_str(&s, "a\xff" "b", 3, out, 0);
    CHECK(n == 5 && !memcmp(out, "a\xef\xbf\xbd" "b", 5));
    /* a truncated character followed by ASCII: one U+FFFD, then the ASCII */
    n = feed_str(&s, "\xe4\xbd", 2, out, 0);
    CHECK(n == 0);
    n = feed_str(&s, "x", 1, out, 0);
    CHECK(n == 4 && !memcmp(out, "\xef\xbf\xbdx", 4));
    /* flush turns a pending tail into U+FFFD */
    n = feed_str(&s, "\xf0\x9f", 2, out, 0);
    CHECK(n == 0);
    n = feed_str(&s, "", 0, out, 1);
    CHECK(n == 3 && !memcmp(out, "\xef\xbf\xbd", 3) && s.npend == 0);
    /* surrogates and overlongs are invalid */
    n = feed_str(&s, "\xed\xa0\x80", 3, out, 1);
    CHECK(n == 9);
    n = feed_str(&s, "\xc0\xaf", 2, out, 1);
    CHECK(n == 6);
}

/* rm_text_safe: what a terminal must never get is shown as ASCII escapes,
 * the rest kept byte for byte. */
static void safe(const char *in, size_t n, unsigned flags, const char *want)
{
    rm_buf b = { 0 };
    CHECK(rm_text_safe(&b, in, n, flags) == 0);
    CHECKF(b.len == strlen(want) && !memcmp(b.p ? b.p : "", want, b.len), "got '%.*s', want '%s'", (int)b.len,
           b.p ? b.p : "", want);
    rm_buf_free(&b);
}

TEST(text_safe_escapes_controls)
{
    safe("a\x1b[31mb", 7, RM_SAFE_LINES, "a\\x1b[31mb");
    safe("x\x07y\x7fz", 5, RM_SAFE_LINES, "x\\x07y\\x7fz");
    safe("\xc2\x9b" "31m", 5, RM_SAFE_LINES, "\\u009b31m");               /* C1 CSI as UTF-8 */
    safe("\xc2\x85", 2, 0, "\\u0085");                                    /* NEL */
    safe("one\r\ntwo\rthree\tfour\n", 20, RM_SAFE_LINES, "one\ntwo\\rthree\tfour\n");
    safe("one\r\ntwo\n", 9, 0, "one\\r\\ntwo\\n");                        /* one line */
    safe("\x9b" "1", 2, 0, "\xef\xbf\xbd" "1");                           /* a raw C1 byte is not UTF-8 */
    safe("\xe4\xbd", 2, 0, "\xef\xbf\xbd");                               /* a cut character */
    safe("\xe4\xbd\xa0\xc2\xa0\xf0\x9f\x98\x80", 9, 0, "\xe4\xbd\xa0\xc2\xa0\xf0\x9f\x98\x80"); /* 你, NBSP, 😀 */
    safe("", 0, 0, "");
}
