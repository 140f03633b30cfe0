/* test_file.c — base/file.c: every engine writer of a file a user cares
 * about (rm_write_atomic's callers, the disk cache, the download manifest,
 * source.json) ends in the one atomic commit, file_commit (counted by its
 * test hook); a folder in the way of a cached expert is refused by name and
 * leaves no temporary file. */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../test.h"
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
    CHECKF(xc_store(path, raw, sizeof raw, &err) == 0, "%s", err.msg);
    CHECK(xc_present(path, sizeof raw));
    snprintf(meta, sizeof meta, "%s/.remora", dir);
    REQUIRE(file_mkdirs(meta, &err) == 0);
    manifest m;
    snprintf(path, sizeof path, "%s/manifest.json", meta);
    REQUIRE(manifest_load(&m, path, &err) == 0);
    int s = manifest_shard(&m, "a.safetensors", 100);
    CHECK(s == 0 && manifest_add(&m, s, 0, 10, &err) == 0 && manifest_save(&m, &err) == 0);
    manifest_free(&m);
    CHECK(remote_write_source(dir, "http://127.0.0.1:1/m", 0, &err) == 0);
    CHECKF(file_test_commits() == c0 + 4, "%lu commits", file_test_commits() - c0);
    /* a folder where a cached expert would go */
    xc_path(path, sizeof path, dir, 1, 3);
    REQUIRE(mkdir(path, 0755) == 0);
    CHECK(xc_store(path, raw, sizeof raw, &err) == -1);
    CHECKF(strstr(err.msg, "is a directory") && strstr(err.msg, "E3.bin") && !strstr(err.msg, ".tmp."), "%s", err.msg);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/.remora/experts/L1", dir);
    CHECK(count_tmp(sub) == 0 && count_tmp(meta) == 0 && count_tmp(dir) == 0);
    CHECK(file_test_commits() == c0 + 4);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {}
}
