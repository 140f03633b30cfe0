/* sse.h — reading a streamed OpenAI chat completion as real servers send
 * it (the endpoint source, ui/source_endpoint.c, and through it
 * `remora run --endpoint`).
 *
 * Three layers, each usable alone (and fuzzed together,
 * tests/fuzz/fuzz_sse.c):
 *   - the event framer (ui_sse_feed): server-sent events as the HTML
 *     standard defines them: lines ending in LF, CRLF or CR, split anywhere
 *     across network reads; "data:" lines joined by LF; comment lines (":")
 *     and unknown fields ignored; a blank line ends an event;
 *   - the chunk reader (ui_sse_chunk_parse): one event's JSON. The servers
 *     differ: reasoning in delta.reasoning_content (SGLang, llama-server,
 *     Moonshot, remora serve) or delta.reasoning (current vLLM); null fields
 *     (SGLang sends them) are absent ones; finish_reason on the last text
 *     chunk (vLLM) or in a chunk of its own (SGLang); the usage chunk with
 *     choices: [] and reasoning tokens under
 *     completion_tokens_details.reasoning_tokens (vLLM, remora serve) or at
 *     the top of usage (SGLang); {"error": ...} in mid-stream; remora
 *     serve's per-token figures (the "remora" object, read with the
 *     engine's one mapping, rm_token_stats_parse); routed experts as nested
 *     arrays [tokens][layers][k] (vLLM's routed_experts, SGLang's
 *     sglext.routed_experts, in a choice or at the top), or SGLang's
 *     base64 string of int32 [tokens][layers][k], kept for the caller,
 *     who knows the model (ui_sse_routes_b64);
 *   - the think splitter (ui_sse_think_*): a server without a reasoning
 *     parser leaves the model's think markers in the content as plain text
 *     ("<think>", "</think>", or K3's "<|open|>think<|sep|>" and
 *     "<|close|>think<|sep|>"); they are found across chunk boundaries by
 *     holding back any tail that could still become one, as the engine's
 *     chat stream splitter does for token text.
 */
#ifndef REMORA_UI_SSE_H
#define REMORA_UI_SSE_H

#include <stddef.h>
#include <stdint.h>
#include "engine.h"

/* ---- events ------------------------------------------------------------- */

#define UI_SSE_EVENT_MAX (64u << 20)    /* bytes of one event's data */

typedef struct ui_sse {
    rm_buf line;            /* the line being read */
    rm_buf data;            /* the event being read: its data lines */
    int    have_data;       /* a data field was seen since the last event */
    int    after_cr;        /* the last byte was CR: an LF now ends nothing */
    char   event[32];       /* its "event:" field, or "" */
    uint64_t fed;           /* bytes fed before the current ui_sse_feed call */
    uint64_t consumed;      /* bytes of the stream up to the end of the event being
                             * delivered (the network bytes to count for it: a
                             * server's burst of chunks arrives in one read) */
} ui_sse;

/* Called once per event that had data, with the data (NUL-terminated) and
 * the event field ("" when none). A non-zero return stops the feed. */
typedef int (*ui_sse_fn)(void *ud, const char *event, const char *data, size_t len);

/* Feeds n bytes; returns 0, the callback's non-zero return, or -1 when an
 * event is larger than UI_SSE_EVENT_MAX or memory runs out (*err says). */
int  ui_sse_feed(ui_sse *s, const char *p, size_t n, ui_sse_fn fn, void *ud, rm_err *err);
/* The stream ended: an event whose blank line never came is delivered. */
int  ui_sse_end(ui_sse *s, ui_sse_fn fn, void *ud, rm_err *err);
void ui_sse_free(ui_sse *s);

/* ---- chunks ------------------------------------------------------------- */

typedef struct ui_sse_usage {
    int have;
    long long prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens;
} ui_sse_usage;

typedef struct ui_sse_chunk {
    int    done;                /* "data: [DONE]" */
    rm_buf reasoning, content;  /* this chunk's text, either may be empty */
    int    reasoning_field;     /* the server sent a reasoning field (it parses reasoning) */
    char   finish[32];          /* finish_reason, "" when not given */
    ui_sse_usage usage;
    int    has_stats;           /* remora serve's figures for this chunk */
    rm_token_stats stats;
    int    has_routes;          /* routed experts: stats.route_* of the last token */
    rm_buf routes_b64;          /* SGLang's base64 routed experts as they came; empty when none */
    char   error[512];          /* an {"error": ...} chunk's message, "" when none */
    int    error_status;        /* its code when numeric, else 0 */
} ui_sse_chunk;

/* Reads one event's data into c (text buffers are reset, not freed, so a
 * chunk can be reused). Returns 0, or -1 when the data is not a JSON
 * object or a known field has the wrong type (*err names it). */
int  ui_sse_chunk_parse(const char *data, size_t len, ui_sse_chunk *c, rm_err *err);
void ui_sse_chunk_free(ui_sse_chunk *c);

/* A model's routed-expert shape, for SGLang's base64 routed experts, which
 * come without one: int32 [tokens][layers][k] over every layer of the
 * model (num_hidden_layers, the dense ones too), k the experts per token. */
typedef struct ui_route_shape {
    const char *name;           /* "Kimi K3", for messages */
    const char *id_hint;        /* a model id holding it (any case) names this model: "k3" */
    int layers, first_moe, k, experts;
} ui_route_shape;

/* Decodes n characters of SGLang's base64 routed experts into st's route
 * fields: the last token's choices at each MoE layer. The shape is the
 * model's whose id_hint the model id holds, else the one the token count
 * (tokens > 0: the prompt's and completion's) matches, else the only one
 * the length is a multiple of. Returns 1, or 0 with why (cap bytes) said:
 * not base64, not whole int32 values, no shape or more than one fits, an
 * expert id outside the model's; st is then untouched. */
int ui_sse_routes_b64(const char *b64, size_t n, const ui_route_shape *shapes, int nshapes, const char *model,
                      long long tokens, rm_token_stats *st, char *why, size_t cap);

/* The message of an error body ({"error": {"message"}}, {"error": "..."},
 * {"message"}, FastAPI's {"detail"}), or NULL: at most cap bytes into buf. */
const char *ui_sse_error_message(const char *body, size_t len, char *buf, size_t cap);

/* ---- think markers in plain content ------------------------------------ */

typedef struct ui_sse_think {
    int    chan;            /* RM_CHAN_REASONING, RM_CHAN_ANSWER, or 0: not known yet */
    rm_buf pending;         /* text while chan is 0 */
    char   hold[32];        /* a tail that may be the start of a marker */
    size_t nhold;
} ui_sse_think;

/* undecided = 1 when the reply may start inside the think channel (thinking
 * was asked for): content is then held until a marker or a reasoning field
 * says where it belongs, or the reply ends (it was the answer). Otherwise
 * content is answer text until an opening marker. */
void ui_sse_think_init(ui_sse_think *t, int undecided);
/* Content text: what is known goes to fn (channel, text) now. -1 out of
 * memory. */
int  ui_sse_think_feed(ui_sse_think *t, const char *p, size_t n, rm_chat_text_fn fn, void *ud);
/* The server sent reasoning in a field of its own: content is the answer. */
void ui_sse_think_parsed(ui_sse_think *t, rm_chat_text_fn fn, void *ud);
/* The reply ended: held text goes out (undecided text as the answer). */
void ui_sse_think_end(ui_sse_think *t, rm_chat_text_fn fn, void *ud);
void ui_sse_think_free(ui_sse_think *t);

#endif
