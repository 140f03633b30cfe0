/* test_state.c — model/state.c, a sequence's state: after a checkpoint,
 * rolling back to any prefix of what was fed leaves exactly (bit for bit)
 * the state of having fed only that prefix, on both fixture families; a
 * rollback that keeps everything commits, a second checkpoint replaces the
 * first, reset returns to position 0, and the attention cache grows on
 * demand past its first capacity with the same logits. */
#include <string.h>
#include "tests/unit/test.h"
#include "model/model.h"

static rm_model *open_model(const char *name)
{
    const char *dir = fixture_path(name);
    rm_model *m = NULL;
    rm_err err;
    if (dir && rm_model_open(dir, NULL, &m, &err)) fprintf(stderr, "  %s\n", err.msg);
    return m;
}

/* Speculation's rollback: after a checkpoint, feeding 6 tokens and rolling
 * back to the first 2 leaves exactly the state of having fed those 2: what
 * follows gives the same logits bit for bit as a run that never speculated. */
static void check_rollback(const char *name)
{
    rm_model *m = open_model(name);
    REQUIRE(m);
    const int V = m->cfg.vocab_size;
    int32_t pre[5] = { 839, 2083, 1734, 1881, 1948 }, draft[6] = { 5, 17, 900, 33, 2000, 7 }, next[3] = { 44, 55, 66 };
    rm_err err;
    rm_state *a = rm_state_new(m, &err), *b = rm_state_new(m, &err);
    float *la = malloc((size_t)3 * V * sizeof *la), *lb = malloc((size_t)3 * V * sizeof *lb);
    float *tmp = malloc((size_t)6 * V * sizeof *tmp);
    REQUIRE(a && b && la && lb && tmp);
    /* reference: pre + draft[0..2) + next */
    CHECK(rm_forward(m, a, pre, 5, NULL, NULL, NULL, NULL, &err) == 0);
    CHECK(rm_forward(m, a, draft, 2, NULL, NULL, NULL, NULL, &err) == 0);
    CHECK(rm_forward(m, a, next, 3, la, NULL, NULL, NULL, &err) == 0);
    /* speculative: pre, checkpoint, all six drafts, roll back to two, next */
    CHECK(rm_forward(m, b, pre, 5, NULL, NULL, NULL, NULL, &err) == 0);
    CHECK(rm_state_checkpoint(b, &err) == 0);
    CHECK(rm_forward(m, b, draft, 6, tmp, NULL, NULL, NULL, &err) == 0);
    rm_state_rollback(b, 2);
    CHECK(rm_state_pos(b) == 7);
    CHECK(rm_forward(m, b, next, 3, lb, NULL, NULL, NULL, &err) == 0);
    CHECKF(memcmp(la, lb, (size_t)3 * V * sizeof *la) == 0, "%s: logits differ after rollback", name);
    /* rolling back to zero, and a checkpoint that is committed */
    CHECK(rm_state_checkpoint(b, &err) == 0);
    CHECK(rm_forward(m, b, draft, 3, NULL, NULL, NULL, NULL, &err) == 0);
    rm_state_rollback(b, 0);
    CHECK(rm_state_pos(b) == 10);
    free(la); free(lb); free(tmp);
    rm_state_free(a); rm_state_free(b);
    rm_model_free(m);
}

TEST(state_k3_rollback_is_exact) { check_rollback("k3-tiny"); }
TEST(state_kl_rollback_is_exact) { check_rollback("kl-tiny"); }

/* Logits of `next` after feeding a[0..na) into a fresh state. */
static int logits_after(rm_model *m, const int32_t *a, int na, const int32_t *next, int nn, float *out)
{
    rm_err err;
    rm_state *s = rm_state_new(m, &err);
    int rc = !s || rm_forward(m, s, a, na, NULL, NULL, NULL, NULL, &err) ||
             rm_forward(m, s, next, nn, out, NULL, NULL, NULL, &err);
    rm_state_free(s);
    return rc;
}

