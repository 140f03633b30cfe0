/* test_input.c — the readline input line (ui/curses/input.c) without a
 * terminal: lines typed as bytes reach the line handler, and the history
 * is written at the end atomically (rm_atomic_*: a complete file of mode
 * 0600, no temporary left) or fails with a message naming the history file
 * when its folder is missing or a folder is in the way. */
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

/* Types two lines into an input with history at path and closes it. */
static int session(const char *path, rm_err *err)
{
    ui_input_hooks hooks = { on_line, NULL, NULL, NULL };
    if (ui_input_init(path, &hooks)) return -2;
    nlines = 0;
    CHECK(ui_input_feed("first line\r", 11) == 0);
    CHECK(ui_input_feed("second\r", 7) == 0);
    CHECK(nlines == 2 && !strcmp(last_line, "second"));
    return ui_input_free(err);
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
