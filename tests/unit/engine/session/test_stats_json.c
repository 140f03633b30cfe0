/* test_stats_json.c — session/stats_json.c: a record written as JSON and
 * read back is the same record bit for bit (every field, for each kind of
 * record, and the records of a real generation), the keys are the field
 * names engine.h documents, missing keys read as 0 and unknown ones are
 * ignored, and a value of the wrong type or range is refused by name. */
#include <string.h>
#include <jansson.h>
#include "tests/unit/test.h"
#include "engine.h"

static void fill(rm_token_stats *st, int kind, unsigned seed)
{
    memset(st, 0, sizeof *st);
    unsigned x = seed * 2654435761u + 1;
#define NEXT() (x = x * 1103515245u + 12345u, x >> 8)
    st->kind = kind;
    st->prefill = kind != RM_REC_TOKEN;
    st->token_index = NEXT();
    st->token_id = (int)NEXT();
    st->seconds = NEXT() / 1e7;
    for (int i = 0; i < RM_PHASE_COUNT; i++) st->phase_seconds[i] = NEXT() / 3e7;
    st->prompt_tokens = (int)NEXT();
    if (kind != RM_REC_TOKEN)
        st->prompt = (rm_prompt_figures){ (int)NEXT(), (int)NEXT(), (int)NEXT(), (int)NEXT(), (int)NEXT(),
                                          (int)NEXT() % 9, 9, 256, 3, 61, 1, (uint64_t)NEXT() << 20, NEXT(),
                                          NEXT() / 1e3, NEXT() / 7.0, -1 };
    if (kind != RM_REC_TOKEN) {     /* the prefix cache's tiers */
        st->prompt.restored_ram = (int)NEXT();
        st->prompt.restore_s = NEXT() / 1e9;
        st->prompt.kept = (int)NEXT();
        st->prompt.kept_ram = 1;
        st->prompt.keep_s = NEXT() / 3e9;
    }
    st->bytes_spine_read = (uint64_t)NEXT() << 24;
    st->bytes_expert_read = NEXT();
    st->bytes_net = NEXT();
    st->bytes_expert_from_cache = NEXT();
    st->spine_resident_bytes = (uint64_t)NEXT() << 30;
    st->spine_total_bytes = NEXT();
    st->expert_cache_bytes = NEXT();
    st->expert_cache_capacity = NEXT();
    st->expert_hits = NEXT();
    st->expert_misses = NEXT();
    st->retained_fraction = NEXT() / 16777216.0;
    st->read_gbps = NEXT() / 1e6;
    st->net_gbps = NEXT() / 1e6;
    st->device_gbps = 1.0 / 3;
    st->queue_depth = 8;
    st->prefetch_issued = NEXT();
    st->prefetch_used = NEXT();
    st->read_busy_seconds = NEXT() / 1e8;
    st->flops = (uint64_t)NEXT() << 30;
    st->spec_drafted = NEXT();
    st->spec_accepted = NEXT();
    st->spec_pass = 3;
    st->spec_pass_pos = 1;
    st->route_layers = 60;
    st->route_k = 16;
    st->num_experts = 896;
    st->spec_passes = NEXT();
    st->spec_declined = NEXT();
    for (int l = 0; l < st->route_layers; l++) {
        for (int i = 0; i < st->route_k; i++) st->route_ids[l][i] = (int16_t)(NEXT() % 896);
        for (int i = 0; i < st->route_k; i++) st->route_state[l][i] = (uint8_t)(NEXT() % 4);
        st->layer_bytes_read[l] = NEXT();
    }
#undef NEXT
}

static int round_trip(const rm_token_stats *st, rm_token_stats *back, json_t **as_json)
{
    rm_buf b = { 0 };
    rm_err err = { "" };
    int rc = rm_token_stats_json(st, &b);
    if (!rc) rc = rm_token_stats_parse(b.p, b.len, back, &err);
    if (rc) fprintf(stderr, "    %s\n", err.msg);
    if (as_json) *as_json = json_loads(b.p ? b.p : "", 0, NULL);
    rm_buf_free(&b);
    return rc;
}

