/* test_toolcall.c — text/toolcall.c, the tool-call parser, and its place in
 * chat_stream.c: K3 tools blocks and im tool-call sections fed whole, split
 * in two at every byte and byte by byte; typed arguments as one JSON
 * object; malformed calls; no marker text in the answer. */
#include <string.h>
#include <jansson.h>
#include "tests/unit/test.h"
#include "tests/unit/engine/helpers.h"
#include "text/toolcall.h"

/* The events as one line: "B0:name A0:{...} E0 D2" (ARGS pieces joined). */
typedef struct log { char s[4096]; size_t n; int last; char text[2][1024]; size_t tn[2]; } log_t;

static void put(log_t *l, const char *s, size_t n)
{
    if (l->n + n >= sizeof l->s) return;
    memcpy(l->s + l->n, s, n);
    l->n += n;
    l->s[l->n] = 0;
}

static void on_tool(void *ud, const rm_tool_event *e)
{
    log_t *l = ud;
    char h[64];
    if (e->kind == RM_TOOL_ARGS && l->last == RM_TOOL_ARGS) { put(l, e->text, e->len); return; }
    static const char k[] = "?BAEDX";
    snprintf(h, sizeof h, "%s%c%d", l->n ? " " : "", k[e->kind], e->index);
    put(l, h, strlen(h));
    if (e->kind == RM_TOOL_BEGIN || e->kind == RM_TOOL_ARGS || e->kind == RM_TOOL_BAD) {
        put(l, ":", 1);
        put(l, e->text, e->len);
    }
    l->last = e->kind;
}

/* Feeds text in pieces: whole (step 0), split at `step` once (step > 0),
 * or byte by byte (step < 0). Returns the feed's last result. */
static int feed_split(tool_parser *p, const char *text, int step)
{
    size_t n = strlen(text);
    if (step < 0) {
        int r = 0;
        for (size_t i = 0; i < n; i++) r = tool_parser_feed(p, text + i, 1);
        return r;
    }
    size_t cut = step > 0 && (size_t)step < n ? (size_t)step : n;
    int r = tool_parser_feed(p, text, cut);
    return cut < n ? tool_parser_feed(p, text + cut, n - cut) : r;
}

static const char xtml_block[] =
    "<|open|>call tool=\"get_weather\" index=\"1\"<|sep|>"
    "<|open|>argument key=\"city\" type=\"string\"<|sep|>Pa\"ris <b> 😀\n<|close|>argument<|sep|>"
    "<|open|>argument key=\"days\" type=\"number\"<|sep|> 3 <|close|>argument<|sep|>"
    "<|open|>argument key=\"opts\" type=\"object\"<|sep|>{\"a\": [1, true, null]}<|close|>argument<|sep|>"
    "<|close|>call<|sep|>\n"
    "<|open|>call tool=\"a&amp;&quot;b\" index=\"2\"<|sep|><|close|>call<|sep|>"
    "<|open|>call tool=\"raw\" index=\"3\"<|sep|><|open|>json type=\"object\"<|sep|>{\"x\": 1}"
    "<|close|>json<|sep|><|close|>call<|sep|>"
    "<|close|>tools<|sep|>";
static const char xtml_want[] =
    "B0:get_weather A0:{\"city\":\"Pa\\\"ris <b> 😀\\n\",\"days\":3,\"opts\":{\"a\":[1,true,null]}} E0 "
    "B1:a&\"b A1:{} E1 B2:raw A2:{\"x\":1} E2 D3";

TEST(toolcall_xtml_every_split)
{
    size_t n = strlen(xtml_block);
    for (int step = -1; step <= (int)n; step++) {
        log_t l = { 0 };
        tool_parser *p = tool_parser_new(RM_CHAT_XTML, on_tool, &l);
        REQUIRE(p);
        CHECKF(feed_split(p, xtml_block, step) == 1, "step %d", step);
        tool_parser_finish(p);
        CHECKF(!strcmp(l.s, xtml_want), "step %d: %s", step, l.s);
        tool_parser_free(p);
    }
}

