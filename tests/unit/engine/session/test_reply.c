/* test_reply.c — session/reply.c on the fixture models: a reply to a JSON
 * conversation equals the chat turn on the same message token for token,
 * with the reasoning and answer split the same way; its usage figures
 * (prompt, cached, completion and reasoning tokens, finish) are right; a
 * prompt that extends what the state consumed is reused, and the reply is
 * still that of a fresh session; raw prompts from text and from ids. */
#include <string.h>
#include "tests/unit/test.h"
#include "engine.h"

#define MAXTOK 64

typedef struct {
    int32_t ids[MAXTOK];
    int n, prompt_records;
    rm_buf text[2];             /* reasoning, answer */
    int first_answer;           /* index of the first token with answer text, or -1 */
    int last_reasoning;         /* index of the last token with reasoning text, or -1 */
} capture;

static void cap_text(void *ud, int channel, const char *text, size_t len)
{
    capture *c = ud;
    int k = channel == RM_CHAN_REASONING ? 0 : 1;
    if (rm_buf_add(&c->text[k], text, len)) return;
    if (k == 1 && c->first_answer < 0) c->first_answer = c->n;
    if (k == 0) c->last_reasoning = c->n;
}

static void cap_stats(void *ud, const rm_token_stats *st)
{
    capture *c = ud;
    if (st->kind == RM_REC_PROMPT) { c->prompt_records++; return; }
    if (st->kind == RM_REC_TOKEN && c->n < MAXTOK) c->ids[c->n++] = st->token_id;
}

static void cap_init(capture *c) { memset(c, 0, sizeof *c); c->first_answer = c->last_reasoning = -1; }
static void cap_free(capture *c) { rm_buf_free(&c->text[0]); rm_buf_free(&c->text[1]); }

static const char *str(const rm_buf *b) { return b->p ? b->p : ""; }

static int same_reply(const capture *a, const capture *b)
{
    return a->n == b->n && !memcmp(a->ids, b->ids, (size_t)a->n * sizeof a->ids[0]) &&
           !strcmp(str(&a->text[0]), str(&b->text[0])) && !strcmp(str(&a->text[1]), str(&b->text[1]));
}

/* The reply to conv on a fresh session of dir. */
static int fresh_reply(const char *dir, const char *conv, const rm_gen_opts *o, capture *c, rm_reply_info *info)
{
    rm_session *s = NULL;
    rm_err err = { "" };
    if (rm_session_open(dir, NULL, &s, &err)) return -1;
    rm_prompt p;
    int rc = rm_session_render(s, conv, strlen(conv), &p, &err);
    rm_gen_events ev = { c, cap_text, cap_stats };
    volatile int stop = 0;
    if (!rc) rc = rm_session_reply(s, &p, o, &ev, &stop, info, &err);
    if (rc) fprintf(stderr, "    %s\n", err.msg);
    rm_prompt_free(&p);
    rm_session_free(s);
    return rc;
}

TEST(reply_equals_chat_turn)
{
    const char *models[2] = { "k3-tiny", "kl-tiny" };
    for (int mi = 0; mi < 2; mi++) {
        const char *dir = fixture_path(models[mi]);
        REQUIRE(dir);
        rm_gen_opts o = { .max_new = 24, .think = 1 };
        /* the chat turn */
        rm_session *s = NULL;
        rm_err err = { "" };
        REQUIRE(rm_session_open(dir, NULL, &s, &err) == 0);
        REQUIRE(rm_session_set_system(s, "Be brief.") == 0);
        capture turn;
        cap_init(&turn);
        rm_gen_events ev = { &turn, cap_text, cap_stats };
        volatile int stop = 0;
        CHECK(rm_session_turn(s, "Explain linear attention.", &o, &ev, &stop, &err) == 0);
        rm_session_free(s);
        /* the same message through a JSON conversation */
        capture rep;
        cap_init(&rep);
        rm_reply_info info;
        CHECK(fresh_reply(dir, "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"},"
                               "{\"role\": \"user\", \"content\": \"Explain linear attention.\"}]}",
                          &o, &rep, &info) == 0);
        CHECKF(same_reply(&turn, &rep), "%s: the reply differs from the chat turn", models[mi]);
        CHECK(rep.n == 24 && rep.prompt_records == 1);
        CHECK(info.completion_tokens == 24 && info.finish == RM_FINISH_LENGTH);
        CHECK(info.prompt_tokens > 0 && info.cached_tokens == 0);
        /* the tokens before the answer text are reasoning (K3 opens the
         * think channel; the random kl-tiny writes a <think> of its own) */
        int want = rep.first_answer >= 0 ? rep.first_answer : rep.last_reasoning + 1;
        CHECKF(info.reasoning_tokens == want, "%s: reasoning_tokens %d, want %d", models[mi], info.reasoning_tokens,
               want);
        CHECKF(mi == 1 || (rep.text[0].len > 0 && info.reasoning_tokens > 0), "k3: %zu bytes of reasoning in %d tokens",
               rep.text[0].len, info.reasoning_tokens);
        cap_free(&turn);
        cap_free(&rep);
    }
}

/* The reply's ids as the second prompt's continuation: a raw prompt of
 * ids that extends what the state holds is reused, and what follows equals
 * a fresh session's reply to the whole prompt. */
