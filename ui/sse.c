/* sse.c — server-sent events, chat completion chunks and think markers in
 * plain content (see sse.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "sse.h"

/* ---- events ------------------------------------------------------------- */

/* A complete line: a field of the event being read, or the blank line that
 * ends it. */
static int take_line(ui_sse *s, ui_sse_fn fn, void *ud, rm_err *err)
{
    const char *l = s->line.p ? s->line.p : "";
    size_t n = s->line.len;
    int rc = 0;
    if (n == 0) {
        if (s->have_data) rc = fn(ud, s->event, s->data.p ? s->data.p : "", s->data.len);
        rm_buf_reset(&s->data);
        s->have_data = 0;
        s->event[0] = 0;
    } else if (l[0] != ':') {                   /* ":" starts a comment (keep-alives) */
        const char *colon = memchr(l, ':', n);
        size_t flen = colon ? (size_t)(colon - l) : n;
        const char *v = colon ? colon + 1 : l + n;
        size_t vlen = (size_t)(l + n - v);
        if (vlen && *v == ' ') { v++; vlen--; }
        if (flen == 4 && !memcmp(l, "data", 4)) {
            s->data.max = UI_SSE_EVENT_MAX;
            if ((s->have_data && rm_buf_add(&s->data, "\n", 1)) || rm_buf_add(&s->data, v, vlen))
                rc = rm_errf(err, "an event of the stream is larger than %u MB, or memory ran out",
                             UI_SSE_EVENT_MAX >> 20);
            s->have_data = 1;
        } else if (flen == 5 && !memcmp(l, "event", 5)) {
            size_t k = vlen < sizeof s->event - 1 ? vlen : sizeof s->event - 1;
            memcpy(s->event, v, k);
            s->event[k] = 0;
        }                                       /* id, retry and unknown fields: nothing to do */
    }
    rm_buf_reset(&s->line);
    return rc;
}

int ui_sse_feed(ui_sse *s, const char *p, size_t n, ui_sse_fn fn, void *ud, rm_err *err)
{
    size_t i = 0;
    while (i < n) {
        char ch = p[i];
        if (ch == '\n' || ch == '\r') {
            int crlf = ch == '\n' && s->after_cr;
            s->after_cr = ch == '\r';
            i++;
            if (crlf) continue;                 /* the LF of a CRLF */
            s->consumed = s->fed + i;
            int rc = take_line(s, fn, ud, err);
            if (rc) { s->fed += n; s->consumed = s->fed; return rc; }
            continue;
        }
        s->after_cr = 0;
        size_t j = i;
        while (j < n && p[j] != '\n' && p[j] != '\r') j++;
        s->line.max = UI_SSE_EVENT_MAX + 64;
        if (rm_buf_add(&s->line, p + i, j - i))
            return rm_errf(err, "a line of the stream is larger than %u MB, or memory ran out",
                           UI_SSE_EVENT_MAX >> 20);
        i = j;
    }
    s->fed += n;
    s->consumed = s->fed;
    return 0;
}

int ui_sse_end(ui_sse *s, ui_sse_fn fn, void *ud, rm_err *err)
{
    int rc = s->line.len ? take_line(s, fn, ud, err) : 0;
    if (!rc) rc = take_line(s, fn, ud, err);   /* the blank line that did not come */
    return rc;
}

void ui_sse_free(ui_sse *s)
{
    rm_buf_free(&s->line);
    rm_buf_free(&s->data);
    memset(s, 0, sizeof *s);
}

/* ---- chunks ------------------------------------------------------------- */

/* v as a string (NULL: absent or null); a value of another type is refused. */
static int get_text(const json_t *o, const char *key, const char *where, const char **out, size_t *len,
                    rm_err *err)
{
    *out = NULL;
    *len = 0;
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_string(v)) return rm_errf(err, "chunk: %s%s must be a string", where, key);
    *out = json_string_value(v);
    *len = json_string_length(v);
    return 0;
}

