/* test_source.c — remote/source.c, stream mode, without a server: expert
 * tensor names; then a stream-mode copy of each fixture model (its shards,
 * a manifest that lacks the routed experts of layer 2, source.json naming a
 * port where nothing listens) whose layer-2 experts come from disk-cache
 * files made from the fixture's own bytes. The spans built from tensor
 * names and the reader hook must put exactly those bytes in the expert
 * slots: the logits equal the local model's bit for bit, the pool status
 * counts the cached experts as local, and with one used expert's cache file
 * gone the forward pass fails naming the URL it could not fetch. The real
 * transfers are tested against nginx in tests/sh/http_*.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "tests/unit/engine/helpers.h"
#include "remote/source.h"
#include "remote/manifest.h"
#include "remote/xcache.h"
#include "format/st.h"

#define GONE_LAYER 2

TEST(source_expert_tensor_names)
{
    int l = -1, e = -1;
    CHECK(remote_expert_tensor("language_model.model.layers.12.block_sparse_moe.experts.345.w1.weight_packed", &l, &e) &&
          l == 12 && e == 345);
    CHECK(remote_expert_tensor("model.layers.3.block_sparse_moe.experts.0.w2.weight", &l, &e) && l == 3 && e == 0);
    CHECK(!remote_expert_tensor("model.layers.3.block_sparse_moe.shared_experts.gate_proj.weight", NULL, NULL));
    CHECK(!remote_expert_tensor("model.layers.3.block_sparse_moe.gate.weight", NULL, NULL));
    CHECK(!remote_expert_tensor("model.embed_tokens.weight", NULL, NULL));
}

static int cmp_off(const void *a, const void *b)
{
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The stream-mode copy of fixture `name` in dir: links to its files, the
 * manifest without layer GONE_LAYER's experts, source.json, and a cache file
 * per expert of that layer. Returns the number of experts cached, or -1. */
static int make_stream_copy(const char *name, const char *dir)
{
    const char *src = fixture_path(name);
    if (!src) return -1;
    char cmd[2048], path[1024];
    snprintf(cmd, sizeof cmd, "for f in '%s'/*; do ln -s \"$f\" '%s'/; done && mkdir '%s/.remora'", src, dir, dir);
    if (system(cmd)) return -1;
    st_set *st = NULL;
    rm_err err = { "" };
    if (st_open(src, &st, &err)) { fprintf(stderr, "  %s\n", err.msg); return -1; }
    manifest mf;
    snprintf(path, sizeof path, "%s/.remora/manifest.json", dir);
    int rc = manifest_load(&mf, path, &err), cached = 0;
    for (int i = 0; i < st->nshards && !rc; i++) {
        const char *base = strrchr(st->shards[i].path, '/') + 1;
        rc = manifest_shard(&mf, base, st->shards[i].size) != i ||
             manifest_add(&mf, i, 0, st->shards[i].data_start, &err);
    }
    const st_tensor **mine = calloc((size_t)st->ntensors, sizeof *mine);
    for (int i = 0; i < st->ntensors && !rc; i++) {
        const st_tensor *t = &st->tensors[i];
        int l, e;
        if (remote_expert_tensor(t->name, &l, &e) && l == GONE_LAYER) continue;
        rc = manifest_add(&mf, t->shard, t->offset, t->offset + t->nbytes, &err);
    }
    if (!rc) rc = manifest_save(&mf, &err) || remote_write_source(dir, "http://127.0.0.1:1/model", 0, NULL, &err);
    /* the cache files: each expert's tensors in shard order, back to back */
    for (int e = 0; !rc; e++) {
        int n = 0;
        for (int i = 0; i < st->ntensors; i++) {
            int l, x;
            if (remote_expert_tensor(st->tensors[i].name, &l, &x) && l == GONE_LAYER && x == e) mine[n++] = &st->tensors[i];
        }
        if (!n) break;
        qsort(mine, (size_t)n, sizeof *mine, cmp_off);
        uint64_t raw = 0;
        for (int i = 0; i < n; i++) raw += mine[i]->nbytes;
        uint8_t *img = malloc(raw);
        uint64_t pos = 0;
        for (int i = 0; i < n && img && !rc; i++) {
            rc = st_pread(st, mine[i], img + pos, mine[i]->nbytes, &err);
            pos += mine[i]->nbytes;
        }
        xc_path(path, sizeof path, dir, GONE_LAYER, e);
        uint64_t first = UINT64_MAX;
        for (int i = 0; i < n; i++) if (mine[i]->offset < first) first = mine[i]->offset;
        if (!img || rc || xc_store(path, img, raw, &(xc_id){ GONE_LAYER, e, first, 0 }, &err)) rc = -1;
        free(img);
        cached++;
    }
    if (rc && err.msg[0]) fprintf(stderr, "  %s\n", err.msg);
    free(mine);
    manifest_free(&mf);
    st_close(st);
    return rc ? -1 : cached;
}