TEST(state_commit_and_second_checkpoint)
{
    rm_model *m = open_model("k3-tiny");
    REQUIRE(m);
    const int V = m->cfg.vocab_size;
    int32_t seq[9] = { 839, 2083, 1734, 5, 17, 900, 33, 2000, 7 }, next[2] = { 44, 55 };
    float *ref = malloc((size_t)2 * V * sizeof *ref), *got = malloc((size_t)2 * V * sizeof *got);
    rm_err err;
    rm_state *s = rm_state_new(m, &err);
    REQUIRE(ref && got && s);
    /* a rollback that keeps every token fed since the checkpoint commits */
    CHECK(rm_forward(m, s, seq, 3, NULL, NULL, NULL, NULL, &err) == 0);
    CHECK(rm_state_checkpoint(s, &err) == 0);
    CHECK(rm_forward(m, s, seq + 3, 3, NULL, NULL, NULL, NULL, &err) == 0);
    rm_state_rollback(s, 3);
    CHECK(rm_state_pos(s) == 6);
    rm_state_rollback(s, 0);                    /* no checkpoint any more: nothing undone */
    CHECK(rm_state_pos(s) == 6);
    CHECK(rm_forward(m, s, next, 2, got, NULL, NULL, NULL, &err) == 0);
    REQUIRE(logits_after(m, seq, 6, next, 2, ref) == 0);
    CHECK(memcmp(ref, got, (size_t)2 * V * sizeof *ref) == 0);
    /* a second checkpoint replaces the first: rollback goes back to it */
    rm_state_reset(s);
    CHECK(rm_state_pos(s) == 0);
    CHECK(rm_forward(m, s, seq, 3, NULL, NULL, NULL, NULL, &err) == 0);
    CHECK(rm_state_checkpoint(s, &err) == 0);
    CHECK(rm_forward(m, s, seq + 3, 2, NULL, NULL, NULL, NULL, &err) == 0);
    CHECK(rm_state_checkpoint(s, &err) == 0);
    CHECK(rm_forward(m, s, seq + 5, 4, NULL, NULL, NULL, NULL, &err) == 0);
    rm_state_rollback(s, 1);
    CHECK(rm_state_pos(s) == 6);
    CHECK(rm_forward(m, s, next, 2, got, NULL, NULL, NULL, &err) == 0);
    CHECK(memcmp(ref, got, (size_t)2 * V * sizeof *ref) == 0);
    free(ref); free(got);
    rm_state_free(s);
    rm_model_free(m);
}

/* The attention cache starts small and doubles: 300 tokens fed in uneven
 * pieces (past one prefill chunk) give the logits of one call. */
TEST(state_cache_grows_on_demand)
{
    rm_model *m = open_model("kl-tiny");
    REQUIRE(m);
    const int V = m->cfg.vocab_size, N = 300;
    int32_t *ids = malloc((size_t)N * sizeof *ids);
    float *a = malloc((size_t)V * sizeof *a), *b = malloc((size_t)V * sizeof *b);
    REQUIRE(ids && a && b);
    for (int i = 0; i < N; i++) ids[i] = (int32_t)((i * 7919 + 13) % V);
    rm_err err;
    rm_state *s1 = rm_state_new(m, &err), *s2 = rm_state_new(m, &err);
    REQUIRE(s1 && s2);
    CHECK(rm_forward(m, s1, ids, N, NULL, a, NULL, NULL, &err) == 0);
    int fed = 0, step = 1;
    while (fed < N) {
        int n = N - fed < step ? N - fed : step;
        CHECK(rm_forward(m, s2, ids + fed, n, NULL, fed + n == N ? b : NULL, NULL, NULL, &err) == 0);
        fed += n;
        step = step * 3 + 1;
    }
    CHECK(s2->cap >= N && rm_state_pos(s2) == N);
    CHECK(memcmp(a, b, (size_t)V * sizeof *a) == 0);
    free(ids); free(a); free(b);
    rm_state_free(s1); rm_state_free(s2);
    rm_model_free(m);
}
