/* test_chat.c — chat rendering and the streaming reasoning/answer splitter.
 *
 * Rendering: every chat of fixtures/tokenizer/chat_goldens.json through the
 * JSON entry point, the simple ones also through the message structs, format
 * detection, the im format on a tokenizer with Kimi-Linear's names, and bad
 * conversations. Splitting: XTML channel switches, tag names and UTF-8
 * characters split across tokens, tools blocks, stops; im <think> markers as
 * specials and as plain text split across tokens. */
#include <string.h>
#include <jansson.h>
#include "../test.h"
#include "engine.h"
#include "text/tokenizer_int.h"

static rm_tokenizer *fixture_tok(void)
{
    const char *dir = fixture_path("tokenizer");
    rm_tokenizer *t = NULL;
    rm_err err;
    if (dir && rm_tokenizer_open(dir, &t, &err)) fprintf(stderr, "    %s\n", err.msg);
    return t;
}

/* The fixture's ranks with Kimi-Linear's special names (im format). */
static rm_tokenizer *im_tok(void)
{
    const char *p = fixture_path("tokenizer/tiktoken.model");
    if (!p) return NULL;
    size_t len;
    char *model = t_read_file(p, &len);
    if (!model) return NULL;
    static const char cfg[] = "{\"added_tokens_decoder\": {"
        "\"2816\": {\"content\": \"[BOS]\"}, \"2817\": {\"content\": \"[EOS]\"},"
        "\"2818\": {\"content\": \"<|im_end|>\"}, \"2819\": {\"content\": \"<|im_user|>\"},"
        "\"2820\": {\"content\": \"<|im_assistant|>\"}, \"2826\": {\"content\": \"<|im_system|>\"},"
        "\"2833\": {\"content\": \"<|im_middle|>\"}, \"2838\": {\"content\": \"<think>\"},"
        "\"2839\": {\"content\": \"</think>\"}}}";
    rm_tokenizer *t = NULL;
    rm_err err;
    if (tokenizer_load("tiktoken.model", model, len, "im-config", cfg, strlen(cfg), &t, &err))
        fprintf(stderr, "    %s\n", err.msg);
    free(model);
    return t;
}

static int same_ids(const int32_t *a, int n, json_t *want)
{
    if (n != (int)json_array_size(want)) return 0;
    for (int i = 0; i < n; i++)
        if (a[i] != json_integer_value(json_array_get(want, i))) return 0;
    return 1;
}

TEST(chat_goldens_render_exactly)
{
    rm_tokenizer *t = fixture_tok();
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
        CHECKF(n >= 0 && same_ids(ids, n, json_object_get(c, "ids")), "chat %s: %s",
               json_string_value(json_object_get(c, "name")), n < 0 ? err.msg : "ids differ");
        if (n >= 0) free(ids);
        free(text);
        json_decref(conv);
    }
    json_decref(g);
    rm_tokenizer_free(t);
}

