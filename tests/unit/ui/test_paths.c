/* test_paths.c — the names /save and /load take (ui/paths.c): "~" and
 * "~/x" are the home folder, "~user/x" that user's, an unknown user is an
 * error naming the name typed, and a folder is refused before anything is
 * read or written ("NAME: is a directory"). */
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "ui/paths.h"

TEST(ui_paths_tilde_and_folders)
{
    char out[4096];
    rm_err err = { "" };
    const char *home = getenv("HOME");
    char *saved = home ? strdup(home) : NULL;
    setenv("HOME", "/tmp/remora-home", 1);
    CHECK(ui_path_expand("~/conv.jsonl", out, sizeof out, &err) == 0 && !strcmp(out, "/tmp/remora-home/conv.jsonl"));
    CHECK(ui_path_expand("~", out, sizeof out, &err) == 0 && !strcmp(out, "/tmp/remora-home"));
    CHECK(ui_path_expand("a/~b", out, sizeof out, &err) == 0 && !strcmp(out, "a/~b"));
    CHECK(ui_path_expand("/abs/x", out, sizeof out, &err) == 0 && !strcmp(out, "/abs/x"));
    struct passwd *pw = getpwuid(getuid());
    if (pw) {
        char typed[300], want[4200];
        snprintf(typed, sizeof typed, "~%s/x.jsonl", pw->pw_name);
        snprintf(want, sizeof want, "%s/x.jsonl", pw->pw_dir);
        CHECK(ui_path_expand(typed, out, sizeof out, &err) == 0 && !strcmp(out, want));
    }
    CHECK(ui_path_expand("~no-such-user-here/x", out, sizeof out, &err) == -1);
    CHECKF(!strcmp(err.msg, "~no-such-user-here/x: no such user: no-such-user-here"), "%s", err.msg);
    char tiny[8];
    CHECK(ui_path_expand("~/conv.jsonl", tiny, sizeof tiny, &err) == -1);
    if (saved) { setenv("HOME", saved, 1); free(saved); } else unsetenv("HOME");

    CHECK(ui_path_not_dir("/", "/", &err) == -1 && !strcmp(err.msg, "/: is a directory"));
    CHECK(ui_path_not_dir("/tmp", "~/../../tmp", &err) == -1 && !strcmp(err.msg, "~/../../tmp: is a directory"));
    CHECK(ui_path_not_dir("/nonexistent/file.jsonl", "x", &err) == 0);
}
