/* test_file.c — base/file.c: rm_write_atomic and the two-step commit
 * (whole file or nothing, no temporary left behind, errors naming the
 * user's file); every engine writer of a file a user cares about (the disk
 * cache, the download manifest, source.json) ends in the one atomic commit,
 * file_commit (counted by its test hook), and a folder in the way of a
 * cached expert is refused by name; temporary names tell live writers from
 * dead ones; file_read reads whole files and names what is wrong. */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "base/file.h"
#include "remote/xcache.h"
#include "remote/manifest.h"
#include "remote/source.h"

static int count_tmp(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) n += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    return n;
}

TEST(file_every_engine_writer_commits_atomically)
{
    char dir[] = "/tmp/remora-file-XXXXXX";
    REQUIRE(mkdtemp(dir));
    char path[700], meta[512];
    rm_err err = { "" };
    const unsigned long c0 = file_test_commits();
    snprintf(path, sizeof path, "%s/plain.txt", dir);
    CHECK(rm_write_atomic(path, "x", 1, 0644, &err) == 0);
    uint8_t raw[5000];
    for (size_t i = 0; i < sizeof raw; i++) raw[i] = (uint8_t)(i * 13);
    xc_path(path, sizeof path, dir, 1, 2);
    CHECKF(xc_store(path, raw, sizeof raw, &(xc_id){ 1, 2, 0, 0 }, &err) == 0, "%s", err.msg);
    CHECK(xc_present(path, sizeof raw));
    snprintf(meta, sizeof meta, "%s/.remora", dir);
    REQUIRE(file_mkdirs(meta, &err) == 0);
    manifest m;
    snprintf(path, sizeof path, "%s/manifest.json", meta);
    REQUIRE(manifest_load(&m, path, &err) == 0);
    int s = manifest_shard(&m, "a.safetensors", 100);
    CHECK(s == 0 && manifest_add(&m, s, 0, 10, &err) == 0 && manifest_save(&m, &err) == 0);
    manifest_free(&m);
    CHECK(remote_write_source(dir, "http://127.0.0.1:1/m", 0, NULL, &err) == 0);
    CHECKF(file_test_commits() == c0 + 4, "%lu commits", file_test_commits() - c0);
    /* a folder where a cached expert would go */
    xc_path(path, sizeof path, dir, 1, 3);
    REQUIRE(mkdir(path, 0755) == 0);
    CHECK(xc_store(path, raw, sizeof raw, &(xc_id){ 1, 2, 0, 0 }, &err) == -1);
    CHECKF(strstr(err.msg, "is a directory") && strstr(err.msg, "E3.bin") && !strstr(err.msg, ".tmp."), "%s", err.msg);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/.remora/experts/L1", dir);
    CHECK(count_tmp(sub) == 0 && count_tmp(meta) == 0 && count_tmp(dir) == 0);
    CHECK(file_test_commits() == c0 + 4);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {}
}

TEST(file_write_atomic)
{
    char dir[] = "/tmp/remora-base-XXXXXX";
    REQUIRE(mkdtemp(dir));
    char path[256], sub[256], bad[300];
    snprintf(path, sizeof path, "%s/file.txt", dir);
    rm_err err;
    CHECK(rm_write_atomic(path, "first", 5, 0600, &err) == 0);
    CHECK(rm_write_atomic(path, "second line", 11, 0600, &err) == 0);
    size_t len;
    char *got = t_read_file(path, &len);
    CHECK(got && len == 11 && !memcmp(got, "second line", 11));
    free(got);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    /* a folder in the way, or a missing folder: refused, the message names
     * the user's path, nothing left behind */
    snprintf(sub, sizeof sub, "%s/adir", dir);
    REQUIRE(mkdir(sub, 0755) == 0);
    CHECK(rm_write_atomic(sub, "x", 1, 0644, &err) == -1);
    CHECKF(strstr(err.msg, "is a directory") && strstr(err.msg, sub), "%s", err.msg);
    snprintf(bad, sizeof bad, "%s/missing/file.txt", dir);
    CHECK(rm_write_atomic(bad, "x", 1, 0644, &err) == -1);
    CHECKF(!strstr(err.msg, ".tmp.") && strstr(err.msg, bad), "%s", err.msg);
    CHECK(count_tmp(dir) == 0);
    /* the two-step form */
    char tmp[4200];
    rm_atomic_tmp_name(path, tmp, sizeof tmp);
    FILE *f = fopen(tmp, "w");
    REQUIRE(f);
    fputs("third", f);
    fclose(f);
    CHECK(rm_atomic_commit(tmp, path, &err) == 0);
    got = t_read_file(path, &len);
    CHECK(got && len == 5 && !memcmp(got, "third", 5));
    free(got);
    rm_atomic_tmp_name(path, tmp, sizeof tmp);
    f = fopen(tmp, "w");
    REQUIRE(f);
    fclose(f);
    rm_atomic_abort(tmp);
    CHECK(count_tmp(dir) == 0);
    unlink(path);
    rmdir(sub);
    rmdir(dir);
}

TEST(file_tmp_names)
{
    char name[512];
    file_tmp_name(name, sizeof name, "/x/E1.bin");
    CHECK(!strncmp(name, "/x/E1.bin.tmp.", 14));
    CHECK(!file_tmp_stale(name));                         /* ours: alive */
    CHECK(file_tmp_stale("E1.bin.tmp.2147483646.5"));     /* no such process */
    CHECK(!file_tmp_stale("E1.bin"));
}

TEST(file_sweep_removes_only_dead_writers_tmps)
{
    char dir[] = "/tmp/remora-sweep-XXXXXX", p[600], dead[700], other[700], live[700];
    REQUIRE(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/chat.state", dir);
    snprintf(dead, sizeof dead, "%s.tmp.2147483646.5", p);           /* a killed save: no such process */
    snprintf(other, sizeof other, "%s/other.state.tmp.2147483646.5", dir);  /* another file's */
    file_tmp_name(live, sizeof live, p);                             /* ours: a save in progress */
    const char *all[] = { p, dead, other, live };
    for (int i = 0; i < 4; i++) {
        FILE *f = fopen(all[i], "w");
        REQUIRE(f);
        fclose(f);
    }
    CHECK(file_sweep_stale_tmps(p) == 1);
    CHECK(access(dead, F_OK) != 0);
    CHECK(access(p, F_OK) == 0 && access(other, F_OK) == 0 && access(live, F_OK) == 0);
    for (int i = 0; i < 4; i++) unlink(all[i]);
    rmdir(dir);
}

TEST(file_read_whole_files)
{
    char dir[] = "/tmp/remora-read-XXXXXX";
    REQUIRE(mkdtemp(dir));
    char path[300];
    snprintf(path, sizeof path, "%s/f", dir);
    rm_err err = { "" };
    REQUIRE(rm_write_atomic(path, "abc\0def", 7, 0644, &err) == 0);
    size_t len = 0;
    char *p = file_read(path, 100, &len, &err);
    CHECK(p && len == 7 && !memcmp(p, "abc\0def", 8));     /* NUL-terminated too */
    free(p);
    CHECK(!file_read(path, 6, &len, &err) && strstr(err.msg, "larger than") && strstr(err.msg, path));
    CHECK(!file_read(dir, 100, &len, &err) && strstr(err.msg, "not a regular file"));
    unlink(path);
    CHECK(!file_read(path, 100, &len, &err) && strstr(err.msg, "cannot open") && strstr(err.msg, path));
    rmdir(dir);
}
