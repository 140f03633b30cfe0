/* slow_write.c — an LD_PRELOAD shim for tests/sh/tui_quit_save.sh: a slow
 * disk under one kind of file. While the file named by $SLOW_WRITE_FLAG
 * exists, write(2) and pwrite(2) on a descriptor whose path holds
 * $SLOW_WRITE_MATCH take at most $SLOW_WRITE_CHUNK bytes a call (a short
 * write, which the program's writers loop on) after sleeping
 * $SLOW_WRITE_MS milliseconds. Everything else goes straight through.
 * Built by the test with: cc -shared -fPIC -o slow_write.so slow_write.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int slow(int fd, size_t *n)
{
    const char *match = getenv("SLOW_WRITE_MATCH"), *flag = getenv("SLOW_WRITE_FLAG");
    if (!match || !flag || fd <= 2 || access(flag, F_OK)) return 0;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, path, sizeof path - 1);
    if (len <= 0) return 0;
    path[len] = 0;
    if (!strstr(path, match)) return 0;
    const char *c = getenv("SLOW_WRITE_CHUNK"), *ms = getenv("SLOW_WRITE_MS");
    size_t chunk = c ? strtoul(c, NULL, 10) : 65536;
    long wait = ms ? strtol(ms, NULL, 10) : 50;
    if (chunk && *n > chunk) *n = chunk;
    struct timespec ts = { wait / 1000, (wait % 1000) * 1000000L };
    nanosleep(&ts, NULL);
    return 1;
}

ssize_t write(int fd, const void *p, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    slow(fd, &n);
    return real(fd, p, n);
}

ssize_t pwrite(int fd, const void *p, size_t n, off_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real) real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    slow(fd, &n);
    return real(fd, p, n, off);
}
