/* test_chat_stream.c — text/chat_stream.c, the streaming splitter of
 * generated ids into reasoning and answer: XTML channel switches, tag names
 * and UTF-8 characters split across tokens, tools blocks, stops; im <think>
 * markers as specials and as plain text split across tokens. */
#include <string.h>
#include "tests/unit/test.h"
#include "tests/unit/engine/helpers.h"

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
    rm_tokenizer *t = fixture_tokenizer();
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
    rm_tokenizer *t = fixture_tokenizer();
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
    rm_tokenizer *t = fixture_tokenizer();
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
    rm_tokenizer *t = im_tokenizer();
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
