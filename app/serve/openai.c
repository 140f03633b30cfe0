/* openai.c — the OpenAI API's JSON for `remora serve` (serve.h): request
 * bodies of /v1/chat/completions and /v1/completions checked field by field
 * and turned into a serve_req (the prompt rendered by the engine from the
 * request's own messages), and replies, stream chunks, usage and errors
 * written as the API writes them.
 *
 * The rules follow the API reference: unknown fields are ignored (clients
 * send many that do not change a local model's reply), a field of the
 * wrong type is refused with its name, and a value this server cannot
 * honour is refused rather than silently dropped: n > 1, logprobs,
 * penalties and logit_bias that are not neutral, an unknown
 * response_format, content parts other than text. The chat's reasoning
 * goes to reasoning_content (as SGLang, llama-server and Moonshot's API
 * send it), the answer to content, the model's tool calls to tool_calls
 * (whole, or as deltas: id, type and name first, then pieces of the
 * arguments, which is how the SDKs accumulate them) with finish_reason
 * "tool_calls"; a malformed call comes back as content text with
 * finish_reason "malformed_tool_call". tool_choice "required" or a named
 * function is honoured by opening the tools block (or the named call) in
 * the prompt, so the model can only go on with a call.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <jansson.h>
#include "serve.h"

void serve_safe_copy(char *dst, size_t cap, const char *src)
{
    rm_buf b = { 0 };
    size_t n = 0;
    if (!rm_text_safe(&b, src, strlen(src), 0)) {
        n = b.len < cap - 1 ? b.len : cap - 1;
        while (n && n < b.len && ((unsigned char)b.p[n] & 0xC0) == 0x80) n--;
        memcpy(dst, b.p ? b.p : "", n);
    }
    dst[n] = 0;
    rm_buf_free(&b);
}

int serve_fail(serve_error *e, int status, const char *type, const char *code, const char *param,
               const char *fmt, ...)
{
    e->status = status;
    e->type = type;
    e->code = code;
    e->retry_after = 0;
    va_list ap;
    va_start(ap, fmt);
    char raw[sizeof e->message];
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* a message quotes what the client sent (a role, a model name, a Host)
     * and is cut to fit: made valid UTF-8 without controls, or the JSON
     * encoder would refuse it */
    serve_safe_copy(e->message, sizeof e->message, raw);
    serve_safe_copy(e->param, sizeof e->param, param ? param : "");
    return -1;
}

#define BAD(e, param, ...) serve_fail(e, 400, "invalid_request_error", "invalid_value", param, __VA_ARGS__)
#define UNSUPPORTED(e, param, ...) serve_fail(e, 400, "invalid_request_error", "unsupported_value", param, __VA_ARGS__)

void serve_req_free(serve_req *r)
{
    rm_prompt_free(&r->prompt);
    for (int i = 0; i < r->nstops; i++) free(r->stops[i]);
    r->nstops = 0;
}

/* ---- request fields ----------------------------------------------------- */

/* Each getter leaves *out as it was when the field is missing or null. */

static int get_bool(const json_t *o, const char *key, int *out, serve_error *e)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_boolean(v)) return BAD(e, key, "%s must be true or false", key);
    *out = json_is_true(v);
    return 0;
}

/* A boolean in an optional object of o ("stream_options": {"include_usage":
 * true}); an error names it whole ("stream_options.include_usage"). */
static int get_inner_bool(const json_t *o, const char *obj, const char *key, int *out, serve_error *e)
{
    json_t *in = json_object_get(o, obj);
    if (!in || json_is_null(in)) return 0;
    if (!json_is_object(in)) return BAD(e, obj, "%s must be an object", obj);
    if (get_bool(in, key, out, e)) {
        snprintf(e->param, sizeof e->param, "%s.%s", obj, key);
        return -1;
    }
    return 0;
}

static int get_number(const json_t *o, const char *key, double lo, double hi, int lo_open, double *out,
                      serve_error *e)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return 0;
    double d = json_number_value(v);
    if (!json_is_number(v) || !isfinite(d) || (lo_open ? d <= lo : d < lo) || d > hi)
        return BAD(e, key, "%s must be a number in %c%g, %g]", key, lo_open ? '(' : '[', lo, hi);
    *out = d;
    return 0;
}

static int get_int(const json_t *o, const char *key, long long lo, long long hi, long long *out, serve_error *e)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return 0;
    json_int_t x = json_integer_value(v);
    if (!json_is_integer(v) || x < lo || x > hi) return BAD(e, key, "%s must be an integer in [%lld, %lld]", key, lo, hi);
    *out = x;
    return 0;
}

