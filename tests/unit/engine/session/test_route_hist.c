/* test_route_hist.c — session/route_hist.c: the predicted bytes of a draft
 * count each expert that is neither resident nor being read once, however
 * many positions chose it, and positions past the known ones cost the
 * default; routes of positions not recorded are no records. */
#include <string.h>
#include "tests/unit/test.h"
#include "session/route_hist.h"

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

TEST(route_hist_reserve_and_bounds)
{
    const unsigned char is_moe[2] = { 1, 1 };
    route_hist h;
    REQUIRE(route_hist_init(&h, is_moe, 2, 8, 2) == 0);
    REQUIRE(route_hist_reserve(&h, 3) == 0);
    int cap = h.cap;
    CHECK(cap >= 3);
    int ids[2] = { 1, 2 };
    route_hist_put(&h, 2, 1, ids, 2);
    route_hist_put(&h, cap, 0, ids, 2);     /* out of range: ignored */
    route_hist_put(&h, 0, 5, ids, 2);       /* no such MoE layer: ignored */
    REQUIRE(route_hist_reserve(&h, 1000) == 0 && h.cap >= 1000);
    /* the record survives growth; new positions hold no record (-1) */
    const int16_t *r = h.ids + ((size_t)2 * h.nmoe + 1) * h.topk;
    CHECK(r[0] == 1 && r[1] == 2);
    const int16_t *fresh = h.ids + ((size_t)999 * h.nmoe) * h.topk;
    CHECK(fresh[0] == -1 && fresh[1] == -1);
    route_hist_free(&h);
}
