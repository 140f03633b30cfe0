/* test.h — the tiny unit-test harness shared by the unit tests.
 *
 * TEST(name) defines and registers a test; CHECK(cond) records a failure with
 * file and line and goes on; REQUIRE(cond) fails and leaves the test. The
 * runner (test_main.c) prints one PASS/FAIL line per test and a closing
 * "N passed, N failed" line. fixture_path() finds the repository's
 * tests/fixtures (or $REMORA_FIXTURES) and fails the test loudly, naming the
 * path it looked for, when it is missing.
 */
#ifndef REMORA_TEST_H
#define REMORA_TEST_H
#include <stdio.h>
#include <stdlib.h>

typedef void (*test_fn)(void);
void t_register(const char *name, test_fn fn);
void t_fail(const char *file, int line, const char *expr);
int  t_failed_now(void);
/* Returns "<fixtures>/<rel>" in a static rotating buffer; fails the current
 * test (and returns NULL) when the fixtures directory does not exist. */
const char *fixture_path(const char *rel);
/* Reads a whole file; returns malloc'd bytes (NUL-terminated) or NULL. */
char *t_read_file(const char *path, size_t *len);

#define TEST(name)                                                        \
    static void name(void);                                               \
    __attribute__((constructor)) static void reg_##name(void)             \
    { t_register(#name, name); }                                          \
    static void name(void)

/* CHILD(name) defines code that a test runs in a process of its own (a
 * restart, for instance): not a test, it runs only as
 * `remora-tests --child NAME ARG...` and returns the exit status.
 * t_run_child runs one from a test and returns its exit status (-1 when it
 * could not be run or did not exit). */
typedef int (*child_fn)(int argc, char **argv);
void t_register_child(const char *name, child_fn fn);
int  t_run_child(const char *name, const char *const *args);
#define CHILD(name)                                                       \
    static int name(int argc, char **argv);                               \
    __attribute__((constructor)) static void regc_##name(void)            \
    { t_register_child(#name, name); }                                    \
    static int name(int argc, char **argv)

/* T_ASAN is 1 in the ASan+UBSan build (make MODE=asan), whose code runs
 * 3-10 times slower: a test may size down there what only repeats paths
 * its smaller cases take, saying which boundaries the smaller size keeps;
 * the release build runs the full sizes. */
#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#else
#define T_ASAN 0
#endif

#define CHECK(c) do { if (!(c)) t_fail(__FILE__, __LINE__, #c); } while (0)
#define REQUIRE(c) do { if (!(c)) { t_fail(__FILE__, __LINE__, #c); return; } } while (0)
#define CHECKF(c, ...) do { if (!(c)) { t_fail(__FILE__, __LINE__, #c); \
    fprintf(stderr, "    "); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)
#endif
