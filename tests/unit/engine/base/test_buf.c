/* test_buf.c — base/buf.c: rm_buf never drops bytes silently (an add that
 * cannot be done fails and leaves the buffer as it was, also past its cap),
 * rm_buf_take hands over "" for an empty buffer, and rm_grow leaves the
 * array untouched when it cannot grow. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/test.h"
#include "engine.h"

TEST(buf_adds_or_fails_whole)
{
    rm_buf b = { 0 };
    CHECK(rm_buf_adds(&b, "hello") == 0);
    CHECK(rm_buf_addf(&b, " %d-%s", 42, "x") == 0);
    CHECK(b.len == 10 && !strcmp(b.p, "hello 42-x"));
    b.max = 12;
    CHECK(rm_buf_adds(&b, "abc") == -1);        /* would pass the cap: nothing added */
    CHECK(b.len == 10 && !strcmp(b.p, "hello 42-x"));
    CHECK(rm_buf_addf(&b, "%s", "toolong") == -1);
    CHECK(rm_buf_add(&b, "ab", 2) == 0 && b.len == 12);
    size_t n;
    char *p = rm_buf_take(&b, &n);
    CHECK(p && n == 12 && !strcmp(p, "hello 42-xab") && b.p == NULL && b.len == 0);
    free(p);
    p = rm_buf_take(&b, &n);                    /* empty: "" not NULL */
    CHECK(p && n == 0 && p[0] == 0);
    free(p);
    b.max = 0;                                  /* the cap is a setting: it stays until changed */
    for (int i = 0; i < 10000; i++) REQUIRE(rm_buf_add(&b, "0123456789", 10) == 0);
    CHECK(b.len == 100000 && b.p[b.len] == 0);
    rm_buf_free(&b);
}

TEST(buf_grow_keeps_array_on_failure)
{
    int *a = NULL, cap = 0;
    CHECK(RM_GROW(a, cap, 5) == 0 && cap >= 5);
    for (int i = 0; i < 5; i++) a[i] = i;
    CHECK(RM_GROW(a, cap, 1000) == 0 && cap >= 1000 && a[4] == 4);
    int old = cap;
    int *keep = a;
    CHECK(rm_grow((void **)&a, &cap, old + 1, SIZE_MAX / 4) == -1 && a == keep && cap == old);
    free(a);
}
