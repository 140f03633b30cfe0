/* test_source_engine.c — the chat's engine source (ui/source_engine.c) on
 * the embedded model (assets/model): the router's reuse figure the UI shows
 * (ui/stats.c, pairs of tokens from one verify pass left out) is the same
 * with speculation on as with it off, within noise, since speculation
 * changes neither the tokens nor, when each position's own routes are
 * published, the routes. Speculation used to publish one pass's routes for
 * all its tokens: 24-42% against a true 8%.
 *
 * It generates 240 tokens, a few seconds in the release build and
 * minutes under ASan, so the ASan build skips it. Until the engine marks the
 * tokens of a verify pass (spec_pass), it says so and checks nothing. */
#include <string.h>
#include "tests/unit/test.h"
#include "ui/source.h"
#include "ui/stats.h"

typedef struct reuse_run {
    ui_reuse_tracker tr;
    long hit, n;
    int tokens, marked;
    uint64_t accepted;
} reuse_run;

static void on_stats(void *ud, const rm_token_stats *st)
{
    reuse_run *r = ud;
    ui_sample s;
    ui_stats_sample(&s, st, &r->tr);
    if (s.kind != RM_REC_TOKEN) return;
    r->tokens++;
    r->hit += s.reuse_hit;
    r->n += s.reuse_n;
    r->marked += st->spec_pass > 0;
    r->accepted = st->spec_accepted;
}

static int run_turn(int spec, reuse_run *r)
{
    rm_open_opts oo = { 0 };
    ui_source *src = NULL;
    rm_err err = { "" };
    const char *dir = fixture_path("../../assets/model");
    if (!dir || ui_source_engine_open(dir, &oo, &src, &err)) {
        fprintf(stderr, "    %s\n", err.msg);
        return -1;
    }
    rm_gen_opts gen = { .think = 1, .top_p = 1, .spec = spec, .max_new = 120 };
    rm_gen_events ev = { r, NULL, on_stats };
    volatile int stop = 0;
    memset(r, 0, sizeof *r);
    int rc = src->vt->turn(src, "What is 37*12?", &gen, &ev, &stop, &err);
    if (rc) fprintf(stderr, "    %s\n", err.msg);
    src->vt->free(src);
    return rc;
}

TEST(ui_source_engine_reuse_with_speculation_equals_without)
{
#if defined(__SANITIZE_ADDRESS__)
    fprintf(stderr, "    skipped under ASan (240 tokens of the embedded model)\n");
    return;
#endif
    static reuse_run off, on;
    REQUIRE(run_turn(RM_SPEC_OFF, &off) == 0 && run_turn(RM_SPEC_ON, &on) == 0);
    REQUIRE(off.tokens > 50 && off.n > 0 && on.n > 0);
    CHECK(on.tokens == off.tokens);         /* speculation changes no token */
    if (on.accepted > 0 && on.marked == 0) {
        fprintf(stderr, "    skipped: the engine does not mark the tokens of a verify pass (spec_pass) yet\n");
        return;
    }
    double r_off = (double)off.hit / (double)off.n, r_on = (double)on.hit / (double)on.n;
    fprintf(stderr, "    reuse %.1f%% with speculation (%d of %d tokens from verify passes), %.1f%% without\n", 100 * r_on,
            on.marked, on.tokens, 100 * r_off);
    CHECKF(on.accepted > 0, "no draft was accepted: nothing was compared");
    CHECKF(r_on - r_off < 0.03 && r_off - r_on < 0.03, "reuse %.1f%% with speculation, %.1f%% without",
           100 * r_on, 100 * r_off);
}
