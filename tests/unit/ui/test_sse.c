/* test_sse.c — ui/sse.c: the event framer gives the same events whatever
 * the line endings (LF, CRLF, CR) and wherever the network cuts the bytes
 * (every split point of a stream); comments and unknown fields are
 * skipped, data lines join, an event past the limit is refused. The chunk
 * reader reads vLLM's and SGLang's chunks of a reasoning model (reasoning
 * vs reasoning_content, null fields, finish_reason with or apart from
 * text, both placements of reasoning_tokens), error chunks, remora serve's
 * stats object (the engine's mapping, every field back) and routed
 * experts; wrong types are refused by name. The think splitter finds
 * markers cut at every byte, holds undecided text, and never shows a
 * marker. */
#include <string.h>
#include "tests/unit/test.h"
#include "ui/sse.h"

typedef struct events { rm_buf all; int n; } events;

static int collect(void *ud, const char *event, const char *data, size_t len)
{
    events *e = ud;
    e->n++;
    return rm_buf_addf(&e->all, "[%s|%.*s]", event, (int)len, data);
}

static void feed_split(const char *s, size_t cut, events *e)
{
    ui_sse sse = { 0 };
    rm_err err = { "" };
    size_t n = strlen(s);
    CHECK(ui_sse_feed(&sse, s, cut, collect, e, &err) == 0);
    CHECK(ui_sse_feed(&sse, s + cut, n - cut, collect, e, &err) == 0);
    CHECK(ui_sse_end(&sse, collect, e, &err) == 0);
    ui_sse_free(&sse);
}

TEST(ui_sse_frames_events_at_every_split_and_line_ending)
{
    static const char *const streams[] = {
        ": keep-alive\n\ndata: {\"a\":1}\n\nevent: error\ndata: one\ndata: two\n\nid: 7\nretry: 10\nfoo\ndata:x\n\n",
        ": keep-alive\r\n\r\ndata: {\"a\":1}\r\n\r\nevent: error\r\ndata: one\r\ndata: two\r\n\r\nid: 7\r\nretry: 10\r\nfoo\r\ndata:x\r\n\r\n",
        ": keep-alive\r\rdata: {\"a\":1}\r\revent: error\rdata: one\rdata: two\r\rid: 7\rretry: 10\rfoo\rdata:x\r\r",
    };
    const char *want = "[|{\"a\":1}][error|one\ntwo][|x]";
    for (size_t s = 0; s < sizeof streams / sizeof streams[0]; s++) {
        for (size_t cut = 0; cut <= strlen(streams[s]); cut++) {
            events e = { { 0 }, 0 };
            feed_split(streams[s], cut, &e);
            CHECKF(e.all.p && !strcmp(e.all.p, want), "stream %zu cut %zu: %s", s, cut, e.all.p ? e.all.p : "(none)");
            rm_buf_free(&e.all);
        }
    }
    /* a last event without its blank line still counts */
    events e = { { 0 }, 0 };
    feed_split("data: [DONE]", 3, &e);
    CHECK(e.n == 1 && !strcmp(e.all.p, "[|[DONE]]"));
    rm_buf_free(&e.all);
}

/* The offset of each event's end, whatever the reads: the endpoint counts
 * an event's network bytes by it. (The end is the line ending that ended
 * the event: the LF of a last CRLF counts with the next one.) */
typedef struct ends { ui_sse *sse; uint64_t at[8]; int n; } ends;

static int note_end(void *ud, const char *event, const char *data, size_t len)
{
    (void)event, (void)data, (void)len;
    ends *e = ud;
    if (e->n < 8) e->at[e->n] = e->sse->consumed;
    e->n++;
    return 0;
}

