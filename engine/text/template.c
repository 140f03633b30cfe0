/* template.c — rendering conversations to token ids in the model's chat format.
 *
 * Two formats, chosen from the tokenizer (rm_chat_detect):
 *
 *  - K3 XTML, as K3's encoding_k3.py (and its vLLM port,
 *    vllm/tokenizers/encoding_k3.py) builds it: a list of
 *    segments, control markers (<|open|> <|close|> <|sep|> <|end_of_msg|>)
 *    encoded with special tokens allowed and every other segment — tag names,
 *    attribute pieces, content — encoded on its own as plain text. So BPE
 *    never merges across a segment boundary and special-token strings typed
 *    by a user stay text. Covered: system/user/assistant/tool messages with
 *    names, think and response channels, tool calls with their arguments
 *    (typed, JSON-encoded when not strings, or a raw JSON block when the
 *    arguments string does not parse), tool results re-ordered into call order
 *    by tool_call_id, tool declarations (also the "dynamic" form carried by a
 *    system message), the thinking-effort note, tool_choice, response_format
 *    and the generation prompt.
 *
 *  - The Kimi-Linear / K2 "im" format (<|im_user|>user<|im_middle|>…<|im_end|>),
 *    the chat_template of Kimi-Linear-48B's tokenizer_config.json.
 *    Text between two markers is encoded as one plain-text segment, which is
 *    what encoding the whole rendered string gives when the text holds no
 *    special strings (and keeps typed special strings as text when it does).
 *    Kimi-Linear has no reasoning channel, so reasoning_content is not
 *    rendered in this format.
 *
 * The renderer works on a JSON conversation (jansson) so that everything the
 * Python encoders accept — tool calls, content parts, tool declarations —
 * can be expressed; rm_chat_render builds that JSON from the plain message
 * structs of engine.h. Text that the Python code produces with json.dumps or
 * str() is reproduced byte for byte by pyjson.c.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "engine.h"
#include "text/pyjson.h"
#include "text/template.h"

/* ---- segments to ids ---------------------------------------------------- */

typedef struct render {
    const rm_tokenizer *t;
    int32_t *ids;
    int n, cap;
    rm_err *err;
    int failed;
    int im;                 /* im format: text between markers is one segment */
    chat_render_info info;  /* opens_think, opens_tools, gen_start, prime */
    py_buf pending;
    py_buf tmp;               /* scratch for attribute values */
} render;

/* Records the first error (later ones are consequences) and returns -1. */
static int fail(render *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(render *r, const char *fmt, ...)
{
    if (!r->failed && r->err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err->msg, sizeof r->err->msg, fmt, ap);
        va_end(ap);
    }
    r->failed = 1;
    return -1;
}

static void push_ids(render *r, const int32_t *ids, int n)
{
    if (n > INT_MAX - r->n || RM_GROW(r->ids, r->cap, r->n + n)) { fail(r, "chat: out of memory"); return; }
    memcpy(r->ids + r->n, ids, (size_t)n * sizeof *ids);
    r->n += n;
}

static void encode_seg(render *r, const char *s, size_t n, int allow_special)
{
    if (!n || r->failed) return;
    int32_t *ids;
    rm_err e;
    int k = rm_tokenizer_encode(r->t, s, n, allow_special, &ids, &e);
    if (k < 0) { fail(r, "chat: %s", e.msg); return; }
    push_ids(r, ids, k);
    free(ids);
}

static void flush_text(render *r)
{
    if (r->pending.oom) fail(r, "chat: out of memory");
    encode_seg(r, r->pending.b.p, r->pending.b.len, 0);
    py_clear(&r->pending);
}

/* A plain-text segment; empty text adds nothing. */
/* An assistant message's "remora_ids" (chat_render_json): pushed as they
 * are; 1 when there were some, -1 (failed) when they are not token ids. */
static int verbatim(render *r, const json_t *m)
{
    const json_t *a = json_object_get(m, "remora_ids");
    if (!json_is_array(a) || !json_array_size(a)) return 0;
    if (r->im) flush_text(r);
    const int V = rm_tokenizer_vocab(r->t);
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) {
        json_int_t x = json_integer_value(v);
        if (!json_is_integer(v) || x < 0 || x >= V) return fail(r, "chat: remora_ids[%zu] is not a token id", i);
        int32_t one = (int32_t)x;
        push_ids(r, &one, 1);
    }
    return 1;
}

static void text_n(render *r, const char *s, size_t n)
{
    if (r->im) py_add(&r->pending, s, n);
    else encode_seg(r, s, n, 0);
}
static void text(render *r, const char *s) { text_n(r, s, strlen(s)); }
/* The text built in b, or a failure when building it ran out of memory. */
static void text_buf(render *r, const py_buf *b)
{
    if (b->oom) fail(r, "chat: out of memory");
    else text_n(r, b->b.p ? b->b.p : "", b->b.len);
}