TEST(stats_json_round_trip)
{
    const int kinds[3] = { RM_REC_TOKEN, RM_REC_PROMPT, RM_REC_PROGRESS };
    for (int k = 0; k < 3; k++) {
        rm_token_stats st, back;
        fill(&st, kinds[k], (unsigned)k + 7);
        json_t *j = NULL;
        REQUIRE(round_trip(&st, &back, &j) == 0 && j);
        CHECKF(!memcmp(&st, &back, sizeof st), "kind %d: the record read back differs", kinds[k]);
        /* the documented keys */
        static const char *const kind_names[3] = { "token", "prompt", "progress" };
        CHECK(!strcmp(json_string_value(json_object_get(j, "kind")), kind_names[k]));
        CHECK(json_is_boolean(json_object_get(j, "prefill")));
        CHECK(json_integer_value(json_object_get(j, "bytes_expert_read")) == (json_int_t)st.bytes_expert_read);
        CHECK(json_is_real(json_object_get(json_object_get(j, "phase_seconds"), "wait_io")));
        CHECK(json_array_size(json_object_get(j, "route_ids")) == 60);
        CHECK(json_array_size(json_array_get(json_object_get(j, "route_ids"), 59)) == 16);
        CHECK((json_object_get(j, "prompt") != NULL) == (kinds[k] != RM_REC_TOKEN));
        if (kinds[k] != RM_REC_TOKEN)
            CHECK(json_integer_value(json_object_get(json_object_get(j, "prompt"), "layers")) == 61);
        json_decref(j);
    }
}

static void collect(void *ud, const rm_token_stats *st)
{
    int *bad = ud;
    rm_token_stats back;
    if (round_trip(st, &back, NULL)) { (*bad)++; return; }
    /* the parser zeroes route entries past route_layers and route_k */
    rm_token_stats want = *st;
    memset(want.route_ids, 0, sizeof want.route_ids);
    memset(want.route_state, 0, sizeof want.route_state);
    memset(want.layer_bytes_read, 0, sizeof want.layer_bytes_read);
    for (int l = 0; l < st->route_layers; l++) {
        memcpy(want.route_ids[l], st->route_ids[l], (size_t)st->route_k * sizeof st->route_ids[l][0]);
        memcpy(want.route_state[l], st->route_state[l], (size_t)st->route_k);
        want.layer_bytes_read[l] = st->layer_bytes_read[l];
    }
    if (st->kind == RM_REC_TOKEN) memset(&want.prompt, 0, sizeof want.prompt);
    if (memcmp(&want, &back, sizeof want)) (*bad)++;
}

TEST(stats_json_round_trip_of_a_generation)
{
    const char *dir = fixture_path("k3-tiny");
    REQUIRE(dir);
    rm_session *s = NULL;
    rm_err err = { "" };
    REQUIRE(rm_session_open(dir, NULL, &s, &err) == 0);
    int bad = 0;
    rm_gen_events ev = { &bad, NULL, collect };
    rm_gen_opts o = { .max_new = 12 };
    volatile int stop = 0;
    CHECK(rm_session_complete(s, "hello there", &o, &ev, &stop, &err) == 0);
    CHECK(bad == 0);
    rm_session_free(s);
}

TEST(stats_json_parse_rules)
{
    rm_token_stats st;
    rm_err err = { "" };
    const char *ok = "{\"kind\":\"progress\",\"token_id\":5,\"prompt\":{\"done\":7,\"reprefill\":true},"
                     "\"some_future_field\":[1,2],\"eta\":null}";
    REQUIRE(rm_token_stats_parse(ok, strlen(ok), &st, &err) == 0);
    CHECK(st.kind == RM_REC_PROGRESS && st.token_id == 5 && st.prompt.done == 7 && st.prompt.reprefill);
    CHECK(st.seconds == 0 && st.bytes_expert_read == 0 && st.route_layers == 0);
    static const struct { const char *json, *names; } bad[] = {
        { "[1]", "not a JSON object" },
        { "{\"kind\":\"tok\"}", "kind" },
        { "{\"token_id\":\"5\"}", "token_id" },
        { "{\"token_id\":1e3}", "token_id" },
        { "{\"bytes_spine_read\":-1}", "bytes_spine_read" },
        { "{\"token_id\":3000000000}", "token_id" },
        { "{\"prefill\":1}", "prefill" },
        { "{\"seconds\":\"x\"}", "seconds" },
        { "{\"phase_seconds\":{\"spine\":\"x\"}}", "phase_seconds.spine" },
        { "{\"prompt\":{\"ctx\":1.5}}", "prompt.ctx" },
        { "{\"route_ids\":[[1,2],[40000]]}", "route_ids[1][0]" },
        { "{\"route_k\":33}", "route_k" },
        { "{\"kind\":", "line 1" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        st.token_id = 9;
        int rc = rm_token_stats_parse(bad[i].json, strlen(bad[i].json), &st, &err);
        CHECKF(rc == -1 && strstr(err.msg, bad[i].names) && st.token_id == 0, "%s: rc %d, \"%s\"", bad[i].json, rc,
               err.msg);
    }
}