TEST(ui_sse_says_where_each_event_ends)
{
    const char *s = "data: a\n\n: ping\n\ndata: bb\r\n\r\ndata: c\n\ndata: tail";
    size_t n = strlen(s);
    for (size_t cut = 0; cut <= n; cut++) {
        ui_sse sse = { 0 };
        rm_err err = { "" };
        ends e = { &sse, { 0 }, 0 };
        CHECK(ui_sse_feed(&sse, s, cut, note_end, &e, &err) == 0);
        CHECK(ui_sse_feed(&sse, s + cut, n - cut, note_end, &e, &err) == 0);
        CHECK(ui_sse_end(&sse, note_end, &e, &err) == 0);
        CHECKF(e.n == 4 && e.at[0] == 9 && e.at[1] == 28 && e.at[2] == 38 && e.at[3] == n,
               "cut %zu: %d events ending at %llu %llu %llu %llu", cut, e.n, (unsigned long long)e.at[0],
               (unsigned long long)e.at[1], (unsigned long long)e.at[2], (unsigned long long)e.at[3]);
        ui_sse_free(&sse);
    }
}

TEST(ui_sse_refuses_an_event_past_the_limit)
{
    ui_sse sse = { 0 };
    rm_err err = { "" };
    events e = { { 0 }, 0 };
    static char block[1 << 20];
    memset(block, 'x', sizeof block);
    CHECK(ui_sse_feed(&sse, "data: ", 6, collect, &e, &err) == 0);
    int rc = 0;
    for (int i = 0; i < 80 && !rc; i++) rc = ui_sse_feed(&sse, block, sizeof block, collect, &e, &err);
    CHECK(rc == -1 && strstr(err.msg, "larger than 64 MB"));
    ui_sse_free(&sse);
    rm_buf_free(&e.all);
}

static void parse(const char *json, ui_sse_chunk *c)
{
    rm_err err = { "" };
    int rc = ui_sse_chunk_parse(json, strlen(json), c, &err);
    CHECKF(rc == 0, "%s: %s", json, err.msg);
}

static int same(const rm_buf *b, const char *s) { return b->len == strlen(s) && (!b->len || !memcmp(b->p, s, b->len)); }

TEST(ui_sse_reads_vllm_and_sglang_chunks)
{
    ui_sse_chunk c = { 0 };
    /* vLLM: reasoning in delta.reasoning, None fields left out */
    parse("{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"Add \"},"
          "\"logprobs\":null,\"finish_reason\":null}]}", &c);
    CHECK(same(&c.reasoning, "Add ") && c.content.len == 0 && c.reasoning_field && !c.finish[0]);
    /* vLLM: finish_reason on the last text chunk */
    parse("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\".\"},\"finish_reason\":\"stop\",\"stop_reason\":null}]}", &c);
    CHECK(same(&c.content, ".") && !strcmp(c.finish, "stop") && !c.reasoning_field);
    /* vLLM's usage chunk */
    parse("{\"choices\":[],\"usage\":{\"prompt_tokens\":31,\"total_tokens\":51,\"completion_tokens\":20,"
          "\"prompt_tokens_details\":{\"cached_tokens\":16},\"completion_tokens_details\":{\"reasoning_tokens\":14}}}", &c);
    CHECK(c.usage.have && c.usage.prompt_tokens == 31 && c.usage.completion_tokens == 20 &&
          c.usage.cached_tokens == 16 && c.usage.reasoning_tokens == 14);
    /* SGLang: every field, null ones included */
    parse("{\"choices\":[{\"index\":0,\"delta\":{\"role\":null,\"content\":null,\"reasoning_content\":\"tens\","
          "\"tool_calls\":null},\"logprobs\":null,\"finish_reason\":null,\"matched_stop\":null}],\"usage\":null}", &c);
    CHECK(same(&c.reasoning, "tens") && c.content.len == 0 && !c.usage.have);
    /* SGLang: the finish in a chunk of its own, reasoning_tokens at the top of usage */
    parse("{\"choices\":[{\"index\":0,\"delta\":{\"role\":null,\"content\":null,\"reasoning_content\":null},"
          "\"finish_reason\":\"length\",\"matched_stop\":null}],\"usage\":null}", &c);
    CHECK(!c.reasoning.len && !c.content.len && !c.reasoning_field && !strcmp(c.finish, "length"));
    parse("{\"choices\":[],\"usage\":{\"prompt_tokens\":31,\"completion_tokens\":20,\"prompt_tokens_details\":null,"
          "\"reasoning_tokens\":14}}", &c);
    CHECK(c.usage.reasoning_tokens == 14 && c.usage.cached_tokens == 0);
    /* a whole reply (a server that did not stream) */
    parse("{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"42\","
          "\"reasoning_content\":\"sum\"},\"finish_reason\":\"stop\"}]}", &c);
    CHECK(same(&c.content, "42") && same(&c.reasoning, "sum") && !strcmp(c.finish, "stop"));
    /* [DONE], with the blanks some servers leave */
    parse(" [DONE] ", &c);
    CHECK(c.done);
    ui_sse_chunk_free(&c);
}