/* Refuses a field whose value is set to anything but its neutral one. */
static int neutral_number(const json_t *o, const char *key, double neutral, serve_error *e)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_number(v)) return BAD(e, key, "%s must be a number", key);
    if (json_number_value(v) != neutral) return UNSUPPORTED(e, key, "%s is not supported (only %g)", key, neutral);
    return 0;
}

static int parse_stops(const json_t *o, serve_req *r, serve_error *e)
{
    json_t *v = json_object_get(o, "stop");
    if (!v || json_is_null(v)) return 0;
    size_t n = json_is_string(v) ? 1 : json_is_array(v) ? json_array_size(v) : (size_t)-1;
    if (n == (size_t)-1) return BAD(e, "stop", "stop must be a string or an array of strings");
    if (n > SERVE_MAX_STOPS) return BAD(e, "stop", "stop may hold at most %d strings", SERVE_MAX_STOPS);
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_is_string(v) ? v : json_array_get(v, i);
        if (!json_is_string(s)) return BAD(e, "stop", "stop[%zu] must be a string", i);
        size_t len = json_string_length(s);
        if (len == 0) return BAD(e, "stop", "stop[%zu] is empty", i);
        if (!(r->stops[r->nstops] = strndup(json_string_value(s), len)))
            return serve_fail(e, 500, "server_error", NULL, NULL, "out of memory");
        r->nstops++;
        if (len > r->stop_max) r->stop_max = len;
    }
    return 0;
}

void serve_new_id(serve_req *r, const char *prefix)
{
    unsigned char b[12] = { 0 };
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        static unsigned long long counter;
        unsigned long long c = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
        memcpy(b, &c, sizeof c);
    }
    int n = snprintf(r->id, sizeof r->id, "%s", prefix);
    for (size_t i = 0; i < sizeof b && n + 2 < (int)sizeof r->id; i++) n += snprintf(r->id + n, 3, "%02x", b[i]);
    r->created = (long long)time(NULL);
}

/* What both endpoints share: the model, streaming, sampling, the length
 * cap, stop strings, the fields that cannot be honoured, the stats
 * extension. */
int serve_parse_common(const serve_cfg *cfg, const json_t *o, serve_req *r, int default_max, serve_error *e)
{
    json_t *model = json_object_get(o, "model");
    if (model && !json_is_null(model)) {
        if (!json_is_string(model)) return BAD(e, "model", "model must be a string");
        if (strcmp(json_string_value(model), cfg->served_name))
            return serve_fail(e, 404, "invalid_request_error", "model_not_found", "model",
                              "The model '%s' does not exist; this server serves '%s'", json_string_value(model),
                              cfg->served_name);
    }
    if (get_bool(o, "stream", &r->stream, e) ||
        get_inner_bool(o, "stream_options", "include_usage", &r->include_usage, e))
        return -1;
    r->gen = cfg->gen;
    double t = r->gen.temperature, p = r->gen.top_p;
    if (get_number(o, "temperature", 0, 2, 0, &t, e) || get_number(o, "top_p", 0, 1, 1, &p, e)) return -1;
    r->gen.temperature = (float)t;
    r->gen.top_p = (float)p;
    long long seed = (long long)r->gen.seed, max = default_max, n = 1;
    if (get_int(o, "seed", 0, LLONG_MAX, &seed, e)) return -1;
    r->gen.seed = (uint64_t)seed;
    if (get_int(o, "max_tokens", 1, INT_MAX, &max, e) || get_int(o, "max_completion_tokens", 1, INT_MAX, &max, e))
        return -1;
    /* an upper bound: a request for more than the server's cap gets the cap */
    r->gen.max_new = max < cfg->max_tokens ? (int)max : cfg->max_tokens;
    if (get_int(o, "n", 1, INT_MAX, &n, e)) return -1;
    if (n != 1) return UNSUPPORTED(e, "n", "n must be 1: one reply per request");
    json_t *lp = json_object_get(o, "logprobs");
    if (lp && !json_is_null(lp) && !json_is_false(lp) && !(json_is_integer(lp) && json_integer_value(lp) == 0))
        return UNSUPPORTED(e, "logprobs", "logprobs are not supported");
    json_t *tlp = json_object_get(o, "top_logprobs");
    if (tlp && !json_is_null(tlp) && !(json_is_integer(tlp) && json_integer_value(tlp) == 0))
        return UNSUPPORTED(e, "top_logprobs", "top_logprobs are not supported");
    if (neutral_number(o, "presence_penalty", 0, e) || neutral_number(o, "frequency_penalty", 0, e)) return -1;
    json_t *lb = json_object_get(o, "logit_bias");
    if (lb && !json_is_null(lb) && !(json_is_object(lb) && json_object_size(lb) == 0))
        return UNSUPPORTED(e, "logit_bias", "logit_bias is not supported");
    if (parse_stops(o, r, e)) return -1;
    return get_inner_bool(o, "remora", "stats", &r->stats, e);
}

