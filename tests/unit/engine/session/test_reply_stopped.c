/* test_reply_stopped.c — the state is kept whenever it is valid: a prompt
 * stopped before any of it was computed leaves the state where it was, and
 * the same prompt sent again (an SDK retrying a timed-out request) reuses
 * everything before it (cached_tokens), as it would have without the stop;
 * after rm_session_clear a new conversation is not reported as one computed
 * again. */
#include <string.h>
#include "tests/unit/test.h"
#include "engine.h"

typedef struct seen { int reprefill, n; int32_t ids[16]; volatile int *stop_at_progress; } seen;

static void on_stats(void *ud, const rm_token_stats *st)
{
    seen *c = ud;
    if (st->kind == RM_REC_PROMPT) c->reprefill = st->prompt.reprefill;
    if (st->kind == RM_REC_PROGRESS && c->stop_at_progress) *c->stop_at_progress = 1;   /* Ctrl-C in the prompt */
    if (st->kind == RM_REC_TOKEN && c->n < 16) c->ids[c->n++] = st->token_id;
}

TEST(reply_resent_after_a_stop_reuses_the_state)
{
    const char *dir = fixture_path("k3-tiny");
    REQUIRE(dir);
    rm_session *s = NULL;
    rm_err err = { "" };
    const rm_open_opts oo = { .prefix_cache_gb = -1 };     /* the state alone, not the prefix cache */
    REQUIRE(rm_session_open(dir, &oo, &s, &err) == 0);
    rm_prompt p1, p2;
    REQUIRE(rm_session_prompt_text(s, "The quick brown fox", 19, &p1, &err) == 0);
    rm_gen_opts o = { .max_new = 4 };
    volatile int stop = 0;
    rm_reply_info i1, i2;
    seen c = { 0 };
    rm_gen_events ev = { &c, NULL, on_stats };
    REQUIRE(rm_session_reply(s, &p1, &o, &ev, &stop, &i1, &err) == 0);
    REQUIRE(c.n == 4);
    /* prompt 2: prompt 1, its reply (the last token of a reply cut at its
     * length was never fed) and more */
    int32_t ids[64];
    int n = 0;
    for (int i = 0; i < p1.n; i++) ids[n++] = p1.ids[i];
    for (int i = 0; i < c.n; i++) ids[n++] = c.ids[i];
    for (int i = 0; i < 6; i++) ids[n++] = 100 + i;
    REQUIRE(rm_session_prompt_ids(s, ids, n, &p2, &err) == 0);
    c.stop_at_progress = &stop;                 /* stopped in its prompt, after its first layer */
    REQUIRE(rm_session_reply(s, &p2, &o, &ev, &stop, &i2, &err) == 0);
    CHECK(i2.finish == RM_FINISH_STOPPED && i2.completion_tokens == 0);
    c.stop_at_progress = NULL;
    stop = 0;                                   /* sent again */
    c.reprefill = -1;
    REQUIRE(rm_session_reply(s, &p2, &o, &ev, &stop, &i2, &err) == 0);
    CHECKF(i2.cached_tokens == p1.n + 3 && c.reprefill == 0, "cached %d of %d (prompt 1 and its reply: %d), reprefill %d",
           i2.cached_tokens, i2.prompt_tokens, p1.n + 3, c.reprefill);
    /* a new conversation after a clear: nothing was computed again */
    rm_session_clear(s);
    c.reprefill = -1;
    CHECK(rm_session_turn(s, "hello", &o, &ev, &stop, &err) == 0);
    CHECKF(c.reprefill == 0, "the first message after a clear is reported as a conversation computed again");
    rm_prompt_free(&p1);
    rm_prompt_free(&p2);
    rm_session_free(s);
}
