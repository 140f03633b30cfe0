/* anthropic.c — the Anthropic Messages API for `remora serve` (serve.h):
 * POST /v1/messages (whole and streamed) and /v1/messages/count_tokens, so
 * that Claude Code and the @anthropic-ai/sdk clients can use a local model.
 *
 * A request is translated into the conversation JSON that openai.c renders
 * (the same renderer, queue and worker): system (a string or text blocks)
 * becomes a system message; a user message's tool_result blocks become
 * role "tool" messages (before its text, as they answer the assistant
 * before it); an assistant message's thinking blocks become its
 * reasoning_content, its text blocks its content, its tool_use blocks its
 * tool_calls; tools[].input_schema becomes the function's parameters;
 * tool_choice any / tool / none become required / the named function /
 * none (a forced call opens the tools block in the prompt);
 * thinking {type: enabled, budget_tokens} turns thinking on with an effort
 * from the budget, {type: disabled} off; stop_sequences, temperature,
 * top_p, max_tokens (required, as in the API) go where openai.c puts them.
 * Unknown fields are ignored, as the API's clients send many (metadata,
 * cache_control, top_k, service_tier...); blocks this model cannot read
 * (image, document) are refused.
 *
 * A thinking block's signature is a keyed 64-bit FNV-1a of its text, the
 * key drawn at start-up: a thinking block sent back with a signature that
 * is not this server's (another model's, or edited) is not rendered, as
 * reasoning the model did not write would mislead it.
 *
 * The stream is Anthropic's sequence of named events: message_start and a
 * ping, then per block content_block_start, its deltas (thinking_delta
 * then a signature_delta; text_delta; input_json_delta) and
 * content_block_stop; message_delta with stop_reason (end_turn,
 * max_tokens, stop_sequence, tool_use) and the usage; message_stop. While
 * the prompt is processed, a ping goes out every PING_S seconds as its
 * layers go by, and in place of the keep-alive comment (--keep-alive) when
 * nothing has gone out for that long. Usage
 * counts as the API does: input_tokens the prompt tokens computed,
 * cache_read_input_tokens those reused. Errors use the API's envelope
 * {"type": "error", "error": {"type", "message"}} with its error types.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <jansson.h>
#include "serve.h"

#define PING_S 2.0

#define BAD(e, param, ...) serve_fail(e, 400, "invalid_request_error", "invalid_value", param, __VA_ARGS__)
#define OOM(e) serve_fail(e, 500, "server_error", NULL, NULL, "out of memory")

enum { BLOCK_NONE, BLOCK_THINKING, BLOCK_TEXT, BLOCK_TOOL };

/* ---- thinking signatures ----------------------------------------------- */

static uint64_t sig_key;
static pthread_once_t sig_once = PTHREAD_ONCE_INIT;

static void sig_init(void)
{
    if (getrandom(&sig_key, sizeof sig_key, 0) != (ssize_t)sizeof sig_key) sig_key = (uint64_t)(rm_now() * 1e9);
}