/* A control marker: its special id, or (when the tokenizer has no such
 * special) the string encoded with specials allowed, as tiktoken would. */
static void ctrl(render *r, const char *marker)
{
    if (r->im) flush_text(r);
    int id = rm_tokenizer_special_id(r->t, marker);
    if (id >= 0) { int32_t one = id; push_ids(r, &one, 1); }
    else encode_seg(r, marker, strlen(marker), 1);
}

/* ---- K3 XTML ------------------------------------------------------------ */

typedef struct attr { const char *key; const json_t *val; const char *sval; } attr;

/* <|open|>tag key="value"...<|sep|>, each attribute as the four segments
 * " key", '="', escape(str(value)), '"'. */
static void open_tag(render *r, const char *tag, const attr *a, int na)
{
    ctrl(r, "<|open|>");
    text(r, tag);
    for (int i = 0; i < na; i++) {
        py_buf *v = &r->tmp;
        py_clear(v);
        if (a[i].sval) py_puts(v, a[i].sval);
        else if (py_str(v, a[i].val)) {
            fail(r, "chat: the %s attribute of <%s> must be a string or a number", a[i].key, tag);
            return;
        }
        char key[64];
        snprintf(key, sizeof key, " %s", a[i].key);
        text(r, key);
        text(r, "=\"");
        py_buf esc = { 0 };
        for (size_t k = 0; k < v->b.len; k++) {
            if (v->b.p[k] == '&') py_puts(&esc, "&amp;");
            else if (v->b.p[k] == '"') py_puts(&esc, "&quot;");
            else py_add(&esc, v->b.p + k, 1);
        }
        text_buf(r, &esc);
        py_free(&esc);
        text(r, "\"");
    }
    ctrl(r, "<|sep|>");
}

static void close_tag(render *r, const char *tag)
{
    ctrl(r, "<|close|>");
    text(r, tag);
    ctrl(r, "<|sep|>");
}

/* An image part: K3's placeholder, or the im format's media markers. */
static void image(render *r)
{
    if (!r->im) { ctrl(r, "<|kimi_image_placeholder|>"); return; }
    ctrl(r, "<|media_start|>");
    text(r, "image");
    ctrl(r, "<|media_content|>");
    ctrl(r, "<|media_pad|>");
    ctrl(r, "<|media_end|>");
}

/* Message content: a string, or a list of parts ({"type": "text", "text"}
 * and image parts). */
static void content(render *r, const json_t *c)
{
    if (!c || json_is_null(c)) return;
    if (json_is_string(c)) { text_n(r, json_string_value(c), json_string_length(c)); return; }
    if (!json_is_array(c)) { fail(r, "chat: content must be a string or a list of parts"); return; }
    size_t i;
    json_t *part;
    json_array_foreach(c, i, part) {
        const char *type = json_string_value(py_get(part, "type"));
        if (!type) { fail(r, "chat: a content part has no \"type\""); return; }
        if (!strcmp(type, "image") || !strcmp(type, "image_url")) { image(r); continue; }
        json_t *t = py_get(part, "text");
        py_buf s = { 0 };
        if (!t || py_str(&s, t)) { py_free(&s); fail(r, "chat: a text part has no \"text\" string"); return; }
        text_buf(r, &s);
        py_free(&s);
    }
}

static void internal_system(render *r, const char *type, const char *body)
{
    attr a[2] = { { "role", NULL, "system" }, { "type", NULL, type } };
    open_tag(r, "message", a, 2);
    text(r, body);
    close_tag(r, "message");
    ctrl(r, "<|end_of_msg|>");
}

static void tool_declare(render *r, const json_t *tools, int dynamic)
{
    py_buf b = { 0 };
    py_puts(&b, dynamic ? "## New Tools Available\n"
                          "The system dynamically extends the toolset via lazy-loading.\n"
                          "You have access to all existing and extended tools.\n"
                          "Here are the specs for the extended tools.\n\n```json\n"
                        : "# Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n");
    py_json(&b, tools, 1, 1);
    py_puts(&b, "\n```");
    if (b.oom) fail(r, "chat: out of memory");
    else internal_system(r, "tool-declare", b.b.p);
    py_free(&b);
}

/* normalize_tool_arguments: the arguments as an object (*obj, a new
 * reference) or, when a non-blank string does not parse as JSON, the raw
 * string (*block). */
