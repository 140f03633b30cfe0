/* test_xcache.c — remote/xcache.c, the stream-mode disk cache: cache files
 * that are whole, missing, damaged by a flipped byte (caught and removed),
 * short, or of another expert's size, read into aligned and unaligned
 * buffers. */
#include <fcntl.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "tests/unit/engine/helpers.h"
#include "remote/xcache.h"

TEST(xcache_files_whole_damaged_short_missing)
{
    char tdir[256];
    REQUIRE(scratch_dir(tdir, sizeof tdir, "xcache"));
    const uint64_t n = 3 * 4096 + 123;          /* an aligned bulk and a tail */
    uint8_t *raw = malloc(n), *dst = NULL;
    REQUIRE(raw && !posix_memalign((void **)&dst, 4096, 4 * 4096));
    for (uint64_t i = 0; i < n; i++) raw[i] = (uint8_t)(i * 131 + 7);
    char path[400];
    xc_path(path, sizeof path, tdir, 5, 17);
    CHECK(strstr(path, "/.remora/experts/L5/E17.bin") != NULL);
    rm_err err = { "" };
    int damaged = 0;
    const xc_id me = { 5, 17, 4096, xc_revision("\"abc\"") }, *id = &me;
    CHECK(xc_load(path, dst, n, id, 1, &damaged, &err) == 1 && !damaged);      /* missing */
    CHECK(!xc_present(path, n));
    REQUIRE(!xc_store(path, raw, n, id, &err));
    CHECK(xc_present(path, n) && !xc_present(path, n + 1));
    memset(dst, 0, n);
    CHECK(xc_load(path, dst, n, id, 1, &damaged, &err) == 0 && !memcmp(dst, raw, n));
    memset(dst, 0, n);
    CHECK(xc_load(path, dst + 1, n, id, 1, &damaged, &err) == 0 && !memcmp(dst + 1, raw, n));   /* unaligned */
    /* a flipped byte: caught by the checksum, the file removed */
    int fd = open(path, O_WRONLY);
    uint8_t x = raw[5000] ^ 0x40;
    CHECK(fd >= 0 && pwrite(fd, &x, 1, 5000) == 1);
    close(fd);
    CHECK(xc_load(path, dst, n, id, 0, &damaged, &err) == 0);                  /* not verified: not seen */
    CHECK(xc_load(path, dst, n, id, 1, &damaged, &err) == 1 && damaged && access(path, F_OK) != 0);
    /* a short file */
    REQUIRE(!xc_store(path, raw, n, id, &err));
    CHECK(truncate(path, (off_t)n) == 0);
    damaged = 0;
    CHECK(xc_load(path, dst, n, id, 1, &damaged, &err) == 1 && damaged && access(path, F_OK) != 0);
    /* a file of another expert size */
    REQUIRE(!xc_store(path, raw, n - 1, id, &err));
    damaged = 0;
    CHECK(xc_load(path, dst, n, id, 1, &damaged, &err) == 1 && damaged);
    /* another expert's file under this name (swapped or copied), another
     * span, another revision: each is refused and removed, not used */
    const xc_id other[3] = { { 5, 18, 4096, me.rev }, { 5, 17, 8192, me.rev }, { 5, 17, 4096, xc_revision("\"new\"") } };
    for (int i = 0; i < 3; i++) {
        REQUIRE(!xc_store(path, raw, n, &other[i], &err));
        damaged = 0;
        CHECKF(xc_load(path, dst, n, id, 0, &damaged, &err) == 1 && damaged && access(path, F_OK) != 0, "case %d", i);
    }
    /* a FIFO in its place is removed, never opened (an open would block) */
    REQUIRE(mkfifo(path, 0644) == 0);
    damaged = 0;
    CHECK(xc_load(path, dst, n, id, 1, &damaged, &err) == 1 && damaged && access(path, F_OK) != 0);
    free(raw);
    free(dst);
    scratch_remove(tdir);
}