/* The message-struct entry point gives the same ids as the goldens. */
TEST(chat_render_structs)
{
    rm_tokenizer *t = fixture_tok();
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
        CHECKF(n >= 0 && same_ids(ids, n, want), "case %d: %s", k, n < 0 ? err.msg : "ids differ");
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

TEST(chat_im_format)
{
    rm_tokenizer *t = im_tok();
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

TEST(chat_rejects_bad_conversations)
{
    rm_tokenizer *t = fixture_tok();
    REQUIRE(t);
    struct { const char *conv, *want; } cases[] = {
        { "[1]", "not a JSON object" },
        { "{\"messages\": 3}", "no \"messages\" list" },
        { "{\"messages\": [{\"role\": \"user\"", "line 1" },
        { "{\"messages\": [{\"content\": \"x\"}]}", "no role" },
        { "{\"messages\": [{\"role\": \"tool\", \"content\": \"x\"}]}", "needs a tool name" },
        { "{\"messages\": [], \"thinking_effort\": \"huge\"}", "not one of low" },
        { "{\"messages\": [{\"role\": \"user\", \"content\": 5}]}", "content must be" },
        { "{\"messages\": [{\"role\": \"assistant\", \"tool_calls\": [{\"function\": "
          "{\"name\": \"f\", \"arguments\": \"[1]\"}}]}]}", "must be a JSON object" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int32_t *ids;
        rm_err err = { "" };
        int n = rm_chat_render_json(t, RM_CHAT_XTML, cases[k].conv, strlen(cases[k].conv), &ids, &err);
        CHECKF(n == -1 && strstr(err.msg, cases[k].want), "case %zu: n=%d \"%s\"", k, n, err.msg);
    }
    rm_tokenizer_free(t);
}

/* ---- the streaming splitter ---- */

typedef struct sink { char text[3][1024]; size_t n[3]; int calls; } sink;

static void on_text(void *ud, int chan, const char *s, size_t n)
{
    sink *k = ud;
    k->calls++;
    if (chan < 1 || chan > 2 || k->n[chan] + n >= sizeof k->text[0]) return;
    memcpy(k->text[chan] + k->n[chan], s, n);
    k->n[chan] += n;
    k->text[chan][k->n[chan]] = 0;
}

/* Feeds the ids of text, one id per byte when bytewise is set (every byte is
 * a rank), else its BPE ids. Returns the last feed's result. */
static int feed_text(rm_chat_stream *s, const rm_tokenizer *t, const char *text, int bytewise)
{
    int r = 0;
    if (bytewise) {
        for (const char *p = text; *p; p++) {
            int32_t *ids;
            int n = rm_tokenizer_encode(t, p, 1, 0, &ids, NULL);
            for (int i = 0; i < n; i++) r = rm_chat_stream_feed(s, ids[i]);
            free(ids);
        }
        return r;
    }
    int32_t *ids;
    int n = rm_tokenizer_encode(t, text, strlen(text), 0, &ids, NULL);
    for (int i = 0; i < n; i++) r = rm_chat_stream_feed(s, ids[i]);
    free(ids);
    return r;
}

static int feed_id(rm_chat_stream *s, const rm_tokenizer *t, const char *special)
{
    return rm_chat_stream_feed(s, rm_tokenizer_special_id(t, special));
}

TEST(chat_stream_xtml_channels)
{
    rm_tokenizer *t = fixture_tok();
    REQUIRE(t);
    for (int bytewise = 0; bytewise < 2; bytewise++) {
        sink k = { 0 };
        rm_chat_stream *s = rm_chat_stream_new(t, RM_CHAT_XTML, 1, on_text, &k);
        REQUIRE(s);
        CHECK(feed_text(s, t, "Let me think: 你好 😀.", bytewise) == 0);
        feed_id(s, t, "<|close|>");
        feed_text(s, t, "think", bytewise);         /* tag names arrive as text tokens */
        feed_id(s, t, "<|sep|>");
        feed_id(s, t, "<|open|>");
        feed_text(s, t, "response", bytewise);
        feed_id(s, t, "<|sep|>");
        feed_text(s, t, "Answer: «ok» <b>", bytewise);
        feed_id(s, t, "<|close|>");
        feed_text(s, t, "response", bytewise);
        feed_id(s, t, "<|sep|>");
        feed_id(s, t, "<|close|>");
        feed_text(s, t, "message", bytewise);
        feed_id(s, t, "<|sep|>");
        CHECK(feed_id(s, t, "<|end_of_msg|>") == 1);
        CHECK(feed_text(s, t, "after the end", bytewise) == 1);
        CHECK(!strcmp(k.text[RM_CHAN_REASONING], "Let me think: 你好 😀."));
        CHECK(!strcmp(k.text[RM_CHAN_ANSWER], "Answer: «ok» <b>"));
        rm_chat_stream_free(s);
    }
    rm_tokenizer_free(t);
}

/* A character split over tokens reaches the callback only when complete. */
TEST(chat_stream_utf8_split_across_tokens)
{
    rm_tokenizer *t = fixture_tok();
    REQUIRE(t);
    sink k = { 0 };
    rm_chat_stream *s = rm_chat_stream_new(t, RM_CHAT_XTML, 0, on_text, &k);
    REQUIRE(s);
    const unsigned char zh[] = { 0xE4, 0xBD, 0xA0 };
    for (int i = 0; i < 3; i++) {
        rm_chat_stream_feed(s, zh[i]);              /* ranks 0..255 are the bytes */
        CHECK(k.n[RM_CHAN_ANSWER] == (i == 2 ? 3u : 0u));
    }
    /* an unfinished character at a channel switch or at the end is U+FFFD */
    rm_chat_stream_feed(s, 0xE4);
    rm_chat_stream_feed(s, 0xBD);
    feed_id(s, t, "<|open|>");
    feed_text(s, t, "tools", 0);
    feed_id(s, t, "<|sep|>");
    feed_text(s, t, "get_weather Paris", 0);        /* tools block: not shown */
    feed_id(s, t, "<|close|>");
    feed_text(s, t, "tools", 0);
    feed_id(s, t, "<|sep|>");
    rm_chat_stream_feed(s, 0xFF);                   /* invalid byte */
    rm_chat_stream_feed(s, 0xF0);
    rm_chat_stream_finish(s);
    CHECK(!strcmp(k.text[RM_CHAN_ANSWER], "你\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"));
    CHECK(k.n[RM_CHAN_REASONING] == 0);
    rm_chat_stream_free(s);
    rm_tokenizer_free(t);
}

TEST(chat_stream_stops)
{
    rm_tokenizer *t = fixture_tok();
    REQUIRE(t);
    sink k = { 0 };
    rm_chat_stream *s = rm_chat_stream_new(t, RM_CHAT_XTML, 0, on_text, &k);
    CHECK(feed_text(s, t, "a", 0) == 0);
    CHECK(feed_id(s, t, "[EOS]") == 1);
    rm_chat_stream_free(s);
    s = rm_chat_stream_new(t, RM_CHAT_XTML, 0, on_text, &k);
    rm_chat_stream_add_stop(s, 2825);
    CHECK(rm_chat_stream_feed(s, 2824) == 0);       /* other specials: hidden, no stop */
    CHECK(rm_chat_stream_feed(s, 2825) == 1);
    rm_chat_stream_free(s);
    CHECK(!strcmp(k.text[RM_CHAN_ANSWER], "a"));
    rm_tokenizer_free(t);
}

TEST(chat_stream_im_think_markers)
{
    rm_tokenizer *t = im_tok();
    REQUIRE(t);
    for (int mode = 0; mode < 3; mode++) {
        sink k = { 0 };
        rm_chat_stream *s = rm_chat_stream_new(t, RM_CHAT_IM, 0, on_text, &k);
        REQUIRE(s);
        if (mode == 0) {                            /* markers as special ids */
            feed_id(s, t, "<think>");
            feed_text(s, t, "hmm <i> 2<3", 0);
            feed_id(s, t, "</think>");
            feed_text(s, t, "Yes. <", 0);
        } else {                                    /* markers as text, split */
            feed_text(s, t, "<think>hmm <i> 2<3</think>Yes. <", mode == 2);
        }
        CHECK(feed_id(s, t, "<|im_end|>") == 1);
        CHECKF(!strcmp(k.text[RM_CHAN_REASONING], "hmm <i> 2<3"), "mode %d: \"%s\"", mode,
               k.text[RM_CHAN_REASONING]);
        CHECKF(!strcmp(k.text[RM_CHAN_ANSWER], "Yes. <"), "mode %d: \"%s\"", mode, k.text[RM_CHAN_ANSWER]);
        rm_chat_stream_free(s);
    }
    /* a held-back "</thi" that turns out not to be a marker is shown */
    sink k = { 0 };
    rm_chat_stream *s = rm_chat_stream_new(t, RM_CHAT_IM, 1, on_text, &k);
    feed_text(s, t, "a</thi", 1);
    CHECK(!strcmp(k.text[RM_CHAN_REASONING], "a"));
    feed_text(s, t, "s>b", 1);
    rm_chat_stream_finish(s);
    CHECK(!strcmp(k.text[RM_CHAN_REASONING], "a</this>b"));
    rm_chat_stream_free(s);
    rm_tokenizer_free(t);
}
