/* xcache.c — expert files of the stream-mode disk cache (xcache.h).
 *
 * Reading: the aligned bulk of the file goes straight into the caller's
 * (aligned) slot with O_DIRECT, like a shard read, and the last partial
 * block with the trailer through the page cache; so cached experts cost no
 * page-cache memory beyond one block each. The CRC is base/crc.h's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "remote/xcache.h"
#include "base/file.h"
#include "base/align.h"
#include "base/crc.h"

static const char xc_magic[4] = { 'R', 'M', 'X', '2' };

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t xc_revision(const char *etag)
{
    if (!etag || !*etag) return 0;
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)etag; *p; p++) { h ^= *p; h *= 1099511628211ull; }
    return h ? h : 1;
}

void xc_path(char *buf, size_t cap, const char *dir, int layer, int expert)
{
    snprintf(buf, cap, "%s/.remora/experts/L%d/E%d.bin", dir, layer, expert);
}

int xc_present(const char *path, uint64_t n)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == n + XC_TRAILER;
}

static void put_trailer(uint8_t t[XC_TRAILER], uint32_t crc, uint64_t n, const xc_id *id)
{
    memcpy(t, xc_magic, 4);
    put_le(t + 4, crc, 4);
    put_le(t + 8, n, 8);
    put_le(t + 16, (uint32_t)id->layer, 4);
    put_le(t + 20, (uint32_t)id->expert, 4);
    put_le(t + 24, id->off, 8);
    put_le(t + 32, id->rev, 8);
}

int xc_store(const char *path, const void *raw, uint64_t n, const xc_id *id, rm_err *err)
{
    char dir[4096], tmp[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) { *slash = 0; if (file_mkdirs(dir, err)) return -1; }
    file_tmp_name(tmp, sizeof tmp, path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return rm_errf(err, "%s: cannot create: %s", tmp, strerror(errno));
    uint8_t t[XC_TRAILER];
    put_trailer(t, crc_update(0, raw, (size_t)n), n, id);
    if (file_write_all(fd, raw, (size_t)n) || file_write_all(fd, t, XC_TRAILER) || fdatasync(fd)) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return rm_errf(err, "%s: cannot write the cached expert: %s", path, strerror(e));
    }
    /* written back: the pages can leave the page cache (a cached expert is
     * read with O_DIRECT, into its slot) */
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    return file_commit(fd, tmp, path, n + XC_TRAILER, err);
}

/* A damaged file goes, so the next reader fetches the expert again. */
static int damaged_file(const char *path, int *damaged)
{
    unlink(path);
    if (damaged) *damaged = 1;
    return 1;
}

int xc_load(const char *path, void *dst, uint64_t n, const xc_id *id, int verify, int *damaged, rm_err *err)
{
    struct stat st;
    if (lstat(path, &st)) {
        if (errno == ENOENT) return 1;
        return rm_errf(err, "%s: cannot stat: %s", path, strerror(errno));
    }
    /* a FIFO, a folder or a link in the cache is not ours: it goes too */
    if (!S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) return rm_errf_input(err, "%s: not a regular file (a folder); remove it", path);
        return damaged_file(path, damaged);
    }
    int fd = file_open_regular(path, O_RDONLY, err);
    if (fd < 0) return errno == ENOENT ? 1 : -1;
    if (fstat(fd, &st)) { int e = errno; close(fd); return rm_errf(err, "%s: cannot stat: %s", path, strerror(e)); }
    if ((uint64_t)st.st_size != n + XC_TRAILER) { close(fd); return damaged_file(path, damaged); }
    uint64_t bulk = ((uintptr_t)dst % RM_ALIGN) ? 0 : rm_align_down(n);
    int rc = 0;
    if (bulk) {
        int dfd = open(path, O_RDONLY | O_DIRECT | O_NONBLOCK | O_CLOEXEC);
        rc = file_pread_all(dfd >= 0 ? dfd : fd, dst, bulk, 0);
        if (dfd >= 0) close(dfd);
    }
    uint8_t tail[RM_ALIGN + XC_TRAILER];
    if (!rc) {  /* the unaligned rest, a block at a time through a small buffer */
        for (uint64_t pos = bulk; pos < n && !rc;) {
            uint64_t k = n - pos > RM_ALIGN ? RM_ALIGN : n - pos;
            rc = file_pread_all(fd, tail, k, pos);
            if (!rc) memcpy((char *)dst + pos, tail, k);
            pos += k;
        }
        if (!rc) rc = file_pread_all(fd, tail, XC_TRAILER, n);
    }
    int e = errno;
    close(fd);
    if (rc < 0) return rm_errf(err, "%s: cannot read: %s", path, strerror(e));
    if (rc > 0 || memcmp(tail, xc_magic, 4)) return damaged_file(path, damaged);
    if (get_le(tail + 8, 8) != n || get_le(tail + 16, 4) != (uint32_t)id->layer ||
        get_le(tail + 20, 4) != (uint32_t)id->expert || get_le(tail + 24, 8) != id->off || get_le(tail + 32, 8) != id->rev)
        return damaged_file(path, damaged);
    if (verify && get_le(tail + 4, 4) != crc_update(0, dst, (size_t)n)) return damaged_file(path, damaged);
    return 0;
}
