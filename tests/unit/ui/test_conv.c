/* test_conv.c — ui/conv.c, the conversation the synthetic and endpoint
 * sources keep: the view puts the system prompt first (as
 * rm_session_messages does) and follows pushes, pops and clears (which
 * keep the system prompt); how the last reply ended is that reply's; a
 * saved conversation loads back whole (system prompt, reasoning, a reply
 * stopped in the reply and one stopped in the prompt); a load that fails
 * changes nothing. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "tests/unit/test.h"
#include "scratch.h"
#include "ui/conv.h"

TEST(ui_conv_view_puts_the_system_prompt_first)
{
    ui_conv c = { 0 };
    const rm_chat_msg *m;
    CHECK(ui_conv_view(&c, &m) == 0);
    REQUIRE(ui_conv_push(&c, "user", "hi", NULL, 0) == 0);
    REQUIRE(ui_conv_push(&c, "assistant", "hello", "think", RM_STOPPED_REPLY) == 0);
    CHECK(ui_conv_last_interrupted(&c) == RM_STOPPED_REPLY);
    REQUIRE(ui_conv_set_system(&c, "be brief") == 0);
    int n = ui_conv_view(&c, &m);
    CHECK(n == 3 && !strcmp(m[0].role, "system") && !strcmp(m[0].content, "be brief") &&
          !strcmp(m[1].content, "hi") && !m[1].reasoning_content && !strcmp(m[2].reasoning_content, "think"));
    ui_conv_pop(&c);
    CHECK(ui_conv_last_interrupted(&c) == 0);      /* the last message is not a reply */
    CHECK(ui_conv_view(&c, &m) == 2);
    ui_conv_clear(&c);
    n = ui_conv_view(&c, &m);
    CHECK(n == 1 && !strcmp(m[0].content, "be brief"));
    REQUIRE(ui_conv_set_system(&c, "") == 0);
    CHECK(ui_conv_view(&c, &m) == 0 && !c.system);
    ui_conv_pop(&c);                               /* nothing to pop: nothing happens */
    ui_conv_free(&c);
}

TEST(ui_conv_saves_loads_back_and_a_failed_load_changes_nothing)
{
    char dir[] = "/tmp/remora-conv-XXXXXX";
    REQUIRE(mkdtemp(dir));
    char path[4200], bad[4200];
    snprintf(path, sizeof path, "%s/conv.jsonl", dir);
    snprintf(bad, sizeof bad, "%s/bad.jsonl", dir);
    rm_err err = { "" };
    ui_conv a = { 0 }, b = { 0 };
    REQUIRE(ui_conv_set_system(&a, "sys") == 0);
    REQUIRE(ui_conv_push(&a, "user", "one", NULL, 0) == 0);
    REQUIRE(ui_conv_push(&a, "assistant", "half", "why", RM_STOPPED_REPLY) == 0);
    REQUIRE(ui_conv_push(&a, "user", "two", NULL, 0) == 0);
    REQUIRE(ui_conv_push(&a, "assistant", "", NULL, RM_STOPPED_PROMPT) == 0);
    CHECKF(ui_conv_save(&a, path, &err) == 0, "%s", err.msg);
    CHECK(scratch_entries(dir) == 1);
    REQUIRE(ui_conv_push(&b, "user", "old", NULL, 0) == 0);
    CHECKF(ui_conv_load(&b, path, &err) == 0, "%s", err.msg);
    const rm_chat_msg *m;
    int n = ui_conv_view(&b, &m);
    CHECK(n == 5 && !strcmp(m[0].content, "sys") && !strcmp(m[1].content, "one") &&
          !strcmp(m[2].reasoning_content, "why") && !strcmp(m[3].content, "two"));
    CHECK(b.n == 4 && b.msgs[1].interrupted == RM_STOPPED_REPLY && b.msgs[3].interrupted == RM_STOPPED_PROMPT);
    CHECK(ui_conv_last_interrupted(&b) == RM_STOPPED_PROMPT);

    FILE *f = fopen(bad, "w");
    REQUIRE(f);
    fputs("{\"role\":\"user\",\"content\":\"other\"}\n{\"role\": 3}\n", f);
    fclose(f);
    CHECK(ui_conv_load(&b, bad, &err) == -1 && strstr(err.msg, bad));
    n = ui_conv_view(&b, &m);
    CHECK(n == 5 && !strcmp(m[0].content, "sys") && !strcmp(m[4].role, "assistant"));
    ui_conv_free(&a);
    ui_conv_free(&b);
    scratch_remove(dir);
}