static uint64_t sig_start(void)
{
    pthread_once(&sig_once, sig_init);
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < 8; i++) h = (h ^ ((sig_key >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    return h;
}

static uint64_t sig_add(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static void sig_text(uint64_t h, char out[32]) { snprintf(out, 32, "remora-%016llx", (unsigned long long)h); }

/* Whether sig is this server's signature of text. */
static int sig_ours(const char *text, size_t n, const char *sig)
{
    char want[32];
    sig_text(sig_add(sig_start(), text, n), want);
    return sig && !strcmp(sig, want);
}

/* ---- requests ------------------------------------------------------------ */

/* A text block's text appended to out, after sep when out is not empty. */
static int add_text(const json_t *b, const char *where, const char *sep, rm_buf *out, serve_error *e)
{
    json_t *t = json_object_get(b, "text");
    if (!json_is_string(t)) return BAD(e, where, "%s.text must be a string", where);
    if ((out->len && rm_buf_adds(out, sep)) || rm_buf_add(out, json_string_value(t), json_string_length(t)))
        return OOM(e);
    return 0;
}

/* A block other than text: its type (NULL when it has none) and its name
 * in errors ("messages.2.content.1"). */
typedef int block_fn(json_t *b, const char *type, const char *w, void *ud, serve_error *e);

/* A message's content: a string, appended to text, or an array of content
 * blocks, whose text blocks are appended to text (joined by sep) and whose
 * other blocks go to other(.., ud); stops at the first failure. */
static int each_block(const json_t *c, const char *where, const char *sep, rm_buf *text, block_fn *other,
                      void *ud, serve_error *e)
{
    if (json_is_string(c)) return rm_buf_add(text, json_string_value(c), json_string_length(c)) ? OOM(e) : 0;
    if (!json_is_array(c)) return BAD(e, where, "%s must be a string or an array of content blocks", where);
    size_t i;
    json_t *b;
    json_array_foreach(c, i, b) {
        const char *type = json_string_value(json_object_get(b, "type"));
        char w[96];
        snprintf(w, sizeof w, "%s.%zu", where, i);
        int rc = type && !strcmp(type, "text") ? add_text(b, w, sep, text, e) : other(b, type, w, ud, e);
        if (rc) return rc;
    }
    return 0;
}

static int refuse_block(json_t *b, const char *type, const char *w, void *ud, serve_error *e)
{
    (void)b, (void)type, (void)ud;
    return serve_fail(e, 400, "invalid_request_error", "unsupported_value", w, "%s: only text blocks are supported here", w);
}

/* Text of a string or of an array of text blocks (others refused, named). */
static int text_of(const json_t *c, const char *where, rm_buf *out, serve_error *e)
{
    return each_block(c, where, "", out, refuse_block, NULL, e);
}

static json_t *buf_string(rm_buf *b) { return json_stringn(b->p ? b->p : "", b->len); }

/* The system prompt, or a system message among the messages (Claude Code
 * sends those): a string or text blocks. */
static int system_message(const json_t *c, const char *where, json_t *msgs, serve_error *e)
{
    rm_buf t = { 0 };
    int rc = text_of(c, where, &t, e);
    if (!rc && t.len && json_array_append_new(msgs, json_pack("{s:s,s:o}", "role", "system", "content", buf_string(&t))))
        rc = OOM(e);
    rm_buf_free(&t);
    return rc;
}

/* A user message's tool_result block, as a "tool" message of msgs (ud). */
static int user_block(json_t *b, const char *type, const char *w, void *ud, serve_error *e)
{
    json_t *msgs = ud;
    if (!type || strcmp(type, "tool_result"))
        return serve_fail(e, 400, "invalid_request_error", "unsupported_value", w,
                          "%s: a %s block is not supported (text and tool_result are)", w, type ? type : "typeless");
    const char *id = json_string_value(json_object_get(b, "tool_use_id"));
    if (!id) return BAD(e, w, "%s.tool_use_id must be a string", w);
    rm_buf r = { 0 };
    json_t *content = json_object_get(b, "content");
    if (content && !json_is_null(content) && text_of(content, w, &r, e)) { rm_buf_free(&r); return -1; }
    if (json_is_true(json_object_get(b, "is_error")) && !r.len && rm_buf_adds(&r, "error")) {}
    json_t *m = json_pack("{s:s,s:s,s:o}", "role", "tool", "tool_call_id", id, "content", buf_string(&r));
    rm_buf_free(&r);
    return !m || json_array_append_new(msgs, m) ? OOM(e) : 0;
}

/* A user message: tool results as "tool" messages, then its text. */
static int user_message(const json_t *c, const char *where, json_t *msgs, serve_error *e)
{
    rm_buf text = { 0 };
    int rc = each_block(c, where, "\n", &text, user_block, msgs, e);
    if (!rc && (text.len || json_is_string(c))) {
        json_t *m = json_pack("{s:s,s:o}", "role", "user", "content", buf_string(&text));
        if (!m || json_array_append_new(msgs, m)) rc = OOM(e);
    }
    rm_buf_free(&text);
    return rc;
}

/* What an assistant message's blocks other than text add up to. */
typedef struct assistant_parts {
    rm_buf  thinking;
    json_t *calls;
} assistant_parts;

/* An assistant message's thinking (this server's only) or tool_use block. */
static int assistant_block(json_t *b, const char *type, const char *w, void *ud, serve_error *e)
{
    assistant_parts *a = ud;
    if (type && !strcmp(type, "thinking")) {
        json_t *t = json_object_get(b, "thinking");
        if (!json_is_string(t)) return BAD(e, w, "%s.thinking must be a string", w);
        if (sig_ours(json_string_value(t), json_string_length(t), json_string_value(json_object_get(b, "signature"))) &&
            rm_buf_add(&a->thinking, json_string_value(t), json_string_length(t)))
            return OOM(e);
        return 0;
    }
    if (type && !strcmp(type, "redacted_thinking")) return 0;     /* another model's, unreadable */
    if (!type || strcmp(type, "tool_use"))
        return serve_fail(e, 400, "invalid_request_error", "unsupported_value", w,
                          "%s: a %s block is not supported in an assistant message", w, type ? type : "typeless");
    const char *id = json_string_value(json_object_get(b, "id"));
    const char *name = json_string_value(json_object_get(b, "name"));
    json_t *input = json_object_get(b, "input");
    if (!id || !name) return BAD(e, w, "%s: a tool_use block needs an id and a name", w);
    if (input && !json_is_null(input) && !json_is_object(input)) return BAD(e, w, "%s.input must be an object", w);
    json_t *call = json_pack("{s:s,s:s,s:{s:s,s:O}}", "id", id, "type", "function", "function", "name", name,
                             "arguments", input && !json_is_null(input) ? input : json_object());
    return !call || json_array_append_new(a->calls, call) ? OOM(e) : 0;
}

/* An assistant message: thinking (this server's only), text, tool_use. */
static int assistant_message(const json_t *c, const char *where, json_t *msgs, serve_error *e)
{
    rm_buf text = { 0 };
    assistant_parts a = { { 0 }, json_array() };
    int rc = a.calls ? each_block(c, where, "", &text, assistant_block, &a, e) : OOM(e);
    if (!rc) {
        json_t *m = json_pack("{s:s,s:o}", "role", "assistant", "content", buf_string(&text));
        if (m && a.thinking.len) json_object_set_new(m, "reasoning_content", buf_string(&a.thinking));
        if (m && json_array_size(a.calls)) json_object_set(m, "tool_calls", a.calls);
        if (!m || json_array_append_new(msgs, m)) rc = OOM(e);
    }
    json_decref(a.calls);
    rm_buf_free(&text);
    rm_buf_free(&a.thinking);
    return rc;
}

/* tools (custom tools: name, description, input_schema; server tools,
 * which have no schema, are left out) and tool_choice. */
static int tools_of(const json_t *o, json_t *conv, serve_req *r, serve_error *e)
{
    json_t *tools = json_object_get(o, "tools"), *out = json_array();
    if (!out) return OOM(e);
    if (tools && !json_is_null(tools) && !json_is_array(tools)) { json_decref(out); return BAD(e, "tools", "tools must be an array"); }
    size_t i;
    json_t *t;
    json_array_foreach(tools, i, t) {
        const char *name = json_string_value(json_object_get(t, "name"));
        json_t *schema = json_object_get(t, "input_schema");
        if (!name) { json_decref(out); return BAD(e, "tools", "tools.%zu.name must be a string", i); }
        if (!json_is_object(schema)) continue;
        json_t *fn = json_pack("{s:s,s:O}", "name", name, "parameters", schema);
        json_t *d = json_object_get(t, "description");
        if (fn && json_is_string(d)) json_object_set(fn, "description", d);
        if (!fn || json_array_append_new(out, json_pack("{s:s,s:o}", "type", "function", "function", fn))) {
            json_decref(out);
            return OOM(e);
        }
    }
    r->tools = json_array_size(out) > 0;
    if (r->tools) json_object_set(conv, "tools", out);
    json_t *tc = json_object_get(o, "tool_choice");
    const char *type = json_string_value(json_object_get(tc, "type"));
    if (tc && !json_is_null(tc) && !type) { json_decref(out); return BAD(e, "tool_choice", "tool_choice needs a type"); }
    r->one_call = json_is_true(json_object_get(tc, "disable_parallel_tool_use"));
    int rc = 0;
    if (!type || !strcmp(type, "auto")) {
    } else if (!strcmp(type, "none")) {
        json_object_set_new(conv, "tool_choice", json_string("none"));
        r->tools = 0;
    } else if (!strcmp(type, "any") && r->tools) {
        json_object_set_new(conv, "tool_choice", json_string("required"));
    } else if (!strcmp(type, "tool") && r->tools) {
        const char *name = json_string_value(json_object_get(tc, "name"));
        int known = 0;
        json_array_foreach(out, i, t) {
            const char *n = json_string_value(json_object_get(json_object_get(t, "function"), "name"));
            known |= n && name && !strcmp(n, name);
        }
        if (!known) rc = BAD(e, "tool_choice", "tool_choice.name must be one of the tools");
        else if (strlen(name) > 128 || strpbrk(name, "\"&<"))
            rc = BAD(e, "tool_choice", "tool_choice.name: a forced name must be at most 128 bytes without \", & or <");
        else json_object_set_new(conv, "tool_choice", json_pack("{s:s,s:{s:s}}", "type", "function", "function", "name", name));
    } else {
        rc = BAD(e, "tool_choice", "tool_choice.type must be auto, any, tool or none (any and tool need tools)");
    }
    json_decref(out);
    return rc;
}

/* thinking {type: enabled, budget_tokens}, {type: adaptive} or {type:
 * disabled}; without it, the server's default. The budget, or
 * output_config.effort, picks K3's effort. */
static int thinking_of(const serve_cfg *cfg, const json_t *o, json_t *conv, serve_error *e)
{
    int on = cfg->gen.think;
    const char *effort = cfg->gen.thinking_effort;
    json_t *th = json_object_get(o, "thinking");
    if (th && !json_is_null(th)) {
        const char *type = json_string_value(json_object_get(th, "type"));
        if (!json_is_object(th) || !type) return BAD(e, "thinking", "thinking must be an object with a type");
        if (!strcmp(type, "disabled")) on = 0;
        else if (!strcmp(type, "enabled") || !strcmp(type, "adaptive")) {
            on = 1;
            json_t *b = json_object_get(th, "budget_tokens");
            if (b && !json_is_integer(b)) return BAD(e, "thinking.budget_tokens", "thinking.budget_tokens must be an integer");
            json_int_t n = json_integer_value(b);
            if (b) effort = n <= 2048 ? "low" : n <= 8192 ? "medium" : n <= 32768 ? "high" : "max";
        } else {
            return BAD(e, "thinking", "thinking.type must be enabled, adaptive or disabled");
        }
    }
    const char *oe = json_string_value(json_object_get(json_object_get(o, "output_config"), "effort"));
    if (oe && (!strcmp(oe, "low") || !strcmp(oe, "medium") || !strcmp(oe, "high") || !strcmp(oe, "max"))) effort = oe;
    json_object_set_new(conv, "thinking", json_boolean(on));
    if (on && effort) json_object_set_new(conv, "thinking_effort", json_string(effort));
    return 0;
}

/* The conversation of a messages or count_tokens body. */
static json_t *conversation(const serve_cfg *cfg, const json_t *o, serve_req *r, serve_error *e)
{
    json_t *conv = json_object(), *msgs = json_array();
    if (!conv || !msgs || json_object_set_new(conv, "messages", msgs)) { json_decref(conv); OOM(e); return NULL; }
    int rc = 0;
    json_t *sys = json_object_get(o, "system");
    if (sys && !json_is_null(sys)) rc = system_message(sys, "system", msgs, e);
    json_t *in = json_object_get(o, "messages");
    if (!rc && (!json_is_array(in) || !json_array_size(in))) rc = BAD(e, "messages", "messages must be a non-empty array");
    size_t i;
    json_t *m = NULL;
    if (!rc) json_array_foreach(in, i, m) {
        char where[64];
        snprintf(where, sizeof where, "messages.%zu.content", i);
        const char *role = json_string_value(json_object_get(m, "role"));
        json_t *c = json_object_get(m, "content");
        if (!json_is_object(m) || !role || (strcmp(role, "user") && strcmp(role, "assistant") && strcmp(role, "system")))
            rc = BAD(e, "messages", "messages.%zu.role must be user, assistant or system", i);
        else if (!c) rc = BAD(e, where, "%s is missing", where);
        else if (!strcmp(role, "system")) rc = system_message(c, where, msgs, e);
        else rc = !strcmp(role, "user") ? user_message(c, where, msgs, e) : assistant_message(c, where, msgs, e);
        if (rc) break;
    }
    /* a last assistant message is a prefill the reply goes on from: not
     * rendered that way here, so refused rather than answered wrongly */
    if (!rc && json_is_object(m) && !strcmp(json_string_value(json_object_get(m, "role")) ?: "", "assistant"))
        rc = serve_fail(e, 400, "invalid_request_error", "unsupported_value", "messages",
                        "the last message must be a user message (assistant prefill is not supported)");
    if (!rc) rc = thinking_of(cfg, o, conv, e);
    if (!rc) rc = tools_of(o, conv, r, e);
    if (rc) { json_decref(conv); return NULL; }
    return conv;
}

/* What openai.c's common fields read, from the Anthropic names. */
static int common_of(const serve_cfg *cfg, const json_t *o, serve_req *r, serve_error *e)
{
    json_t *mt = json_object_get(o, "max_tokens");
    if (!mt) return BAD(e, "max_tokens", "max_tokens: Field required");
    json_t *c = json_object();
    if (!c) return OOM(e);
    static const char *const same[] = { "stream", "temperature", "top_p", "max_tokens", "remora" };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        json_t *v = json_object_get(o, same[i]);
        if (v) json_object_set(c, same[i], v);
    }
    json_t *ss = json_object_get(o, "stop_sequences");
    if (ss) json_object_set(c, "stop", ss);
    int rc = serve_parse_common(cfg, c, r, cfg->max_tokens, e);
    json_decref(c);
    if (rc && !strcmp(e->param, "stop")) snprintf(e->param, sizeof e->param, "stop_sequences");
    if (rc) snprintf(e->message + strlen(e->message), sizeof e->message - strlen(e->message), "%s",
                     !strcmp(e->param, "stop_sequences") ? " (stop_sequences)" : "");
    return rc;
}

int an_parse_messages(const serve_cfg *cfg, rm_session *s, const char *body, size_t len, serve_req *r, serve_error *e)
{
    json_t *o = serve_parse_body(r, &serve_anthropic, REQ_CHAT, body, len, e);
    if (!o) return -1;
    int rc = common_of(cfg, o, r, e);
    json_t *conv = rc ? NULL : conversation(cfg, o, r, e);
    if (!rc && !conv) rc = -1;
    if (!rc) rc = serve_render(cfg, s, conv, r, e);
    const char *model = json_string_value(json_object_get(o, "model"));
    snprintf(r->an.model, sizeof r->an.model, "%s", model ? model : cfg->served_name);
    json_decref(conv);
    json_decref(o);
    if (rc) serve_req_free(r);
    else serve_new_id(r, "msg_");
    return rc;
}

int an_count_tokens(const serve_cfg *cfg, rm_session *s, const char *body, size_t len, rm_buf *out, serve_error *e)
{
    serve_req r;
    json_t *o = serve_parse_body(&r, NULL, 0, body, len, e);
    if (!o) return -1;
    json_t *conv = conversation(cfg, o, &r, e);
    int rc = conv ? 0 : -1;
    /* the count is the prompt's, as a request with this body would be */
    if (!rc && !(rc = serve_render(cfg, s, conv, &r, e)))
        rc = rm_buf_addf(out, "{\"input_tokens\":%d}", r.prompt.n) ? OOM(e) : 0;
    serve_req_free(&r);
    json_decref(conv);
    json_decref(o);
    return rc;
}

/* ---- replies ------------------------------------------------------------- */

static const char *stop_reason(int finish)
{
    switch (finish) {
    case SERVE_FIN_LENGTH: return "max_tokens";
    case SERVE_FIN_STRING: return "stop_sequence";
    case SERVE_FIN_TOOLS: return "tool_use";
    default: return "end_turn";     /* a malformed call comes back as text */
    }
}

static json_t *usage(const rm_reply_info *info)
{
    return json_pack("{s:i,s:i,s:i,s:i}", "input_tokens", info->prompt_tokens - info->cached_tokens,
                     "cache_read_input_tokens", info->cached_tokens, "cache_creation_input_tokens", 0, "output_tokens",
                     info->completion_tokens);
}

/* "event: TYPE\ndata: JSON\n\n" (sse) or the JSON alone, with "type"
 * first as the API writes it; frees j. */
static int emit(const char *type, json_t *j, int sse, rm_buf *out)
{
    if (!j) return -1;
    json_t *t = type ? json_pack("{s:s}", "type", type) : json_incref(j);
    if (type && t && json_object_update(t, j)) { json_decref(t); t = NULL; }
    json_decref(j);
    char *s = t ? json_dumps(t, JSON_COMPACT) : NULL;
    json_decref(t);
    if (!s) return -1;
    size_t len0 = out->len;
    int rc = sse ? rm_buf_addf(out, "event: %s\ndata: %s\n\n", type, s) : rm_buf_adds(out, s);
    free(s);
    if (rc) out->len = len0;
    return rc;
}

static json_t *message(const serve_cfg *cfg, const serve_req *r, json_t *content)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:o,s:n,s:n}", "id", r->id, "type", "message", "role", "assistant", "model",
                     r->an.model, "content", content, "stop_reason", "stop_sequence");
}

