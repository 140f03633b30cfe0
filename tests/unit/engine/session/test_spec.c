/* test_spec.c — session/spec.c, the n-gram drafter and its cost gate:
 * drafting where predicted expert reads are cheap, declining where they
 * are not, modes off and on, the calibration that learns when routes
 * do not repeat with their tokens, and the probes' spacing. (The prediction itself is
 * test_route_hist.c's.) */
#include <string.h>
#include "tests/unit/test.h"
#include "session/spec.h"
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

/* Declined chances until the gate probes with one token. */
static int chances_to_probe(spec *s)
{
    int32_t out[SPEC_KMAX];
    for (int n = 1; n <= 1000; n++)
        if (spec_draft(s, out, SPEC_KMAX) > 0) return n;
    return -1;
}

TEST(spec_probes_space_out_as_they_are_rejected)
{
    spec s;
    setup(&s);
    g_bytes_per_pos = 2e9;      /* never worth drafting: only probes */
    s.p_accept[2] = 0.5;
    CHECK(chances_to_probe(&s) == 16);
    s.p_accept[2] = 0.25;       /* half the prior: four times as far apart */
    CHECK(chances_to_probe(&s) == 64);
    s.p_accept[2] = 0.001;      /* at most 256 */
    CHECK(chances_to_probe(&s) == 256);
    spec_free(&s);
}
