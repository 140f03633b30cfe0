/* test_http.c — remote/http.c without a server: Content-Range parsing
 * (exact, open total, reversed, past the end, unsatisfied, junk), the
 * URLs the client refuses, and a cancel's epoch. The transfers themselves
 * are tested against nginx and a faulty server in tests/sh/http_*.sh. */
#include <stdint.h>
#include <string.h>
#include "tests/unit/test.h"
#include "remote/http.h"

TEST(http_content_range)
{
    uint64_t a, b, t;
    CHECK(!http_parse_content_range(" bytes 0-7/1573016", &a, &b, &t) && a == 0 && b == 7 && t == 1573016);
    CHECK(!http_parse_content_range("bytes 100-199/*\r\n", &a, &b, &t) && a == 100 && b == 199 && t == UINT64_MAX);
    CHECK(http_parse_content_range("bytes 5-4/10", &a, &b, &t));      /* reversed */
    CHECK(http_parse_content_range("bytes 0-10/10", &a, &b, &t));     /* past the end */
    CHECK(http_parse_content_range("bytes */10", &a, &b, &t));        /* unsatisfied */
    CHECK(http_parse_content_range("items 0-1/2", &a, &b, &t));
    CHECK(http_parse_content_range("bytes 0-1/2 junk", &a, &b, &t));
    CHECK(http_parse_content_range("", &a, &b, &t));
}

TEST(http_refuses_other_urls)
{
    http_client *c = NULL;
    rm_err err = { "" };
    http_opts o = { "ftp://example.org/x", NULL, 0, 0, 0 };
    CHECK(http_new(&o, &c, &err) && strstr(err.msg, "ftp://example.org/x") && !c);
}

/* A range request of work begun before a cancel fails as it is queued: it
 * names the cancel's reason and no request is started (the client's own
 * count, not a clock, says so). */
TEST(http_cancel_ends_earlier_work)
{
    http_client *c = NULL;
    rm_err err = { "" };
    http_opts o = { "http://127.0.0.1:9", NULL, 1, 0, 0 };
    CHECK(!http_new(&o, &c, &err) && c);
    if (!c) return;
    const unsigned since = http_epoch(c);
    http_cancel(c, "another read failed");
    CHECK(http_epoch(c) == since + 1);
    uint8_t buf[8];
    CHECK(http_range(c, since, "x.safetensors", NULL, 0, sizeof buf, buf, NULL, &err)
          && strstr(err.msg, "http://127.0.0.1:9/x.safetensors: cancelled: another read failed"));
    CHECK(http_take_counters(c).requests == 0);
    http_free(c);
}
