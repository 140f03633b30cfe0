/* test_sessions.c — the autosaved conversations' folder (ui/sessions.c):
 * new session names inside it, the latest session other than the chat's
 * own, and the bound: the oldest snapshots go first, then the oldest
 * transcripts, never the files of the chat that is saving; a bound that is
 * not a size falls back to the default and says so. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "tests/unit/ui/scratch.h"
#include "ui/sessions.h"

/* A file of `bytes` bytes in dir whose time is `age` seconds ago. */
static int put(const char *dir, const char *name, int bytes, int age)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f) return -1;
    for (int i = 0; i < bytes; i++) fputc('x', f);
    if (fclose(f)) return -1;
    struct timespec ts[2];
    clock_gettime(CLOCK_REALTIME, &ts[0]);
    ts[0].tv_sec -= age;
    ts[1] = ts[0];
    return utimensat(AT_FDCWD, p, ts, 0);
}

static int exists(const char *dir, const char *name)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

/* Runs with XDG_STATE_HOME and REMORA_SESSIONS_GB of its own, put back after. */
static char *saved_env(const char *name)
{
    const char *v = getenv(name);
    return v ? strdup(v) : NULL;
}

static void restore_env(const char *name, char *v)
{
    if (v) setenv(name, v, 1);
    else unsetenv(name);
    free(v);
}

TEST(ui_sessions_trim_oldest_snapshots_first_never_the_chats_own)
{
    char root[] = "/tmp/remora-sessions-XXXXXX";
    REQUIRE(mkdtemp(root));
    char *old_state = saved_env("XDG_STATE_HOME"), *old_gb = saved_env("REMORA_SESSIONS_GB");
    setenv("XDG_STATE_HOME", root, 1);
    char dir[4096], path[4096];
    REQUIRE(ui_sessions_dir(dir, sizeof dir) == 0);
    CHECK(strstr(dir, "/remora/sessions") != NULL);
    REQUIRE(ui_sessions_new(path, sizeof path) == 0);
    CHECK(ui_sessions_inside(path) && strncmp(path, dir, strlen(dir)) == 0);
    CHECK(!ui_sessions_inside("/tmp/elsewhere.jsonl"));
    CHECK(ui_sessions_last(NULL, path, sizeof path) == -1);        /* none yet */

    /* a (oldest) .. d (newest); d is the chat that saves */
    REQUIRE(put(dir, "a.jsonl", 100, 400) == 0 && put(dir, "a.state", 1000, 400) == 0);
    REQUIRE(put(dir, "b.jsonl", 100, 300) == 0 && put(dir, "b.state", 1000, 300) == 0);
    REQUIRE(put(dir, "c.jsonl", 100, 200) == 0 && put(dir, "c.state", 1000, 200) == 0);
    REQUIRE(put(dir, "d.jsonl", 100, 100) == 0 && put(dir, "d.state", 1000, 100) == 0);
    REQUIRE(put(dir, "notes.txt", 5000, 500) == 0);                 /* not ours: never counted or removed */
    char keep[4400], last[4096];
    snprintf(keep, sizeof keep, "%s/d.jsonl", dir);
    CHECK(ui_sessions_last(NULL, last, sizeof last) == 0 && strcmp(last, keep) == 0);
    CHECK(ui_sessions_last(keep, last, sizeof last) == 0 && strstr(last, "/c.jsonl"));

    ui_sessions_usage u;
    setenv("REMORA_SESSIONS_GB", "0.0000025", 1);                   /* 2500 bytes of 4400 */
    REQUIRE(ui_sessions_usage_of(&u) == 0);
    CHECK(u.sessions == 4 && u.bytes == 4400 && u.limit == 2500 && !u.bad_limit && u.removed == 0);
    REQUIRE(ui_sessions_trim(keep, &u) == 0);
    CHECK(u.removed == 2 && u.bytes == 2400 && u.sessions == 4);
    CHECK(!exists(dir, "a.state") && !exists(dir, "b.state") && exists(dir, "c.state") && exists(dir, "d.state"));
    CHECK(exists(dir, "a.jsonl") && exists(dir, "b.jsonl"));

    /* a bound below the chat's own files: every other file goes, its own stay */
    setenv("REMORA_SESSIONS_GB", "0", 1);
    REQUIRE(ui_sessions_trim(keep, &u) == 0);
    CHECK(u.sessions == 1 && u.bytes == 1100);
    CHECK(exists(dir, "d.jsonl") && exists(dir, "d.state") && !exists(dir, "c.state") && !exists(dir, "a.jsonl"));
    CHECK(exists(dir, "notes.txt"));

    int bad;
    setenv("REMORA_SESSIONS_GB", "lots", 1);
    CHECK(ui_sessions_limit(&bad) == (uint64_t)(UI_SESSIONS_DEFAULT_GB * 1e9) && bad);
    setenv("REMORA_SESSIONS_GB", "-1", 1);
    CHECK(ui_sessions_limit(&bad) == (uint64_t)(UI_SESSIONS_DEFAULT_GB * 1e9) && bad);
    unsetenv("REMORA_SESSIONS_GB");
    CHECK(ui_sessions_limit(&bad) == (uint64_t)(UI_SESSIONS_DEFAULT_GB * 1e9) && !bad);

    restore_env("XDG_STATE_HOME", old_state);
    restore_env("REMORA_SESSIONS_GB", old_gb);
    scratch_remove(root);
}
