/* test_session.c — the generation loop end to end on the fixture models:
 * raw completion and a K3 chat turn reproduce the reference greedy
 * continuation token for token; a stopped turn keeps its partial answer
 * marked interrupted; transcripts round-trip and are written atomically. */
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "tests/unit/test.h"
#include "session/session.h"
#include "engine.h"

typedef struct { int32_t ids[64]; int n; int stop_after; volatile int *stop; uint64_t drafted, accepted; } capture;

static void on_stats(void *ud, const rm_token_stats *st)
{
    capture *c = ud;
    if (st->prefill || c->n >= 64) return;
    c->ids[c->n++] = st->token_id;
    c->drafted = st->spec_drafted;
    c->accepted = st->spec_accepted;
    if (c->stop_after && c->n >= c->stop_after) *c->stop = 1;
}

static json_t *prompt_meta(const char *model, int i)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s/goldens/meta.json", model);
    const char *p = fixture_path(rel);
    json_t *meta = p ? json_load_file(p, 0, NULL) : NULL;
    json_t *pr = json_incref(json_array_get(json_object_get(meta, "prompts"), (size_t)i));
    json_decref(meta);
    return pr;
}

static void check_greedy(json_t *pr, const capture *c, const char *what)
{
    json_t *g = json_object_get(json_object_get(pr, "greedy"), "tokens");
    int same = c->n == (int)json_array_size(g);
    for (int i = 0; same && i < c->n; i++) same = c->ids[i] == json_integer_value(json_array_get(g, (size_t)i));
    CHECKF(same, "%s: generated tokens differ from the reference greedy continuation", what);
}

TEST(session_raw_completion_matches_greedy)
{
    const char *models[2] = { "k3-tiny", "kl-tiny" };
    for (int mi = 0; mi < 2; mi++) {
        const char *dir = fixture_path(models[mi]);
        REQUIRE(dir);
        rm_session *s = NULL;
        rm_err err;
        REQUIRE(rm_session_open(dir, NULL, &s, &err) == 0);
        json_t *pr = prompt_meta(models[mi], 0);   /* short: plain text */
        volatile int stop = 0;
        capture c = { .stop = &stop };
        rm_gen_opts o = { .max_new = 24 };
        rm_gen_events ev = { &c, NULL, on_stats };
        CHECK(rm_session_complete(s, json_string_value(json_object_get(pr, "text")), &o, &ev, &stop, &err) == 0);
        check_greedy(pr, &c, models[mi]);
        json_decref(pr);
        rm_session_free(s);
    }
}

TEST(session_chat_turn_matches_greedy)
{
    const char *dir = fixture_path("k3-tiny");
    REQUIRE(dir);
    rm_session *s = NULL;
    rm_err err;
    REQUIRE(rm_session_open(dir, NULL, &s, &err) == 0);
    json_t *pr = prompt_meta("k3-tiny", 1);       /* chat: an XTML rendering */
    volatile int stop = 0;
    capture c = { .stop = &stop };
    rm_gen_opts o = { .max_new = 24, .think = 1 };
    rm_gen_events ev = { &c, NULL, on_stats };
    CHECK(rm_session_set_system(s, "You are Kimi, a helpful assistant.") == 0);
    CHECK(rm_session_turn(s, "Explain linear attention in one short sentence.", &o, &ev, &stop, &err) == 0);
    check_greedy(pr, &c, "k3-tiny chat");
    const rm_chat_msg *msgs;
    int n = rm_session_messages(s, &msgs);
    CHECK(n == 3 && !strcmp(msgs[2].role, "assistant"));
    json_decref(pr);
    rm_session_free(s);
}

