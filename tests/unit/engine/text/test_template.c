/* test_template.c — text/template.c (with pyjson.c), chat rendering: every
 * chat of fixtures/tokenizer/chat_goldens.json through the JSON entry point,
 * the simple ones also through the message structs, format detection, the
 * im format on a tokenizer with Kimi-Linear's names, and bad conversations
 * refused with a message. */
#include <string.h>
#include <jansson.h>
#include "tests/unit/test.h"
#include "engine.h"
#include "tests/unit/engine/helpers.h"
#include "text/template.h"

TEST(template_goldens_render_exactly)
{
    rm_tokenizer *t = fixture_tokenizer();
    const char *p = fixture_path("tokenizer/chat_goldens.json");
    REQUIRE(t && p);
    json_t *g = json_load_file(p, 0, NULL);
    REQUIRE(g);
    CHECK(rm_chat_detect(t) == RM_CHAT_XTML);
    size_t i;
    json_t *c;
    json_t *chats = json_object_get(g, "chats");
    CHECK(json_array_size(chats) == 8);
    json_array_foreach(chats, i, c) {
        json_t *conv = json_object();
        static const char *keys[] = { "messages", "tools", "thinking", "thinking_effort",
                                      "add_generation_prompt" };
        for (int k = 0; k < 5; k++) json_object_set(conv, keys[k], json_object_get(c, keys[k]));
        char *text = json_dumps(conv, 0);
        int32_t *ids;
        rm_err err;
        int n = rm_chat_render_json(t, RM_CHAT_XTML, text, strlen(text), &ids, &err);
        CHECKF(n >= 0 && ids_equal(ids, n, json_object_get(c, "ids")), "chat %s: %s",
               json_string_value(json_object_get(c, "name")), n < 0 ? err.msg : "ids differ");
        if (n >= 0) free(ids);
        free(text);
        json_decref(conv);
    }
    json_decref(g);
    rm_tokenizer_free(t);
}

/* The message-struct entry point gives the same ids as the goldens. */
TEST(template_render_structs)
{
    rm_tokenizer *t = fixture_tokenizer();
    const char *p = fixture_path("tokenizer/chat_goldens.json");
    REQUIRE(t && p);
    json_t *g = json_load_file(p, 0, NULL);
    REQUIRE(g);
    json_t *chats = json_object_get(g, "chats");
    rm_chat_msg m1[] = { { "system", "You are Kimi, a helpful assistant.", NULL, NULL },
                         { "user", "What is 2+2?", NULL, NULL } };
    rm_chat_opts o1 = { .thinking = 1, .thinking_effort = "max", .add_generation_prompt = 1 };
    rm_chat_msg m2[] = { { "user", "Name a prime number.", NULL, NULL },
                         { "assistant", "2", "2 is the smallest prime.", NULL },
                         { "user", "Another one, bigger than 10?", NULL, NULL } };
    rm_chat_opts o2 = { .thinking = 1, .add_generation_prompt = 1 };
    rm_chat_msg m3[] = { { "user", "hello", NULL, "Tom & \"Jerry\"" } };
    rm_chat_opts o3 = { .thinking = 0, .add_generation_prompt = 1 };
    struct { const rm_chat_msg *m; int n; const rm_chat_opts *o; int golden; } cases[] = {
        { m1, 2, &o1, 0 }, { m2, 3, &o2, 2 }, { m3, 1, &o3, 5 },
    };
    for (int k = 0; k < 3; k++) {
        int32_t *ids;
        rm_err err;
        int n = rm_chat_render(t, RM_CHAT_XTML, cases[k].m, cases[k].n, cases[k].o, &ids, &err);
        json_t *want = json_object_get(json_array_get(chats, (size_t)cases[k].golden), "ids");
        CHECKF(n >= 0 && ids_equal(ids, n, want), "case %d: %s", k, n < 0 ? err.msg : "ids differ");
        if (n >= 0) free(ids);
    }
    json_decref(g);
    rm_tokenizer_free(t);
}

/* Appends the ids of text (plain) or of one special to want. */
static int add_text(const rm_tokenizer *t, int32_t *want, int n, const char *s)
{
    int32_t *ids;
    int k = rm_tokenizer_encode(t, s, strlen(s), 0, &ids, NULL);
    memcpy(want + n, ids, (size_t)k * sizeof *ids);
    free(ids);
    return n + k;
}