json_t *serve_parse_body(serve_req *r, const serve_api *api, int kind, const char *body, size_t len,
                         serve_error *e)
{
    memset(r, 0, sizeof *r);
    r->api = api;
    r->kind = kind;
    json_error_t je;
    json_t *o = json_loadb(body, len, 0, &je);
    if (!o) {
        serve_fail(e, 400, "invalid_request_error", "invalid_json", NULL,
                   "the body is not valid JSON: line %d column %d: %s", je.line, je.column, je.text);
        return NULL;
    }
    if (!json_is_object(o)) {
        json_decref(o);
        BAD(e, NULL, "the body must be a JSON object");
        return NULL;
    }
    return o;
}

/* ---- /v1/chat/completions ------------------------------------------------ */

/* One message, checked and copied into msgs (developer becomes system, the
 * role K3's format has for it). */
static int check_message(const json_t *m, size_t i, json_t *msgs, serve_error *e)
{
    char where[64];
    snprintf(where, sizeof where, "messages[%zu]", i);
    if (!json_is_object(m)) return BAD(e, where, "%s must be an object", where);
    json_t *rolev = json_object_get(m, "role");
    const char *role = json_string_value(rolev);
    snprintf(where, sizeof where, "messages[%zu].role", i);
    if (!role) return BAD(e, where, "%s must be a string", where);
    static const char *const roles[] = { "system", "developer", "user", "assistant", "tool" };
    int known = 0;
    for (size_t k = 0; k < sizeof roles / sizeof roles[0]; k++) known |= !strcmp(role, roles[k]);
    if (!known) return BAD(e, where, "%s '%s' is not one of system, developer, user, assistant, tool", where, role);
    const int assistant = !strcmp(role, "assistant");
    json_t *c = json_object_get(m, "content");
    snprintf(where, sizeof where, "messages[%zu].content", i);
    if (!c || json_is_null(c)) {
        if (!assistant) return BAD(e, where, "%s is missing", where);
    } else if (json_is_array(c)) {
        size_t j;
        json_t *part;
        json_array_foreach(c, j, part) {
            const char *type = json_string_value(json_object_get(part, "type"));
            snprintf(where, sizeof where, "messages[%zu].content[%zu]", i, j);
            if (!type || strcmp(type, "text"))
                return UNSUPPORTED(e, where, "%s: only text parts are supported (this model reads no images or audio)",
                                   where);
            if (!json_is_string(json_object_get(part, "text"))) return BAD(e, where, "%s.text must be a string", where);
        }
    } else if (!json_is_string(c)) {
        return BAD(e, where, "%s must be a string or an array of text parts", where);
    }
    static const char *const strings[] = { "reasoning_content", "reasoning", "name", "tool_call_id" };
    for (size_t k = 0; k < sizeof strings / sizeof strings[0]; k++) {
        json_t *v = json_object_get(m, strings[k]);
        snprintf(where, sizeof where, "messages[%zu].%s", i, strings[k]);
        if (v && !json_is_null(v) && !json_is_string(v)) return BAD(e, where, "%s must be a string", where);
    }
    json_t *calls = json_object_get(m, "tool_calls");
    snprintf(where, sizeof where, "messages[%zu].tool_calls", i);
    if (calls && !json_is_null(calls) && !json_is_array(calls)) return BAD(e, where, "%s must be an array", where);
    json_t *copy = json_copy((json_t *)m);
    if (!copy) return serve_fail(e, 500, "server_error", NULL, NULL, "out of memory");
    if (!strcmp(role, "developer")) json_object_set_new(copy, "role", json_string("system"));
    if (json_array_append_new(msgs, copy)) return serve_fail(e, 500, "server_error", NULL, NULL, "out of memory");
    return 0;
}

/* thinking and its effort: the server's default, reasoning_effort, then
 * chat_template_kwargs (vLLM's and SGLang's way to pass thinking: false). */