TEST(session_stop_keeps_partial_answer)
{
    const char *dir = fixture_path("k3-tiny");
    REQUIRE(dir);
    rm_session *s = NULL;
    rm_err err;
    REQUIRE(rm_session_open(dir, NULL, &s, &err) == 0);
    volatile int stop = 0;
    capture c = { .stop_after = 3, .stop = &stop };
    rm_gen_opts o = { .max_new = 24, .think = 0 };
    rm_gen_events ev = { &c, NULL, on_stats };
    CHECK(rm_session_turn(s, "Hello there", &o, &ev, &stop, &err) == 0);
    CHECK(c.n == 3);
    CHECK(rm_session_last_interrupted(s));
    /* the session stays usable: the next turn runs */
    stop = 0;
    c.stop_after = 0;
    c.n = 0;
    CHECK(rm_session_turn(s, "And again", &o, &ev, &stop, &err) == 0);
    CHECK(c.n > 0 && !rm_session_last_interrupted(s));
    /* transcripts: saved atomically, loaded back the same */
    char path[] = "/tmp/remora-transcript-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    CHECK(rm_session_save(s, path, &err) == 0);
    /* no temporary file is left beside it */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls -a /tmp | grep -q '%s.*tmp'", path + 5);
    CHECK(system(cmd) != 0);
    rm_session *s2 = NULL;
    REQUIRE(rm_session_open(dir, NULL, &s2, &err) == 0);
    CHECK(rm_session_load(s2, path, &err) == 0);
    const rm_chat_msg *a, *b;
    int na = rm_session_messages(s, &a);
    int nb = rm_session_messages(s2, &b);
    CHECK(na == nb && na == 4);
    for (int i = 0; i < na && na == nb; i++)
        CHECK(!strcmp(a[i].role, b[i].role) && !strcmp(a[i].content, b[i].content));
    /* a damaged transcript is refused with file and line */
    FILE *f = fopen(path, "w");
    fputs("{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"wizard\",\"content\":\"x\"}\n", f);
    fclose(f);
    CHECK(rm_session_load(s2, path, &err) == -1 && strstr(err.msg, ":2:") && strstr(err.msg, "role"));
    unlink(path);
    rm_session_free(s2);
    rm_session_free(s);
}

/* Speculation never changes the output. On the random fixture models the
 * n-gram drafter rarely finds matches, so an oracle drafter proposes the
 * true continuation with every third draft token corrupted: verify passes
 * then accept some tokens and reject others, and the ids must equal plain
 * greedy decoding exactly (exercising rollback after rejected drafts). */

typedef struct { const int32_t *truth; int ntruth, base, calls; } oracle_ctx;

static int oracle(void *ud, const int32_t *ctx, int n, int32_t *out, int kmax)
{
    oracle_ctx *o = ud;
    int at = n - o->base;            /* tokens generated so far */
    int k = 0;
    for (; k < kmax && k < 5 && at + k < o->ntruth; k++)
        out[k] = (o->calls + k) % 3 == 2 ? (o->truth[at + k] + 1) % 3000 : o->truth[at + k];
    o->calls++;
    (void)ctx;
    return k;
}

