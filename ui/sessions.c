/* sessions.c — the autosaved conversations' folder (see sessions.h). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "engine.h"
#include "sessions.h"
#include "xdg.h"

int ui_sessions_dir(char *buf, size_t n)
{
    if (ui_xdg_path(buf, n, "sessions")) return -1;
    if (mkdir(buf, 0700) && errno != EEXIST) return -1;
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

int ui_sessions_new(char *buf, size_t n)
{
    char dir[4096];
    if (ui_sessions_dir(dir, sizeof dir)) return -1;
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32];
    if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm)) return -1;
    int w = snprintf(buf, n, "%s/%s-%ld.jsonl", dir, stamp, (long)getpid());
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

int ui_sessions_inside(const char *path)
{
    char dir[4096], real_dir[4096], real_path[4096];
    if (ui_sessions_dir(dir, sizeof dir) || !realpath(dir, real_dir) || !ends_with(path, ".jsonl")) return 0;
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    if (slash) *slash = 0;
    else snprintf(parent, sizeof parent, ".");
    return realpath(parent, real_path) && !strcmp(real_dir, real_path);
}

/* A file of the folder. */
typedef struct sfile {
    char name[256];
    uint64_t bytes;
    struct timespec mtime;
    int state;              /* a snapshot (else a transcript) */
} sfile;

static int older(const void *a, const void *b)
{
    const sfile *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The folder's transcripts and snapshots, oldest first. */
static int list(const char *dir, sfile **out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const int state = ends_with(e->d_name, ".state");
        if ((!state && !ends_with(e->d_name, ".jsonl")) || strlen(e->d_name) >= sizeof (*out)->name) continue;
        char p[4400];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) || !S_ISREG(st.st_mode)) continue;
        if (RM_GROW(*out, cap, n + 1)) break;
        sfile *f = &(*out)[n++];
        memcpy(f->name, e->d_name, strlen(e->d_name) + 1);
        f->bytes = (uint64_t)st.st_size;
        f->mtime = st.st_mtim;
        f->state = state;
    }
    closedir(d);
    if (n) qsort(*out, (size_t)n, sizeof **out, older);
    return n;
}

int ui_sessions_last(const char *not, char *buf, size_t n)
{
    char dir[4096];
    sfile *v;
    int k = ui_sessions_dir(dir, sizeof dir) ? -1 : list(dir, &v);
    int found = -1;
    for (int i = k - 1; i >= 0 && found < 0; i--) {
        if (v[i].state) continue;
        int w = snprintf(buf, n, "%s/%s", dir, v[i].name);
        if (w < 0 || (size_t)w >= n) continue;
        if (not && !strcmp(buf, not)) continue;
        found = 0;
    }
    if (k >= 0) free(v);
    return found;
}

uint64_t ui_sessions_limit(int *bad)
{
    const char *env = getenv("REMORA_SESSIONS_GB");
    *bad = 0;
    if (env && *env) {
        char *end;
        double gb = strtod(env, &end);
        if (!*end && isfinite(gb) && gb >= 0 && gb <= 1e6 && strspn(env, "0123456789.eE+-") == strlen(env))
            return (uint64_t)(gb * 1e9);
        *bad = 1;
    }
    return (uint64_t)(UI_SESSIONS_DEFAULT_GB * 1e9);
}

/* The name (in the folder) of keep's transcript and of its snapshot. */
static void keep_names(const char *keep, char *t, char *s, size_t n)
{
    t[0] = s[0] = 0;
    if (!keep) return;
    const char *slash = strrchr(keep, '/');
    snprintf(t, n, "%s", slash ? slash + 1 : keep);
    if (rm_snapshot_path(t, s, n)) s[0] = 0;
}

static int trim(const char *keep, int remove, ui_sessions_usage *u)
{
    memset(u, 0, sizeof *u);
    u->limit = ui_sessions_limit(&u->bad_limit);
    char dir[4096];
    sfile *v;
    int n = ui_sessions_dir(dir, sizeof dir) ? -1 : list(dir, &v);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++) {
        u->bytes += v[i].bytes;
        u->sessions += !v[i].state;
    }
    char kt[256], ks[256];
    keep_names(keep, kt, ks, sizeof kt);
    /* snapshots first, oldest first; then transcripts */
    for (int pass = 0; remove && pass < 2 && u->bytes > u->limit; pass++)
        for (int i = 0; i < n && u->bytes > u->limit; i++) {
            if (v[i].state != !pass || !strcmp(v[i].name, kt) || !strcmp(v[i].name, ks)) continue;
            char p[4400];
            snprintf(p, sizeof p, "%s/%s", dir, v[i].name);
            if (unlink(p) && errno != ENOENT) continue;
            u->bytes -= v[i].bytes;
            u->sessions -= !v[i].state;
            u->removed++;
        }
    free(v);
    return 0;
}

int ui_sessions_trim(const char *keep, ui_sessions_usage *u) { return trim(keep, 1, u); }
int ui_sessions_usage_of(ui_sessions_usage *u) { return trim(NULL, 0, u); }