static int parse_thinking(const serve_cfg *cfg, const json_t *o, json_t *conv, serve_error *e)
{
    int thinking = cfg->gen.think;
    const char *effort = cfg->gen.thinking_effort;
    json_t *re = json_object_get(o, "reasoning_effort");
    if (re && !json_is_null(re)) {
        const char *v = json_string_value(re);
        if (v && !strcmp(v, "none")) thinking = 0;
        else if (v && (!strcmp(v, "low") || !strcmp(v, "medium") || !strcmp(v, "high") || !strcmp(v, "max")))
            effort = v;
        else return BAD(e, "reasoning_effort", "reasoning_effort must be none, low, medium, high or max");
    }
    json_t *kw = json_object_get(o, "chat_template_kwargs");
    if (kw && !json_is_null(kw)) {
        if (!json_is_object(kw)) return BAD(e, "chat_template_kwargs", "chat_template_kwargs must be an object");
        if (get_bool(kw, "thinking", &thinking, e)) {
            snprintf(e->param, sizeof e->param, "chat_template_kwargs.thinking");
            return -1;
        }
        json_t *te = json_object_get(kw, "thinking_effort");
        if (te && !json_is_null(te)) {
            const char *v = json_string_value(te);
            if (!v || (strcmp(v, "low") && strcmp(v, "medium") && strcmp(v, "high") && strcmp(v, "max")))
                return BAD(e, "chat_template_kwargs.thinking_effort",
                           "chat_template_kwargs.thinking_effort must be low, medium, high or max");
            effort = v;
        }
    }
    json_object_set_new(conv, "thinking", json_boolean(thinking));
    if (effort) json_object_set_new(conv, "thinking_effort", json_string(effort));
    return 0;
}

/* tools, tool_choice and response_format: rendered as K3's format states
 * them (a forced choice opens the tools block in the prompt, template.c);
 * an unknown format cannot be honoured. With tool_choice none, or no
 * tools, calls the model makes anyway are dropped (never shown as text). */
static int parse_tools(const json_t *o, json_t *conv, serve_req *r, serve_error *e)
{
    json_t *tools = json_object_get(o, "tools");
    if (tools && !json_is_null(tools)) {
        if (!json_is_array(tools)) return BAD(e, "tools", "tools must be an array");
        size_t i;
        json_t *t;
        json_array_foreach(tools, i, t) {
            char param[32];
            snprintf(param, sizeof param, "tools[%zu]", i);
            const json_t *fn = json_object_get(t, "function");
            const char *type = json_string_value(json_object_get(t, "type"));
            if (!json_is_object(t) || !type || strcmp(type, "function") || !json_is_object(fn) ||
                !json_is_string(json_object_get(fn, "name")))
                return BAD(e, param, "%s must be an object {\"type\": \"function\", \"function\": {\"name\": ...}}",
                           param);
        }
        if (json_array_size(tools)) json_object_set(conv, "tools", tools);
        r->tools = json_array_size(tools) > 0;
    }
    int ptc = 1;
    if (get_bool(o, "parallel_tool_calls", &ptc, e)) return -1;
    r->one_call = !ptc;
    json_t *tc = json_object_get(o, "tool_choice");
    if (tc && !json_is_null(tc)) {
        const char *v = json_string_value(tc);
        const char *name = json_string_value(json_object_get(json_object_get(tc, "function"), "name"));
        if (v && !strcmp(v, "none")) {
            json_object_set_new(conv, "tool_choice", json_string("none"));
            r->tools = 0;
        } else if (v && !strcmp(v, "required")) {
            if (!r->tools) return BAD(e, "tool_choice", "tool_choice required needs tools");
            json_object_set_new(conv, "tool_choice", json_string("required"));
        } else if (!v && json_is_object(tc) && name) {
            if (!r->tools) return BAD(e, "tool_choice", "tool_choice names a function but no tools are declared");
            int known = 0;
            size_t i;
            json_t *t;
            json_array_foreach(tools, i, t) {
                const char *tn = json_string_value(json_object_get(json_object_get(t, "function"), "name"));
                known |= tn && !strcmp(tn, name);
            }
            if (!known) return BAD(e, "tool_choice", "tool_choice names '%.64s', which is not one of the tools", name);
            if (strlen(name) > 128 || strpbrk(name, "\"&<"))
                return UNSUPPORTED(e, "tool_choice", "tool_choice: a forced name must be at most 128 bytes without \", & or <");
            json_object_set(conv, "tool_choice", tc);
        } else if (!v || strcmp(v, "auto")) {
            return BAD(e, "tool_choice", "tool_choice must be auto, none, required or {\"type\": \"function\", "
                                         "\"function\": {\"name\": ...}}");
        }
    }
    json_t *rf = json_object_get(o, "response_format");
    if (rf && !json_is_null(rf)) {
        const char *type = json_string_value(json_object_get(rf, "type"));
        if (!json_is_object(rf) || !type) return BAD(e, "response_format", "response_format must be an object with a type");
        if (!strcmp(type, "json_object") || !strcmp(type, "json_schema")) json_object_set(conv, "response_format", rf);
        else if (strcmp(type, "text"))
            return UNSUPPORTED(e, "response_format", "response_format type '%s' is not one of text, json_object, json_schema",
                               type);
    }
    return 0;
}