/* Every arguments text is one JSON object that parses. */
TEST(toolcall_arguments_are_json)
{
    log_t l = { 0 };
    tool_parser *p = tool_parser_new(RM_CHAT_XTML, on_tool, &l);
    REQUIRE(p);
    feed_split(p, xtml_block, -1);
    tool_parser_free(p);
    const char *a = strstr(l.s, "A0:") + 3, *e = strstr(a, " E0");
    json_t *v = json_loadb(a, (size_t)(e - a), 0, NULL);
    CHECK(json_is_object(v) && json_integer_value(json_object_get(v, "days")) == 3);
    CHECK(!strcmp(json_string_value(json_object_get(v, "city")), "Pa\"ris <b> 😀\n"));
    json_decref(v);
}

TEST(toolcall_im_every_split)
{
    static const char block[] = "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
                                "{\"city\": \"Paris\"}<|tool_call_end|><|tool_call_begin|> lookup:1"
                                "<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>";
    static const char want[] = "B0:get_weather A0:{\"city\":\"Paris\"} E0 B1:lookup A1:{} E1 D2";
    for (int step = -1; step <= (int)sizeof block - 1; step++) {
        log_t l = { 0 };
        tool_parser *p = tool_parser_new(RM_CHAT_IM, on_tool, &l);
        REQUIRE(p);
        CHECK(feed_split(p, block, step) == 1);
        CHECKF(!strcmp(l.s, want), "step %d: %s", step, l.s);
        tool_parser_free(p);
    }
}

/* A malformed call ends the block with its text, markers left out; the
 * calls before it stay whole. */
TEST(toolcall_malformed)
{
    static const struct { const char *in; const char *want; } cases[] = {
        { "hello<|close|>tools<|sep|>", "X0:hello" },
        { "<|open|>call tool=\"f\" index=\"1\"<|sep|><|close|>call<|sep|><|open|>call index=\"2\"<|sep|>",
          "B0:f A0:{} E0 X1:call index=\"2\"" },
        { "<|open|>call tool=\"f\" index=\"1\"<|sep|><|open|>argument key=\"n\" type=\"number\"<|sep|>12x"
          "<|close|>argument<|sep|>", "B0:f A0:{\"n\": X0:call tool=\"f\" index=\"1\"argument key=\"n\" type=\"number\"12xargument" },
        { "<|open|>call tool=\"f\" index=\"1\"<|sep|><|open|>argument key=\"s\"<|sep|>abc",
          "B0:f A0:{\"s\":\"abc X0:call tool=\"f\" index=\"1\"argument key=\"s\"abc" },
        { "<|open|>weird<|sep|>", "X0:weird" },
        { "<|sep|>", "X0:" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        log_t l = { 0 };
        tool_parser *p = tool_parser_new(RM_CHAT_XTML, on_tool, &l);
        REQUIRE(p);
        feed_split(p, cases[i].in, -1);
        tool_parser_finish(p);
        CHECKF(!strcmp(l.s, cases[i].want), "case %zu: %s", i, l.s);
        CHECKF(!strstr(l.s, "<|"), "case %zu: a marker in %s", i, l.s);
        tool_parser_free(p);
    }
}

static void on_text(void *ud, int chan, const char *s, size_t n)
{
    log_t *l = ud;
    int c = chan == RM_CHAN_REASONING ? 0 : 1;
    if (l->tn[c] + n >= sizeof l->text[0]) return;
    memcpy(l->text[c] + l->tn[c], s, n);
    l->tn[c] += n;
    l->text[c][l->tn[c]] = 0;
}

/* Feeds text as ids with special strings as special ids, one id per byte
 * of plain text when bytewise is set. Returns the last result. */
static int feed_ids(rm_chat_stream *s, const rm_tokenizer *t, const char *text, int bytewise)
{
    int r = 0;
    while (*text && !r) {
        const char *m = strstr(text, "<|");
        const char *e = m ? strstr(m, "|>") : NULL;
        size_t plain = m ? (size_t)(m - text) : strlen(text);
        if (m && e && plain == 0) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(e + 2 - m), m);
            int id = rm_tokenizer_special_id(t, name);
            if (id >= 0) { r = rm_chat_stream_feed(s, id); text = e + 2; continue; }
            plain = (size_t)(e + 2 - m);    /* not a special here: plain text */
        }
        for (size_t i = 0; i < plain && !r;) {
            size_t k = bytewise ? 1 : plain - i;
            int32_t *ids;
            int n = rm_tokenizer_encode(t, text + i, k, 0, &ids, NULL);
            for (int j = 0; j < n && !r; j++) r = rm_chat_stream_feed(s, ids[j]);
            free(ids);
            i += k;
        }
        text += plain;
    }
    return r;
}