static int tool_arguments(render *r, const json_t *a, json_t **obj, const char **block)
{
    *obj = NULL; *block = NULL;
    if (!a || json_is_null(a)) { *obj = json_object(); return 0; }
    if (json_is_object(a)) { *obj = json_incref((json_t *)a); return 0; }
    if (!json_is_string(a))
        return fail(r, "chat: tool call arguments must be an object or a JSON object string");
    if (!py_nonblank(json_string_value(a), json_string_length(a))) { *obj = json_object(); return 0; }
    json_t *p = json_loadb(json_string_value(a), json_string_length(a), JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!p) { *block = json_string_value(a); return 0; }
    if (!json_is_object(p)) {
        json_decref(p);
        return fail(r, "chat: tool call arguments must be a JSON object");
    }
    *obj = p;
    return 0;
}

static const char *xtml_type(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_TRUE: case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    case JSON_INTEGER: case JSON_REAL: return "number";
    case JSON_STRING: return "string";
    case JSON_OBJECT: return "object";
    default: return "array";
    }
}

static void tool_calls_xtml(render *r, const json_t *calls)
{
    open_tag(r, "tools", NULL, 0);
    size_t i;
    json_t *tc;
    json_array_foreach(calls, i, tc) {
        if (!json_is_object(tc)) { fail(r, "chat: a tool call is not an object"); return; }
        json_t *fnv = json_object_get(tc, "function");
        const json_t *fn = fnv ? fnv : tc;
        json_t *name = py_get(fn, "name");
        if (!name) { fail(r, "chat: a tool call has no function name"); return; }
        json_t *args;
        const char *block;
        if (tool_arguments(r, py_get(fn, "arguments"), &args, &block)) return;
        json_t *idx = json_integer((json_int_t)i + 1);
        attr a[2] = { { "tool", name, NULL }, { "index", idx, NULL } };
        open_tag(r, "call", a, 2);
        json_decref(idx);
        if (block) {
            attr t[1] = { { "type", NULL, "object" } };
            open_tag(r, "json", t, 1);
            text(r, block);
            close_tag(r, "json");
        } else {
            const char *key;
            json_t *v;
            json_object_foreach(args, key, v) {
                attr t[2] = { { "key", NULL, key }, { "type", NULL, xtml_type(v) } };
                open_tag(r, "argument", t, 2);
                py_buf s = { 0 };
                if (json_is_string(v)) py_add(&s, json_string_value(v), json_string_length(v));
                else py_json(&s, v, 0, 0);
                text_buf(r, &s);
                py_free(&s);
                close_tag(r, "argument");
            }
        }
        json_decref(args);
        close_tag(r, "call");
    }
    close_tag(r, "tools");
}

static void assistant_xtml(render *r, const json_t *m, int thinking)
{
    if (thinking) {
        json_t *rc = json_object_get(m, "reasoning_content");
        if (!py_truthy(rc)) rc = json_object_get(m, "reasoning");
        open_tag(r, "think", NULL, 0);
        py_buf s = { 0 };
        if (rc && !json_is_null(rc)) {
            if (py_str(&s, rc)) fail(r, "chat: reasoning_content must be a string");
            else if (s.oom) fail(r, "chat: out of memory");
            else if (py_nonblank(s.b.p ? s.b.p : "", s.b.len)) text_buf(r, &s);
        }
        py_free(&s);
        close_tag(r, "think");
    }
    open_tag(r, "response", NULL, 0);
    content(r, json_object_get(m, "content"));
    close_tag(r, "response");
    json_t *calls = json_object_get(m, "tool_calls");
    if (py_truthy(calls)) {
        if (!json_is_array(calls)) fail(r, "chat: tool_calls must be a list");
        else tool_calls_xtml(r, calls);
    }
}

/* One message in rendering order; tool results matched to a call carry the
 * call's function name. */
typedef struct entry { json_t *m; json_t *tool; } entry;

/* normalize_xtml_tool_result_messages: each run of tool messages whose ids
 * all match calls of the latest assistant message is put in call order. */