int serve_render(const serve_cfg *cfg, rm_session *s, json_t *conv, serve_req *r, serve_error *e)
{
    if (!s) return serve_fail(e, 503, "server_error", "model_loading", NULL, "the model is still loading");
    serve_replay_apply(cfg->replay, conv);
    char *text = json_dumps(conv, JSON_COMPACT);
    if (!text) return serve_fail(e, 500, "server_error", NULL, NULL, "out of memory");
    rm_err err = { "" };
    int rc = rm_session_render(s, text, strlen(text), &r->prompt, &err);
    free(text);
    if (rc) return BAD(e, "messages", "messages: %s", err.msg);
    r->think = r->prompt.mode == RM_REPLY_REASONING;
    return 0;
}

int oa_parse_chat(const serve_cfg *cfg, rm_session *s, const char *body, size_t len, serve_req *r, serve_error *e)
{
    json_t *o = serve_parse_body(r, &serve_openai, REQ_CHAT, body, len, e);
    if (!o) return -1;
    json_t *conv = json_object(), *msgs = json_array();
    int rc = !conv || !msgs || json_object_set(conv, "messages", msgs)
                 ? serve_fail(e, 500, "server_error", NULL, NULL, "out of memory") : 0;
    if (!rc) rc = serve_parse_common(cfg, o, r, cfg->max_tokens, e);
    json_t *in = json_object_get(o, "messages");
    if (!rc && (!json_is_array(in) || json_array_size(in) == 0))
        rc = BAD(e, "messages", "messages must be a non-empty array");
    size_t i;
    json_t *m;
    if (!rc) json_array_foreach(in, i, m) if ((rc = check_message(m, i, msgs, e))) break;
    if (!rc) rc = parse_thinking(cfg, o, conv, e);
    if (!rc) rc = parse_tools(o, conv, r, e);
    if (!rc) rc = serve_render(cfg, s, conv, r, e);
    json_decref(msgs);
    json_decref(conv);
    json_decref(o);
    if (rc) serve_req_free(r);
    else serve_new_id(r, "chatcmpl-");
    return rc;
}

/* ---- /v1/completions ---------------------------------------------------- */

static int parse_prompt(rm_session *s, const json_t *p, serve_req *r, serve_error *e)
{
    if (!s) return serve_fail(e, 503, "server_error", "model_loading", NULL, "the model is still loading");
    /* one prompt: a string or ids, alone or as the one element of a list */
    if (json_is_array(p) && json_array_size(p) == 1 && !json_is_integer(json_array_get(p, 0))) p = json_array_get(p, 0);
    rm_err err = { "" };
    if (json_is_string(p)) {
        if (rm_session_prompt_text(s, json_string_value(p), json_string_length(p), &r->prompt, &err))
            return BAD(e, "prompt", "prompt: %s", err.msg);
        return 0;
    }
    if (!json_is_array(p)) return BAD(e, "prompt", "prompt must be a string or an array of token ids");
    size_t n = json_array_size(p), i;
    int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids) return serve_fail(e, 500, "server_error", NULL, NULL, "out of memory");
    json_t *v;
    json_array_foreach(p, i, v) {
        json_int_t x = json_integer_value(v);
        if (!json_is_integer(v) || x < 0 || x > INT32_MAX) {
            free(ids);
            if (json_is_string(v)) return UNSUPPORTED(e, "prompt", "prompt: one prompt per request");
            return BAD(e, "prompt", "prompt[%zu] must be a token id", i);
        }
        ids[i] = (int32_t)x;
    }
    int rc = n > INT_MAX ? rm_errf(&err, "too many ids") : rm_session_prompt_ids(s, ids, (int)n, &r->prompt, &err);
    free(ids);
    return rc ? BAD(e, "prompt", "prompt: %s", err.msg) : 0;
}