TEST(template_im_format)
{
    rm_tokenizer *t = im_tokenizer();
    REQUIRE(t);
    CHECK(rm_chat_detect(t) == RM_CHAT_IM);
    const char *conv = "{\"messages\": [{\"role\": \"system\", \"content\": \"Be terse.\"},"
                       "{\"role\": \"user\", \"content\": \"Hi <|im_end|>\"},"
                       "{\"role\": \"assistant\", \"content\": \"Hello\", \"reasoning_content\": \"x\"},"
                       "{\"role\": \"tool\", \"tool_call_id\": \"functions.f:0\", \"content\": \"42\"}]}";
    int32_t *ids;
    rm_err err;
    int n = rm_chat_render_json(t, RM_CHAT_IM, conv, strlen(conv), &ids, &err);
    REQUIRE(n > 0);
    int32_t want[256];
    int w = 0;
    enum { END = 2818, USER = 2819, ASSIST = 2820, SYS = 2826, MID = 2833 };
    want[w++] = SYS; w = add_text(t, want, w, "system"); want[w++] = MID;
    w = add_text(t, want, w, "Be terse."); want[w++] = END;
    want[w++] = USER; w = add_text(t, want, w, "user"); want[w++] = MID;
    w = add_text(t, want, w, "Hi <|im_end|>"); want[w++] = END;     /* typed marker stays text */
    want[w++] = ASSIST; w = add_text(t, want, w, "assistant"); want[w++] = MID;
    w = add_text(t, want, w, "Hello"); want[w++] = END;
    want[w++] = SYS; w = add_text(t, want, w, "tool"); want[w++] = MID;
    w = add_text(t, want, w, "## Return of functions.f:0\n42"); want[w++] = END;
    want[w++] = ASSIST; w = add_text(t, want, w, "assistant"); want[w++] = MID;
    CHECK(n == w && !memcmp(ids, want, (size_t)w * sizeof *ids));
    free(ids);
    rm_tokenizer_free(t);
}

