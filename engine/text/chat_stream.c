/* chat_stream.c — splitting generated token ids into reasoning and answer
 * text as they arrive, without ever showing control markers.
 *
 * K3 XTML: the prompt ends inside <|open|>think<|sep|> (or response), and
 * the model writes …<|close|>think<|sep|><|open|>response<|sep|>…
 * <|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>. Markers are
 * special ids, but the tag name between <|open|>/<|close|> and <|sep|> comes
 * as ordinary tokens, possibly several: it is collected and never shown. Text
 * in the think channel is reasoning, everything else the answer, except the
 * tools block: tool calls are structured data, not prose, so the block goes
 * to the tool-call parser (toolcall.c) when the caller takes tool calls
 * (rm_chat_stream_on_tool), and the message ends where the block ends; else
 * it is dropped.
 *
 * im format (Kimi-Linear, K2): reasoning, when a model has it, sits between
 * <think> and </think>, which may be special ids or plain text split over
 * several tokens; plain-text markers are recognised by holding back any text
 * tail that could still become one (as vLLM's
 * vllm/reasoning/kimi_k2_reasoning_parser.py splits them). A tool-calls
 * section goes to the tool-call parser, or is dropped, as in XTML.
 *
 * Bytes reach the callback as complete UTF-8 (a character split over tokens
 * is held until it is whole; invalid bytes become U+FFFD). The message ends
 * at the format's end-of-message id (<|end_of_msg|> or <|im_end|>), [EOS],
 * or any id added with rm_chat_stream_add_stop.
 */
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "text/tokenizer_int.h"
#include "text/toolcall.h"

#define MAX_STOPS 8
#define HEADER_MAX 256
#define CHAN_DROP 0

static const char *const im_markers[] = { "<think>", "</think>", "<|tool_calls_section_begin|>",
                                          "<|tool_call_section_begin|>" };
#define N_IM_MARKERS 4
#define HOLD_MAX 32             /* longer than any plain-text marker */

struct rm_chat_stream {
    const rm_tokenizer *t;
    rm_chat_format f;
    rm_chat_text_fn fn;
    void *ud;
    int chan;                   /* RM_CHAN_REASONING, RM_CHAN_ANSWER or CHAN_DROP */
    int ended;
    int32_t stops[MAX_STOPS];
    int nstops;
    /* XTML tag header between <|open|>/<|close|> and <|sep|> */
    int32_t open_id, close_id, sep_id;
    int in_header, header_close;
    char header[HEADER_MAX];
    size_t nheader;
    /* im: text that may be the start of a marker */
    char hold[HOLD_MAX];
    size_t nhold;
    rm_utf8_stream u8;
    /* tool calls: where they go, and the parser of the open block */
    rm_tool_fn tool_fn;
    void *tool_ud;
    tool_parser *tools;
};

/* Hands n bytes of text to the current channel, as complete UTF-8. */
static void emit(rm_chat_stream *s, const char *p, size_t n, int flush)
{
    char buf[512];
    while (n > 0 || flush) {
        size_t k = n > 128 ? 128 : n;           /* 3 * (128 + 4) fits in buf */
        size_t o = rm_utf8_stream_feed(&s->u8, p, k, buf, sizeof buf, flush && k == n);
        if (o && s->chan != CHAN_DROP) s->fn(s->ud, s->chan, buf, o);
        p += k;
        n -= k;
        if (n == 0) break;
    }
}

static void set_channel(rm_chat_stream *s, int chan)
{
    if (chan == s->chan) return;
    emit(s, "", 0, 1);                          /* an unfinished character ends here */
    s->chan = chan;
}

static void add_stop(rm_chat_stream *s, int32_t id)
{
    if (id >= 0 && s->nstops < MAX_STOPS) s->stops[s->nstops++] = id;
}

rm_chat_stream *rm_chat_stream_new(const rm_tokenizer *t, rm_chat_format f,
                                   int starts_in_think, rm_chat_text_fn fn, void *ud)
{
    rm_chat_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->t = t;
    s->f = f;
    s->fn = fn;
    s->ud = ud;
    s->chan = starts_in_think ? RM_CHAN_REASONING : RM_CHAN_ANSWER;
    s->open_id = rm_tokenizer_special_id(t, "<|open|>");
    s->close_id = rm_tokenizer_special_id(t, "<|close|>");
    s->sep_id = rm_tokenizer_special_id(t, "<|sep|>");
    add_stop(s, rm_tokenizer_special_id(t, f == RM_CHAT_XTML ? "<|end_of_msg|>" : "<|im_end|>"));
    add_stop(s, rm_tokenizer_special_id(t, "[EOS]"));
    return s;
}

void rm_chat_stream_add_stop(rm_chat_stream *s, int32_t id) { add_stop(s, id); }

void rm_chat_stream_on_tool(rm_chat_stream *s, rm_tool_fn fn, void *ud)
{
    s->tool_fn = fn;
    s->tool_ud = ud;
}

void rm_chat_stream_free(rm_chat_stream *s)
{
    if (s) tool_parser_free(s->tools);
    free(s);
}

/* A tools block opens: to the parser when the caller takes tool calls
 * (out of memory: dropped), else dropped. */
static void open_tools(rm_chat_stream *s)
{
    set_channel(s, CHAN_DROP);
    if (s->tool_fn && !s->tools) s->tools = tool_parser_new(s->f, s->tool_fn, s->tool_ud);
}