TEST(toolcall_in_chat_stream_xtml)
{
    rm_tokenizer *t = fixture_tokenizer();
    REQUIRE(t);
    char reply[4096];
    snprintf(reply, sizeof reply, "I should look.<|close|>think<|sep|><|open|>response<|sep|>Looking."
             "<|close|>response<|sep|><|open|>tools<|sep|>%s<|close|>message<|sep|>", xtml_block);
    for (int bytewise = 0; bytewise < 2; bytewise++) {
        log_t l = { 0 };
        rm_chat_stream *s = rm_chat_stream_new(t, RM_CHAT_XTML, 1, on_text, &l);
        REQUIRE(s);
        rm_chat_stream_on_tool(s, on_tool, &l);
        CHECK(feed_ids(s, t, reply, bytewise) == 1);        /* the block's end ends the message */
        rm_chat_stream_finish(s);
        CHECK(!strcmp(l.text[0], "I should look."));
        CHECK(!strcmp(l.text[1], "Looking."));
        CHECKF(!strcmp(l.s, xtml_want), "%s", l.s);
        rm_chat_stream_free(s);
    }
    /* without a tool callback the block is dropped and the reply goes on */
    log_t l = { 0 };
    rm_chat_stream *s = rm_chat_stream_new(t, RM_CHAT_XTML, 0, on_text, &l);
    REQUIRE(s);
    CHECK(feed_ids(s, t, "<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|close|>call<|sep|>"
                         "<|close|>tools<|sep|>after", 0) == 0);
    rm_chat_stream_finish(s);
    CHECK(!strcmp(l.text[1], "after") && l.n == 0);
    rm_chat_stream_free(s);
    rm_tokenizer_free(t);
}

/* The im format's section markers as plain text (Kimi-Linear's fixture
 * tokenizer has no specials for them), split at every byte. */
TEST(toolcall_in_chat_stream_im)
{
    rm_tokenizer *t = im_tokenizer();
    REQUIRE(t);
    static const char reply[] = "Sure. <|tool_calls_section_begin|><|tool_call_begin|>functions.f:0"
                                "<|tool_call_argument_begin|>{\"q\": \"x<y\"}<|tool_call_end|>"
                                "<|tool_calls_section_end|><|im_end|>";
    for (int bytewise = 0; bytewise < 2; bytewise++) {
        log_t l = { 0 };
        rm_chat_stream *s = rm_chat_stream_new(t, RM_CHAT_IM, 0, on_text, &l);
        REQUIRE(s);
        rm_chat_stream_on_tool(s, on_tool, &l);
        CHECK(feed_ids(s, t, reply, bytewise) == 1);
        rm_chat_stream_finish(s);
        CHECKF(!strcmp(l.text[1], "Sure. "), "%s", l.text[1]);
        CHECKF(!strcmp(l.s, "B0:f A0:{\"q\":\"x<y\"} E0 D1"), "%s", l.s);
        rm_chat_stream_free(s);
    }
    rm_tokenizer_free(t);
}

/* A stop inside the block: the open call is malformed, nothing leaks. */
TEST(toolcall_cut_short_in_chat_stream)
{
    rm_tokenizer *t = fixture_tokenizer();
    REQUIRE(t);
    log_t l = { 0 };
    rm_chat_stream *s = rm_chat_stream_new(t, RM_CHAT_XTML, 0, on_text, &l);
    REQUIRE(s);
    rm_chat_stream_on_tool(s, on_tool, &l);
    CHECK(feed_ids(s, t, "<|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|><|end_of_msg|>", 0) == 1);
    rm_chat_stream_finish(s);
    CHECKF(!strcmp(l.s, "B0:f X0:call tool=\"f\" index=\"1\""), "%s", l.s);
    CHECK(l.tn[1] == 0);
    rm_chat_stream_free(s);
    rm_tokenizer_free(t);
}