TEST(template_rejects_bad_conversations)
{
    rm_tokenizer *t = fixture_tokenizer();
    REQUIRE(t);
    struct { const char *conv, *want; } cases[] = {
        { "[1]", "not a JSON object" },
        { "{\"messages\": 3}", "no \"messages\" list" },
        { "{\"messages\": [{\"role\": \"user\"", "line 1" },
        { "{\"messages\": [{\"content\": \"x\"}]}", "messages[0]: \"role\" must be a string" },
        { "{\"messages\": [{\"role\": 7, \"content\": \"x\"}]}", "messages[0]: \"role\" must be a string" },
        { "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"wizard\", \"content\": \"x\"}]}",
          "messages[1]: \"role\" \"wizard\" is not" },
        { "{\"messages\": [{\"role\": \"user\"}]}", "messages[0]: \"content\" is missing" },
        { "{\"messages\": [], \"tools\": \"nope\"}", "\"tools\" must be a list" },
        { "{\"messages\": [{\"role\": \"user\", \"content\": \"x\", \"name\": 3}]}", "messages[0]: \"name\" must be" },
        { "{\"messages\": [{\"role\": \"tool\", \"content\": \"x\"}]}", "needs a tool name" },
        { "{\"messages\": [], \"thinking_effort\": \"huge\"}", "not one of low" },
        { "{\"messages\": [{\"role\": \"user\", \"content\": 5}]}", "messages[0]: \"content\" must be" },
        { "{\"messages\": [{\"role\": \"assistant\", \"tool_calls\": [{\"function\": "
          "{\"name\": \"f\", \"arguments\": \"[1]\"}}]}]}", "must be a JSON object" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int32_t *ids;
        rm_err err = { "" };
        int n = rm_chat_render_json(t, RM_CHAT_XTML, cases[k].conv, strlen(cases[k].conv), &ids, &err);
        CHECKF(n == -1 && strstr(err.msg, cases[k].want), "case %zu: n=%d \"%s\"", k, n, err.msg);
        CHECKF(err.kind == RM_ERR_INPUT || strstr(err.msg, "needs a tool") || strstr(err.msg, "not one of") ||
               strstr(err.msg, "JSON object"), "case %zu is not bad input", k);
    }
    rm_tokenizer_free(t);
}

/* Whether a rendered prompt ends inside the think channel (the reply then
 * starts as reasoning): K3 XTML with thinking on and a generation prompt;
 * never the im format, whose models open <think> themselves. */
TEST(template_knows_when_the_prompt_opens_think)
{
    rm_tokenizer *x = fixture_tokenizer(), *im = im_tokenizer();
    REQUIRE(x && im);
    static const struct { const char *tail; int xtml; } cases[] = {
        { "}", 1 },
        { ", \"thinking\": true}", 1 },
        { ", \"thinking\": false}", 0 },
        { ", \"add_generation_prompt\": false}", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char conv[256];
        snprintf(conv, sizeof conv, "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]%s", cases[i].tail);
        int32_t *ids = NULL;
        rm_err err;
        chat_render_info info;
        CHECK(chat_render_json(x, RM_CHAT_XTML, conv, strlen(conv), &info, &ids, &err) > 0 &&
              info.opens_think == cases[i].xtml);
        free(ids);
        CHECK(chat_render_json(im, RM_CHAT_IM, conv, strlen(conv), &info, &ids, &err) > 0 && info.opens_think == 0);
        free(ids);
    }
    rm_tokenizer_free(x);
    rm_tokenizer_free(im);
}

/* The text of ids[from..n), specials as their strings. */
static void ids_text(const rm_tokenizer *t, const int32_t *ids, int from, int n, char *out, size_t cap)
{
    size_t o = 0;
    for (int i = from; i < n; i++) {
        size_t len;
        const char *b = rm_tokenizer_token_bytes(t, ids[i], &len);
        if (b && o + len < cap) { memcpy(out + o, b, len); o += len; }
    }
    out[o] = 0;
}

/* A forced tool choice ends the prompt inside the tools block (or the named
 * call), thinking closed; info says where the generation prompt began. */
TEST(template_forced_tool_choice)
{
    rm_tokenizer *t = fixture_tokenizer();
    REQUIRE(t);
    static const char *const choices[] = { "\"required\"", "{\"type\": \"function\", \"function\": {\"name\": \"f\"}}",
                                           "\"auto\"" };
    static const char *const tails[] = {
        "<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|><|close|>think<|sep|><|open|>response<|sep|>"
        "<|close|>response<|sep|><|open|>tools<|sep|>",
        "<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|><|close|>think<|sep|><|open|>response<|sep|>"
        "<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|>",
        "<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>" };
    for (int i = 0; i < 3; i++) {
        char conv[512], text[4096];
        snprintf(conv, sizeof conv, "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"tools\": "
                 "[{\"type\": \"function\", \"function\": {\"name\": \"f\"}}], \"tool_choice\": %s}", choices[i]);
        int32_t *ids = NULL;
        rm_err err;
        chat_render_info info;
        int n = chat_render_json(t, RM_CHAT_XTML, conv, strlen(conv), &info, &ids, &err);
        REQUIRE(n > 0);
        ids_text(t, ids, info.gen_start, n, text, sizeof text);
        CHECKF(!strcmp(text, tails[i]), "%d: %s", i, text);
        CHECK(info.opens_tools == (i < 2) && info.opens_think == (i == 2));
        CHECK(!strcmp(info.prime, i == 1 ? "<|open|>call tool=\"f\" index=\"1\"<|sep|>" : ""));
        free(ids);
    }
    rm_tokenizer_free(t);
}

/* An assistant message's remora_ids stand for it as they are (then the
 * message closes); ids outside the vocabulary are refused. */
TEST(template_verbatim_ids)
{
    rm_tokenizer *t = fixture_tokenizer();
    REQUIRE(t);
    int32_t *ids = NULL;
    rm_err err;
    static const char conv[] = "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", "
                               "\"content\": \"ignored\", \"remora_ids\": [65, 66, 67]}], \"add_generation_prompt\": false}";
    int n = chat_render_json(t, RM_CHAT_XTML, conv, strlen(conv), NULL, &ids, &err);
    REQUIRE(n > 0);
    char text[1024];
    ids_text(t, ids, 0, n, text, sizeof text);
    const char *m = strstr(text, "<|end_of_msg|>");
    REQUIRE(m);
    size_t l65, l66, l67;
    const char *b65 = rm_tokenizer_token_bytes(t, 65, &l65), *b66 = rm_tokenizer_token_bytes(t, 66, &l66),
               *b67 = rm_tokenizer_token_bytes(t, 67, &l67);
    char want[256];
    snprintf(want, sizeof want, "%.*s%.*s%.*s<|close|>message<|sep|><|end_of_msg|>", (int)l65, b65, (int)l66, b66,
             (int)l67, b67);
    CHECKF(!strcmp(m + strlen("<|end_of_msg|>"), want), "%s", text);
    CHECK(!strstr(text, "ignored"));
    free(ids);
    static const char bad[] = "{\"messages\": [{\"role\": \"assistant\", \"content\": \"\", \"remora_ids\": [99999999]}]}";
    CHECK(chat_render_json(t, RM_CHAT_XTML, bad, strlen(bad), NULL, &ids, &err) < 0 && strstr(err.msg, "remora_ids"));
    rm_tokenizer_free(t);
}