static entry *order_messages(const json_t *msgs, size_t *count)
{
    size_t n = json_array_size(msgs), k = 0, i = 0;
    entry *out = calloc(n ? n : 1, sizeof *out);
    if (!out) return NULL;
    json_t *calls = NULL;
    while (i < n) {
        json_t *m = json_array_get(msgs, i);
        const char *role = json_string_value(py_get(m, "role"));
        if (role && !strcmp(role, "assistant")) {
            json_t *c = json_object_get(m, "tool_calls");
            calls = json_is_array(c) ? c : NULL;
        }
        if (!role || strcmp(role, "tool")) { out[k++].m = m; i++; continue; }
        size_t st = i, unresolved = 0;
        size_t *pos = malloc((n - st) * sizeof *pos);
        json_t **names = malloc((n - st) * sizeof *names);
        if (!pos || !names) { free(pos); free(names); free(out); return NULL; }
        for (; i < n; i++) {
            json_t *t = json_array_get(msgs, i);
            const char *tr = json_string_value(py_get(t, "role"));
            if (!tr || strcmp(tr, "tool")) break;
            json_t *id = json_object_get(t, "tool_call_id");
            if (!id) id = json_object_get(t, "id");
            size_t found = 0;
            py_buf want = { 0 }, have = { 0 };
            if (id && !json_is_null(id) && !py_str(&want, id)) {
                size_t j;
                json_t *tc;
                json_array_foreach(calls, j, tc) {
                    json_t *cid = py_get(tc, "id");
                    if (!cid || json_is_null(cid)) continue;
                    py_clear(&have);
                    if (py_str(&have, cid) || have.b.len != want.b.len || memcmp(have.b.p, want.b.p, want.b.len)) continue;
                    json_t *fn = json_object_get(tc, "function");
                    found = j + 1;
                    names[i - st] = json_is_object(fn) ? json_object_get(fn, "name") : json_object_get(tc, "name");
                    break;
                }
            }
            int oom = want.oom || have.oom;
            py_free(&want); py_free(&have);
            if (oom) { free(pos); free(names); free(out); return NULL; }
            if (!found) unresolved = 1;
            pos[i - st] = found;
        }
        size_t rn = i - st;
        /* stable insertion sort by matched position */
        size_t *ord = malloc(rn * sizeof *ord);
        if (!ord) { free(pos); free(names); free(out); return NULL; }
        for (size_t a = 0; a < rn; a++) {
            size_t b = a;
            while (!unresolved && b > 0 && pos[ord[b - 1]] > pos[a]) { ord[b] = ord[b - 1]; b--; }
            ord[b] = a;
        }
        for (size_t a = 0; a < rn; a++) {
            out[k].m = json_array_get(msgs, st + ord[a]);
            if (!unresolved && names[ord[a]] && !json_is_null(names[ord[a]])) out[k].tool = names[ord[a]];
            k++;
        }
        free(ord); free(pos); free(names);
    }
    *count = k;
    return out;
}

static void name_attr(const json_t *m, attr *a, int *na)
{
    json_t *name = json_object_get(m, "name");
    if (py_truthy(name)) { a[*na] = (attr){ "name", name, NULL }; (*na)++; }
}

static const char *const efforts[] = { "low", "medium", "high", "max" };

/* The conversation's switches: thinking and add_generation_prompt (true when
 * missing or null) and a thinking_effort, which must be one of `efforts`
 * when thinking is on. */
static int xtml_options(render *r, const json_t *conv, int *thinking, int *agp, const char **effort)
{
    json_t *th = json_object_get(conv, "thinking");
    *thinking = !th || json_is_null(th) ? 1 : py_truthy(th);
    json_t *agpv = json_object_get(conv, "add_generation_prompt");
    *agp = !agpv || json_is_null(agpv) ? 1 : py_truthy(agpv);
    json_t *ev = json_object_get(conv, "thinking_effort");
    *effort = json_string_value(ev);
    if (ev && !json_is_null(ev) && !*effort) return fail(r, "chat: thinking_effort must be a string");
    if (*thinking && *effort) {
        int ok = 0;
        for (size_t i = 0; i < sizeof efforts / sizeof efforts[0]; i++) ok |= !strcmp(*effort, efforts[i]);
        if (!ok) return fail(r, "chat: thinking_effort \"%s\" is not one of low, medium, high, max", *effort);
    }
    return 0;
}

/* What comes before the messages: the tool declarations and the
 * thinking-effort note. */
static void xtml_preamble(render *r, const json_t *conv, int thinking, const char *effort)
{
    json_t *tools = json_object_get(conv, "tools");
    if (py_truthy(tools)) tool_declare(r, tools, 0);
    if (thinking && effort) {
        char body[400];
        snprintf(body, sizeof body,
                 "`thinking_effort` guides on how much to think in your thinking channel (not "
                 "including the response channel), supported values include `low`, `medium`, "
                 "`high`, and `max`.\nNow the system is invoked with `thinking_effort=%s`.", effort);
        internal_system(r, "thinking-effort", body);
    }
}

/* A message with its role (and name) attribute, content inside. */
static void plain_message(render *r, const json_t *m, const char *role)
{
    attr a[2];
    int na = 0;
    a[na++] = (attr){ "role", NULL, role };
    name_attr(m, a, &na);
    open_tag(r, "message", a, na);
    content(r, json_object_get(m, "content"));
    close_tag(r, "message");
    ctrl(r, "<|end_of_msg|>");
}

/* A tool result: the tool it answers is the one its id matched (`tool`),
 * else its own "tool" or "name", else the call at the same index of the
 * latest assistant message (`calls`); index counts the results since it.
 * Returns -1 (failed) when no tool name can be found. */
