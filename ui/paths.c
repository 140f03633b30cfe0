/* paths.c — user-typed file names: ~ expansion, folders refused (see paths.h). */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "paths.h"

int ui_path_expand(const char *typed, char *out, size_t cap, rm_err *err)
{
    const char *rest = typed, *home = NULL;
    if (typed[0] == '~') {
        size_t ul = strcspn(typed + 1, "/");
        rest = typed + 1 + ul;
        if (ul == 0) {
            home = getenv("HOME");
            if (!home || !*home) {
                struct passwd *pw = getpwuid(getuid());
                home = pw ? pw->pw_dir : NULL;
            }
            if (!home) return rm_errf(err, "%s: no home folder to expand ~ to", typed);
        } else {
            char user[256];
            if (ul >= sizeof user) return rm_errf(err, "%s: no such user", typed);
            memcpy(user, typed + 1, ul);
            user[ul] = 0;
            struct passwd *pw = getpwnam(user);
            if (!pw) return rm_errf(err, "%s: no such user: %s", typed, user);
            home = pw->pw_dir;
        }
    }
    int n = snprintf(out, cap, "%s%s", home ? home : "", rest);
    if (n < 0 || (size_t)n >= cap) return rm_errf(err, "%s: the name is too long", typed);
    return 0;
}

int ui_path_not_dir(const char *path, const char *typed, rm_err *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return rm_errf(err, "%s: is a directory", typed);
    return 0;
}
