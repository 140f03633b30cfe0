/* test_fetch.c — the pieces of stream mode that need no server: CRC-32,
 * Content-Range parsing, the download manifest (merging, gaps, a round trip
 * through its file), safetensors headers validated from memory, the expert
 * cache files (whole, damaged, short, missing), expert tensor names, the
 * default source and temporary-file ownership. The HTTP paths are tested
 * against nginx and a faulty server in tests/sh/http_*.sh. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../test.h"
#include "remote/http.h"
#include "remote/manifest.h"
#include "remote/xcache.h"
#include "base/file.h"
#include "remote/source.h"
#include "format/st.h"

static char tdir[256];

static const char *tmp_dir(void)
{
    snprintf(tdir, sizeof tdir, "/tmp/remora-fetch-XXXXXX");
    return mkdtemp(tdir);
}

static void rm_dir(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tdir);
    if (system(cmd)) {}
}

TEST(fetch_crc32_vectors)
{
    CHECK(xc_crc32(0, "", 0) == 0);
    CHECK(xc_crc32(0, "123456789", 9) == 0xCBF43926u);
    CHECK(xc_crc32(0, "The quick brown fox jumps over the lazy dog", 43) == 0x414FA339u);
    uint8_t buf[1000];
    for (int i = 0; i < 1000; i++) buf[i] = (uint8_t)(i * 7 + 3);
    uint32_t whole = xc_crc32(0, buf, sizeof buf);
    CHECK(xc_crc32(xc_crc32(0, buf, 333), buf + 333, 667) == whole);    /* incremental */
}

TEST(fetch_content_range)
{
    uint64_t a, b, t;
    CHECK(!http_parse_content_range(" bytes 0-7/1573016", &a, &b, &t) && a == 0 && b == 7 && t == 1573016);
    CHECK(!http_parse_content_range("bytes 100-199/*\r\n", &a, &b, &t) && a == 100 && b == 199 && t == UINT64_MAX);
    CHECK(http_parse_content_range("bytes 5-4/10", &a, &b, &t));      /* reversed */
    CHECK(http_parse_content_range("bytes 0-10/10", &a, &b, &t));     /* past the end */
    CHECK(http_parse_content_range("bytes */10", &a, &b, &t));        /* unsatisfied */
    CHECK(http_parse_content_range("items 0-1/2", &a, &b, &t));
    CHECK(http_parse_content_range("bytes 0-1/2 junk", &a, &b, &t));
    CHECK(http_parse_content_range("", &a, &b, &t));
}