static int tool_message(render *r, const json_t *m, json_t *tool, const json_t *calls, int tool_index, size_t i)
{
    if (!tool) tool = json_object_get(m, json_object_get(m, "tool") ? "tool" : "name");
    if ((!tool || json_is_null(tool)) && json_is_array(calls) && (size_t)tool_index <= json_array_size(calls)) {
        json_t *tc = json_array_get(calls, (size_t)tool_index - 1);
        json_t *fn = py_get(tc, "function");
        tool = py_get(fn ? fn : tc, "name");
        if (!tool) return fail(r, "chat: a tool call has no function name");
    }
    if (!tool || json_is_null(tool))
        return fail(r, "chat: message %zu: a tool message needs a tool name (\"tool\" or \"name\", "
                       "or a preceding assistant tool call to answer)", i + 1);
    json_t *idx = json_integer(tool_index);
    attr a[3] = { { "role", NULL, "tool" }, { "tool", tool, NULL }, { "index", idx, NULL } };
    open_tag(r, "message", a, 3);
    json_decref(idx);
    content(r, json_object_get(m, "content"));
    close_tag(r, "message");
    ctrl(r, "<|end_of_msg|>");
    return 0;
}

/* The messages, tool results put in call order (order_messages). A system
 * message carrying tools is a dynamic tool declaration. */
static void xtml_messages(render *r, const json_t *conv, int thinking)
{
    size_t n;
    entry *e = order_messages(json_object_get(conv, "messages"), &n);
    if (!e) { fail(r, "chat: out of memory"); return; }
    json_t *calls = NULL;
    int tool_index = 0;
    for (size_t i = 0; i < n && !r->failed; i++) {
        json_t *m = e[i].m;
        if (!json_is_object(m)) continue;
        json_t *rolev = json_object_get(m, "role");
        if (!rolev) { fail(r, "chat: a message has no role"); break; }
        const char *role = json_string_value(rolev);
        if (!role) continue;
        if (!strcmp(role, "user") || (!strcmp(role, "system") && !py_truthy(json_object_get(m, "tools")))) {
            plain_message(r, m, role);
        } else if (!strcmp(role, "system")) {
            tool_declare(r, json_object_get(m, "tools"), 1);
        } else if (!strcmp(role, "tool")) {
            if (tool_message(r, m, e[i].tool, calls, ++tool_index, i)) break;
        } else if (!strcmp(role, "assistant")) {
            calls = json_object_get(m, "tool_calls");
            tool_index = 0;
            int v = verbatim(r, m);
            if (v < 0) break;
            if (v) {
                close_tag(r, "message");
                ctrl(r, "<|end_of_msg|>");
                continue;
            }
            attr a[2];
            int na = 0;
            a[na++] = (attr){ "role", NULL, "assistant" };
            name_attr(m, a, &na);
            open_tag(r, "message", a, na);
            assistant_xtml(r, m, thinking);
            close_tag(r, "message");
            ctrl(r, "<|end_of_msg|>");
        }
    }
    free(e);
}

/* The system's instructions after the messages: tool_choice and
 * response_format. */
static void xtml_instructions(render *r, const json_t *conv)
{
    const char *choice = json_string_value(json_object_get(conv, "tool_choice"));
    if (choice && !strcmp(choice, "required"))
        internal_system(r, "tool-choice", "The system is invoked with `tool_choice=required`.\n"
                                          "You MUST call tools in the next message.");
    else if (choice && !strcmp(choice, "none"))
        internal_system(r, "tool-choice", "The system is invoked with `tool_choice=none`.\n"
                                          "You MUST NOT call any tools in the next message.");

    json_t *rf = json_object_get(conv, "response_format");
    const char *rft = json_string_value(json_is_object(rf) ? json_object_get(rf, "type") : rf);
#define RAW_JSON "Your response must be raw JSON data without markdown code blocks (```json) " \
                 "or any additional formatting."
    if (rft && !strcmp(rft, "json_object")) {
        internal_system(r, "response-format",
                        "The system is invoked with `response_format=json_object`.\n" RAW_JSON);
    } else if (rft && !strcmp(rft, "json_schema")) {
        json_t *schema = json_object_get(conv, "response_schema");
        if (!schema) {
            json_t *js = py_get(rf, "json_schema");
            schema = js;
            if (json_is_object(js))
                schema = json_object_get(js, "schema") ? json_object_get(js, "schema")
                       : json_object_get(js, "json_schema") ? json_object_get(js, "json_schema") : js;
        }
        py_buf b = { 0 };
        py_puts(&b, "The system is invoked with `response_format=json_schema`.\n" RAW_JSON
                    "\nThe JSON data must match the following schema:\n```json\n");
        json_t *null = json_null();
        py_json(&b, schema ? schema : null, 1, 1);
        py_puts(&b, "\n```");
        if (b.oom) fail(r, "chat: out of memory");
        else internal_system(r, "response-format", b.b.p);
        py_free(&b);
    }
#undef RAW_JSON
}

