/* test_spec.c — the drafter's cost gate and the route history behind it:
 * drafting where predicted expert reads are cheap, declining where they
 * are not, and the prediction counting each non-resident expert once. */
#include <string.h>
#include "../test.h"
#include "session/spec.h"
#include "session/route_hist.h"
#include "engine.h"

static double g_bytes_per_pos;
static void fake_predict(void *ud, int src, int k, double *cum)
{
    (void)ud; (void)src;
    for (int j = 0; j <= k; j++) cum[j] = j * g_bytes_per_pos;
}

/* A spec in auto mode whose context ends with "1 2", seen before at its
 * start, so a draft of up to 5 tokens (3 4 5 1 2) is available, after one measured plain step of 1 s that
 * read 1 GB at 1 GB/s. */
static void setup(spec *s)
{
    spec_init(s, RM_SPEC_AUTO);
    int32_t ids[] = { 1, 2, 3, 4, 5, 1, 2 };
    spec_push(s, ids, 7);
    spec_plain(s, 1.0, 1e9, 1.0);
    s->p_accept[2] = 0.9;
    s->predict = fake_predict;
}

TEST(spec_gate_drafts_when_reads_are_cheap)
{
    spec s;
    setup(&s);
    int32_t out[SPEC_KMAX];
    g_bytes_per_pos = 0;        /* the drafted tokens' experts are resident */
    int k = spec_draft(&s, out, SPEC_KMAX);
    CHECKF(k == 5 && out[0] == 3 && out[1] == 4 && out[2] == 5, "k = %d", k);
    spec_free(&s);
}

TEST(spec_gate_declines_when_reads_cost_more_than_they_save)
{
    spec s;
    setup(&s);
    int32_t out[SPEC_KMAX];
    g_bytes_per_pos = 2e9;      /* each position reads twice a plain step */
    CHECK(spec_draft(&s, out, SPEC_KMAX) == 0);
    g_bytes_per_pos = 0.5e9;    /* half a plain step: 0.9 acceptance pays */
    CHECK(spec_draft(&s, out, SPEC_KMAX) > 0);
    spec_free(&s);
}

TEST(spec_off_never_drafts_and_on_always_does)
{
    spec s;
    setup(&s);
    int32_t out[SPEC_KMAX];
    g_bytes_per_pos = 1e12;
    s.mode = RM_SPEC_OFF;
    CHECK(spec_draft(&s, out, SPEC_KMAX) == 0);
    s.mode = RM_SPEC_ON;
    CHECK(spec_draft(&s, out, SPEC_KMAX) == 5);
    spec_free(&s);
}

TEST(route_hist_predicts_non_resident_bytes_once)
{
    /* 3 layers, layer 0 dense; 4 experts, top-2; experts of 100 bytes */
    const unsigned char is_moe[3] = { 0, 1, 1 };
    route_hist h;
    REQUIRE(route_hist_init(&h, is_moe, 3, 4, 2) == 0);
    REQUIRE(route_hist_reserve(&h, 10) == 0);
    expert_loc loc[12];
    int where[12];
    memset(loc, 0, sizeof loc);
    for (int i = 0; i < 12; i++) { loc[i].bytes = 100; where[i] = -1; }
    where[1 * 4 + 0] = 5;       /* layer 1 expert 0 is resident */
    expert_cache c;
    memset(&c, 0, sizeof c);
    c.E = 4;
    c.loc = loc;
    c.where = where;
    int a[2] = { 0, 1 }, b[2] = { 2, 3 };
    route_hist_put(&h, 3, 0, a, 2);     /* position 3: layer 1 {0,1}, layer 2 {2,3} */
    route_hist_put(&h, 3, 1, b, 2);
    route_hist_put(&h, 4, 0, a, 2);     /* position 4: the same experts again */
    route_hist_put(&h, 4, 1, b, 2);
    double cum[4];
    route_hist_predict(&h, &c, 3, 3, 5, 777, cum);
    /* position 3: layer 1 expert 1, layer 2 experts 2 and 3 -> 300 bytes;
     * position 4 adds nothing; position 5 is not known -> 777 */
    CHECKF(cum[1] == 300 && cum[2] == 300 && cum[3] == 1077, "%g %g %g", cum[1], cum[2], cum[3]);
    route_hist_free(&h);
}

TEST(spec_gate_learns_when_routes_do_not_repeat)
{
    spec s;
    setup(&s);
    int32_t out[SPEC_KMAX];
    g_bytes_per_pos = 0;        /* predicted: every expert resident */
    int k = spec_draft(&s, out, SPEC_KMAX);
    REQUIRE(k > 0);
    /* but the pass read 2 GB per extra position and nothing was accepted */
    spec_verified(&s, k, 0, 1.0 + 2.0 * k, 1e9 + 2e9 * k, 1.0);
    CHECKF(s.miss_pos > 1.9e9 && s.miss_pos < 2.1e9, "miss_pos %g", s.miss_pos);
    s.p_accept[2] = 0.9;        /* even with a good acceptance history */
    CHECK(spec_draft(&s, out, SPEC_KMAX) == 0);
    spec_free(&s);
}
