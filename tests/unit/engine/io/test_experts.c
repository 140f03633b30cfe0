/* test_experts.c — io/experts.c, the routed-expert slot cache, driven
 * directly on the k3-tiny fixture opened with room for exactly four slots
 * (its top-k): misses are read and hits are counted as the layer asks; the
 * bound weights point at the expert's own bytes in the slot; under the
 * decayed-LFU policy the experts used again survive an eviction and a
 * one-off use is the victim; a prefetch only takes a slot colder than one
 * use and is counted as used when the layer asks; a batch of more experts
 * than slots still completes, each expert handed out once; and the cost
 * the drafter is told (experts_missing_bytes) is 0 for resident experts. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "model/model.h"

enum { LAYER = 1 };     /* k3-tiny: layers 1-7 are MoE, 32 experts, top-4 */

static rm_model *open_four_slots(void)
{
    const char *dir = fixture_path("k3-tiny");
    if (!dir) return NULL;
    rm_model *m = NULL;
    rm_err err;
    if (rm_model_open(dir, NULL, &m, &err)) { fprintf(stderr, "  %s\n", err.msg); return NULL; }
    const rm_model_info *in = rm_model_get_info(m);
    double slot = (double)experts_slot_bytes(&m->experts);
    rm_open_opts o = { .ram_gb = ((double)in->spine_bytes + 4.5 * slot) / 1e9 };
    rm_model_free(m);
    m = NULL;
    if (rm_model_open(dir, &o, &m, &err)) { fprintf(stderr, "  %s\n", err.msg); return NULL; }
    return m;
}

/* Runs one batch through the cache as a layer does: begin, then every
 * entry in batch order; returns how many were handed out. */
static int run_batch(expert_cache *c, const int *ids, int n)
{
    rm_err err = { "" };
    if (experts_begin(c, LAYER, ids, n, &err)) return -1;
    int got = 0;
    for (int idx = 0; idx < n; idx++) {
        mlp_weights w;
        if (experts_wait(c, idx, &w, NULL, &err)) { fprintf(stderr, "  %s\n", err.msg); return -1; }
        got++;
        experts_done(c, idx);
    }
    return got;
}

static int resident(const expert_cache *c, int e) { return experts_missing_bytes(c, LAYER * c->E + e) == 0; }

TEST(experts_hits_misses_and_the_bound_bytes)
{
    rm_model *m = open_four_slots();
    REQUIRE(m);
    expert_cache *c = &m->experts;
    REQUIRE(c->nslots == 4 && c->E == 32);
    int ids[4] = { 3, 9, 20, 31 };
    c->hits = c->misses = c->bytes_hit = 0;
    CHECK(run_batch(c, ids, 4) == 4);
    CHECK(c->misses == 4 && c->hits == 0 && c->bytes_hit == 0);
    CHECK(run_batch(c, ids, 4) == 4);
    uint64_t bytes = 0;
    for (int i = 0; i < 4; i++) bytes += c->loc[LAYER * c->E + ids[i]].bytes;
    CHECK(c->misses == 4 && c->hits == 4 && c->bytes_hit == bytes);
    for (int i = 0; i < 4; i++) CHECK(resident(c, ids[i]));
    CHECK(!resident(c, 0) && experts_missing_bytes(c, LAYER * c->E + 0) == c->loc[LAYER * c->E + 0].bytes);
    /* the bound matrices hold the expert's bytes as the shard has them */
    rm_err err;
    REQUIRE(experts_begin(c, LAYER, ids + 1, 1, &err) == 0);
    mlp_weights w;
    REQUIRE(experts_wait(c, 0, &w, NULL, &err) == 0);
    const mlp_weights *ref = &m->layers[LAYER].moe.experts[9];
    const st_shard *sh = &m->st->shards[ref->gate.shard];
    size_t n = (size_t)ref->down.rows * ref->down.cols / 2;
    unsigned char *want = malloc(n), *scales = malloc(n / 16);
    int fd = open(sh->path, O_RDONLY);
    REQUIRE(want && scales && fd >= 0);
    CHECK(pread(fd, want, n, (off_t)ref->down.off) == (ssize_t)n);
    CHECK(pread(fd, scales, n / 16, (off_t)ref->down.scale_off) == (ssize_t)(n / 16));
    CHECK(w.down.kind == WM_MXFP4 && !memcmp(w.down.w, want, n) && !memcmp(w.down.scale, scales, n / 16));
    close(fd);
    free(want);
    free(scales);
    experts_done(c, 0);
    rm_model_free(m);
}

