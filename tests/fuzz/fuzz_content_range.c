/* fuzz_content_range.c — libFuzzer target for the Content-Range parser of
 * the HTTP client (remote/http.c, http_parse_content_range). A value is
 * refused, or gives first <= last < total (total may be unknown), and the
 * canonical form of what it gave parses back to the same numbers. */
#include <stdint.h>
#include "fuzz_common.h"
#include "remote/http.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char v[256];
    if (size >= sizeof v) return 0;
    memcpy(v, data, size);
    v[size] = 0;
    uint64_t a, b, t;
    if (http_parse_content_range(v, &a, &b, &t)) return 0;
    if (a > b || (t != UINT64_MAX && b >= t)) abort();
    char c[128];
    if (t == UINT64_MAX) snprintf(c, sizeof c, "bytes %llu-%llu/*", (unsigned long long)a, (unsigned long long)b);
    else snprintf(c, sizeof c, "bytes %llu-%llu/%llu", (unsigned long long)a, (unsigned long long)b, (unsigned long long)t);
    uint64_t a2, b2, t2;
    if (http_parse_content_range(c, &a2, &b2, &t2) || a2 != a || b2 != b || t2 != t) abort();
    return 0;
}