static int get_count(const json_t *o, const char *key, const char *where, long long *out, rm_err *err)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return rm_errf(err, "chunk: %s%s must be a count", where, key);
    *out = json_integer_value(v);
    return 0;
}

static int get_object(const json_t *o, const char *key, const char *where, json_t **out, rm_err *err)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_object(v)) return rm_errf(err, "chunk: %s%s must be an object", where, key);
    *out = v;
    return 0;
}

static int parse_usage(const json_t *u, ui_sse_usage *us, rm_err *err)
{
    json_t *pd, *cd;
    us->have = 1;
    if (get_count(u, "prompt_tokens", "usage.", &us->prompt_tokens, err) ||
        get_count(u, "completion_tokens", "usage.", &us->completion_tokens, err) ||
        get_count(u, "reasoning_tokens", "usage.", &us->reasoning_tokens, err) ||     /* SGLang */
        get_object(u, "prompt_tokens_details", "usage.", &pd, err) ||
        get_object(u, "completion_tokens_details", "usage.", &cd, err))
        return -1;
    if (pd && get_count(pd, "cached_tokens", "usage.prompt_tokens_details.", &us->cached_tokens, err)) return -1;
    long long r = -1;
    if (cd && get_count(cd, "reasoning_tokens", "usage.completion_tokens_details.", &r, err)) return -1;
    if (r >= 0) us->reasoning_tokens = r;      /* vLLM, remora serve */
    return 0;
}

/* Routed experts as nested arrays [tokens][layers][k]: the last token's go
 * into st's route fields. A string (SGLang's base64) is kept for the
 * caller, who knows the model's shape (ui_sse_routes_b64). */
static int parse_routes(const json_t *v, rm_token_stats *st, rm_err *err)
{
    if (!json_is_array(v) || json_array_size(v) == 0) return 0;
    const json_t *tok = json_array_get(v, json_array_size(v) - 1);
    if (!json_is_array(tok)) return rm_errf(err, "chunk: routed_experts must be an array [tokens][layers][k]");
    size_t layers = json_array_size(tok);
    if (layers > RM_MAX_ROUTE_LAYERS)
        return rm_errf(err, "chunk: routed_experts has %zu layers, more than %d", layers, RM_MAX_ROUTE_LAYERS);
    int k = 0, top = 0;
    for (size_t l = 0; l < layers; l++) {
        const json_t *ids = json_array_get(tok, l);
        if (!json_is_array(ids) || json_array_size(ids) > RM_MAX_TOPK)
            return rm_errf(err, "chunk: routed_experts layer %zu must be an array of at most %d ids", l, RM_MAX_TOPK);
        for (size_t i = 0; i < json_array_size(ids); i++) {
            const json_t *id = json_array_get(ids, i);
            json_int_t x = json_integer_value(id);
            if (!json_is_integer(id) || x < -1 || x > INT16_MAX)
                return rm_errf(err, "chunk: routed_experts[%zu][%zu] must be an expert id", l, i);
            st->route_ids[l][i] = (int16_t)x;
            if (x + 1 > top) top = (int)x + 1;
        }
        if ((int)json_array_size(ids) > k) k = (int)json_array_size(ids);
    }
    st->route_layers = (int)layers;
    st->route_k = k;
    st->num_experts = top;
    return 1;
}

static int find_routes(const json_t *o, ui_sse_chunk *c, rm_err *err)
{
    const json_t *ext = json_object_get(o, "sglext");
    const json_t *v = json_object_get(o, "routed_experts");
    if ((!v || json_is_null(v)) && json_is_object(ext)) v = json_object_get(ext, "routed_experts");
    if (!v || json_is_null(v)) return 0;
    if (json_is_string(v)) {
        size_t n = json_string_length(v);
        if (!n) return 0;
        if (rm_buf_add(&c->routes_b64, json_string_value(v), n)) return rm_errf(err, "out of memory");
        return 0;
    }
    int rc = parse_routes(v, &c->stats, err);
    if (rc > 0) c->has_routes = 1;
    return rc < 0 ? -1 : 0;
}

