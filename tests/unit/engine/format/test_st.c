/* test_st.c — format/st.c, the safetensors reader, on bad input: every
 * malformed file is refused with a message naming the file (and tensor), and
 * nothing crashes or reads out of bounds (these tests also run under ASan);
 * a header validated from memory (as setup does) indexes the same tensors
 * as the file.
 * Damaged checkpoints are built in a temporary directory from the k3-tiny
 * fixture: untouched shards are symlinked, the damaged one is written anew. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "tests/unit/test.h"
#include "model/model.h"
#include "format/st.h"

static char tmpdir[256];

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) { fwrite(data, 1, n, f); fclose(f); }
}

/* A shard with the given JSON header and `data` bytes of zeros. */
static void write_shard(const char *path, const char *hdr, size_t data)
{
    size_t hl = strlen(hdr);
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)(hl >> (8 * i));
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(len, 1, 8, f);
    fwrite(hdr, 1, hl, f);
    for (size_t i = 0; i < data; i++) fputc(0, f);
    fclose(f);
}

static const char *mkdir_tmp(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/remora-st-XXXXXX");
    return mkdtemp(tmpdir);
}

static void rm_tmp(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd)) {}
}

/* Opens a single-file checkpoint with header hdr and `data` bytes; expects
 * failure with a message containing `want`. */
static void expect_bad_file(const char *hdr, size_t data, const char *want)
{
    REQUIRE(mkdir_tmp());
    char path[512];
    snprintf(path, sizeof path, "%s/model.safetensors", tmpdir);
    write_shard(path, hdr, data);
    st_set *s = NULL;
    rm_err err = { "" };
    CHECKF(st_open(tmpdir, &s, &err) == -1, "accepted: %s", hdr);
    CHECKF(strstr(err.msg, want) && strstr(err.msg, "model.safetensors"), "message '%s' lacks '%s'", err.msg, want);
    st_close(s);
    rm_tmp();
}

TEST(st_accepts_valid_file)
{
    REQUIRE(mkdir_tmp());
    char path[512];
    snprintf(path, sizeof path, "%s/model.safetensors", tmpdir);
    write_shard(path, "{\"__metadata__\":{\"format\":\"pt\"},\"a\":{\"dtype\":\"BF16\",\"shape\":[2,3],"
                      "\"data_offsets\":[0,12]},\"b\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[12,16]}}", 16);
    st_set *s = NULL;
    rm_err err;
    CHECK(st_open(tmpdir, &s, &err) == 0);
    if (s) {
        const st_tensor *a = st_find(s, "a"), *b = st_find(s, "b");
        CHECK(a && a->dtype == ST_BF16 && a->ndim == 2 && a->nbytes == 12);
        CHECK(b && b->ndim == 0 && b->nbytes == 4);
        CHECK(st_find(s, "c") == NULL);
    }
    st_close(s);
    rm_tmp();
}

