/* test_stats.c — session/stats.c and trace.c: the phase names of engine.h
 * (the ones the trace and remora bench print), and one trace line per
 * record whose phases carry those names and add up to the token's time,
 * plus one line per prefill pass. */
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "tests/unit/test.h"
#include "engine.h"

TEST(stats_phase_names)
{
    static const char *const want[RM_PHASE_COUNT] = { "wait_io", "spine", "attention", "experts", "lm_head" };
    for (int i = 0; i < RM_PHASE_COUNT; i++) CHECK(!strcmp(rm_phase_name(i), want[i]));
    CHECK(!strcmp(rm_phase_name(-1), "?") && !strcmp(rm_phase_name(RM_PHASE_COUNT), "?"));
}

TEST(stats_trace_lines_follow_the_records)
{
    const char *dir = fixture_path("kl-tiny");
    REQUIRE(dir);
    char path[] = "/tmp/remora-trace-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    rm_open_opts oo = { .trace_path = path };
    rm_session *s = NULL;
    rm_err err = { "" };
    REQUIRE(rm_session_open(dir, &oo, &s, &err) == 0);
    rm_gen_opts o = { .max_new = 5, .spec = RM_SPEC_OFF };    /* a verify pass splits its time */
    volatile int stop = 0;
    CHECK(rm_session_complete(s, "hello there", &o, NULL, &stop, &err) == 0);
    rm_session_free(s);
    FILE *f = fopen(path, "r");
    REQUIRE(f);
    char line[65536];
    int n = 0, passes = 0;
    while (fgets(line, sizeof line, f)) {
        json_t *j = json_loads(line, 0, NULL);
        REQUIRE(j);
        const char *kind = json_string_value(json_object_get(j, "kind"));
        REQUIRE(kind);
        if (!strcmp(kind, "pass")) {    /* one per complete prefill pass, before the prompt's line */
            CHECK(n == 0 && json_integer_value(json_object_get(j, "fed")) > 0);
            passes++;
            json_decref(j);
            continue;
        }
        CHECK(json_is_true(json_object_get(j, "prefill")) == (n == 0));
        CHECK(!strcmp(kind, n == 0 ? "prompt" : "token"));
        json_t *ph = json_object_get(j, "phases");
        double sum = 0;
        for (int i = 0; i < RM_PHASE_COUNT; i++) {
            json_t *v = json_object_get(ph, rm_phase_name(i));
            CHECK(json_is_number(v));
            sum += json_number_value(v);
        }
        CHECK(json_object_size(ph) == RM_PHASE_COUNT);
        /* the phases are booked inside the token's time */
        CHECKF(sum <= json_number_value(json_object_get(j, "seconds")) + 1e-4, "line %d: %g > %g", n, sum,
               json_number_value(json_object_get(j, "seconds")));
        json_decref(j);
        n++;
    }
    fclose(f);
    CHECK(n == 6 && passes == 1);      /* a pass, the prompt and five tokens */
    unlink(path);
}

/* Per-layer miss bytes (rm_token_stats.layer_bytes_read) are booked with
 * the misses they come from: a record has some exactly when it has
 * misses; and the turn's verify passes and declined drafts are counted
 * (spec_passes, spec_declined: cumulative, never more passes than tokens). */
typedef struct layer_check { int records, bad, with_misses; uint64_t passes, last_passes; int tokens, bad_order; } layer_check;

static void on_layer_stats(void *ud, const rm_token_stats *t)
{
    layer_check *c = ud;
    uint64_t sum = 0;
    for (int l = 0; l < RM_MAX_ROUTE_LAYERS; l++) sum += t->layer_bytes_read[l];
    c->records++;
    if ((sum > 0) != (t->expert_misses > 0)) c->bad++;
    if (t->expert_misses) c->with_misses++;
    if (t->kind == RM_REC_TOKEN) {
        c->tokens++;
        if (t->spec_passes < c->last_passes) c->bad_order++;
        c->last_passes = t->spec_passes;
    }
}

TEST(stats_layer_bytes_follow_the_misses_and_spec_counts)
{
    const char *dir = fixture_path("k3-tiny");
    REQUIRE(dir);
    rm_open_opts oo = { 0 };
    rm_session *s = NULL;
    rm_err err = { "" };
    REQUIRE(rm_session_open(dir, &oo, &s, &err) == 0);
    layer_check c = { 0 };
    rm_gen_events ev = { &c, NULL, on_layer_stats };
    rm_gen_opts o = { .max_new = 24, .spec = RM_SPEC_ON, .top_p = 1 };
    volatile int stop = 0;
    CHECK(rm_session_complete(s, "a b a b a b a b a b a b", &o, &ev, &stop, &err) == 0);
    rm_session_free(s);
    CHECKF(c.bad == 0, "%d of %d records: miss bytes without misses or misses without bytes", c.bad, c.records);
    CHECK(c.with_misses > 0);
    CHECK(c.bad_order == 0 && c.last_passes <= (uint64_t)c.tokens);
}