static int parse_choice(const json_t *ch, ui_sse_chunk *c, rm_err *err)
{
    if (!json_is_object(ch)) return rm_errf(err, "chunk: choices[0] must be an object");
    json_t *d;
    const char *where = "choices[0].delta.";
    if (get_object(ch, "delta", "choices[0].", &d, err)) return -1;
    if (!d) {                                   /* a whole reply has a message instead */
        where = "choices[0].message.";
        if (get_object(ch, "message", "choices[0].", &d, err)) return -1;
    }
    const char *t;
    size_t n;
    if (d) {
        /* reasoning_content (SGLang, llama-server, Moonshot, remora serve) or
         * reasoning (current vLLM); a server that sends both sends the same */
        if (get_text(d, "reasoning_content", where, &t, &n, err)) return -1;
        if (!t && get_text(d, "reasoning", where, &t, &n, err)) return -1;
        if (t) {
            c->reasoning_field = 1;
            if (rm_buf_add(&c->reasoning, t, n)) return rm_errf(err, "out of memory");
        }
        if (get_text(d, "content", where, &t, &n, err)) return -1;
        if (t && rm_buf_add(&c->content, t, n)) return rm_errf(err, "out of memory");
    }
    if (get_text(ch, "text", "choices[0].", &t, &n, err)) return -1;      /* completions */
    if (t && rm_buf_add(&c->content, t, n)) return rm_errf(err, "out of memory");
    if (get_text(ch, "finish_reason", "choices[0].", &t, &n, err)) return -1;
    if (t) snprintf(c->finish, sizeof c->finish, "%.*s", (int)n, t);
    return find_routes(ch, c, err);
}

static void parse_error(const json_t *e, ui_sse_chunk *c)
{
    const char *m = json_string_value(e);
    json_t *code = NULL;
    if (json_is_object(e)) {
        m = json_string_value(json_object_get(e, "message"));
        code = json_object_get(e, "code");
    }
    snprintf(c->error, sizeof c->error, "%s", m && *m ? m : "the server reported an error without a message");
    if (json_is_integer(code)) c->error_status = (int)json_integer_value(code);
}

static void chunk_reset(ui_sse_chunk *c)
{
    rm_buf r = c->reasoning, t = c->content, b = c->routes_b64;
    rm_buf_reset(&r);
    rm_buf_reset(&t);
    rm_buf_reset(&b);
    memset(c, 0, sizeof *c);
    c->reasoning = r;
    c->content = t;
    c->routes_b64 = b;
}