TEST(fetch_manifest_spans)
{
    REQUIRE(tmp_dir());
    char path[400];
    snprintf(path, sizeof path, "%s/manifest.json", tdir);
    manifest m;
    rm_err err = { "" };
    REQUIRE(!manifest_load(&m, path, &err));      /* missing: empty */
    int s = manifest_shard(&m, "a.safetensors", 1000);
    REQUIRE(s == 0);
    CHECK(!manifest_add(&m, s, 100, 200, &err));
    CHECK(!manifest_add(&m, s, 300, 400, &err));
    CHECK(!manifest_add(&m, s, 200, 300, &err));   /* bridges the two */
    CHECK(m.shards[s].n == 1 && m.shards[s].spans[0].lo == 100 && m.shards[s].spans[0].hi == 400);
    CHECK(!manifest_add(&m, s, 0, 50, &err));
    CHECK(!manifest_add(&m, s, 900, 1000, &err));
    CHECK(manifest_add(&m, s, 900, 1001, &err) && strstr(err.msg, "past the end"));
    CHECK(m.shards[s].n == 3);
    CHECK(manifest_covers(&m, s, 100, 400) && manifest_covers(&m, s, 150, 160) && manifest_covers(&m, s, 0, 50));
    CHECK(!manifest_covers(&m, s, 40, 60) && !manifest_covers(&m, s, 50, 100) && !manifest_covers(&m, 7, 0, 1));
    CHECK(manifest_bytes(&m, s) == 50 + 300 + 100);
    mf_span *g = NULL;
    int ng = 0, cap = 0;
    CHECK(!manifest_gaps(&m, s, 0, 1000, &g, &ng, &cap));
    CHECK(ng == 2 && g[0].lo == 50 && g[0].hi == 100 && g[1].lo == 400 && g[1].hi == 900);
    ng = 0;
    CHECK(!manifest_gaps(&m, s, 120, 450, &g, &ng, &cap) && ng == 1 && g[0].lo == 400 && g[0].hi == 450);
    free(g);
    CHECK(!manifest_save(&m, &err));
    manifest m2;
    REQUIRE(!manifest_load(&m2, path, &err));
    CHECK(m2.nshards == 1 && m2.shards[0].size == 1000 && m2.shards[0].n == 3 && manifest_covers(&m2, 0, 200, 300));
    CHECK(manifest_shard(&m2, "a.safetensors", 2000) == 0 && m2.shards[0].n == 0);   /* new size: spans dropped */
    manifest_free(&m2);
    manifest_free(&m);
    /* a damaged manifest is refused with its path */
    FILE *f = fopen(path, "w");
    if (f) { fputs("{\"shards\": {\"a\": {\"size\": 10, \"spans\": [[5, 2]]}}}", f); fclose(f); }
    CHECK(manifest_load(&m, path, &err) && strstr(err.msg, "manifest.json"));
    rm_dir();
}

TEST(fetch_header_from_memory)
{
    const char *p = fixture_path("k3-tiny/model-00003-of-000010.safetensors");
    if (!p) return;
    size_t len = 0;
    char *file = t_read_file(p, &len);
    REQUIRE(file && len > 8);
    uint64_t hlen = st_header_len((const uint8_t *)file);
    st_set *a = NULL, *b = NULL;
    rm_err err = { "" };
    REQUIRE(!st_parse_header("shard3", file + 8, hlen, len, &a, &err));
    REQUIRE(!st_open_file(p, &b, &err));
    CHECK(a->ntensors == b->ntensors);
    for (int i = 0; i < b->ntensors; i++) {
        const st_tensor *t = st_find(a, b->tensors[i].name);
        CHECK(t && t->offset == b->tensors[i].offset && t->nbytes == b->tensors[i].nbytes);
    }
    st_close(a);
    /* the same header claiming a shorter file: tensors past its end are refused */
    CHECK(st_parse_header("shard3", file + 8, hlen, len - 1000, &a, &err) && strstr(err.msg, "shard3"));
    CHECK(st_parse_header("shard3", file + 8, hlen, 8 + hlen - 1, &a, &err) && strstr(err.msg, "beyond the end"));
    CHECK(st_parse_header("shard3", "{\"x\": 1", 7, 100, &a, &err) && strstr(err.msg, "not valid JSON"));
    st_close(b);
    free(file);
}