static int an_stream_begin(const serve_cfg *cfg, serve_req *r, rm_buf *out)
{
    json_t *m = message(cfg, r, json_array());
    if (m) json_object_set_new(m, "usage", json_pack("{s:i,s:i}", "input_tokens", r->prompt.n, "output_tokens", 0));
    r->an.ping_at = rm_now();
    return emit("message_start", json_pack("{s:o}", "message", m), 1, out) ||
           emit("ping", json_object(), 1, out);
}

static int an_stream_progress(const serve_cfg *cfg, serve_req *r, const rm_token_stats *st, rm_buf *out)
{
    double now = rm_now();
    if (now - r->an.ping_at < PING_S) return 0;
    r->an.ping_at = now;
    return emit("ping", json_object(), 1, out);
}

static int block_stop(serve_req *r, rm_buf *out)
{
    if (r->an.open == BLOCK_NONE) return 0;
    int rc = 0;
    if (r->an.open == BLOCK_THINKING) {
        char sig[32];
        sig_text(r->an.sig, sig);
        rc = emit("content_block_delta",
                  json_pack("{s:i,s:{s:s,s:s}}", "index", r->an.next - 1, "delta", "type", "signature_delta", "signature",
                            sig), 1, out);
    }
    r->an.open = BLOCK_NONE;
    return rc || emit("content_block_stop", json_pack("{s:i}", "index", r->an.next - 1), 1, out);
}