TEST(experts_evict_the_coldest_and_prefetch_only_cold_slots)
{
    rm_model *m = open_four_slots();
    REQUIRE(m);
    expert_cache *c = &m->experts;
    REQUIRE(c->nslots == 4);
    int four[4] = { 0, 1, 2, 3 }, hot[2] = { 0, 1 }, one = 4, two = 5;
    CHECK(run_batch(c, four, 4) == 4);
    experts_tick(c);
    CHECK(run_batch(c, hot, 2) == 2);           /* 0 and 1 used twice, 2 and 3 once */
    experts_tick(c);
    CHECK(run_batch(c, &one, 1) == 1);          /* the victim is 2 or 3 */
    CHECK(resident(c, 0) && resident(c, 1) && resident(c, 4) && resident(c, 2) + resident(c, 3) == 1);
    experts_tick(c);
    /* a prefetch may take the remaining once-used slot (colder than one use),
     * never the twice-used ones */
    uint64_t issued = c->prefetch_issued, used = c->prefetch_used;
    experts_prefetch(c, LAYER, &two, 1);
    CHECK(c->prefetch_issued == issued + 1);
    int zero_one[2] = { 0, 1 };
    experts_prefetch(c, LAYER, zero_one, 2);    /* resident already: nothing to do */
    CHECK(c->prefetch_issued == issued + 1);
    CHECK(run_batch(c, &two, 1) == 1);
    CHECK(c->prefetch_used == used + 1);
    CHECK(resident(c, 0) && resident(c, 1) && resident(c, 5));
    rm_model_free(m);
}

TEST(experts_batch_larger_than_the_cache_completes)
{
    rm_model *m = open_four_slots();
    REQUIRE(m);
    expert_cache *c = &m->experts;
    int ids[10] = { 2, 4, 6, 8, 10, 12, 14, 16, 18, 20 };
    CHECK(run_batch(c, ids, 10) == 10);          /* read four at a time as slots are released */
    int n = 0;
    for (int i = 0; i < 10; i++) n += resident(c, ids[i]);
    CHECK(n == 4);
    rm_model_free(m);
}

/* The hits a layer pins at its start can fill every slot while an earlier
 * entry still waits for one: the last pinned entry lets go (and is read
 * again in its turn), the batch completes, and a stop while waiting ends it
 * with 1 and the pins released. */
TEST(experts_pinned_hits_never_stall_an_earlier_miss)
{
    rm_model *m = open_four_slots();
    REQUIRE(m);
    expert_cache *c = &m->experts;
    int four[4] = { 3, 9, 20, 31 }, five[5] = { 1, 3, 9, 20, 31 };
    CHECK(run_batch(c, four, 4) == 4);
    c->hits = c->misses = 0;
    CHECK(run_batch(c, five, 5) == 5);
    CHECK(c->hits == 4 && c->misses == 1);
    /* a stop while entry 0 waits for its read */
    int other[2] = { 5, 7 };
    rm_err err;
    REQUIRE(experts_begin(c, LAYER, other, 2, &err) == 0);
    volatile int stop = 1;
    mlp_weights w;
    int rc = experts_wait(c, 0, &w, &stop, &err);
    CHECK(rc == 0 || rc == 1);          /* 0 only if the read was already done */
    experts_abort(c);
    for (int i = 0; i < c->nslots; i++) CHECK(c->slots[i].pins == 0);
    rm_model_free(m);
}
