/* model_path.c — the default model's folder (see model_path.h). The
 * binary's location is read from /proc/self/exe; REMORA_DATADIR comes from
 * the build's PREFIX (the Makefile rebuilds this file when it changes). */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "model_path.h"

#ifndef REMORA_DATADIR
#define REMORA_DATADIR "/usr/local/share/remora"
#endif

static int has_model(const char *dir)
{
    char cfg[PATH_MAX + 32];
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    return access(cfg, R_OK) == 0;
}

/* BIN/../share/remora/model from the running binary, or "" */
static void beside_binary(char *out, size_t n)
{
    char exe[PATH_MAX];
    out[0] = 0;
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return;
    exe[len] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = 0;
    snprintf(out, n, "%s/../share/remora/model", exe);
}

int model_path_default(const char *cmd, char *out, size_t n)
{
    char near[PATH_MAX + 64];
    beside_binary(near, sizeof near);
    const char *tries[] = { "assets/model", near, REMORA_DATADIR "/model" };
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        if (tries[i][0] && has_model(tries[i])) {
            snprintf(out, n, "%s", tries[i]);
            return 0;
        }
    }
    snprintf(out, n,
             "no model found (looked in ./assets/model%s%s and %s/model): pass --model DIR, "
             "or try 'remora %s --synthetic'%s",
             near[0] ? ", " : "", near, REMORA_DATADIR, !strcmp(cmd, "run") ? "chat" : cmd,
             !strcmp(cmd, "run") ? " for the chat without a model" : " to see the chat without one");
    return -1;
}