int ui_sse_chunk_parse(const char *data, size_t len, ui_sse_chunk *c, rm_err *err)
{
    chunk_reset(c);
    size_t a = 0, b = len;
    while (a < b && (data[a] == ' ' || data[a] == '\t' || data[a] == '\n')) a++;
    while (b > a && (data[b - 1] == ' ' || data[b - 1] == '\t' || data[b - 1] == '\n')) b--;
    if (b - a == 6 && !memcmp(data + a, "[DONE]", 6)) { c->done = 1; return 0; }
    json_error_t je;
    json_t *o = json_loadb(data, len, 0, &je);
    if (!o) return rm_errf(err, "chunk: not JSON: line %d column %d: %s", je.line, je.column, je.text);
    int rc = json_is_object(o) ? 0 : rm_errf(err, "chunk: not a JSON object");
    json_t *e = rc ? NULL : json_object_get(o, "error");
    if (e && !json_is_null(e)) {
        parse_error(e, c);
        json_decref(o);
        return 0;
    }
    json_t *choices = rc ? NULL : json_object_get(o, "choices");
    if (!rc && choices && !json_is_null(choices)) {
        if (!json_is_array(choices)) rc = rm_errf(err, "chunk: choices must be an array");
        else if (json_array_size(choices)) rc = parse_choice(json_array_get(choices, 0), c, err);
    }
    json_t *u = NULL;
    if (!rc) rc = get_object(o, "usage", "", &u, err);
    if (!rc && u) rc = parse_usage(u, &c->usage, err);
    if (!rc && !c->has_routes) rc = find_routes(o, c, err);
    json_t *ext = NULL;
    if (!rc) rc = get_object(o, "remora", "", &ext, err);
    if (!rc && ext) {
        /* the engine's one mapping of rm_token_stats reads it back */
        char *s = json_dumps(ext, JSON_COMPACT);
        rm_token_stats routes = c->stats;
        rc = !s ? rm_errf(err, "out of memory") : rm_token_stats_parse(s, strlen(s), &c->stats, err);
        free(s);
        if (!rc) c->has_stats = 1;
        if (!rc && c->has_routes && c->stats.route_layers == 0) {
            c->stats.route_layers = routes.route_layers;
            c->stats.route_k = routes.route_k;
            c->stats.num_experts = routes.num_experts;
            memcpy(c->stats.route_ids, routes.route_ids, sizeof routes.route_ids);
        }
    }
    json_decref(o);
    return rc;
}

void ui_sse_chunk_free(ui_sse_chunk *c)
{
    rm_buf_free(&c->reasoning);
    rm_buf_free(&c->content);
    rm_buf_free(&c->routes_b64);
}

/* ---- SGLang's base64 routed experts --------------------------------------- */

/* The shape of n int32 values: the model the id names, else the one whose
 * layers x k times the token count (prompt and completion, or one less:
 * the last token is not run) gives n, else the only one n is a multiple
 * of. NULL with why said when none or several fit. */
static const ui_route_shape *b64_shape(size_t n, const ui_route_shape *sh, int nsh, const char *model,
                                       long long tokens, char *why, size_t cap)
{
    for (int i = 0; model && i < nsh; i++) {
        if (!strcasestr(model, sh[i].id_hint)) continue;
        size_t row = (size_t)sh[i].layers * (size_t)sh[i].k;
        if (n % row == 0) return &sh[i];
        snprintf(why, cap, "%zu values are not whole tokens of %s's %d layers x %d experts", n, sh[i].name,
                 sh[i].layers, sh[i].k);
        return NULL;
    }
    const ui_route_shape *only = NULL;
    int fits = 0;
    for (int i = 0; i < nsh; i++) {
        size_t row = (size_t)sh[i].layers * (size_t)sh[i].k;
        if (n % row) continue;
        if (tokens > 0 && (n / row == (size_t)tokens || n / row + 1 == (size_t)tokens)) return &sh[i];
        only = &sh[i];
        fits++;
    }
    if (fits == 1) return only;
    int at = snprintf(why, cap, "%zu values %s known model's layers x experts per token (", n,
                      fits ? "fit more than one" : "fit no");
    for (int i = 0; i < nsh && at > 0 && (size_t)at < cap; i++)
        at += snprintf(why + at, cap - (size_t)at, "%s%s %d x %d", i ? ", " : "", sh[i].name, sh[i].layers, sh[i].k);
    if (at > 0 && (size_t)at < cap) snprintf(why + at, cap - (size_t)at, ")");
    return NULL;
}