int oa_parse_completion(const serve_cfg *cfg, rm_session *s, const char *body, size_t len, serve_req *r, serve_error *e)
{
    json_t *o = serve_parse_body(r, &serve_openai, REQ_COMPLETION, body, len, e);
    if (!o) return -1;
    int rc = serve_parse_common(cfg, o, r, 256, e);
    int echo = 0;
    long long best_of = 1;
    if (!rc && !(rc = get_bool(o, "echo", &echo, e)) && echo) rc = UNSUPPORTED(e, "echo", "echo is not supported");
    if (!rc && !(rc = get_int(o, "best_of", 1, INT_MAX, &best_of, e)) && best_of != 1)
        rc = UNSUPPORTED(e, "best_of", "best_of must be 1");
    json_t *suffix = json_object_get(o, "suffix");
    if (!rc && suffix && !json_is_null(suffix) && !(json_is_string(suffix) && json_string_length(suffix) == 0))
        rc = UNSUPPORTED(e, "suffix", "suffix is not supported");
    json_t *p = json_object_get(o, "prompt");
    if (!rc && (!p || json_is_null(p))) rc = BAD(e, "prompt", "prompt is missing");
    if (!rc) rc = parse_prompt(s, p, r, e);
    json_decref(o);
    if (rc) serve_req_free(r);
    else serve_new_id(r, "cmpl-");
    return rc;
}

/* ---- replies ------------------------------------------------------------ */

static const char *finish_name(int finish)
{
    switch (finish) {
    case SERVE_FIN_LENGTH: return "length";
    case SERVE_FIN_TOOLS: return "tool_calls";
    case SERVE_FIN_BAD_TOOL: return "malformed_tool_call";
    default: return "stop";
    }
}

/* Text as a JSON string; the engine's text is whole UTF-8, so a failure
 * is out of memory. */
static json_t *text_value(const char *s, size_t n) { return json_stringn(s ? s : "", s ? n : 0); }

static json_t *usage(const serve_req *r, const rm_reply_info *info)
{
    json_t *u = json_pack("{s:i,s:i,s:i,s:{s:i}}", "prompt_tokens", info->prompt_tokens, "completion_tokens",
                          info->completion_tokens, "total_tokens", info->prompt_tokens + info->completion_tokens,
                          "prompt_tokens_details", "cached_tokens", info->cached_tokens);
    if (u && r->kind == REQ_CHAT)
        json_object_set_new(u, "completion_tokens_details",
                            json_pack("{s:i}", "reasoning_tokens", info->reasoning_tokens));
    return u;
}

static json_t *envelope(const serve_cfg *cfg, const serve_req *r, const char *object)
{
    return json_pack("{s:s,s:s,s:I,s:s}", "id", r->id, "object", object, "created", (json_int_t)r->created, "model",
                     cfg->served_name);
}

/* Appends "data: " JSON [with ,"remora":stats] "\n\n" and frees j. */
static int emit(json_t *j, const rm_token_stats *st, int sse, rm_buf *out)
{
    if (!j) return -1;
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!s) return -1;
    size_t len0 = out->len, n = strlen(s);
    int rc = sse ? rm_buf_adds(out, "data: ") : 0;
    /* the stats object goes in as the engine writes it, before the last brace */
    if (!rc) rc = rm_buf_add(out, s, st ? n - 1 : n);
    if (!rc && st) rc = rm_buf_adds(out, ",\"remora\":") || rm_token_stats_json(st, out) ||
                        rm_buf_adds(out, "}");
    if (!rc && sse) rc = rm_buf_adds(out, "\n\n");
    free(s);
    if (rc) out->len = len0;
    return rc;
}

/* A call as the API writes it: whole (message.tool_calls[]), or what a
 * stream has not sent of it yet (delta.tool_calls[]: id, type and name
 * first, then pieces of the arguments), NULL when nothing is new. */
static json_t *call_value(serve_call *c, int index, int whole)
{
    if (whole)
        return json_pack("{s:s,s:s,s:{s:s,s:s%}}", "id", c->id, "type", "function", "function", "name", c->name,
                         "arguments", c->args.p ? c->args.p : "", c->args.len);
    if (c->begun_sent && c->args_sent == c->args.len) return NULL;
    json_t *fn = json_pack("{s:s%}", "arguments", c->args.p ? c->args.p + c->args_sent : "", c->args.len - c->args_sent);
    json_t *v = json_pack("{s:i,s:o}", "index", index, "function", fn);
    if (v && !c->begun_sent) {
        json_object_set_new(v, "id", json_string(c->id));
        json_object_set_new(v, "type", json_string("function"));
        json_object_set_new(fn, "name", json_string(c->name));
    }
    c->begun_sent = 1;
    c->args_sent = c->args.len;
    return v;
}