/* Opens a block of kind (closing the one open), started as block. */
static int block_start(serve_req *r, int kind, json_t *block, rm_buf *out)
{
    if (block_stop(r, out)) { json_decref(block); return -1; }
    r->an.open = kind;
    if (kind == BLOCK_THINKING) r->an.sig = sig_start();
    else r->an.content++;
    return emit("content_block_start", json_pack("{s:i,s:o}", "index", r->an.next++, "content_block", block), 1, out);
}

static int text_delta(serve_req *r, int kind, const char *s, size_t n, rm_buf *out)
{
    if (!n) return 0;
    if (r->an.open != kind &&
        block_start(r, kind, kind == BLOCK_THINKING ? json_pack("{s:s,s:s,s:s}", "type", "thinking", "thinking", "",
                                                                 "signature", "")
                                                    : json_pack("{s:s,s:s}", "type", "text", "text", ""), out))
        return -1;
    if (kind == BLOCK_THINKING) r->an.sig = sig_add(r->an.sig, s, n);
    return emit("content_block_delta",
                json_pack("{s:i,s:{s:s,s:s%}}", "index", r->an.next - 1, "delta", "type",
                          kind == BLOCK_THINKING ? "thinking_delta" : "text_delta",
                          kind == BLOCK_THINKING ? "thinking" : "text", s, n), 1, out);
}

