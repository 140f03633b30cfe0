/* test_http_policy.c — remote/http_policy.c, the policy the engine's two
 * HTTP clients share: the loopback rule (also remora serve's Host check),
 * header lines, Retry-After, redirects and URL parts. */
#include <string.h>
#include "tests/unit/test.h"
#include "remote/http_policy.h"

TEST(http_policy_loopback_rule)
{
    const char *yes[] = { "localhost", "LOCALHOST", "localhost.", "localhost:8080", "a.localhost", "x.y.localhost:1",
                          "127.0.0.1", "127.9.8.7:80", "[::1]", "[::1]:8080" };
    const char *no[] = { "", "example.org", "localhost.example.org", "notlocalhost", "128.0.0.1", "10.0.0.1",
                         "::1", "[::2]", "[::1", "0.0.0.0", ".localhost" };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) CHECKF(rm_host_is_loopback(yes[i]), "%s", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) CHECKF(!rm_host_is_loopback(no[i]), "%s", no[i]);
    CHECK(!rm_host_is_loopback(NULL));
}

TEST(http_policy_header_lines)
{
    char v[16] = "untouched";
    CHECK(http_policy_status_line("HTTP/1.1 200 OK\r\n", 17));
    CHECK(!http_policy_status_line("ETag: x\r\n", 9));
    const char *l = "Retry-After: \t 7 \r\n";
    CHECK(http_policy_header(l, strlen(l), "retry-after", v, sizeof v) && !strcmp(v, "7"));
    CHECK(!http_policy_header(l, strlen(l), "retry", v, sizeof v) && !strcmp(v, "7"));
    l = "ETag: \"0123456789abcdefghij\"\r\n";                     /* cut to the buffer */
    CHECK(http_policy_header(l, strlen(l), "etag", v, sizeof v) && strlen(v) == sizeof v - 1 && v[0] == '"');
    l = "Content-Type:\r\n";
    CHECK(http_policy_header(l, strlen(l), "content-type", v, sizeof v) && !strcmp(v, ""));
}

TEST(http_policy_retry_after_and_redirects)
{
    CHECK(http_policy_retry_after("7", 30) == 7);
    CHECK(http_policy_retry_after("1.5", 30) == 1.5);
    CHECK(http_policy_retry_after("120", 30) == 30);
    CHECK(http_policy_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 30) < 0);
    CHECK(http_policy_retry_after("-1", 30) < 0 && http_policy_retry_after("", 30) < 0 &&
          http_policy_retry_after("3s", 30) < 0);
    CHECK(http_policy_redirect_ok("http://a/x", "https://b/y") && http_policy_redirect_ok("http://a/x", "http://b/y"));
    CHECK(http_policy_redirect_ok("https://a/x", "https://b/y"));
    CHECK(!http_policy_redirect_ok("https://a/x", "http://a/y") && !http_policy_redirect_ok("http://a/x", "ftp://a/y"));
    char s[16], h[64], p[8];
    CHECK(!http_policy_url_parts("https://Example.org/v1", s, sizeof s, h, sizeof h, p, sizeof p) &&
          !strcmp(s, "https") && !strcmp(p, "443"));
    CHECK(!http_policy_url_parts("http://[::1]:8080/v1", s, sizeof s, h, sizeof h, p, sizeof p) &&
          rm_host_is_loopback(h) && !strcmp(p, "8080"));
    CHECK(http_policy_url_parts("ftp://example.org/", s, sizeof s, h, sizeof h, p, sizeof p) == -1);
}