TEST(session_speculation_is_lossless)
{
    const char *models[2] = { "k3-tiny", "kl-tiny" };
    for (int mi = 0; mi < 2; mi++) {
        const char *dir = fixture_path(models[mi]);
        REQUIRE(dir);
        json_t *pr = prompt_meta(models[mi], 2);   /* long prompt */
        const char *text = json_string_value(json_object_get(pr, "text"));
        rm_err err;
        volatile int stop = 0;
        capture off = { .stop = &stop }, on = { .stop = &stop };
        rm_session *s = NULL;
        REQUIRE(rm_session_open(dir, NULL, &s, &err) == 0);
        rm_gen_opts o = { .max_new = 40, .spec = RM_SPEC_OFF };
        rm_gen_events ev = { &off, NULL, on_stats };
        CHECK(rm_session_complete(s, text, &o, &ev, &stop, &err) == 0);
        oracle_ctx oc = { off.ids, off.n, (int)json_array_size(json_object_get(pr, "prompt_ids")), 0 };
        session_test_draft_oracle(s, oracle, &oc);
        o.spec = RM_SPEC_ON;
        ev.ud = &on;
        CHECK(rm_session_complete(s, text, &o, &ev, &stop, &err) == 0);
        CHECKF(on.n == off.n && !memcmp(on.ids, off.ids, (size_t)off.n * sizeof *off.ids),
               "%s: speculation changed the output", models[mi]);
        CHECKF(oc.calls > 3 && on.accepted > 0 && on.accepted < on.drafted,
               "%s: drafted %llu accepted %llu", models[mi], (unsigned long long)on.drafted,
               (unsigned long long)on.accepted);
        /* the n-gram drafter on a repetitive prompt, auto and on: same ids */
        session_test_draft_oracle(s, NULL, NULL);
        const char *rep = "a b c d a b c d a b c d a b c d a b c";
        for (int mode = 0; mode < 3; mode++) {
            capture c1 = { .stop = &stop };
            o.spec = mode;
            ev.ud = &c1;
            CHECK(rm_session_complete(s, rep, &o, &ev, &stop, &err) == 0);
            if (mode == 0) { off = c1; continue; }
            CHECK(c1.n == off.n && !memcmp(c1.ids, off.ids, (size_t)off.n * sizeof *off.ids));
        }
        json_decref(pr);
        rm_session_free(s);
    }
}

/* A reply the session cannot keep (out of memory; here a 10-byte cap set
 * through the test hook) ends the turn with an error at that token: the
 * caller was never shown text the conversation does not hold, and no
 * assistant message is added. Before, the text was dropped silently and
 * the turn "succeeded" with a shorter reply than the one streamed. */
typedef struct { size_t bytes; } text_sink;
static void count_text(void *ud, int channel, const char *text, size_t len)
{
    (void)channel; (void)text;
    ((text_sink *)ud)->bytes += len;
}

TEST(session_reply_that_cannot_be_kept_ends_the_turn)
{
    const char *dir = fixture_path("k3-tiny");
    REQUIRE(dir);
    rm_session *s = NULL;
    rm_err err = { "" };
    REQUIRE(rm_session_open(dir, NULL, &s, &err) == 0);
    volatile int stop = 0;
    text_sink ts = { 0 };
    rm_gen_opts o = { .max_new = 24, .think = 0 };
    rm_gen_events ev = { &ts, count_text, NULL };
    session_test_text_max(s, 10);
    CHECK(rm_session_turn(s, "Hello there", &o, &ev, &stop, &err) == -1);
    CHECKF(strstr(err.msg, "keeping the reply"), "%s", err.msg);
    CHECKF(ts.bytes <= 10, "%zu bytes shown", ts.bytes);
    const rm_chat_msg *msgs;
    int n = rm_session_messages(s, &msgs);
    CHECK(n == 1 && !strcmp(msgs[0].role, "user"));
    /* without the cap the session goes on */
    session_test_text_max(s, 0);
    ts.bytes = 0;
    CHECK(rm_session_turn(s, "And again", &o, &ev, &stop, &err) == 0);
    n = rm_session_messages(s, &msgs);
    CHECK(n == 3 && !strcmp(msgs[2].role, "assistant") && strlen(msgs[2].content) == ts.bytes && ts.bytes > 10);
    rm_session_free(s);
}

/* A stop while the prompt is processed: the turn ends at once (within the
 * pass), the reply is empty and marked stopped in the prompt (also in the
 * transcript), the state holds the prompt's complete passes, and the next
 * turn answers exactly as a fresh session that loads the saved
 * conversation does. Progress records come while the prompt is fed. */
typedef struct prompt_watch { volatile int *stop; int progress, stop_at_pass, tokens; } prompt_watch;