typedef struct { int used[64]; } layer_routes;
static void note_route(void *ud, int layer, int pos, const int *ids, const float *w, int k, float margin)
{
    layer_routes *r = ud;
    if (layer == GONE_LAYER)
        for (int i = 0; i < k; i++) r->used[ids[i] & 63] = 1;
}

static float *run_logits(const char *dir, const int32_t *ids, int T, layer_routes *r, rm_err *err)
{
    rm_model *m = NULL;
    rm_state *s = NULL;
    float *logits = NULL;
    if (rm_model_open(dir, NULL, &m, err) || !(s = rm_state_new(m, err))) goto out;
    logits = malloc((size_t)T * rm_model_get_info(m)->vocab_size * sizeof *logits);
    if (!logits || rm_forward(m, s, ids, T, logits, NULL, r ? note_route : NULL, r, err)) { free(logits); logits = NULL; }
out:
    rm_state_free(s);
    rm_model_free(m);
    return logits;
}

static void check_stream_copy(const char *name)
{
    setenv("REMORA_HTTP_TRIES", "1", 1);
    char dir[256];
    REQUIRE(scratch_dir(dir, sizeof dir, "source"));
    int cached = make_stream_copy(name, dir);
    REQUIRE(cached > 0);
    const int32_t ids[8] = { 839, 2083, 1734, 1881, 1948, 2032, 5, 17 };
    rm_err err = { "" };
    layer_routes used = { { 0 } };
    float *local = run_logits(fixture_path(name), ids, 8, &used, &err);
    REQUIRE(local);
    float *streamed = run_logits(dir, ids, 8, NULL, &err);
    CHECKF(streamed != NULL, "%s: %s", name, err.msg);
    rm_model *m = NULL;
    REQUIRE(rm_model_open(dir, NULL, &m, &err) == 0);
    const int V = rm_model_get_info(m)->vocab_size;
    if (streamed) CHECKF(!memcmp(local, streamed, (size_t)8 * V * sizeof *local), "%s: streamed logits differ", name);
    rm_pool_status ps;
    CHECK(rm_model_pool_status(m, &ps, &err) == 0);
    CHECK(ps.stream && !strcmp(ps.source, "http://127.0.0.1:1/model"));
    CHECK(ps.experts_total == rm_model_get_info(m)->total_experts && ps.experts_local == ps.experts_total);
    rm_model_free(m);
    /* one used expert's cache file gone: fetched from the source, which fails */
    int gone = 0;
    while (gone < 64 && !used.used[gone]) gone++;
    REQUIRE(gone < cached);
    char path[600];
    xc_path(path, sizeof path, dir, GONE_LAYER, gone);
    REQUIRE(unlink(path) == 0);
    REQUIRE(rm_model_open(dir, NULL, &m, &err) == 0);
    CHECK(rm_model_pool_status(m, &ps, &err) == 0 && ps.experts_local == ps.experts_total - 1);
    rm_model_free(m);
    free(streamed);
    streamed = run_logits(dir, ids, 8, NULL, &err);
    CHECK(!streamed);
    CHECKF(strstr(err.msg, "http://127.0.0.1:1/model/") && strstr(err.msg, "of layer 2"), "%s", err.msg);
    free(streamed);
    free(local);
    scratch_remove(dir);
    unsetenv("REMORA_HTTP_TRIES");
}

TEST(source_k3_experts_from_the_disk_cache) { check_stream_copy("k3-tiny"); }
TEST(source_kl_experts_from_the_disk_cache) { check_stream_copy("kl-tiny"); }
