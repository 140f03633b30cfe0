/* fuzz_sse.c — libFuzzer target for the endpoint's stream reader
 * (ui/sse.c): the input is a server's byte stream, cut into network reads
 * by the first byte's seed, framed into events, each event read as a chunk
 * and its text put through the think splitter (the first byte's low bit:
 * thinking asked for). Nothing may crash or leak; every piece of text must
 * be valid UTF-8 on a valid channel, and the text of the content never
 * shows a think marker (unless the stream holds one of the markers that are
 * dropped, whose removal may join the text around it into one). A reasoning
 * field's text is the server's and shown as it is: a model may well write
 * "<think>" in its reasoning, so it is kept apart from that check. */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include "ui/sse.h"

typedef struct sink {
    rm_buf chan[3];             /* the content's text, through the think splitter */
    rm_buf field;               /* the reasoning fields' text */
    int in_field;
    ui_sse_chunk chunk;
    ui_sse_think think;
} sink;

static void on_text(void *ud, int chan, const char *s, size_t n)
{
    sink *k = ud;
    if ((chan != RM_CHAN_REASONING && chan != RM_CHAN_ANSWER) || n == 0) abort();
    utf8proc_int32_t cp;
    for (size_t i = 0; i < n;) {
        utf8proc_ssize_t l = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (l <= 0) abort();
        i += (size_t)l;
    }
    if (rm_buf_add(k->in_field ? &k->field : &k->chan[chan], s, n)) abort();
}

static int on_event(void *ud, const char *event, const char *data, size_t len)
{
    sink *k = ud;
    rm_err err;
    if (strlen(event) >= 32) abort();
    if (ui_sse_chunk_parse(data, len, &k->chunk, &err)) return 0;
    ui_sse_chunk *c = &k->chunk;
    if (c->has_routes && (c->stats.route_layers > RM_MAX_ROUTE_LAYERS || c->stats.route_k > RM_MAX_TOPK)) abort();
    if (c->routes_b64.len) {
        /* SGLang's base64 routes with small shapes, so random bytes fit them */
        static const ui_route_shape sh[2] = { { "a", "aa", 3, 1, 2, 5 }, { "b", "bb", 2, 0, 3, 7 } };
        static rm_token_stats st;
        char why[160];
        if (ui_sse_routes_b64(c->routes_b64.p, c->routes_b64.len, sh, 2, c->content.p, (long long)c->usage.prompt_tokens,
                              &st, why, sizeof why)) {
            if (st.route_layers > 2 || st.route_k > 3) abort();
            for (int l = 0; l < st.route_layers; l++)
                for (int i = 0; i < st.route_k; i++)
                    if (st.route_ids[l][i] < 0 || st.route_ids[l][i] >= st.num_experts) abort();
        } else if (!why[0]) {
            abort();
        }
    }
    if (c->reasoning_field) ui_sse_think_parsed(&k->think, on_text, k);
    k->in_field = 1;
    if (c->reasoning.len) on_text(k, RM_CHAN_REASONING, c->reasoning.p, c->reasoning.len);
    k->in_field = 0;
    if (c->content.len && ui_sse_think_feed(&k->think, c->content.p, c->content.len, on_text, k)) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1) return 0;
    static sink k;
    memset(&k, 0, sizeof k);
    ui_sse sse = { 0 };
    rm_err err;
    ui_sse_think_init(&k.think, data[0] & 1);
    unsigned seed = data[0];
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    while (n) {
        seed = seed * 1103515245u + 12345u;
        size_t cut = 1 + (seed >> 16) % 64;
        if (cut > n) cut = n;
        if (ui_sse_feed(&sse, p, cut, on_event, &k, &err)) break;
        p += cut;
        n -= cut;
    }
    ui_sse_end(&sse, on_event, &k, &err);
    ui_sse_think_end(&k.think, on_text, &k);
    static const char *const markers[] = { "<think>", "</think>", "<|open|>think<|sep|>", "<|close|>think<|sep|>" };
    int dropped = memmem(data, size, "<|", 2) != NULL;
    for (int c = 1; c < 3 && !dropped; c++)
        for (size_t m = 0; m < 4; m++)
            if (k.chan[c].len && memmem(k.chan[c].p, k.chan[c].len, markers[m], strlen(markers[m]))) abort();
    for (int c = 0; c < 3; c++) rm_buf_free(&k.chan[c]);
    rm_buf_free(&k.field);
    ui_sse_chunk_free(&k.chunk);
    ui_sse_think_free(&k.think);
    ui_sse_free(&sse);
    return 0;
}