static void watch_prompt(void *ud, const rm_token_stats *st)
{
    prompt_watch *w = ud;
    if (st->kind == RM_REC_PROGRESS) {
        w->progress++;
        CHECK(st->prompt.total > 0 && st->prompt.layers > 0 && st->prompt.chunks > 0);
        if (w->stop_at_pass >= 0 && st->prompt.chunk == w->stop_at_pass && st->prompt.layer == 2) *w->stop = 1;
    } else if (st->kind == RM_REC_TOKEN) {
        w->tokens++;
    }
}

static void answer_of(rm_session *s, const char *text, int32_t *ids, int *n)
{
    volatile int stop = 0;
    capture c = { .stop = &stop };
    rm_gen_opts o = { .max_new = 12, .think = 0, .spec = RM_SPEC_OFF };
    rm_gen_events ev = { &c, NULL, on_stats };
    rm_err err;
    CHECK(rm_session_turn(s, text, &o, &ev, &stop, &err) == 0);
    memcpy(ids, c.ids, (size_t)c.n * sizeof *ids);
    *n = c.n;
}

TEST(session_stop_in_the_prompt)
{
    const char *models[2] = { "k3-tiny", "kl-tiny" };
    for (int mi = 0; mi < 2; mi++) {
        const char *dir = fixture_path(models[mi]);
        REQUIRE(dir);
        rm_open_opts oo = { .prefill_chunk = 8 };
        rm_session *s = NULL;
        rm_err err;
        REQUIRE(rm_session_open(dir, &oo, &s, &err) == 0);
        volatile int stop = 0;
        prompt_watch w = { &stop, 0, 1, 0 };
        rm_gen_opts o = { .max_new = 12, .think = 0, .spec = RM_SPEC_OFF };
        rm_gen_events ev = { &w, NULL, watch_prompt };
        CHECK(rm_session_turn(s, "A long question that takes several passes of eight tokens each to read in.", &o, &ev,
                              &stop, &err) == 0);
        CHECK(w.progress > 2 && w.tokens == 0);
        CHECK(rm_session_last_interrupted(s) == RM_STOPPED_PROMPT);
        const rm_chat_msg *msgs;
        CHECK(rm_session_messages(s, &msgs) == 2 && !strcmp(msgs[1].role, "assistant") && !msgs[1].content[0]);
        char path[] = "/tmp/remora-stopped-XXXXXX";
        int fd = mkstemp(path);
        REQUIRE(fd >= 0);
        close(fd);
        CHECK(rm_session_save(s, path, &err) == 0);
        char *text = t_read_file(path, NULL);
        CHECK(text && strstr(text, "\"stopped_in\":\"prompt\""));
        free(text);
        int32_t a[64], b[64];
        int na = 0, nb = 0;
        answer_of(s, "Next question", a, &na);
        rm_session *f = NULL;
        REQUIRE(rm_session_open(dir, NULL, &f, &err) == 0);
        CHECK(rm_session_load(f, path, &err) == 0);
        const rm_chat_msg *fm;
        CHECK(rm_session_messages(f, &fm) == 2);
        answer_of(f, "Next question", b, &nb);
        CHECKF(na > 0 && na == nb && !memcmp(a, b, (size_t)na * sizeof *a), "%s: the turn after a stopped prompt differs",
               models[mi]);
        /* the stopped exchange stays in the conversation but out of the
         * model's context: the next answer is that of a fresh conversation */
        int32_t c[64];
        int nc = 0;
        rm_session *g = NULL;
        REQUIRE(rm_session_open(dir, NULL, &g, &err) == 0);
        answer_of(g, "Next question", c, &nc);
        CHECKF(na == nc && !memcmp(a, c, (size_t)na * sizeof *a), "%s: the stopped prompt reached the next turn's context",
               models[mi]);
        CHECK(rm_session_messages(s, &msgs) == 4);
        rm_session_free(g);
        unlink(path);
        rm_session_free(f);
        rm_session_free(s);
    }
}