int ui_sse_routes_b64(const char *b64, size_t n, const ui_route_shape *shapes, int nshapes, const char *model,
                      long long tokens, rm_token_stats *st, char *why, size_t cap)
{
    if (n % 4 || n > UI_SSE_EVENT_MAX) {
        snprintf(why, cap, "not base64 (%zu characters, not a multiple of 4)", n);
        return 0;
    }
    unsigned char *raw = malloc(n / 4 * 3 + 1);
    if (!raw) { snprintf(why, cap, "out of memory"); return 0; }
    long got = rm_base64_decode(b64, n, raw);
    int ok = 0;
    const ui_route_shape *sh = NULL;
    int16_t ids[RM_MAX_ROUTE_LAYERS][RM_MAX_TOPK];
    if (got < 0) snprintf(why, cap, "not base64");
    else if (got == 0 || got % 4) snprintf(why, cap, "%ld bytes, not a whole number of int32 values", got);
    else sh = b64_shape((size_t)got / 4, shapes, nshapes, model, tokens, why, cap);
    if (sh) {
        /* int32 little-endian [tokens][layers][k]: the last token's row, its
         * MoE layers (SGLang's buffer holds zeros for the dense ones) */
        const unsigned char *row = raw + (size_t)got - (size_t)sh->layers * (size_t)sh->k * 4;
        int moe = sh->layers - sh->first_moe;
        ok = moe > 0 && moe <= RM_MAX_ROUTE_LAYERS && sh->k <= RM_MAX_TOPK;
        if (!ok) snprintf(why, cap, "%s's %d MoE layers x %d do not fit the router", sh->name, moe, sh->k);
        for (int l = 0; ok && l < moe; l++)
            for (int i = 0; ok && i < sh->k; i++) {
                const unsigned char *p = row + ((size_t)(sh->first_moe + l) * (size_t)sh->k + (size_t)i) * 4;
                int32_t id = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
                if (id < 0 || id >= sh->experts) {
                    snprintf(why, cap, "expert id %ld at layer %d is not one of %s's %d experts", (long)id,
                             sh->first_moe + l, sh->name, sh->experts);
                    ok = 0;
                } else {
                    ids[l][i] = (int16_t)id;
                }
            }
        if (ok) {
            for (int l = 0; l < moe; l++) memcpy(st->route_ids[l], ids[l], (size_t)sh->k * sizeof ids[l][0]);
            st->route_layers = moe;
            st->route_k = sh->k;
            st->num_experts = sh->experts;
        }
    }
    free(raw);
    return ok;
}

const char *ui_sse_error_message(const char *body, size_t len, char *buf, size_t cap)
{
    json_t *o = json_loadb(body, len, 0, NULL);
    const char *m = NULL;
    if (json_is_object(o)) {
        json_t *e = json_object_get(o, "error");
        m = json_string_value(e);
        if (json_is_object(e)) m = json_string_value(json_object_get(e, "message"));
        if (!m) m = json_string_value(json_object_get(o, "message"));     /* vLLM's older errors */
        if (!m) m = json_string_value(json_object_get(o, "detail"));      /* FastAPI */
    }
    int found = m && *m;
    if (found) snprintf(buf, cap, "%s", m);
    json_decref(o);
    return found ? buf : NULL;
}

/* ---- think markers ------------------------------------------------------ */

enum { M_OPEN, M_CLOSE, M_DROP };
static const struct { const char *text; int kind; } markers[] = {
    { "<think>", M_OPEN },
    { "</think>", M_CLOSE },
    { "<|open|>think<|sep|>", M_OPEN },
    { "<|close|>think<|sep|>", M_CLOSE },
    /* K3's other channel markers and the end of a message, never text */
    { "<|open|>response<|sep|>", M_DROP },
    { "<|close|>response<|sep|>", M_DROP },
    { "<|close|>message<|sep|>", M_DROP },
    { "<|end_of_msg|>", M_DROP },
    { "<|im_end|>", M_DROP },
};
#define NMARKERS (sizeof markers / sizeof markers[0])

void ui_sse_think_init(ui_sse_think *t, int undecided)
{
    rm_buf p = t->pending;
    rm_buf_reset(&p);
    memset(t, 0, sizeof *t);
    t->pending = p;
    t->chan = undecided ? 0 : RM_CHAN_ANSWER;
}

static void flush_pending(ui_sse_think *t, int chan, rm_chat_text_fn fn, void *ud)
{
    if (t->pending.len) fn(ud, chan, t->pending.p, t->pending.len);
    rm_buf_reset(&t->pending);
}

