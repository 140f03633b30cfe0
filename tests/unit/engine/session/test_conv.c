/* test_conv.c — engine/session/conv.c, the one conversation type (the
 * session's and the synthetic and endpoint sources'): the view puts the
 * system prompt first and follows pushes, pops and clears (which keep the
 * system prompt); the context view leaves out an exchange stopped in its
 * prompt; how the last reply ended is that reply's; a saved conversation
 * loads back whole (system prompt, reasoning, a reply stopped in the reply
 * and one stopped in the prompt); a load that fails changes nothing. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "tests/unit/test.h"
#include "engine.h"
#include "tests/unit/ui/scratch.h"

TEST(conv_view_puts_the_system_prompt_first)
{
    rm_conv c = { 0 };
    const rm_chat_msg *m;
    CHECK(rm_conv_view(&c, &m) == 0);
    REQUIRE(rm_conv_push(&c, "user", "hi", NULL, 0) == 0);
    REQUIRE(rm_conv_push(&c, "assistant", "hello", "think", RM_STOPPED_REPLY) == 0);
    CHECK(rm_conv_last_interrupted(&c) == RM_STOPPED_REPLY);
    REQUIRE(rm_conv_set_system(&c, "be brief") == 0);
    int n = rm_conv_view(&c, &m);
    CHECK(n == 3 && !strcmp(m[0].role, "system") && !strcmp(m[0].content, "be brief") &&
          !strcmp(m[1].content, "hi") && !m[1].reasoning_content && !strcmp(m[2].reasoning_content, "think"));
    rm_conv_pop(&c);
    CHECK(rm_conv_last_interrupted(&c) == 0);      /* the last message is not a reply */
    CHECK(rm_conv_view(&c, &m) == 2);
    rm_conv_clear(&c);
    n = rm_conv_view(&c, &m);
    CHECK(n == 1 && !strcmp(m[0].content, "be brief"));
    REQUIRE(rm_conv_set_system(&c, "") == 0);
    CHECK(rm_conv_view(&c, &m) == 0 && !c.system);
    rm_conv_pop(&c);                               /* nothing to pop: nothing happens */
    rm_conv_free(&c);
}

TEST(conv_saves_loads_back_and_a_failed_load_changes_nothing)
{
    char dir[] = "/tmp/remora-conv-XXXXXX";
    REQUIRE(mkdtemp(dir));
    char path[4200], bad[4200];
    snprintf(path, sizeof path, "%s/conv.jsonl", dir);
    snprintf(bad, sizeof bad, "%s/bad.jsonl", dir);
    rm_err err = { "" };
    rm_conv a = { 0 }, b = { 0 };
    REQUIRE(rm_conv_set_system(&a, "sys") == 0);
    REQUIRE(rm_conv_push(&a, "user", "one", NULL, 0) == 0);
    REQUIRE(rm_conv_push(&a, "assistant", "half", "why", RM_STOPPED_REPLY) == 0);
    REQUIRE(rm_conv_push(&a, "user", "two", NULL, 0) == 0);
    REQUIRE(rm_conv_push(&a, "assistant", "", NULL, RM_STOPPED_PROMPT) == 0);
    CHECKF(rm_conv_save(&a, path, &err) == 0, "%s", err.msg);
    CHECK(scratch_entries(dir) == 1);
    REQUIRE(rm_conv_push(&b, "user", "old", NULL, 0) == 0);
    CHECKF(rm_conv_load(&b, path, &err) == 0, "%s", err.msg);
    const rm_chat_msg *m;
    int n = rm_conv_view(&b, &m);
    CHECK(n == 5 && !strcmp(m[0].content, "sys") && !strcmp(m[1].content, "one") &&
          !strcmp(m[2].reasoning_content, "why") && !strcmp(m[3].content, "two"));
    CHECK(b.n == 4 && b.msgs[1].interrupted == RM_STOPPED_REPLY && b.msgs[3].interrupted == RM_STOPPED_PROMPT);
    CHECK(rm_conv_last_interrupted(&b) == RM_STOPPED_PROMPT);

    FILE *f = fopen(bad, "w");
    REQUIRE(f);
    fputs("{\"role\":\"user\",\"content\":\"other\"}\n{\"role\": 3}\n", f);
    fclose(f);
    CHECK(rm_conv_load(&b, bad, &err) == -1 && strstr(err.msg, bad));
    n = rm_conv_view(&b, &m);
    CHECK(n == 5 && !strcmp(m[0].content, "sys") && !strcmp(m[4].role, "assistant"));
    rm_conv_free(&a);
    rm_conv_free(&b);
    scratch_remove(dir);
}

TEST(conv_context_leaves_out_an_exchange_stopped_in_its_prompt)
{
    rm_conv c = { 0 };
    const rm_chat_msg *m;
    REQUIRE(rm_conv_set_system(&c, "sys") == 0);
    REQUIRE(rm_conv_push(&c, "user", "one", NULL, 0) == 0);
    REQUIRE(rm_conv_push(&c, "assistant", "half", "why", RM_STOPPED_REPLY) == 0);
    REQUIRE(rm_conv_push(&c, "user", "two", NULL, 0) == 0);
    REQUIRE(rm_conv_push(&c, "assistant", "", NULL, RM_STOPPED_PROMPT) == 0);
    REQUIRE(rm_conv_push(&c, "user", "three", NULL, 0) == 0);
    CHECK(rm_conv_view(&c, &m) == 6);
    int n = rm_conv_context(&c, &m);
    CHECK(n == 4 && !strcmp(m[0].role, "system") && !strcmp(m[1].content, "one") &&
          !strcmp(m[2].reasoning_content, "why") && !strcmp(m[3].content, "three"));
    rm_conv_free(&c);
}