void rm_chat_stream_open_tools(rm_chat_stream *s, const char *prime, size_t n)
{
    open_tools(s);
    if (s->tools && n && tool_parser_feed(s->tools, prime, n)) s->ended = 1;
}

/* A complete XTML tag header: switch channels on think/response/tools. */
static void apply_header(rm_chat_stream *s)
{
    size_t n = 0;
    while (n < s->nheader && s->header[n] != ' ') n++;
    const char *h = s->header;
#define IS(tag) (n == sizeof tag - 1 && !memcmp(h, tag, n))
    if (!s->header_close) {
        if (IS("think")) set_channel(s, RM_CHAN_REASONING);
        else if (IS("response")) set_channel(s, RM_CHAN_ANSWER);
        else if (IS("tools")) open_tools(s);
    } else if (IS("think") || IS("tools")) {
        set_channel(s, RM_CHAN_ANSWER);
    }
#undef IS
}

/* A marker of the im format (text or special): switch channels. */
static void im_marker(rm_chat_stream *s, const char *m, size_t n)
{
#define IS(tag) (n == sizeof tag - 1 && !memcmp(m, tag, n))
    if (IS("<think>")) set_channel(s, RM_CHAN_REASONING);
    else if (IS("</think>") || IS("<|tool_calls_section_end|>")) set_channel(s, RM_CHAN_ANSWER);
    else if (IS("<|tool_calls_section_begin|>") || IS("<|tool_call_section_begin|>")) open_tools(s);
#undef IS
}

static void flush_hold(rm_chat_stream *s)
{
    if (s->nhold) emit(s, s->hold, s->nhold, 0);
    s->nhold = 0;
}

/* im text: emit it, turning plain-text markers into channel switches and
 * holding back a tail that is a proper prefix of a marker; text after a
 * tools section begins goes to the tool-call parser. Returns 1 when that
 * ended the message. */
static int im_text(rm_chat_stream *s, const char *p, size_t n)
{
    while (n > 0) {
        /* the held bytes plus as much new text as could complete a marker */
        char buf[2 * HOLD_MAX];
        size_t take = n < HOLD_MAX ? n : HOLD_MAX, bl = s->nhold + take;
        memcpy(buf, s->hold, s->nhold);
        memcpy(buf + s->nhold, p, take);
        /* earliest position in buf where a marker starts or a prefix of one ends buf */
        size_t at = bl, mlen = 0;
        for (size_t i = 0; i < bl && at == bl; i++) {
            if (buf[i] != '<') continue;
            for (int k = 0; k < N_IM_MARKERS; k++) {
                size_t ml = strlen(im_markers[k]), have = bl - i < ml ? bl - i : ml;
                if (!memcmp(buf + i, im_markers[k], have)) {
                    at = i;
                    if (have == ml) { mlen = ml; break; }
                }
            }
        }
        if (at == bl) {                          /* no marker: all of it is text */
            emit(s, buf, bl, 0);
            s->nhold = 0;
            p += take; n -= take;
            continue;
        }
        emit(s, buf, at, 0);
        if (mlen) {
            im_marker(s, buf + at, mlen);
            size_t used = at + mlen - s->nhold;  /* new bytes consumed */
            s->nhold = 0;
            p += used; n -= used;
            if (s->tools) return tool_parser_feed(s->tools, p, n);
            continue;
        }
        /* a possible marker start at 'at': hold it if all input is used */
        if (take == n) {
            s->nhold = bl - at;
            memmove(s->hold, buf + at, s->nhold);
            return 0;
        }
        /* more input follows: hold and retry with it */
        s->nhold = bl - at;
        memmove(s->hold, buf + at, s->nhold);
        p += take; n -= take;
    }
    return 0;
}

int rm_chat_stream_feed(rm_chat_stream *s, int32_t id)
{
    if (s->ended) return 1;
    for (int i = 0; i < s->nstops; i++)
        if (id == s->stops[i]) {
            rm_chat_stream_finish(s);
            s->ended = 1;
            return 1;
        }
    size_t n;
    const char *b = rm_tokenizer_token_bytes(s->t, id, &n);
    if (!b) return 0;
    if (s->tools) {                             /* the block's end is the message's */
        if (!(id >= tokenizer_ranks(s->t) ? tool_parser_special(s->tools, b, n) : tool_parser_feed(s->tools, b, n)))
            return 0;
        s->ended = 1;
        return 1;
    }
    if (id >= tokenizer_ranks(s->t)) {       /* a special: never shown */
        flush_hold(s);
        if (s->f == RM_CHAT_XTML) {
            if (id == s->open_id || id == s->close_id) {
                s->in_header = 1;
                s->header_close = id == s->close_id;
                s->nheader = 0;
            } else if (id == s->sep_id && s->in_header) {
                s->in_header = 0;
                apply_header(s);
            }
        } else {
            im_marker(s, b, n);
        }
        return 0;
    }
    if (s->in_header) {
        size_t k = n < HEADER_MAX - s->nheader ? n : HEADER_MAX - s->nheader;
        memcpy(s->header + s->nheader, b, k);
        s->nheader += k;
        return 0;
    }
    if (s->f == RM_CHAT_IM) {
        if (!im_text(s, b, n)) return 0;
        s->ended = 1;
        return 1;
    }
    emit(s, b, n, 0);
    return 0;
}

void rm_chat_stream_finish(rm_chat_stream *s)
{
    if (s->ended) return;
    if (s->tools) tool_parser_finish(s->tools);
    flush_hold(s);
    s->in_header = 0;                           /* an unfinished tag is not text */
    emit(s, "", 0, 1);
}