TEST(st_rejects_malformed_headers)
{
    expect_bad_file("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]}", 4, "not valid JSON");
    expect_bad_file("[1,2]", 0, "not a JSON object");
    expect_bad_file("{\"a\":{\"dtype\":\"Q7\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, "unknown dtype 'Q7'");
    expect_bad_file("{\"a\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[0,4]}}", 4, "'a': shape × dtype");
    expect_bad_file("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]},"
                    "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[2,6]}}", 6, "overlap");
    expect_bad_file("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 2, "past the data section");
    expect_bad_file("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[4,0]}}", 4, "not ordered");
    expect_bad_file("{\"a\":{\"dtype\":\"BF16\",\"shape\":[-2],\"data_offsets\":[0,4]}}", 4, "shape entry 0");
    expect_bad_file("{\"a\":{\"dtype\":\"BF16\",\"shape\":[4294967296,4294967296,4294967296],"
                    "\"data_offsets\":[0,4]}}", 4, "too large");
    expect_bad_file("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2]}}", 4, "data_offsets");
    expect_bad_file("{\"a\":5}", 0, "not a JSON object");
    expect_bad_file("{\"a\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[0,2]},"
                    "\"a\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[2,4]}}", 4, "not valid JSON");
}

TEST(st_rejects_hostile_header_length)
{
    REQUIRE(mkdir_tmp());
    char path[512];
    snprintf(path, sizeof path, "%s/model.safetensors", tmpdir);
    uint8_t huge[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}' };
    write_file(path, huge, sizeof huge);
    st_set *s = NULL;
    rm_err err;
    CHECK(st_open(tmpdir, &s, &err) == -1 && strstr(err.msg, "exceeds"));
    uint8_t beyond[16] = { 200, 0, 0, 0, 0, 0, 0, 0, '{', '}' };
    write_file(path, beyond, sizeof beyond);
    CHECK(st_open(tmpdir, &s, &err) == -1 && strstr(err.msg, "beyond the end of the file"));
    write_file(path, beyond, 5);
    CHECK(st_open(tmpdir, &s, &err) == -1 && strstr(err.msg, "too short"));
    rm_tmp();
}

/* Builds tmpdir as a copy of k3-tiny made of symlinks, except `replace`. */
static int fixture_copy(const char *replace)
{
    const char *src = fixture_path("k3-tiny");
    if (!src || !mkdir_tmp()) return -1;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "for f in '%s'/*; do b=$(basename \"$f\"); [ \"$b\" = '%s' ] || ln -s \"$f\" '%s'/\"$b\"; done",
             src, replace ? replace : "", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void expect_model_error(const char *want)
{
    rm_model *m = NULL;
    rm_err err = { "" };
    CHECKF(rm_model_open(tmpdir, NULL, &m, &err) == -1, "model opened despite damage (%s)", want);
    CHECKF(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
    rm_model_free(m);
    rm_tmp();
}

TEST(st_rejects_truncated_shard)
{
    REQUIRE(fixture_copy("model-00003-of-000010.safetensors") == 0);
    char src[1024], dst[1024];
    snprintf(src, sizeof src, "%s", fixture_path("k3-tiny/model-00003-of-000010.safetensors"));
    snprintf(dst, sizeof dst, "%s/model-00003-of-000010.safetensors", tmpdir);
    size_t n;
    char *data = t_read_file(src, &n);
    REQUIRE(data);
    write_file(dst, data, n - 1000);
    free(data);
    expect_model_error("model-00003-of-000010.safetensors");
}

TEST(st_rejects_index_problems)
{
    const char *idx = "model.safetensors.index.json";
    /* a tensor the index lists but the shard lacks */
    REQUIRE(fixture_copy(idx) == 0);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, idx);
    const char *j1 = "{\"weight_map\":{\"language_model.model.norm.weight\":\"model-00010-of-000010.safetensors\","
                     "\"language_model.model.ghost\":\"model-00010-of-000010.safetensors\"}}";
    write_file(path, j1, strlen(j1));
    expect_model_error("'language_model.model.ghost' is listed in the index but missing");
    /* a shard name that leaves the model directory */
    REQUIRE(fixture_copy(idx) == 0);
    snprintf(path, sizeof path, "%s/%s", tmpdir, idx);
    const char *j2 = "{\"weight_map\":{\"x\":\"../k3-tiny/model-00010-of-000010.safetensors\"}}";
    write_file(path, j2, strlen(j2));
    expect_model_error("not a plain file name");
    /* bad JSON */
    REQUIRE(fixture_copy(idx) == 0);
    snprintf(path, sizeof path, "%s/%s", tmpdir, idx);
    write_file(path, "{\"weight_map\": {", 16);
    expect_model_error("not valid JSON");
    /* a shard that does not exist */
    REQUIRE(fixture_copy(idx) == 0);
    snprintf(path, sizeof path, "%s/%s", tmpdir, idx);
    const char *j3 = "{\"weight_map\":{\"x\":\"model-00099-of-000010.safetensors\"}}";
    write_file(path, j3, strlen(j3));
    expect_model_error("model-00099-of-000010.safetensors: cannot open");
}

TEST(st_checkpoint_lacking_a_tensor_is_refused)
{
    /* The index still names every tensor, so drop one from index and shard:
     * a model whose index lacks lm_head must fail naming it. */
    REQUIRE(fixture_copy("model.safetensors.index.json") == 0);
    const char *src = fixture_path("k3-tiny/model.safetensors.index.json");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "grep -v 'language_model.lm_head.weight' '%s' > '%s/model.safetensors.index.json'", src, tmpdir);
    REQUIRE(system(cmd) == 0);
    /* the shard still holds it, so blank the shard too */
    snprintf(cmd, sizeof cmd, "rm '%s/model-00010-of-000010.safetensors'", tmpdir);
    REQUIRE(system(cmd) == 0);
    char path[512];
    snprintf(path, sizeof path, "%s/model-00010-of-000010.safetensors", tmpdir);
    write_shard(path, "{\"language_model.model.norm.weight\":{\"dtype\":\"BF16\",\"shape\":[256],\"data_offsets\":[0,512]},"
                      "\"language_model.model.output_attn_res_norm.weight\":{\"dtype\":\"BF16\",\"shape\":[256],\"data_offsets\":[512,1024]},"
                      "\"language_model.model.output_attn_res_proj.weight\":{\"dtype\":\"BF16\",\"shape\":[1,256],\"data_offsets\":[1024,1536]}}", 1536);
    expect_model_error("tensor 'language_model.lm_head.weight' is missing");
}

TEST(st_header_from_memory)
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

/* The index's shard names are gathered through a hash set (60,000 names
 * once took 30 s with a scan per name), capped at CAP_SHARDS distinct
 * shards, in order of first appearance. */
TEST(st_index_many_entries)
{
    rm_buf b = { 0 };
    REQUIRE(!rm_buf_adds(&b, "{\"weight_map\": {"));
    for (int i = 0; i < 60000; i++)
        REQUIRE(!rm_buf_addf(&b, "%s\"t%d\": \"s%d.safetensors\"", i ? ", " : "", i, (i * 7) % 100));
    REQUIRE(!rm_buf_adds(&b, "}}"));
    st_index ix;
    rm_err err = { "" };
    REQUIRE(st_index_parse(b.p, b.len, "index.json", &ix, &err) == 0);
    CHECK(ix.nshards == 100 && !strcmp(ix.shards[0], "s0.safetensors") && !strcmp(ix.shards[1], "s7.safetensors"));
    st_index_free(&ix);
    rm_buf_reset(&b);
    REQUIRE(!rm_buf_adds(&b, "{\"weight_map\": {"));
    for (int i = 0; i < 60000; i++) REQUIRE(!rm_buf_addf(&b, "%s\"t%d\": \"s%d\"", i ? ", " : "", i, i));
    REQUIRE(!rm_buf_adds(&b, "}}"));
    CHECK(st_index_parse(b.p, b.len, "index.json", &ix, &err) == -1 && strstr(err.msg, "more than 8192 shards") &&
          err.kind == RM_ERR_INPUT && !ix.shards);
    rm_buf_free(&b);
    const char *bad[][2] = {
        { "{\"weight_map\": {\"a\": \"../x\"}}", "not a plain file name" },
        { "{\"weight_map\": {\"a\": 3}}", "is not a string" },
        { "{\"weight_map\": {}}", "missing or empty" },
        { "{\"weight_map\": {\"a\": \"x\", \"a\": \"y\"}}", "not valid JSON" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECKF(st_index_parse(bad[i][0], strlen(bad[i][0]), "index.json", &ix, &err) == -1 && strstr(err.msg, bad[i][1]) &&
               err.kind == RM_ERR_INPUT, "case %zu: %s", i, err.msg);
}