/* The calls: a tool_use block each, its input as partial JSON. */
static int calls_delta(serve_req *r, serve_calls *cs, rm_buf *out)
{
    for (int i = 0; cs && i < cs->n; i++) {
        serve_call *c = &cs->v[i];
        if (c->ended_sent) continue;
        if (!c->begun_sent) {
            if (block_start(r, BLOCK_TOOL, json_pack("{s:s,s:s,s:s,s:{}}", "type", "tool_use", "id", c->id, "name",
                                                     c->name, "input"), out))
                return -1;
            r->an.call = i;
            c->begun_sent = 1;
        }
        if (c->args_sent < c->args.len) {
            if (emit("content_block_delta",
                     json_pack("{s:i,s:{s:s,s:s%}}", "index", r->an.next - 1, "delta", "type", "input_json_delta",
                               "partial_json", c->args.p + c->args_sent, c->args.len - c->args_sent), 1, out))
                return -1;
            c->args_sent = c->args.len;
        }
        if (!c->ended) break;
        c->ended_sent = 1;
        if (block_stop(r, out)) return -1;
    }
    return 0;
}

static int an_stream_delta(const serve_cfg *cfg, serve_req *r, const serve_reply *d, rm_buf *out)
{
    return text_delta(r, BLOCK_THINKING, d->reasoning, d->rlen, out) ||
           text_delta(r, BLOCK_TEXT, d->answer, d->alen, out) || calls_delta(r, d->calls, out);
}