/* Whether tool_choice forces a call: "required", or a named function
 * ({"type": "function", "function": {"name"}}, or {"name"}); *named is the
 * name or NULL. A name must be short enough for info.prime. */
static int forced_choice(render *r, const json_t *conv, const char **named)
{
    const json_t *tc = json_object_get(conv, "tool_choice");
    *named = NULL;
    if (json_is_string(tc)) return !strcmp(json_string_value(tc), "required");
    if (!json_is_object(tc)) return 0;
    const json_t *fn = json_object_get(tc, "function");
    const char *name = json_string_value(json_object_get(json_is_object(fn) ? fn : tc, "name"));
    if (!name || !*name || strlen(name) > 128) return 0;
    if (strchr(name, '"') || strchr(name, '&') || strstr(name, "<|")) return 0;   /* prime is the raw text */
    *named = name;
    return 1;
}

static void render_xtml(render *r, const json_t *conv)
{
    int thinking, agp;
    const char *effort;
    if (xtml_options(r, conv, &thinking, &agp, &effort)) return;
    xtml_preamble(r, conv, thinking, effort);
    xtml_messages(r, conv, thinking);
    if (r->failed) return;
    xtml_instructions(r, conv);
    if (agp) {
        r->info.gen_start = r->n;
        attr a[1] = { { "role", NULL, "assistant" } };
        open_tag(r, "message", a, 1);
        const char *named;
        if (!forced_choice(r, conv, &named)) {
            open_tag(r, thinking ? "think" : "response", NULL, 0);
            r->info.opens_think = thinking;
            return;
        }
        /* a forced call: the reply starts in the tools block (with no
         * thinking, as an assistant message with empty channels renders),
         * inside the named call when there is one */
        if (thinking) { open_tag(r, "think", NULL, 0); close_tag(r, "think"); }
        open_tag(r, "response", NULL, 0);
        close_tag(r, "response");
        open_tag(r, "tools", NULL, 0);
        r->info.opens_tools = 1;
        if (named) {
            json_t *name = json_string(named), *idx = json_integer(1);
            attr c[2] = { { "tool", name, NULL }, { "index", idx, NULL } };
            open_tag(r, "call", c, 2);
            snprintf(r->info.prime, sizeof r->info.prime, "<|open|>call tool=\"%s\" index=\"1\"<|sep|>", named);
            json_decref(name);
            json_decref(idx);
        }
    }
}

/* ---- Kimi-Linear im format ---------------------------------------------- */

static void render_im(render *r, const json_t *conv)
{
    r->im = 1;
    json_t *tools = json_object_get(conv, "tools");
    if (py_truthy(tools)) {
        ctrl(r, "<|im_system|>");
        text(r, "tool_declare");
        ctrl(r, "<|im_middle|>");
        py_buf b = { 0 };
        py_json(&b, tools, 1, 1);
        text_buf(r, &b);
        py_free(&b);
        ctrl(r, "<|im_end|>");
    }
    const json_t *msgs = json_object_get(conv, "messages");
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m) {
        if (r->failed) break;
        if (!json_is_object(m)) continue;
        const char *role = json_string_value(json_object_get(m, "role"));
        if (!role) { fail(r, "chat: a message has no role"); break; }
        json_t *name = json_object_get(m, "name");
        if (!strcmp(role, "assistant")) {
            int v = verbatim(r, m);
            if (v < 0) break;
            if (v) { ctrl(r, "<|im_end|>"); continue; }
        }
        const char *head = !strcmp(role, "user") ? "<|im_user|>"
                         : !strcmp(role, "assistant") ? "<|im_assistant|>" : "<|im_system|>";
        ctrl(r, head);
        py_buf s = { 0 };
        if (py_truthy(name)) { if (py_str(&s, name)) fail(r, "chat: name must be a string"); }
        else py_puts(&s, role);
        text_buf(r, &s);
        py_free(&s);
        ctrl(r, "<|im_middle|>");
        if (!strcmp(role, "tool")) {
            py_buf h = { 0 };
            py_puts(&h, "## Return of ");
            json_t *id = json_object_get(m, "tool_call_id");
            if (id && py_str(&h, id)) fail(r, "chat: tool_call_id must be a string");
            py_puts(&h, "\n");
            text_buf(r, &h);
            py_free(&h);
        }
        content(r, json_object_get(m, "content"));
        json_t *calls = json_object_get(m, "tool_calls");
        if (!strcmp(role, "assistant") && json_is_array(calls) && json_array_size(calls)) {
            ctrl(r, "<|tool_calls_section_begin|>");
            size_t j;
            json_t *tc;
            json_array_foreach(calls, j, tc) {
                ctrl(r, "<|tool_call_begin|>");
                py_buf b = { 0 };
                json_t *id = py_get(tc, "id");
                if (id && py_str(&b, id)) fail(r, "chat: a tool call id must be a string");
                text_buf(r, &b);
                ctrl(r, "<|tool_call_argument_begin|>");
                json_t *fn = py_get(tc, "function");
                json_t *args = py_get(fn ? fn : tc, "arguments");
                py_clear(&b);
                if (json_is_string(args)) py_add(&b, json_string_value(args), json_string_length(args));
                else if (args) py_json(&b, args, 1, 0);
                text_buf(r, &b);
                py_free(&b);
                ctrl(r, "<|tool_call_end|>");
            }
            ctrl(r, "<|tool_calls_section_end|>");
        }
        ctrl(r, "<|im_end|>");
    }
    json_t *agpv = json_object_get(conv, "add_generation_prompt");
    if (!agpv || json_is_null(agpv) || py_truthy(agpv)) {
        flush_text(r);
        r->info.gen_start = r->n;
        ctrl(r, "<|im_assistant|>");
        text(r, "assistant");
        ctrl(r, "<|im_middle|>");
        const char *named;
        if (forced_choice(r, conv, &named)) {
            ctrl(r, "<|tool_calls_section_begin|>");
            r->info.opens_tools = 1;
            if (named) {
                snprintf(r->info.prime, sizeof r->info.prime,
                         "<|tool_call_begin|>functions.%s:0<|tool_call_argument_begin|>", named);
                ctrl(r, "<|tool_call_begin|>");
                char id[160];
                snprintf(id, sizeof id, "functions.%s:0", named);
                text(r, id);
                ctrl(r, "<|tool_call_argument_begin|>");
            }
        }
    }
    flush_text(r);
}