TEST(fetch_cache_files)
{
    REQUIRE(tmp_dir());
    const uint64_t n = 3 * 4096 + 123;          /* an aligned bulk and a tail */
    uint8_t *raw = malloc(n), *dst = NULL;
    REQUIRE(raw && !posix_memalign((void **)&dst, 4096, 4 * 4096));
    for (uint64_t i = 0; i < n; i++) raw[i] = (uint8_t)(i * 131 + 7);
    char path[400];
    xc_path(path, sizeof path, tdir, 5, 17);
    CHECK(strstr(path, "/.remora/experts/L5/E17.bin") != NULL);
    rm_err err = { "" };
    int damaged = 0;
    CHECK(xc_load(path, dst, n, 1, &damaged, &err) == 1 && !damaged);      /* missing */
    CHECK(!xc_present(path, n));
    REQUIRE(!xc_store(path, raw, n, &err));
    CHECK(xc_present(path, n) && !xc_present(path, n + 1));
    memset(dst, 0, n);
    CHECK(xc_load(path, dst, n, 1, &damaged, &err) == 0 && !memcmp(dst, raw, n));
    memset(dst, 0, n);
    CHECK(xc_load(path, dst + 1, n, 1, &damaged, &err) == 0 && !memcmp(dst + 1, raw, n));   /* unaligned */
    /* a flipped byte: caught by the checksum, the file removed */
    int fd = open(path, O_WRONLY);
    uint8_t x = raw[5000] ^ 0x40;
    CHECK(fd >= 0 && pwrite(fd, &x, 1, 5000) == 1);
    close(fd);
    CHECK(xc_load(path, dst, n, 0, &damaged, &err) == 0);                  /* not verified: not seen */
    CHECK(xc_load(path, dst, n, 1, &damaged, &err) == 1 && damaged && access(path, F_OK) != 0);
    /* a short file */
    REQUIRE(!xc_store(path, raw, n, &err));
    CHECK(truncate(path, (off_t)n) == 0);
    damaged = 0;
    CHECK(xc_load(path, dst, n, 1, &damaged, &err) == 1 && damaged && access(path, F_OK) != 0);
    /* a file of another expert size */
    REQUIRE(!xc_store(path, raw, n - 1, &err));
    damaged = 0;
    CHECK(xc_load(path, dst, n, 1, &damaged, &err) == 1 && damaged);
    free(raw);
    free(dst);
    rm_dir();
}

TEST(fetch_expert_names_and_source)
{
    int l = -1, e = -1;
    CHECK(remote_expert_tensor("language_model.model.layers.12.block_sparse_moe.experts.345.w1.weight_packed", &l, &e) &&
          l == 12 && e == 345);
    CHECK(remote_expert_tensor("model.layers.3.block_sparse_moe.experts.0.w2.weight", &l, &e) && l == 3 && e == 0);
    CHECK(!remote_expert_tensor("model.layers.3.block_sparse_moe.shared_experts.gate_proj.weight", NULL, NULL));
    CHECK(!remote_expert_tensor("model.layers.3.block_sparse_moe.gate.weight", NULL, NULL));
    CHECK(!remote_expert_tensor("model.embed_tokens.weight", NULL, NULL));
    char buf[1024];
    unsetenv("REMORA_HF_HOST");
    unsetenv("REMORA_HF_PATH");
    rm_default_source(buf, sizeof buf);
    CHECK(!strcmp(buf, "https://huggingface.co/moonshotai/Kimi-K3/resolve/main"));
    setenv("REMORA_HF_HOST", "hf-mirror.example", 1);
    rm_default_source(buf, sizeof buf);
    CHECK(!strcmp(buf, "https://hf-mirror.example/moonshotai/Kimi-K3/resolve/main"));
    setenv("REMORA_HF_HOST", "http://127.0.0.1:8080/", 1);
    setenv("REMORA_HF_PATH", "/m/k3", 1);
    rm_default_source(buf, sizeof buf);
    CHECK(!strcmp(buf, "http://127.0.0.1:8080/m/k3"));
    unsetenv("REMORA_HF_HOST");
    unsetenv("REMORA_HF_PATH");
}

TEST(fetch_tmp_names)
{
    char name[512];
    file_tmp_name(name, sizeof name, "/x/E1.bin");
    CHECK(!strncmp(name, "/x/E1.bin.tmp.", 14));
    CHECK(!file_tmp_stale(name));                         /* ours: alive */
    CHECK(file_tmp_stale("E1.bin.tmp.2147483646.5"));     /* no such process */
    CHECK(!file_tmp_stale("E1.bin"));
}

TEST(fetch_bad_urls)
{
    http_client *c = NULL;
    rm_err err = { "" };
    http_opts o = { "ftp://example.org/x", NULL, 0, 0, 0 };
    CHECK(http_new(&o, &c, &err) && strstr(err.msg, "ftp://example.org/x") && !c);
}
