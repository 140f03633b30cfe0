/* test_sampler.c — session/sampler.c: greedy picks the argmax (ties to the
 * lower id, whatever the seed), sampling is reproducible from the seed and
 * follows the softmax of logits / temperature, and top-p keeps only the
 * smallest set of most likely tokens whose mass reaches p. */
#include <math.h>
#include <string.h>
#include "tests/unit/test.h"
#include "session/sampler.h"

TEST(sampler_greedy_is_argmax_ties_low)
{
    const float x[6] = { 0.5f, 2.0f, -1.0f, 2.0f, 1.9f, -INFINITY };
    CHECK(sampler_argmax(x, 6) == 1);
    sampler s;
    REQUIRE(sampler_init(&s, 6, 0, 1, 123) == 0);
    for (int i = 0; i < 10; i++) CHECK(sampler_pick(&s, x) == 1);
    sampler_free(&s);
}

TEST(sampler_is_reproducible_and_follows_the_distribution)
{
    enum { V = 4, N = 20000 };
    /* probabilities 0.5, 0.25, 0.125, 0.125 at temperature 1 */
    const float x[V] = { logf(0.5f), logf(0.25f), logf(0.125f), logf(0.125f) };
    sampler a, b, c;
    REQUIRE(sampler_init(&a, V, 1.0f, 1, 42) == 0 && sampler_init(&b, V, 1.0f, 1, 42) == 0 &&
            sampler_init(&c, V, 1.0f, 1, 43) == 0);
    int count[V] = { 0 }, same = 1, differ = 0;
    for (int i = 0; i < N; i++) {
        int ia = sampler_pick(&a, x), ib = sampler_pick(&b, x), ic = sampler_pick(&c, x);
        same &= ia == ib;
        differ |= ia != ic;
        REQUIRE(ia >= 0 && ia < V);
        count[ia]++;
    }
    CHECK(same && differ);
    const double want[V] = { 0.5, 0.25, 0.125, 0.125 };
    for (int v = 0; v < V; v++)      /* within 5 standard deviations */
        CHECKF(fabs(count[v] / (double)N - want[v]) < 5 * sqrt(want[v] * (1 - want[v]) / N), "token %d: %d of %d",
               v, count[v], N);
    /* a low temperature sharpens it */
    sampler_free(&a);
    REQUIRE(sampler_init(&a, V, 0.05f, 1, 7) == 0);
    int top = 0;
    for (int i = 0; i < 1000; i++) top += sampler_pick(&a, x) == 0;
    CHECKF(top > 990, "%d of 1000", top);
    sampler_free(&a); sampler_free(&b); sampler_free(&c);
}

TEST(sampler_top_p_keeps_the_nucleus)
{
    enum { V = 5 };
    /* 0.6, 0.3, 0.05, 0.03, 0.02: top_p 0.85 keeps the first two */
    const float x[V] = { logf(0.03f), logf(0.6f), logf(0.02f), logf(0.3f), logf(0.05f) };
    sampler s;
    REQUIRE(sampler_init(&s, V, 1.0f, 0.85f, 9) == 0);
    int count[V] = { 0 };
    for (int i = 0; i < 5000; i++) count[sampler_pick(&s, x)]++;
    CHECKF(count[0] == 0 && count[2] == 0 && count[4] == 0 && count[1] > 0 && count[3] > 0,
           "%d %d %d %d %d", count[0], count[1], count[2], count[3], count[4]);
    /* renormalised within the nucleus: 0.6 / 0.9 */
    CHECKF(fabs(count[1] / 5000.0 - 2.0 / 3) < 0.04, "%d", count[1]);
    sampler_free(&s);
    /* a tiny top_p keeps only the most likely token */
    REQUIRE(sampler_init(&s, V, 1.0f, 0.01f, 9) == 0);
    for (int i = 0; i < 100; i++) CHECK(sampler_pick(&s, x) == 1);
    sampler_free(&s);
}
