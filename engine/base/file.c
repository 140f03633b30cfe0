/* file.c — file-system helpers (file.h) and the atomic replacement of a
 * file (rm_write_atomic, rm_atomic_tmp_name/commit/abort in engine.h).
 *
 * Temporary names carry the writer's pid and thread id ("NAME.tmp.PID.TID"),
 * so concurrent writers (a `remora fetch` next to a `remora run`) never share
 * one, and a later run can tell the leftovers of a killed process (its pid
 * no longer exists) from files still being written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base/file.h"

int file_mkdirs(const char *path, rm_err *err)
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

void file_cache_home(char *out, size_t cap, const char *sub)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = xdg && xdg[0] == '/' ? snprintf(out, cap, "%s/remora/%s", xdg, sub)
          : home && home[0] == '/' ? snprintf(out, cap, "%s/.cache/remora/%s", home, sub) : -1;
    if (n < 0 || (size_t)n >= cap) out[0] = 0;
}

void file_tmp_name(char *buf, size_t cap, const char *path)
{
    snprintf(buf, cap, "%s.tmp.%ld.%ld", path, (long)getpid(), (long)syscall(SYS_gettid));
}

int file_tmp_stale(const char *name)
{
    const char *t = strstr(name, ".tmp.");
    if (!t) return 0;
    long pid = strtol(t + 5, NULL, 10);
    return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int file_sweep_stale_tmps(const char *path)
{
    char d[4096], b[4096], pre[4200], full[8400];
    if (snprintf(d, sizeof d, "%s", path) >= (int)sizeof d || snprintf(b, sizeof b, "%s", path) >= (int)sizeof b)
        return 0;
    const char *dir = dirname(d), *base = basename(b);
    snprintf(pre, sizeof pre, "%s.tmp.", base);
    DIR *dp = opendir(dir);
    if (!dp) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)))
        if (!strncmp(e->d_name, pre, strlen(pre)) && file_tmp_stale(e->d_name)) {
            snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
            n += unlink(full) == 0;
        }
    closedir(dp);
    return n;
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

static atomic_ulong commits;   /* successful file_commit calls (a test hook counts them) */

int file_commit(int fd, const char *tmp, const char *path, uint64_t size, rm_err *err)
{
    struct stat st;
    int bad = 0, e = 0;
    /* a rename over a device node, a FIFO or a socket would replace it
     * with a regular file (as root, /dev/full): only regular files are
     * replaced */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { bad = 1; e = S_ISDIR(st.st_mode) ? EISDIR : ENOTSUP; }
    if (!bad && (fsync(fd) != 0 || fstat(fd, &st) != 0)) { bad = 1; e = errno; }
    if (!bad && size != UINT64_MAX && (uint64_t)st.st_size != size) { bad = 1; e = EIO; }
    if (close(fd) && !bad) { bad = 1; e = errno; }
    if (bad || rename(tmp, path)) {
        if (!bad) e = errno;
        unlink(tmp);
        if (e == EISDIR) return rm_errf(err, "%s: is a directory", path);
        if (e == ENOTSUP) return rm_errf(err, "%s: not a regular file: it is not replaced", path);
        return rm_errf(err, "%s: cannot write: %s", path, strerror(e));
    }
    if (sync_dir(path)) return rm_errf(err, "%s: written, but its folder could not be synced: %s", path, strerror(errno));
    atomic_fetch_add(&commits, 1);
    return 0;
}

unsigned long file_test_commits(void) { return atomic_load(&commits); }

void rm_atomic_tmp_name(const char *path, char *tmp, size_t cap) { file_tmp_name(tmp, cap, path); }

void rm_atomic_abort(const char *tmp) { unlink(tmp); }

int rm_atomic_commit(const char *tmp, const char *path, rm_err *err)
{
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        unlink(tmp);
        return rm_errf(err, "%s: cannot write: %s", path, strerror(e));
    }
    return file_commit(fd, tmp, path, UINT64_MAX, err);
}

/* A target that is neither a regular file nor absent (a device such as
 * /dev/null or /dev/full, a FIFO) is written in place, never replaced: the
 * open does not block (a FIFO without a reader is refused, ENXIO), and
 * every write and the close are checked, so /dev/full fails with ENOSPC. */
static int write_in_place(const char *path, const void *data, size_t len, rm_err *err)
{
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return rm_errf(err, "%s: cannot write: %s", path, errno == ENXIO ? "a FIFO with no reader" : strerror(errno));
    int fl = fcntl(fd, F_GETFL);
    int bad = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) || file_write_all(fd, data, len);
    int e = errno;
    if (close(fd) && !bad) { bad = 1; e = errno; }
    return bad ? rm_errf(err, "%s: cannot write: %s", path, strerror(e)) : 0;
}