/* The calls of the reply: all of them whole, or what is new (NULL: none). */
static json_t *calls_value(serve_calls *cs, int whole)
{
    json_t *a = NULL;
    for (int i = 0; cs && i < cs->n; i++) {
        if (whole && !cs->v[i].ended) continue;
        json_t *v = call_value(&cs->v[i], i, whole);
        if (!v) continue;
        if (!a) a = json_array();
        json_array_append_new(a, v);
    }
    return a;
}

/* The answer of a reply that ended in a malformed tool call: its text. */
static int with_bad_call(const serve_reply *d, rm_buf *b)
{
    if (rm_buf_add(b, d->answer ? d->answer : "", d->answer ? d->alen : 0)) return -1;
    if (d->finish == SERVE_FIN_BAD_TOOL && d->calls && rm_buf_add(b, d->calls->bad_text.p, d->calls->bad_text.len))
        return -1;
    return 0;
}

/* One chunk: text, calls and the finish (any may be missing). */
static int oa_chunk(const serve_cfg *cfg, const serve_req *r, const serve_reply *d, int finish, rm_buf *out)
{
    json_t *c = envelope(cfg, r, r->kind == REQ_CHAT ? "chat.completion.chunk" : "text_completion");
    json_t *choice = json_pack("{s:i,s:n,s:o}", "index", 0, "logprobs", "finish_reason",
                               finish ? json_string(finish_name(finish)) : json_null());
    if (!c || !choice) { json_decref(c); json_decref(choice); return -1; }
    if (r->kind == REQ_CHAT) {
        json_t *dv = json_object();
        if (d->rlen) json_object_set_new(dv, "reasoning_content", text_value(d->reasoning, d->rlen));
        if (d->alen) json_object_set_new(dv, "content", text_value(d->answer, d->alen));
        json_t *calls = calls_value(d->calls, 0);
        if (calls) json_object_set_new(dv, "tool_calls", calls);
        json_object_set_new(choice, "delta", dv);
    } else {
        json_object_set_new(choice, "text", text_value(d->answer, d->alen));
    }
    json_object_set_new(c, "choices", json_pack("[o]", choice));
    if (r->include_usage) json_object_set_new(c, "usage", json_null());
    return emit(c, d->st, 1, out);
}

/* Whether a chunk has anything to say. */
static int has_news(const serve_reply *d)
{
    if (d->rlen || d->alen || d->st) return 1;
    for (int i = 0; d->calls && i < d->calls->n; i++)
        if (!d->calls->v[i].begun_sent || d->calls->v[i].args_sent < d->calls->v[i].args.len) return 1;
    return 0;
}

static int oa_stream_delta(const serve_cfg *cfg, serve_req *r, const serve_reply *d, rm_buf *out)
{
    return has_news(d) ? oa_chunk(cfg, r, d, 0, out) : 0;
}

/* The first chunk of a chat stream (the assistant role). */
static int oa_stream_begin(const serve_cfg *cfg, serve_req *r, rm_buf *out)
{
    if (r->kind != REQ_CHAT) return 0;
    json_t *c = envelope(cfg, r, "chat.completion.chunk");
    if (!c) return -1;
    json_object_set_new(c, "choices", json_pack("[{s:i,s:{s:s,s:s},s:n,s:n}]", "index", 0, "delta", "role",
                                                "assistant", "content", "", "logprobs", "finish_reason"));
    if (r->include_usage) json_object_set_new(c, "usage", json_null());
    return emit(c, NULL, 1, out);
}

/* A chunk with no choices that carries a prompt or progress record of the
 * stats extension (nothing without it: SSE comments keep the stream alive). */
static int oa_stream_progress(const serve_cfg *cfg, serve_req *r, const rm_token_stats *st, rm_buf *out)
{
    if (!st || !r->stats) return 0;
    json_t *c = envelope(cfg, r, r->kind == REQ_CHAT ? "chat.completion.chunk" : "text_completion");
    if (!c) return -1;
    json_object_set_new(c, "choices", json_array());
    return emit(c, st, 1, out);
}