static int out(ui_sse_think *t, const char *p, size_t n, rm_chat_text_fn fn, void *ud)
{
    if (!n) return 0;
    if (t->chan) { fn(ud, t->chan, p, n); return 0; }
    return rm_buf_add(&t->pending, p, n);
}

static void apply(ui_sse_think *t, int kind, rm_chat_text_fn fn, void *ud)
{
    if (kind == M_OPEN) {
        if (!t->chan) flush_pending(t, RM_CHAN_ANSWER, fn, ud);
        t->chan = RM_CHAN_REASONING;
    } else if (kind == M_CLOSE) {
        if (!t->chan) flush_pending(t, RM_CHAN_REASONING, fn, ud);
        t->chan = RM_CHAN_ANSWER;
    }
}

/* The longest tail of w (at most 31 bytes) that is a proper prefix of a marker. */
static size_t marker_tail(const char *w, size_t n)
{
    for (size_t k = n < sizeof ((ui_sse_think *)0)->hold - 1 ? n : sizeof ((ui_sse_think *)0)->hold - 1; k > 0; k--)
        for (size_t m = 0; m < NMARKERS; m++)
            if (k < strlen(markers[m].text) && !memcmp(w + n - k, markers[m].text, k)) return k;
    return 0;
}

int ui_sse_think_feed(ui_sse_think *t, const char *p, size_t n, rm_chat_text_fn fn, void *ud)
{
    rm_buf w = { 0 };
    if (rm_buf_add(&w, t->hold, t->nhold) || rm_buf_add(&w, p, n)) { rm_buf_free(&w); return -1; }
    t->nhold = 0;
    size_t pos = 0, len = w.len;
    int rc = 0;
    for (;;) {
        const char *best = NULL;
        size_t which = 0;
        for (size_t m = 0; m < NMARKERS; m++) {
            const char *f = memmem(w.p + pos, len - pos, markers[m].text, strlen(markers[m].text));
            if (f && (!best || f < best)) { best = f; which = m; }
        }
        if (!best) break;
        /* the text before the marker is sent but for a tail that could
         * begin a marker: that tail goes on with the text after the marker
         * (moved up to it), so text the marker split cannot join into a
         * marker behind the scan ("</th" "<think>" "ink>" would show
         * "</think>"; fuzz_sse found it). Each turn removes a marker, so
         * the loop ends. */
        const size_t pre = (size_t)(best - (w.p + pos)), keep = marker_tail(w.p + pos, pre);
        const size_t after = (size_t)(best - w.p) + strlen(markers[which].text);
        rc |= out(t, w.p + pos, pre - keep, fn, ud);
        apply(t, markers[which].kind, fn, ud);
        memmove(w.p + after - keep, w.p + pos + pre - keep, keep);
        pos = after - keep;
    }
    size_t keep = marker_tail(w.p + pos, len - pos);
    rc |= out(t, w.p + pos, len - pos - keep, fn, ud);
    memcpy(t->hold, w.p + len - keep, keep);
    t->nhold = keep;
    rm_buf_free(&w);
    return rc ? -1 : 0;
}

void ui_sse_think_parsed(ui_sse_think *t, rm_chat_text_fn fn, void *ud)
{
    if (!t->chan) flush_pending(t, RM_CHAN_ANSWER, fn, ud);
    t->chan = RM_CHAN_ANSWER;
}

void ui_sse_think_end(ui_sse_think *t, rm_chat_text_fn fn, void *ud)
{
    int chan = t->chan ? t->chan : RM_CHAN_ANSWER;
    flush_pending(t, chan, fn, ud);
    if (t->nhold) fn(ud, chan, t->hold, t->nhold);
    t->nhold = 0;
    t->chan = chan;
}

void ui_sse_think_free(ui_sse_think *t) { rm_buf_free(&t->pending); }