/* ---- public entry points ------------------------------------------------ */

rm_chat_format rm_chat_detect(const rm_tokenizer *t)
{
    return rm_tokenizer_special_id(t, "<|open|>") >= 0 ? RM_CHAT_XTML : RM_CHAT_IM;
}

static int render_conv(const rm_tokenizer *t, rm_chat_format f, const json_t *conv,
                       chat_render_info *info, int32_t **ids, rm_err *err)
{
    *ids = NULL;
    if (info) memset(info, 0, sizeof *info);
    if (!json_is_object(conv)) return rm_errf(err, "chat: the conversation is not a JSON object");
    if (!json_is_array(json_object_get(conv, "messages")))
        return rm_errf(err, "chat: the conversation has no \"messages\" list");
    render r = { .t = t, .err = err, .info.gen_start = -1 };
    if (f == RM_CHAT_XTML) render_xtml(&r, conv);
    else if (f == RM_CHAT_IM) render_im(&r, conv);
    else fail(&r, "chat: unknown chat format");
    if (r.tmp.oom) fail(&r, "chat: out of memory");
    py_free(&r.pending);
    py_free(&r.tmp);
    if (r.failed) { free(r.ids); return -1; }
    if (!r.ids && !(r.ids = malloc(sizeof *r.ids))) return rm_errf(err, "chat: out of memory");
    *ids = r.ids;
    if (r.info.gen_start < 0) r.info.gen_start = r.n;
    if (info) *info = r.info;
    return r.n;
}

/* Whether v (may be NULL: absent) is absent, null or of one of the types in mask. */
enum { J_STR = 1, J_ARR = 2, J_OBJ = 4, J_BOOL = 8 };
static int shape_ok(const json_t *v, int mask)
{
    return !v || json_is_null(v) || ((mask & J_STR) && json_is_string(v)) || ((mask & J_ARR) && json_is_array(v)) ||
           ((mask & J_OBJ) && json_is_object(v)) || ((mask & J_BOOL) && json_is_boolean(v));
}

/* One message of a JSON conversation, checked before anything is rendered:
 * the renderers would skip what they do not understand. */
