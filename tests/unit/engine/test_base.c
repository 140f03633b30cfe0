/* test_base.c — the shared helpers of engine.h: rm_buf never drops bytes
 * silently (an add that cannot be done fails and leaves the buffer as it
 * was), rm_grow, and rm_write_atomic (whole file or nothing, no temporary
 * left behind, errors naming the user's file). */
#include <dirent.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../test.h"
#include "engine.h"

TEST(base_buf_adds_or_fails_whole)
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

TEST(base_grow_keeps_array_on_failure)
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

static int count_tmp(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) n += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    return n;
}

TEST(base_write_atomic)
{
    char dir[] = "/tmp/remora-base-XXXXXX";
    REQUIRE(mkdtemp(dir));
    char path[256], sub[256], bad[300];
    snprintf(path, sizeof path, "%s/file.txt", dir);
    rm_err err;
    CHECK(rm_write_atomic(path, "first", 5, 0600, &err) == 0);
    CHECK(rm_write_atomic(path, "second line", 11, 0600, &err) == 0);
    size_t len;
    char *got = t_read_file(path, &len);
    CHECK(got && len == 11 && !memcmp(got, "second line", 11));
    free(got);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    /* a folder in the way, or a missing folder: refused, the message names
     * the user's path, nothing left behind */
    snprintf(sub, sizeof sub, "%s/adir", dir);
    REQUIRE(mkdir(sub, 0755) == 0);
    CHECK(rm_write_atomic(sub, "x", 1, 0644, &err) == -1);
    CHECKF(strstr(err.msg, "is a directory") && strstr(err.msg, sub), "%s", err.msg);
    snprintf(bad, sizeof bad, "%s/missing/file.txt", dir);
    CHECK(rm_write_atomic(bad, "x", 1, 0644, &err) == -1);
    CHECKF(!strstr(err.msg, ".tmp.") && strstr(err.msg, bad), "%s", err.msg);
    CHECK(count_tmp(dir) == 0);
    /* the two-step form */
    char tmp[4200];
    rm_atomic_tmp_name(path, tmp, sizeof tmp);
    FILE *f = fopen(tmp, "w");
    REQUIRE(f);
    fputs("third", f);
    fclose(f);
    CHECK(rm_atomic_commit(tmp, path, &err) == 0);
    got = t_read_file(path, &len);
    CHECK(got && len == 5 && !memcmp(got, "third", 5));
    free(got);
    rm_atomic_tmp_name(path, tmp, sizeof tmp);
    f = fopen(tmp, "w");
    REQUIRE(f);
    fclose(f);
    rm_atomic_abort(tmp);
    CHECK(count_tmp(dir) == 0);
    unlink(path);
    rmdir(sub);
    rmdir(dir);
}

TEST(base_clock_is_monotonic)
{
    double a = rm_now(), b = rm_now();
    CHECK(a > 0 && b >= a);
}
