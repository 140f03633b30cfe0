/* xdg.c — the XDG state directory (see xdg.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "xdg.h"

/* mkdir -p for the directories of an absolute path's prefix `dir`. */
static int make_dirs(char *dir)
{
    for (char *p = dir + 1; ; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            int rc = mkdir(dir, 0700);
            *p = c;
            if (rc && errno != EEXIST) return -1;
            if (!c) return 0;
        }
    }
}

int ui_xdg_path(char *buf, size_t n, const char *name)
{
    const char *state = getenv("XDG_STATE_HOME");
    char dir[4096];
    int len;
    if (state && state[0] == '/') {
        len = snprintf(dir, sizeof dir, "%s/remora", state);
    } else {
        const char *home = getenv("HOME");
        if (!home || home[0] != '/') return -1;
        len = snprintf(dir, sizeof dir, "%s/.local/state/remora", home);
    }
    if (len < 0 || (size_t)len >= sizeof dir) return -1;
    if (make_dirs(dir)) return -1;
    len = snprintf(buf, n, "%s/%s", dir, name);
    return len < 0 || (size_t)len >= n ? -1 : 0;
}