TEST(ui_sse_reads_errors_and_refuses_wrong_types)
{
    ui_sse_chunk c = { 0 };
    parse("{\"error\":{\"message\":\"CUDA out of memory\",\"type\":\"InternalServerError\",\"code\":500}}", &c);
    CHECK(!strcmp(c.error, "CUDA out of memory") && c.error_status == 500);
    parse("{\"error\":\"overloaded\"}", &c);
    CHECK(!strcmp(c.error, "overloaded"));
    static const char *const bad[][2] = {
        { "[1,2]", "not a JSON object" },
        { "{\"choices\":{}}", "choices must be an array" },
        { "{\"choices\":[{\"delta\":{\"content\":5}}]}", "choices[0].delta.content must be a string" },
        { "{\"choices\":[{\"delta\":{\"reasoning\":[]}}]}", "choices[0].delta.reasoning must be a string" },
        { "{\"choices\":[{\"delta\":{},\"finish_reason\":1}]}", "choices[0].finish_reason must be a string" },
        { "{\"usage\":{\"prompt_tokens\":-1}}", "usage.prompt_tokens must be a count" },
        { "{\"remora\":{\"seconds\":\"x\"}}", "seconds must be a number" },
        { "{\"choices\":[{\"delta\":{},\"routed_experts\":[[[1,2],5]]}]}", "routed_experts layer 1" },
        { "{\"choices\":[", "not JSON" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rm_err err = { "" };
        CHECKF(ui_sse_chunk_parse(bad[i][0], strlen(bad[i][0]), &c, &err) == -1 && strstr(err.msg, bad[i][1]),
               "%s: %s", bad[i][0], err.msg);
    }
    char buf[128];
    CHECK(ui_sse_error_message("{\"object\":\"error\",\"message\":\"m\"}", 32, buf, sizeof buf) &&
          !strcmp(buf, "m"));
    CHECK(ui_sse_error_message("{\"detail\":\"Not Found\"}", 22, buf, sizeof buf) && !strcmp(buf, "Not Found"));
    CHECK(!ui_sse_error_message("<html>", 6, buf, sizeof buf));
    ui_sse_chunk_free(&c);
}

TEST(ui_sse_reads_remora_stats_with_the_engines_mapping)
{
    static rm_token_stats st;
    memset(&st, 0, sizeof st);
    st.kind = RM_REC_TOKEN;
    st.token_index = 7;
    st.token_id = 4242;
    st.seconds = 0.125;
    st.phase_seconds[RM_PHASE_EXPERTS] = 0.0625;
    st.bytes_expert_read = 123456789;
    st.expert_hits = 30;
    st.spec_drafted = 9;
    st.route_layers = 2;
    st.route_k = 3;
    st.num_experts = 64;
    int16_t ids[2][3] = { { 1, 5, 63 }, { 0, 2, 7 } };
    for (int l = 0; l < 2; l++) memcpy(st.route_ids[l], ids[l], sizeof ids[l]);
    rm_buf j = { 0 };
    REQUIRE(rm_buf_adds(&j, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"4\"}}],\"remora\":") == 0);
    REQUIRE(rm_token_stats_json(&st, &j) == 0);
    REQUIRE(rm_buf_adds(&j, "}") == 0);
    rm_err err = { "" };
    static ui_sse_chunk c;
    REQUIRE(ui_sse_chunk_parse(j.p, j.len, &c, &err) == 0);
    CHECK(c.has_stats && same(&c.content, "4"));
    CHECK(!memcmp(&c.stats, &st, sizeof st));
    rm_buf_free(&j);
    /* routed experts as nested arrays: the last token's */
    const char *r = "{\"choices\":[{\"index\":0,\"delta\":{},\"routed_experts\":[[[9,9],[9,9]],[[3,1],[60,-1]]]}]}";
    REQUIRE(ui_sse_chunk_parse(r, strlen(r), &c, &err) == 0);
    CHECK(c.has_routes && c.stats.route_layers == 2 && c.stats.route_k == 2 && c.stats.num_experts == 61 &&
          c.stats.route_ids[0][0] == 3 && c.stats.route_ids[1][0] == 60 && c.stats.route_ids[1][1] == -1);
    const char *s = "{\"choices\":[],\"sglext\":{\"routed_experts\":[[[4]]]}}";
    REQUIRE(ui_sse_chunk_parse(s, strlen(s), &c, &err) == 0);
    CHECK(c.has_routes && c.stats.route_layers == 1 && c.stats.route_ids[0][0] == 4);
    ui_sse_chunk_free(&c);
}

/* SGLang's base64 routed experts (int32 LE [tokens][layers][k]) with two
 * shapes: the model id names one, else the token count or the length. */
static size_t b64_of(const int32_t *v, size_t n, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = (const unsigned char *)v;
    size_t bytes = n * 4, o = 0;
    for (size_t i = 0; i < bytes; i += 3) {
        uint32_t w = (uint32_t)p[i] << 16 | (i + 1 < bytes ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < bytes ? p[i + 2] : 0);
        out[o++] = a[w >> 18 & 63];
        out[o++] = a[w >> 12 & 63];
        out[o++] = i + 1 < bytes ? a[w >> 6 & 63] : '=';
        out[o++] = i + 2 < bytes ? a[w & 63] : '=';
    }
    out[o] = 0;
    return o;
}

TEST(ui_sse_reads_sglang_base64_routes)
{
    /* A: 3 layers (layer 0 dense), top-2 of 10 (6 values a token); B: 2
     * layers, top-4 of 6 (8 a token) */
    static const ui_route_shape sh[2] = { { "Model A", "alpha", 3, 1, 2, 10 }, { "Model B", "beta", 2, 0, 4, 6 } };
    static rm_token_stats st;
    static char text[4096];
    char why[160];
    int32_t v[60];
    for (int i = 0; i < 60; i++) v[i] = i % 6;
    /* 24 values: 4 tokens of A or 3 of B: the id picks, or the token count (5 = 4 run + 1) */
    size_t n = b64_of(v, 24, text);
    memset(&st, 0, sizeof st);
    CHECK(ui_sse_routes_b64(text, n, sh, 2, "org/Alpha-2", 0, &st, why, sizeof why) == 1);
    CHECK(st.route_layers == 2 && st.route_k == 2 && st.num_experts == 10);
    CHECK(st.route_ids[0][0] == v[20] && st.route_ids[1][1] == v[23]);     /* the last token's MoE layers */
    memset(&st, 0, sizeof st);
    CHECK(ui_sse_routes_b64(text, n, sh, 2, "served", 5, &st, why, sizeof why) == 1 && st.route_k == 2);
    CHECK(ui_sse_routes_b64(text, n, sh, 2, "served", 3, &st, why, sizeof why) == 1 && st.route_k == 4);
    memset(&st, 0, sizeof st);
    CHECK(ui_sse_routes_b64(text, n, sh, 2, "served", 0, &st, why, sizeof why) == 0);
    CHECKF(strstr(why, "24 values fit more than one known model's layers x experts per token (Model A 3 x 2, Model B 2 x 4)") != NULL, "%s", why);
    CHECK(st.route_layers == 0);
    /* 16 values: B only (2 tokens) */
    n = b64_of(v, 16, text);
    CHECK(ui_sse_routes_b64(text, n, sh, 2, "served", 0, &st, why, sizeof why) == 1 && st.route_layers == 2 &&
          st.route_k == 4 && st.num_experts == 6 && st.route_ids[0][0] == v[8] && st.route_ids[1][3] == v[15]);
    /* the id names A, whose rows the length does not fit */
    CHECK(ui_sse_routes_b64(text, n, sh, 2, "ALPHA", 0, &st, why, sizeof why) == 0);
    CHECKF(strstr(why, "16 values are not whole tokens of Model A's 3 layers x 2 experts") != NULL, "%s", why);
    /* 7 values fit neither */
    n = b64_of(v, 7, text);
    CHECK(ui_sse_routes_b64(text, n, sh, 2, "served", 0, &st, why, sizeof why) == 0 && strstr(why, "7 values fit no"));
    /* an id outside the model's experts; a negative one */
    v[15] = 6;
    n = b64_of(v, 16, text);
    CHECK(ui_sse_routes_b64(text, n, sh, 2, "beta", 0, &st, why, sizeof why) == 0);
    CHECKF(strstr(why, "expert id 6 at layer 1 is not one of Model B's 6 experts") != NULL, "%s", why);
    v[15] = -1;
    n = b64_of(v, 16, text);
    CHECK(ui_sse_routes_b64(text, n, sh, 2, "beta", 0, &st, why, sizeof why) == 0 && strstr(why, "expert id -1"));
    /* not base64: cut, a bad character, padding inside; bytes not int32 */
    CHECK(ui_sse_routes_b64(text, n - 1, sh, 2, "beta", 0, &st, why, sizeof why) == 0 && strstr(why, "not a multiple of 4"));
    text[5] = '*';
    CHECK(ui_sse_routes_b64(text, n, sh, 2, "beta", 0, &st, why, sizeof why) == 0 && !strcmp(why, "not base64"));
    CHECK(ui_sse_routes_b64("QQ==QUFB", 8, sh, 2, "beta", 0, &st, why, sizeof why) == 0 && !strcmp(why, "not base64"));
    CHECK(ui_sse_routes_b64("QUJD", 4, sh, 2, "beta", 0, &st, why, sizeof why) == 0 &&
          strstr(why, "3 bytes, not a whole number of int32 values"));
    /* the chunk keeps the string for the caller */
    static ui_sse_chunk c;
    rm_err err = { "" };
    const char *j = "{\"choices\":[],\"sglext\":{\"routed_experts\":\"QUJD\"}}";
    REQUIRE(ui_sse_chunk_parse(j, strlen(j), &c, &err) == 0);
    CHECK(!c.has_routes && c.routes_b64.len == 4 && !memcmp(c.routes_b64.p, "QUJD", 4));
    const char *k = "{\"choices\":[]}";
    REQUIRE(ui_sse_chunk_parse(k, strlen(k), &c, &err) == 0);
    CHECK(c.routes_b64.len == 0);
    ui_sse_chunk_free(&c);
}

typedef struct split { rm_buf chan[3]; } split;

static void on_text(void *ud, int channel, const char *text, size_t len)
{
    split *s = ud;
    CHECK(channel == RM_CHAN_REASONING || channel == RM_CHAN_ANSWER);
    CHECK(rm_buf_add(&s->chan[channel], text, len) == 0);
}

/* Feeds text cut at a and b; checks the two channels. */
static void think_case(const char *text, int undecided, size_t a, size_t b, const char *reasoning,
                       const char *answer)
{
    ui_sse_think t = { 0 };
    split s = { { { 0 } } };
    size_t n = strlen(text);
    if (a > n) a = n;
    if (b > n) b = n;
    if (b < a) b = a;
    ui_sse_think_init(&t, undecided);
    CHECK(ui_sse_think_feed(&t, text, a, on_text, &s) == 0);
    CHECK(ui_sse_think_feed(&t, text + a, b - a, on_text, &s) == 0);
    CHECK(ui_sse_think_feed(&t, text + b, n - b, on_text, &s) == 0);
    ui_sse_think_end(&t, on_text, &s);
    CHECKF(same(&s.chan[RM_CHAN_REASONING], reasoning) && same(&s.chan[RM_CHAN_ANSWER], answer),
           "'%s' cut %zu,%zu: reasoning '%s' answer '%s'", text, a, b,
           s.chan[RM_CHAN_REASONING].p ? s.chan[RM_CHAN_REASONING].p : "",
           s.chan[RM_CHAN_ANSWER].p ? s.chan[RM_CHAN_ANSWER].p : "");
    ui_sse_think_free(&t);
    for (int i = 0; i < 3; i++) rm_buf_free(&s.chan[i]);
}

TEST(ui_sse_splits_think_markers_in_plain_content)
{
    static const struct { const char *text; int undecided; const char *reasoning, *answer; } cases[] = {
        { "<think>Let me add.</think>It is 42.", 0, "Let me add.", "It is 42." },
        { "<think>Let me add.</think>It is 42.", 1, "Let me add.", "It is 42." },
        { "Let me add.</think>It is 42.", 1, "Let me add.", "It is 42." },
        { "Twelve plus thirty.<|close|>think<|sep|><|open|>response<|sep|>It is 42.<|close|>response<|sep|>"
          "<|close|>message<|sep|>", 1, "Twelve plus thirty.", "It is 42." },
        { "<|open|>think<|sep|>a<|close|>think<|sep|>b", 0, "a", "b" },
        { "No markers at all, a < b and </thin.", 1, "", "No markers at all, a < b and </thin." },
        { "No markers at all.", 0, "", "No markers at all." },
        { "1 <thin", 0, "", "1 <thin" },
        { "x</think>", 0, "", "x" },      /* a stray close in the answer is dropped, text stays */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = strlen(cases[i].text);
        for (size_t a = 0; a <= n; a += 1)
            for (size_t b = a; b <= n; b += 3)
                think_case(cases[i].text, cases[i].undecided, a, b, cases[i].reasoning, cases[i].answer);
    }
}

TEST(ui_sse_think_holds_undecided_text_until_told)
{
    ui_sse_think t = { 0 };
    split s = { { { 0 } } };
    ui_sse_think_init(&t, 1);
    CHECK(ui_sse_think_feed(&t, "The answer", 10, on_text, &s) == 0);
    CHECK(!s.chan[RM_CHAN_ANSWER].len && !s.chan[RM_CHAN_REASONING].len);     /* held */
    ui_sse_think_parsed(&t, on_text, &s);      /* the server parses reasoning: content is the answer */
    CHECK(same(&s.chan[RM_CHAN_ANSWER], "The answer"));
    CHECK(ui_sse_think_feed(&t, " is 42", 6, on_text, &s) == 0);
    CHECK(same(&s.chan[RM_CHAN_ANSWER], "The answer is 42"));
    ui_sse_think_end(&t, on_text, &s);
    CHECK(same(&s.chan[RM_CHAN_ANSWER], "The answer is 42") && !s.chan[RM_CHAN_REASONING].len);
    ui_sse_think_free(&t);
    for (int i = 0; i < 3; i++) rm_buf_free(&s.chan[i]);
}
