/* slow_open.c — a test-only LD_PRELOAD shim that holds open(2) of one file
 * until the test says go, so a test can look at a program while it is
 * blocked in that open (remora serve's 503 while the model loads). Nothing
 * in the product knows about it: the loader refuses FIFOs and devices in
 * place of model files, so a slow file system is the only honest way to
 * make a load take time, and this is one.
 *
 * SLOW_OPEN_NAME: the path suffix to hold (e.g. "/config.json");
 * SLOW_OPEN_GO: a file whose appearance releases the open (bounded: after
 * 20 s the open goes ahead anyway, so a broken test cannot hang). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void hold(const char *path)
{
    const char *name = getenv("SLOW_OPEN_NAME"), *go = getenv("SLOW_OPEN_GO");
    size_t n = name ? strlen(name) : 0, p = strlen(path);
    if (!n || !go || p < n || strcmp(path + p - n, name)) return;
    struct stat st;
    for (int i = 0; i < 2000 && stat(go, &st); i++) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

static int real_open(const char *sym, const char *path, int flags, va_list ap)
{
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
    int (*f)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, sym);
    hold(path);
    return f(path, flags, mode);
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int fd = real_open("open", path, flags, ap);
    va_end(ap);
    return fd;
}

int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int fd = real_open("open64", path, flags, ap);
    va_end(ap);
    return fd;
}
