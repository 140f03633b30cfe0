/* diskio.c — file-system helpers of stream mode (diskio.h).
 *
 * Temporary names carry the writer's pid and thread id ("NAME.tmp.PID.TID"),
 * so concurrent writers (a `remora fetch` next to a `remora run`) never share
 * one, and a later run can tell the leftovers of a killed process (its pid
 * no longer exists) from files still being written.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base/file.h"

int disk_mkdirs(const char *path, rm_err *err)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) return rm_errf(err, "%s: path too long", path);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0755) && errno != EEXIST) return rm_errf(err, "%s: cannot create: %s", p, strerror(errno));
        *s = c;
        if (!c) break;
    }
    struct stat st;
    if (stat(path, &st) || !S_ISDIR(st.st_mode)) return rm_errf(err, "%s: not a directory", path);
    return 0;
}

void disk_tmp_name(char *buf, size_t cap, const char *path)
{
    snprintf(buf, cap, "%s.tmp.%ld.%ld", path, (long)getpid(), (long)syscall(SYS_gettid));
}

int disk_tmp_stale(const char *name)
{
    const char *t = strstr(name, ".tmp.");
    if (!t) return 0;
    long pid = strtol(t + 5, NULL, 10);
    return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* fsync of the folder that holds path, so that a rename survives a crash. */
static int sync_dir(const char *path)
{
    char d[4096];
    snprintf(d, sizeof d, "%s", path);
    int fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    /* some file systems refuse fsync on a directory: the rename stands */
    if (rc && (errno == EINVAL || errno == EBADF)) rc = 0;
    close(fd);
    return rc;
}

void rm_atomic_tmp_name(const char *path, char *tmp, size_t cap) { disk_tmp_name(tmp, cap, path); }

void rm_atomic_abort(const char *tmp) { unlink(tmp); }

int rm_atomic_commit(const char *tmp, const char *path, rm_err *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        unlink(tmp);
        return rm_errf(err, "%s: is a directory", path);
    }
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return rm_errf(err, "%s: cannot write: %s", path, strerror(errno));
    int bad = fsync(fd) != 0, e = errno;
    close(fd);
    if (bad || rename(tmp, path)) {
        if (!bad) e = errno;
        unlink(tmp);
        return rm_errf(err, "%s: cannot write: %s", path, strerror(e));
    }
    if (sync_dir(path)) return rm_errf(err, "%s: written, but its folder could not be synced: %s", path, strerror(errno));
    return 0;
}

int rm_write_atomic(const char *path, const void *data, size_t len, int mode, rm_err *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return rm_errf(err, "%s: is a directory", path);
    char tmp[4200];
    disk_tmp_name(tmp, sizeof tmp, path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode ? mode : 0644);
    if (fd < 0) return rm_errf(err, "%s: cannot write: %s", path, strerror(errno));
    size_t w = 0;
    int e = 0;
    while (w < len) {
        ssize_t n = write(fd, (const char *)data + w, len - w);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { e = n < 0 ? errno : ENOSPC; break; }
        w += (size_t)n;
    }
    int bad = w != len;
    if (!bad && (fsync(fd) != 0 || fstat(fd, &st) != 0)) { bad = 1; e = errno; }
    if (!bad && (uint64_t)st.st_size != len) { bad = 1; e = EIO; }
    if (close(fd) && !bad) { bad = 1; e = errno; }
    if (bad || rename(tmp, path)) {
        if (!bad) e = errno;
        unlink(tmp);
        return rm_errf(err, "%s: cannot write: %s", path, strerror(e));
    }
    if (sync_dir(path)) return rm_errf(err, "%s: written, but its folder could not be synced: %s", path, strerror(errno));
    return 0;
}

uint64_t disk_free(const char *path)
{
    struct statvfs v;
    if (statvfs(path, &v)) return 0;
    return (uint64_t)v.f_bavail * v.f_frsize;
}

char *disk_read_file(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st)) { close(fd); return NULL; }
    if ((uint64_t)st.st_size > max) { close(fd); errno = EFBIG; return NULL; }
    size_t n = (size_t)st.st_size, got = 0;
    char *b = malloc(n + 1);
    while (b && got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { free(b); b = NULL; errno = EIO; break; }
        got += (size_t)r;
    }
    close(fd);
    if (!b) return NULL;
    b[n] = 0;
    if (len) *len = n;
    return b;
}