TEST(reply_reuses_a_prompt_that_extends_the_state)
{
    const char *models[2] = { "k3-tiny", "kl-tiny" };
    for (int mi = 0; mi < 2; mi++) {
        const char *dir = fixture_path(models[mi]);
        REQUIRE(dir);
        rm_session *s = NULL;
        rm_err err = { "" };
        REQUIRE(rm_session_open(dir, NULL, &s, &err) == 0);
        rm_prompt p1;
        REQUIRE(rm_session_prompt_text(s, "The quick brown fox", 19, &p1, &err) == 0);
        CHECK(p1.mode == RM_REPLY_RAW);
        rm_gen_opts o = { .max_new = 8 };
        capture c1;
        cap_init(&c1);
        rm_gen_events ev = { &c1, cap_text, cap_stats };
        volatile int stop = 0;
        rm_reply_info i1;
        REQUIRE(rm_session_reply(s, &p1, &o, &ev, &stop, &i1, &err) == 0);
        CHECK(i1.prompt_tokens == p1.n && i1.cached_tokens == 0 && i1.reasoning_tokens == 0);
        /* prompt 2: prompt 1, the reply, and more */
        int32_t ids[128];
        int n = 0;
        for (int i = 0; i < p1.n; i++) ids[n++] = p1.ids[i];
        for (int i = 0; i < c1.n; i++) ids[n++] = c1.ids[i];
        ids[n++] = 100;
        ids[n++] = 200;
        rm_prompt p2;
        REQUIRE(rm_session_prompt_ids(s, ids, n, &p2, &err) == 0);
        capture c2;
        cap_init(&c2);
        ev.ud = &c2;
        rm_reply_info i2;
        REQUIRE(rm_session_reply(s, &p2, &o, &ev, &stop, &i2, &err) == 0);
        /* the last token of a reply cut at its length was never fed */
        CHECKF(i2.cached_tokens == p1.n + c1.n - 1 && i2.prompt_tokens == n, "%s: cached %d of %d", models[mi],
               i2.cached_tokens, i2.prompt_tokens);
        rm_session_free(s);
        /* the same prompt on a fresh session */
        REQUIRE(rm_session_open(dir, NULL, &s, &err) == 0);
        capture c3;
        cap_init(&c3);
        ev.ud = &c3;
        rm_reply_info i3;
        REQUIRE(rm_session_reply(s, &p2, &o, &ev, &stop, &i3, &err) == 0);
        CHECKF(same_reply(&c2, &c3), "%s: a reused state changed the reply", models[mi]);
        CHECK(i3.cached_tokens == 0);
        /* a prompt that does not extend the state is computed whole */
        ids[0] = ids[0] == 5 ? 6 : 5;
        rm_prompt p3;
        REQUIRE(rm_session_prompt_ids(s, ids, n, &p3, &err) == 0);
        ev.ud = NULL;
        ev.on_text = NULL;
        ev.on_stats = NULL;
        REQUIRE(rm_session_reply(s, &p3, &o, &ev, &stop, &i3, &err) == 0);
        CHECK(i3.cached_tokens == 0 && i3.completion_tokens == 8);
        rm_prompt_free(&p1);
        rm_prompt_free(&p2);
        rm_prompt_free(&p3);
        rm_session_free(s);
        cap_free(&c1);
        cap_free(&c2);
        cap_free(&c3);
    }
}

TEST(reply_stops_and_refuses_bad_prompts)
{
    const char *dir = fixture_path("k3-tiny");
    REQUIRE(dir);
    rm_session *s = NULL;
    rm_err err = { "" };
    REQUIRE(rm_session_open(dir, NULL, &s, &err) == 0);
    rm_prompt p;
    /* the stop flag ends the reply, which says so */
    REQUIRE(rm_session_prompt_text(s, "hello", 5, &p, &err) == 0);
    volatile int stop = 1;
    rm_gen_opts o = { .max_new = 8 };
    rm_reply_info info;
    CHECK(rm_session_reply(s, &p, &o, NULL, &stop, &info, &err) == 0);
    CHECK(info.finish == RM_FINISH_STOPPED && info.completion_tokens == 0);
    rm_prompt_free(&p);
    /* thinking on: the K3 prompt opens the think channel; off: the reply
     * starts as answer text */
    const char *conv = "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}";
    REQUIRE(rm_session_render(s, conv, strlen(conv), &p, &err) == 0);
    CHECK(p.mode == RM_REPLY_REASONING);
    rm_prompt_free(&p);
    conv = "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"thinking\": false}";
    REQUIRE(rm_session_render(s, conv, strlen(conv), &p, &err) == 0);
    CHECK(p.mode == RM_REPLY_ANSWER);
    rm_prompt_free(&p);
    /* bad input: named faults, nothing allocated */
    int32_t bad[2] = { 1, 1 << 30 };
    CHECK(rm_session_prompt_ids(s, bad, 2, &p, &err) == -1 && strstr(err.msg, "outside the vocabulary") && !p.ids);
    CHECK(rm_session_prompt_ids(s, bad, 0, &p, &err) == -1 && strstr(err.msg, "empty"));
    CHECK(rm_session_prompt_text(s, "", 0, &p, &err) == -1 && strstr(err.msg, "empty"));
    CHECK(rm_session_render(s, "{\"messages\": 3}", 15, &p, &err) == -1 && strstr(err.msg, "messages"));
    CHECK(rm_session_render(s, "{\"messages\": [{\"content\": \"x\"}]}", 32, &p, &err) == -1 &&
          strstr(err.msg, "role"));
    CHECK(rm_session_render(s, "{", 1, &p, &err) == -1 && strstr(err.msg, "line 1"));
    CHECK(rm_session_reply(s, &p, &o, NULL, &stop, &info, &err) == -1);
    rm_session_free(s);
}
