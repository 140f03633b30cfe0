/* test_input.c — the readline input line (ui/curses/input.c) without a
 * terminal: lines typed as bytes reach the line handler, and each goes to
 * the history file as it is entered (a file of mode 0600), so what another
 * chat adds meanwhile is kept at exit, and a file past the limit is cut to
 * the latest entries atomically (rm_atomic_*: no temporary left); a
 * history file whose folder is missing or that is a folder gives a message
 * naming it. A line kept by the line handler comes back into the input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tests/unit/test.h"
#include "scratch.h"
#include "ui/curses/input.h"

static char last_line[64];
static int nlines;

static void on_line(void *ud, char *line)
{
    (void)ud;
    snprintf(last_line, sizeof last_line, "%s", line ? line : "(eof)");
    nlines++;
    free(line);
}

static int count_of(const char *path, const char *line)
{
    char *h = t_read_file(path, NULL);
    int n = 0;
    for (const char *p = h; p && (p = strstr(p, line)); p++) n++;
    free(h);
    return n;
}

/* Types two lines into an input with history at path and closes it; the
 * first is in the file as soon as it is entered. */
static int session(const char *path, rm_err *err)
{
    ui_input_hooks hooks = { on_line, NULL, NULL, NULL };
    if (ui_input_init(path, &hooks)) return -2;
    nlines = 0;
    int before = count_of(path, "first line\n");
    CHECK(ui_input_feed("first line\r", 11) == 0);
    if (ui_input_error() == NULL) CHECK(count_of(path, "first line\n") == before + 1);
    CHECK(ui_input_feed("second\r", 7) == 0);
    CHECK(nlines == 2 && !strcmp(last_line, "second"));
    return ui_input_free(err);
}

static void keep_line(void *ud, char *line)
{
    (void)ud;
    if (line && !strcmp(line, "not now")) ui_input_keep(line);
    snprintf(last_line, sizeof last_line, "%s", line ? line : "(eof)");
    nlines++;
    free(line);
}

TEST(ui_input_history_is_written_atomically)
{
    setenv("INPUTRC", "/dev/null", 1);
    char dir[] = "/tmp/remora-input-XXXXXX";
    REQUIRE(mkdtemp(dir));
    char path[4200], missing[4200], want[4400];
    snprintf(path, sizeof path, "%s/history", dir);
    snprintf(missing, sizeof missing, "%s/none/history", dir);
    rm_err err = { "" };
    CHECKF(session(path, &err) == 0, "%s", err.msg);
    struct stat st;
    REQUIRE(stat(path, &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(scratch_entries(dir) == 1);
    char *h = t_read_file(path, NULL);
    REQUIRE(h);
    CHECK(strstr(h, "first line\n") && strstr(h, "second\n"));
    free(h);
    /* a second session reads it back and adds its own */
    CHECKF(session(path, &err) == 0, "%s", err.msg);
    h = t_read_file(path, NULL);
    REQUIRE(h);
    const char *p = strstr(h, "first line\n");
    CHECK(p && strstr(p + 1, "first line\n"));        /* both sessions' lines */
    free(h);

    CHECK(session(missing, &err) == -1);
    snprintf(want, sizeof want, "%s: cannot write: No such file or directory", missing);
    CHECKF(!strcmp(err.msg, want), "%s", err.msg);
    char folder[4200];
    snprintf(folder, sizeof folder, "%s/adir", dir);
    REQUIRE(mkdir(folder, 0755) == 0);
    CHECK(session(folder, &err) == -1);
    snprintf(want, sizeof want, "%s: is a directory", folder);
    CHECKF(!strcmp(err.msg, want), "%s", err.msg);
    CHECK(scratch_entries(dir) == 2);               /* history and adir: no temporary left */
    scratch_remove(dir);
}

TEST(ui_input_history_merges_other_chats_and_keeps_lines)
{
    setenv("INPUTRC", "/dev/null", 1);
    char dir[] = "/tmp/remora-input-XXXXXX";
    REQUIRE(mkdtemp(dir));
    char path[4200];
    snprintf(path, sizeof path, "%s/history", dir);
    ui_input_hooks hooks = { keep_line, NULL, NULL, NULL };
    REQUIRE(ui_input_init(path, &hooks) == 0);
    CHECK(ui_input_feed("alpha\r", 6) == 0);
    /* another chat appends its own line meanwhile */
    FILE *f = fopen(path, "a");
    REQUIRE(f);
    fprintf(f, "#%ld\nbeta from the other chat\n", (long)1700000000);
    fclose(f);
    /* a line the handler keeps comes back into the input, typed on after */
    CHECK(ui_input_feed("not now\r", 8) == 0);
    CHECK(!ui_input_empty());
    CHECK(ui_input_feed("!\r", 2) == 0);
    CHECK(!strcmp(last_line, "not now!"));
    rm_err err = { "" };
    CHECKF(ui_input_free(&err) == 0, "%s", err.msg);
    CHECK(count_of(path, "alpha\n") == 1 && count_of(path, "beta from the other chat\n") == 1);
    CHECK(count_of(path, "not now!\n") == 1);

    /* past 1000 entries the file is cut to the latest 1000 at exit */
    f = fopen(path, "w");
    REQUIRE(f);
    for (int i = 0; i < 1200; i++) fprintf(f, "#%d\nold %04d\n", 1700000000 + i, i);
    fclose(f);
    REQUIRE(ui_input_init(path, &hooks) == 0);
    CHECK(ui_input_feed("newest\r", 7) == 0);
    CHECKF(ui_input_free(&err) == 0, "%s", err.msg);
    CHECK(count_of(path, "old 0200\n") == 0 && count_of(path, "old 0201\n") == 1);
    CHECK(count_of(path, "old 1199\n") == 1 && count_of(path, "newest\n") == 1);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK(scratch_entries(dir) == 1);
    scratch_remove(dir);
}