static int check_message(size_t i, const json_t *m, rm_err *err)
{
    if (!json_is_object(m)) return rm_errf_input(err, "chat: messages[%zu] is not an object", i);
    const char *role = json_string_value(json_object_get(m, "role"));
    if (!role) return rm_errf_input(err, "chat: messages[%zu]: \"role\" must be a string", i);
    if (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant") && strcmp(role, "tool"))
        return rm_errf_input(err, "chat: messages[%zu]: \"role\" \"%.64s\" is not system, user, assistant or tool", i, role);
    json_t *c = json_object_get(m, "content"), *calls = json_object_get(m, "tool_calls");
    int has_calls = json_is_array(calls) && json_array_size(calls);
    if (!c && !(has_calls && !strcmp(role, "assistant")))
        return rm_errf_input(err, "chat: messages[%zu]: \"content\" is missing", i);
    if (!shape_ok(c, J_STR | J_ARR))
        return rm_errf_input(err, "chat: messages[%zu]: \"content\" must be a string or a list of parts", i);
    size_t k;
    json_t *part;
    if (json_is_array(c))
        json_array_foreach(c, k, part)
            if (!json_is_string(part) && !(json_is_object(part) && json_is_string(json_object_get(part, "type"))))
                return rm_errf_input(err, "chat: messages[%zu]: content[%zu] must be a string or an object with "
                                     "a \"type\"", i, k);
    if (!shape_ok(calls, J_ARR)) return rm_errf_input(err, "chat: messages[%zu]: \"tool_calls\" must be a list", i);
    if (json_is_array(calls))
        json_array_foreach(calls, k, part)
            if (!json_is_object(part))
                return rm_errf_input(err, "chat: messages[%zu]: tool_calls[%zu] must be an object", i, k);
    static const char *const strs[] = { "reasoning_content", "reasoning", "name", "tool_call_id" };
    for (size_t f = 0; f < sizeof strs / sizeof strs[0]; f++)
        if (!shape_ok(json_object_get(m, strs[f]), J_STR))
            return rm_errf_input(err, "chat: messages[%zu]: \"%s\" must be a string", i, strs[f]);
    if (!shape_ok(json_object_get(m, "tools"), J_ARR))
        return rm_errf_input(err, "chat: messages[%zu]: \"tools\" must be a list", i);
    return 0;
}

/* The conversation's own fields and every message, before rendering. */
static int check_conv(const json_t *conv, rm_err *err)
{
    if (!json_is_object(conv)) return rm_errf_input(err, "chat: the conversation is not a JSON object");
    const json_t *msgs = json_object_get(conv, "messages");
    if (!json_is_array(msgs)) return rm_errf_input(err, "chat: the conversation has no \"messages\" list");
    static const struct { const char *key; int mask; const char *what; } fields[] = {
        { "tools", J_ARR, "a list" }, { "thinking", J_BOOL, "true or false" },
        { "add_generation_prompt", J_BOOL, "true or false" }, { "thinking_effort", J_STR, "a string" },
        { "tool_choice", J_STR | J_OBJ, "a string or an object" },
        { "response_format", J_STR | J_OBJ, "a string or an object" },
    };
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
        if (!shape_ok(json_object_get(conv, fields[f].key), fields[f].mask))
            return rm_errf_input(err, "chat: \"%s\" must be %s", fields[f].key, fields[f].what);
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
        if (check_message(i, m, err)) return -1;
    return 0;
}

int chat_render_json(const rm_tokenizer *t, rm_chat_format f, const char *json, size_t len, chat_render_info *info,
                     int32_t **ids, rm_err *err)
{
    json_error_t je;
    *ids = NULL;
    json_t *conv = json_loadb(json, len, JSON_ALLOW_NUL, &je);
    if (!conv) return rm_errf_input(err, "chat: line %d column %d: %s", je.line, je.column, je.text);
    if (check_conv(conv, err)) { json_decref(conv); return -1; }
    int n = render_conv(t, f, conv, info, ids, err);
    json_decref(conv);
    return n;
}

int rm_chat_render_json(const rm_tokenizer *t, rm_chat_format f, const char *json, size_t len,
                        int32_t **ids, rm_err *err)
{
    return chat_render_json(t, f, json, len, NULL, ids, err);
}

int rm_chat_render(const rm_tokenizer *t, rm_chat_format f, const rm_chat_msg *msgs,
                   int n, const rm_chat_opts *o, int32_t **ids, rm_err *err)
{
    *ids = NULL;
    json_t *conv = json_object(), *arr = json_array();
    json_object_set_new(conv, "messages", arr);
    for (int i = 0; i < n; i++) {
        json_t *m = json_object();
        json_object_set_new(m, "role", json_string(msgs[i].role ? msgs[i].role : ""));
        if (msgs[i].content) json_object_set_new(m, "content", json_string(msgs[i].content));
        if (msgs[i].reasoning_content)
            json_object_set_new(m, "reasoning_content", json_string(msgs[i].reasoning_content));
        if (msgs[i].name) json_object_set_new(m, "name", json_string(msgs[i].name));
        json_array_append_new(arr, m);
    }
    json_object_set_new(conv, "thinking", json_boolean(o && o->thinking));
    json_object_set_new(conv, "add_generation_prompt", json_boolean(o && o->add_generation_prompt));
    if (o && o->thinking_effort) json_object_set_new(conv, "thinking_effort", json_string(o->thinking_effort));
    int rc = 0;
    if (o && o->tools_json) {
        json_error_t je;
        json_t *tools = json_loads(o->tools_json, 0, &je);
        if (!tools) rc = rm_errf(err, "chat: tools: line %d column %d: %s", je.line, je.column, je.text);
        else json_object_set_new(conv, "tools", tools);
    }
    if (!rc) rc = render_conv(t, f, conv, NULL, ids, err);
    json_decref(conv);
    return rc;
}