static int an_stream_end(const serve_cfg *cfg, serve_req *r, const serve_reply *d, rm_buf *out)
{
    if (an_stream_delta(cfg, r, d, out)) return -1;
    if (d->finish == SERVE_FIN_BAD_TOOL && d->calls &&
        text_delta(r, BLOCK_TEXT, d->calls->bad_text.p, d->calls->bad_text.len, out))
        return -1;
    /* a reply with no text and no call still has a text block */
    if (!r->an.content && block_start(r, BLOCK_TEXT, json_pack("{s:s,s:s}", "type", "text", "text", ""), out)) return -1;
    json_t *md = json_pack("{s:{s:s,s:o},s:o}", "delta", "stop_reason", stop_reason(d->finish), "stop_sequence",
                           d->stop_string ? json_string(d->stop_string) : json_null(), "usage", usage(d->info));
    return block_stop(r, out) || emit("message_delta", md, 1, out) || emit("message_stop", json_object(), 1, out);
}

static int an_whole(const serve_cfg *cfg, serve_req *r, const serve_reply *d, rm_buf *out)
{
    json_t *content = json_array();
    if (!content) return -1;
    if (d->rlen) {
        char sig[32];
        sig_text(sig_add(sig_start(), d->reasoning, d->rlen), sig);
        json_array_append_new(content, json_pack("{s:s,s:s%,s:s}", "type", "thinking", "thinking", d->reasoning, d->rlen,
                                                 "signature", sig));
    }
    rm_buf text = { 0 };
    if (rm_buf_add(&text, d->answer ? d->answer : "", d->alen) ||
        (d->finish == SERVE_FIN_BAD_TOOL && rm_buf_add(&text, d->calls->bad_text.p, d->calls->bad_text.len))) {
        json_decref(content);
        rm_buf_free(&text);
        return -1;
    }
    int ncalls = d->finish == SERVE_FIN_TOOLS ? d->calls->n : 0;
    if (text.len || !ncalls) json_array_append_new(content, json_pack("{s:s,s:s%}", "type", "text", "text",
                                                                      text.p ? text.p : "", text.len));
    rm_buf_free(&text);
    for (int i = 0; i < ncalls; i++) {
        serve_call *c = &d->calls->v[i];
        if (!c->ended) continue;
        json_t *input = json_loadb(c->args.p, c->args.len, JSON_ALLOW_NUL, NULL);
        json_array_append_new(content, json_pack("{s:s,s:s,s:s,s:o}", "type", "tool_use", "id", c->id, "name", c->name,
                                                 "input", input ? input : json_object()));
    }
    json_t *m = message(cfg, r, content);
    if (!m) return -1;
    json_object_set_new(m, "stop_reason", json_string(stop_reason(d->finish)));
    json_object_set_new(m, "stop_sequence", d->stop_string ? json_string(d->stop_string) : json_null());
    json_object_set_new(m, "usage", usage(d->info));
    return emit(NULL, m, 0, out);
}

/* Anthropic's error types by HTTP status. */
static const char *error_type(int status)
{
    switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503: case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
    }
}

int an_error(const serve_error *e, int sse, rm_buf *out)
{
    json_t *j = json_pack("{s:{s:s,s:s}}", "error", "type", error_type(e->status), "message", e->message);
    return emit("error", j, sse, out);
}

const serve_api serve_anthropic = { "anthropic", an_stream_begin, an_stream_delta, an_stream_progress, an_stream_end,
                                    an_whole, an_error, stop_reason,
                                    "event: ping\ndata: {\"type\":\"ping\"}\n\n" };