int rm_write_atomic(const char *path, const void *data, size_t len, int mode, rm_err *err)
{
    struct stat st;     /* a folder in the way: fail before writing anything */
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) return rm_errf(err, "%s: is a directory", path);
    if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) return write_in_place(path, data, len, err);
    if (exists && !S_ISREG(st.st_mode)) return rm_errf(err, "%s: not a regular file: it is not replaced", path);
    char tmp[4200];
    file_tmp_name(tmp, sizeof tmp, path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode ? mode : 0644);
    if (fd < 0) return rm_errf(err, "%s: cannot write: %s", path, strerror(errno));
    /* a file that is there keeps its mode (a transcript the user made
     * 0600 stays so); the new one takes `mode` */
    if (exists && fchmod(fd, st.st_mode & 07777)) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return rm_errf(err, "%s: cannot write: %s", path, strerror(e));
    }
    if (file_write_all(fd, data, len)) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return rm_errf(err, "%s: cannot write: %s", path, strerror(e));
    }
    return file_commit(fd, tmp, path, len, err);
}

uint64_t file_free_space(const char *path)
{
    struct statvfs v;
    if (statvfs(path, &v)) return 0;
    return (uint64_t)v.f_bavail * v.f_frsize;
}

uint64_t file_fs_size(const char *path, int *read_only)
{
    struct statvfs v;
    if (read_only) *read_only = 0;
    if (statvfs(path, &v)) return 0;
    if (read_only) *read_only = !!(v.f_flag & ST_RDONLY);
    return (uint64_t)v.f_blocks * v.f_frsize;
}

/* Writes are cut into pieces of at most 1 GiB: Linux moves at most about
 * 2 GiB per call anyway. */
int file_write_all(int fd, const void *p, size_t n)
{
    size_t w = 0;
    while (w < n) {
        ssize_t r = write(fd, (const char *)p + w, n - w > (1u << 30) ? (1u << 30) : n - w);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { if (!r) errno = ENOSPC; return -1; }
        w += (size_t)r;
    }
    return 0;
}

int file_pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
    size_t w = 0;
    while (w < n) {
        ssize_t r = pwrite(fd, (const char *)p + w, n - w > (1u << 30) ? (1u << 30) : n - w, (off_t)(off + w));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { if (!r) errno = ENOSPC; return -1; }
        w += (size_t)r;
    }
    return 0;
}

int file_pread_all(int fd, void *dst, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)dst + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) { errno = 0; return 1; }
        got += (size_t)r;
    }
    return 0;
}

int file_open_error(const char *path, int e, rm_err *err)
{
    if (e == EMFILE || e == ENFILE || e == ENOMEM)
        return rm_errf_runtime(err, "%s: cannot open: %s (raise the limit with `ulimit -n`)", path, strerror(e));
    return rm_errf(err, "%s: cannot open: %s", path, strerror(e));
}

int file_open_regular(const char *path, int flags, rm_err *err)
{
    int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return file_open_error(path, errno, err);
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        return rm_errf(err, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return rm_errf_input(err, "%s: not a regular file (%s)", path,
                       S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket");
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
        int e = errno;
        close(fd);
        return rm_errf(err, "%s: cannot open: %s", path, strerror(e));
    }
    return fd;
}

char *file_read(const char *path, size_t max, size_t *len, rm_err *err)
{
    int fd = file_open_regular(path, O_RDONLY, err);
    if (fd < 0) return NULL;
    struct stat st;
    char *b = NULL;
    if (fstat(fd, &st)) rm_errf(err, "%s: cannot stat: %s", path, strerror(errno));
    else if ((uint64_t)st.st_size > max) rm_errf_input(err, "%s: larger than %zu bytes, the cap of this file", path, max);
    else if (!(b = malloc((size_t)st.st_size + 1))) rm_errf_runtime(err, "%s: out of memory (%llu bytes)", path, (unsigned long long)st.st_size);
    else {
        int r = file_pread_all(fd, b, (size_t)st.st_size, 0);
        if (r) {
            rm_errf(err, "%s: %s", path, r < 0 ? strerror(errno) : "file shrank while reading");
            free(b);
            b = NULL;
        } else {
            b[st.st_size] = 0;
            if (len) *len = (size_t)st.st_size;
        }
    }
    close(fd);
    return b;
}