/* The last text and calls, the finish, the usage chunk (choices: []) when
 * asked for, and "data: [DONE]". */
static int oa_stream_end(const serve_cfg *cfg, serve_req *r, const serve_reply *d, rm_buf *out)
{
    serve_reply last = *d;
    rm_buf text = { 0 };
    int rc = 0;
    if (d->finish == SERVE_FIN_BAD_TOOL) {
        rc = with_bad_call(d, &text);
        last.answer = text.p;
        last.alen = text.len;
    }
    if (!rc && has_news(&last)) rc = oa_chunk(cfg, r, &last, 0, out);
    serve_reply fin = { .calls = NULL };
    if (!rc) rc = oa_chunk(cfg, r, &fin, d->finish, out);
    if (!rc && r->include_usage) {
        json_t *c = envelope(cfg, r, r->kind == REQ_CHAT ? "chat.completion.chunk" : "text_completion");
        if (c) {
            json_object_set_new(c, "choices", json_array());
            json_object_set_new(c, "usage", usage(r, d->info));
        }
        rc = emit(c, NULL, 1, out);
    }
    rm_buf_free(&text);
    return rc ? rc : rm_buf_adds(out, "data: [DONE]\n\n");
}

static json_t *error_value(const serve_error *e)
{
    return json_pack("{s:{s:s,s:s,s:o,s:o}}", "error", "message", e->message, "type", e->type ? e->type : "server_error",
                     "param", e->param[0] ? json_string(e->param) : json_null(), "code",
                     e->code ? json_string(e->code) : json_null());
}

int oa_error(const serve_error *e, rm_buf *out) { return emit(error_value(e), NULL, 0, out); }

static int oa_error_sse(const serve_error *e, int sse, rm_buf *out) { return emit(error_value(e), NULL, sse, out); }

static int oa_whole(const serve_cfg *cfg, serve_req *r, const serve_reply *d, rm_buf *out)
{
    json_t *c = envelope(cfg, r, r->kind == REQ_CHAT ? "chat.completion" : "text_completion");
    json_t *choice = json_pack("{s:i,s:n,s:s}", "index", 0, "logprobs", "finish_reason", finish_name(d->finish));
    rm_buf text = { 0 };
    if (!c || !choice || with_bad_call(d, &text)) { json_decref(c); json_decref(choice); rm_buf_free(&text); return -1; }
    if (r->kind == REQ_CHAT) {
        json_t *calls = d->finish == SERVE_FIN_TOOLS ? calls_value(d->calls, 1) : NULL;
        /* content is null beside tool calls with no text, as the API sends it */
        json_t *m = json_pack("{s:s,s:o}", "role", "assistant", "content",
                              calls && !text.len ? json_null() : text_value(text.p, text.len));
        if (m && d->rlen) json_object_set_new(m, "reasoning_content", text_value(d->reasoning, d->rlen));
        if (m && calls) json_object_set_new(m, "tool_calls", calls);
        json_object_set_new(choice, "message", m);
    } else {
        json_object_set_new(choice, "text", text_value(text.p, text.len));
    }
    rm_buf_free(&text);
    json_object_set_new(c, "choices", json_pack("[o]", choice));
    json_object_set_new(c, "usage", usage(r, d->info));
    return emit(c, NULL, 0, out);
}

const serve_api serve_openai = { "openai", oa_stream_begin, oa_stream_delta, oa_stream_progress, oa_stream_end,
                                 oa_whole, oa_error_sse, finish_name, ": keep-alive\n\n" };

int oa_models(const serve_cfg *cfg, rm_session *s, const char *id, rm_buf *out, serve_error *e)
{
    const char *name = cfg->served_name;
    if (id && strcmp(id, name))
        return serve_fail(e, 404, "invalid_request_error", "model_not_found", "model",
                          "The model '%s' does not exist; this server serves '%s'", id, name);
    json_t *m = json_pack("{s:s,s:s,s:I,s:s}", "id", name, "object", "model", "created", (json_int_t)0, "owned_by",
                          "remora");
    if (m && s) {
        const rm_model_info *i = rm_model_get_info(rm_session_model(s));
        json_object_set_new(m, "remora", json_pack("{s:i,s:i}", "layers", i->num_layers, "first_moe_layer",
                                                   i->first_moe_layer));
    }
    json_t *j = id ? m : json_pack("{s:s,s:[o]}", "object", "list", "data", m);
    if (emit(j, NULL, 0, out)) return serve_fail(e, 500, "server_error", NULL, NULL, "out of memory");
    return 0;
}
