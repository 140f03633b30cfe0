/* source_endpoint.c — the chat's source on an OpenAI-compatible server
 * (vLLM, SGLang, Moonshot's API, a remote `remora serve`): every turn sends
 * the conversation to POST {base}/chat/completions with "stream": true and
 * reads the reply as it streams (ui/sse.h reads what the servers send).
 *
 * The transfer, the key's rule and redirects are the engine's (rm_endpoint,
 * engine/remote/endpoint.c, which stream mode's client shares its policy
 * with); this file speaks the API over it.
 *
 * The figures: a `remora serve` endpoint (its /v1/models says owned_by
 * "remora") is asked for its stats extension, and its records go to the
 * panels as they are. Any other endpoint gets records made here from chunk
 * arrival: the time to the first text as the prompt's record, then one
 * token record per chunk of text with the interval since the one before
 * and the stream's bytes since the last record up to the end of the
 * chunk's event (counted by event, not by network read: a server that
 * sends a burst of chunks in one read would otherwise give them all to the
 * first), published after the chunk's text as the engine does (the chat counts reasoning and answer tokens by it); the
 * usage figures of the last chunk complete the prompt's record; routed
 * experts, when the server returns them, go with the next token's record,
 * or in one of their own at the end. SGLang returns them as base64 int32
 * [tokens][layers][k] without the shape: it is read with the shapes of the
 * models the engine knows (Kimi K3's and Kimi-Linear's published configs,
 * rm_fmodel_builtin), the one the model id names or the one the length
 * and the token count fit (ui_sse_routes_b64); when none does, the router
 * stays empty and the turn's note says why, once.
 *
 * The server's word is not trusted for a reply's length: the reply is cut
 * (finish reason "length") after --max-new chunks of text (one token each
 * from every server seen; one that packs several per chunk gets more, up
 * to the byte cap) or REPLY_TEXT_MAX bytes of text (an exchange's overall
 * deadline and the other buffers' caps are engine/remote/endpoint.c's and
 * ui/sse.h's), so an endless stream ends.
 *
 * The API key (taken from the environment by the caller) is never printed.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "source.h"
#include "sse.h"

#define DEFAULT_TIMEOUT 300.0
#define REPLY_TEXT_MAX (64u << 20)      /* bytes of a reply's text */

typedef struct endpoint_source {
    ui_source base;
    rm_endpoint *ep;            /* the HTTP (engine/remote/endpoint.c) */
    char *model;
    double timeout;
    int remora;                 /* the endpoint is remora serve */
    int layer0, layers;         /* its first MoE layer and its layers (0: not said) */
    rm_conv conv;
    ui_route_shape shapes[2];   /* the known models, for base64 routed experts */
    char shape_names[2][64];
    int nshapes;
    int routes_noted;           /* undecodable routes were said once */
} endpoint_source;

/* The message of an HTTP error reply. */
static int http_error(const endpoint_source *e, const char *url, const rm_http_reply *x, rm_err *err)
{
    char msg[600];
    const char *m = ui_sse_error_message(x->body.p ? x->body.p : "", x->body.len, msg, sizeof msg);
    if (!m) {
        snprintf(msg, sizeof msg, "%.200s", x->body.len ? x->body.p : "no message");
        for (char *p = msg; *p; p++) if ((unsigned char)*p < 32) *p = ' ';
        m = msg;
    }
    if (x->status == 429)
        return rm_errf(err, "%s:%s is busy (HTTP 429): %s%s%s%s", rm_endpoint_host(e->ep), rm_endpoint_port(e->ep), m,
                       x->retry_after[0] ? "; it asks to retry after " : "", x->retry_after,
                       x->retry_after[0] && x->retry_after_s >= 0 ? " s" : "");
    if (x->status == 401 || x->status == 403)
        return rm_errf(err, "%s: HTTP %ld: %s%s", url, x->status, m,
                       rm_endpoint_has_key(e->ep) ? "" : " (no API key was sent: --api-key-env VAR)");
    return rm_errf(err, "%s: HTTP %ld: %s", url, x->status, m);
}

/* ---- the conversation ------------------------------------------------------ */

static void clear(ui_source *src) { rm_conv_clear(&((endpoint_source *)src)->conv); }

static int set_system(ui_source *src, const char *text, rm_err *err)
{
    return rm_conv_set_system(&((endpoint_source *)src)->conv, text) ? rm_errf(err, "out of memory") : 0;
}

static int messages(ui_source *src, const rm_chat_msg **out)
{
    return rm_conv_view(&((endpoint_source *)src)->conv, out);
}

static int last_interrupted(ui_source *src) { return rm_conv_last_interrupted(&((endpoint_source *)src)->conv); }
static int interrupted(ui_source *src, int i) { return rm_conv_interrupted(&((endpoint_source *)src)->conv, i); }

/* Transcripts are the engine's, as for a local model. */
static int save(ui_source *src, const char *path, rm_err *err)
{
    return rm_conv_save(&((endpoint_source *)src)->conv, path, err);
}

/* The conversation's tokens are the server's to count: *ctx stays -1. */
static int load(ui_source *src, const char *path, int *ctx, rm_err *err)
{
    *ctx = -1;
    return rm_conv_load(&((endpoint_source *)src)->conv, path, err);
}

/* The request: the whole conversation, prior reasoning both as
 * reasoning_content (SGLang, K3's template, remora serve) and as reasoning
 * (vLLM's name for it, which its interleaved thinking reads back); an
 * exchange stopped in its prompt is not sent (rm_conv_context). */
static char *request_body(endpoint_source *e, const rm_gen_opts *o)
{
    const rm_chat_msg *view;
    int n = rm_conv_context(&e->conv, &view);
    if (n < 0) return NULL;
    json_t *msgs = json_array();
    for (int i = 0; i < n; i++) {
        const rm_chat_msg *cm = &view[i];
        json_t *m = json_pack("{s:s,s:s}", "role", cm->role, "content", cm->content);
        if (m && cm->reasoning_content && *cm->reasoning_content) {
            json_object_set_new(m, "reasoning_content", json_string(cm->reasoning_content));
            json_object_set_new(m, "reasoning", json_string(cm->reasoning_content));
        }
        json_array_append_new(msgs, m);
    }
    json_t *r = json_pack("{s:s,s:o,s:b,s:{s:b}}", "model", e->model, "messages", msgs, "stream", 1,
                          "stream_options", "include_usage", 1);
    if (!r) return NULL;
    if (o->max_new > 0) json_object_set_new(r, "max_tokens", json_integer(o->max_new));
    json_object_set_new(r, "temperature", json_real(o->temperature));
    if (o->top_p < 1) json_object_set_new(r, "top_p", json_real(o->top_p));
    if (o->seed) json_object_set_new(r, "seed", json_integer((json_int_t)(o->seed & 0x7fffffffffffffffull)));
    if (!o->think) json_object_set_new(r, "chat_template_kwargs", json_pack("{s:b}", "thinking", 0));
    else if (o->thinking_effort) json_object_set_new(r, "reasoning_effort", json_string(o->thinking_effort));
    if (e->remora) json_object_set_new(r, "remora", json_pack("{s:b}", "stats", 1));
    char *s = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    return s;
}

/* ---- one reply -------------------------------------------------------------- */

typedef struct reply {
    endpoint_source *e;
    const rm_gen_events *ev;
    ui_sse sse;
    ui_sse_chunk chunk;
    ui_sse_think think;
    rm_buf text[3];             /* the reply: [RM_CHAN_REASONING], [RM_CHAN_ANSWER] */
    int lost;                   /* out of memory keeping text */
    int max_new;                /* chunks of text to take at most; 0: no limit */
    int ntext;                  /* chunks of text so far (any endpoint) */
    int cut;                    /* the reply was cut here: its length reached max_new or REPLY_TEXT_MAX */
    int done, stream;           /* [DONE] came; the reply is an event stream */
    char finish[32];
    ui_sse_usage usage;
    char error[600];            /* an error chunk's message */
    rm_err parse_err;
    int parse_failed;
    /* figures made here (endpoints without the stats extension) */
    double t0, t_text;          /* the request went out; the last chunk of text came */
    int texts;                  /* chunks of text so far */
    uint64_t bytes_at_rec;      /* body bytes counted into records so far */
    rm_http_reply *x;
    rm_token_stats rec;         /* a token record */
    rm_token_stats routes;      /* routed experts not yet published */
    int have_routes;
    char routes_why[200];       /* base64 routes that could not be read: why */
    double ttft;
    rm_token_stats scratch;     /* records made here */
} reply;

static void text_out(void *ud, int channel, const char *p, size_t n)
{
    reply *r = ud;
    if (!n || r->cut) return;
    if (r->text[RM_CHAN_REASONING].len + r->text[RM_CHAN_ANSWER].len + n > REPLY_TEXT_MAX) { r->cut = 1; return; }
    if (rm_buf_add(&r->text[channel], p, n)) { r->lost = 1; return; }
    if (r->ev->on_text) r->ev->on_text(r->ev->ud, channel, p, n);
}

static void publish(reply *r, const rm_token_stats *st)
{
    if (r->ev->on_stats) r->ev->on_stats(r->ev->ud, st);
}

/* Publishes r->rec, with the routes that came since the last one. */
static void publish_rec(reply *r)
{
    if (r->have_routes) {
        r->rec.route_layers = r->routes.route_layers;
        r->rec.route_k = r->routes.route_k;
        r->rec.num_experts = r->routes.num_experts;
        memcpy(r->rec.route_ids, r->routes.route_ids, sizeof r->routes.route_ids);
        r->have_routes = 0;
    }
    publish(r, &r->rec);
}

/* A chunk of text came: the prompt's record at the first, then one token
 * record per chunk. */
static void chunk_figures(reply *r)
{
    double now = rm_now();
    uint64_t at = r->stream > 0 ? r->sse.consumed : r->x->bytes;
    uint64_t bytes = at - r->bytes_at_rec;
    r->bytes_at_rec = at;
    rm_token_stats *st = &r->scratch;
    if (r->texts == 0) {
        memset(st, 0, sizeof *st);
        r->ttft = now - r->t0;
        st->kind = RM_REC_PROMPT;
        st->prefill = 1;
        st->seconds = r->ttft;
        st->prompt.elapsed = r->ttft;
        st->prompt.eta = -1;
        publish(r, st);         /* the first chunk's bytes are its token's */
    }
    memset(&r->rec, 0, sizeof r->rec);
    r->rec.kind = RM_REC_TOKEN;
    r->rec.token_index = (uint64_t)r->texts;
    r->rec.token_id = -1;
    r->rec.seconds = r->texts ? now - r->t_text : 0;
    r->rec.bytes_net = bytes;
    r->t_text = now;
    r->texts++;
    publish_rec(r);
}

/* SGLang's base64 routed experts, read with the known models' shapes. */
static void routes_b64(reply *r, const ui_sse_chunk *c)
{
    const endpoint_source *e = r->e;
    long long tokens = r->usage.have ? r->usage.prompt_tokens + r->usage.completion_tokens : 0;
    char why[160];
    rm_token_stats *st = &r->scratch;
    memset(st, 0, sizeof *st);
    if (ui_sse_routes_b64(c->routes_b64.p, c->routes_b64.len, e->shapes, e->nshapes, e->model, tokens, st, why,
                          sizeof why)) {
        r->routes.route_layers = st->route_layers;
        r->routes.route_k = st->route_k;
        r->routes.num_experts = st->num_experts;
        memcpy(r->routes.route_ids, st->route_ids, sizeof st->route_ids);
        r->have_routes = 1;
    } else if (!r->routes_why[0]) {
        snprintf(r->routes_why, sizeof r->routes_why, "%s", why);
    }
}

static int on_event(void *ud, const char *event, const char *data, size_t len)
{
    reply *r = ud;
    ui_sse_chunk *c = &r->chunk;
    if (ui_sse_chunk_parse(data, len, c, &r->parse_err)) { r->parse_failed = 1; return 1; }
    if (c->done) { r->done = 1; return 0; }
    if (c->error[0] || !strcmp(event, "error")) {
        snprintf(r->error, sizeof r->error, "%s", c->error[0] ? c->error : "the server sent an error event");
        return 1;
    }
    int text = c->reasoning.len || c->content.len;
    if (c->reasoning_field) ui_sse_think_parsed(&r->think, text_out, r);
    if (c->reasoning.len) text_out(r, RM_CHAN_REASONING, c->reasoning.p, c->reasoning.len);
    if (c->content.len && ui_sse_think_feed(&r->think, c->content.p, c->content.len, text_out, r)) r->lost = 1;
    if (c->finish[0]) snprintf(r->finish, sizeof r->finish, "%s", c->finish);
    if (c->usage.have) r->usage = c->usage;
    if (r->e->remora && c->has_stats) {
        publish(r, &c->stats);
    } else {
        if (c->has_routes) { r->routes = c->stats; r->have_routes = 1; }
        if (c->routes_b64.len) routes_b64(r, c);
        if (text) chunk_figures(r);
    }
    if (text && r->max_new > 0 && ++r->ntext >= r->max_new) r->cut = 1;
    if (r->cut) {       /* the length the client asked for: the rest is not read */
        snprintf(r->finish, sizeof r->finish, "length");
        return 1;
    }
    return 0;
}

static int stream_sink(void *ud, const char *p, size_t n)
{
    reply *r = ud;
    if (!r->stream) {
        /* a server that ignored "stream": the whole reply comes as one JSON body */
        const char *ct = r->x->content_type;
        r->stream = !!strcasestr(ct, "text/event-stream") || !*ct ? 1 : -1;
    }
    if (r->stream < 0) {
        r->x->body.max = UI_SSE_EVENT_MAX;
        return rm_buf_add(&r->x->body, p, n);
    }
    int rc = ui_sse_feed(&r->sse, p, n, on_event, r, &r->parse_err);
    if (rc < 0) r->parse_failed = 1;      /* a line or event over the cap: said as it is, not parsed */
    return rc != 0;
}

/* The prompt's record again, now with the usage figures. */
static void usage_figures(reply *r)
{
    rm_token_stats *st = &r->scratch;
    memset(st, 0, sizeof *st);
    const ui_sse_usage *u = &r->usage;
    st->kind = RM_REC_PROMPT;
    st->prefill = 1;
    st->seconds = r->ttft;
    st->prompt_tokens = (int)u->prompt_tokens;
    st->prompt.ctx = (int)u->prompt_tokens;
    st->prompt.reused = (int)u->cached_tokens;
    st->prompt.total = st->prompt.done = (int)(u->prompt_tokens - u->cached_tokens);
    st->prompt.elapsed = r->ttft;
    st->prompt.tok_per_s = r->ttft > 0 ? st->prompt.total / r->ttft : 0;
    st->prompt.eta = -1;
    st->token_index = (uint64_t)st->prompt.total;
    publish(r, st);
}

static void reply_free(reply *r)
{
    ui_sse_free(&r->sse);
    ui_sse_chunk_free(&r->chunk);
    ui_sse_think_free(&r->think);
    for (int i = 0; i < 3; i++) rm_buf_free(&r->text[i]);
}

static int turn(ui_source *src, const char *user, const rm_gen_opts *o, const rm_gen_events *ev,
                volatile int *stop, rm_err *err)
{
    endpoint_source *e = (endpoint_source *)src;
    rm_conv *c = &e->conv;
    if (rm_conv_push(c, "user", user, NULL, 0)) return rm_errf(err, "out of memory");
    char *body = request_body(e, o);
    if (!body) { rm_conv_pop(c); return rm_errf(err, "out of memory"); }
    reply *r = calloc(1, sizeof *r);
    if (!r) { free(body); rm_conv_pop(c); return rm_errf(err, "out of memory"); }
    rm_http_reply x = { 0 };
    r->e = e;
    r->ev = ev;
    r->x = &x;
    r->max_new = o->max_new;
    r->t0 = rm_now();
    /* remora serve always sends reasoning in a field of its own */
    ui_sse_think_init(&r->think, o->think && !e->remora);
    const char *chat_url = rm_endpoint_chat_url(e->ep);
    int rc = rm_endpoint_request(e->ep, chat_url, body, 0, stop, stream_sink, r, &x, err);
    free(body);
    if (rc == 0 && x.status >= 200 && x.status < 300 && r->stream >= 0 && !r->parse_failed && !r->error[0] && !r->cut)
        ui_sse_end(&r->sse, on_event, r, &r->parse_err);
    if (rc == 0 && r->stream < 0 && x.status >= 200 && x.status < 300 &&
        on_event(r, "", x.body.p ? x.body.p : "", x.body.len) == 0)
        r->done = 1;                            /* a whole reply read as one chunk */
    ui_sse_think_end(&r->think, text_out, r);
    if (r->have_routes) {                       /* routes that came after the last text */
        memset(&r->rec, 0, sizeof r->rec);
        r->rec.token_index = (uint64_t)r->texts;
        r->rec.token_id = -1;
        publish_rec(r);
    }
    if (r->usage.have && !e->remora) usage_figures(r);
    int got_text = r->text[RM_CHAN_REASONING].len || r->text[RM_CHAN_ANSWER].len;
    if (rc == 0 && (x.status < 200 || x.status >= 300)) rc = http_error(e, chat_url, &x, err);
    else if (rc == 0 && r->parse_failed) rc = rm_errf(err, "%s: %s", chat_url, r->parse_err.msg);
    else if (rc == 0 && r->error[0]) rc = rm_errf(err, "%s:%s reported an error in mid-reply: %s", rm_endpoint_host(e->ep),
                              rm_endpoint_port(e->ep), r->error);
    else if (rc == 0 && r->lost) rc = rm_errf(err, "out of memory: the reply could not be kept whole");
    else if (rc == 0 && !r->done && !r->finish[0])
        rc = rm_errf(err, "%s:%s ended the reply before its end (no finish_reason, no [DONE])", rm_endpoint_host(e->ep),
                     rm_endpoint_port(e->ep));
    int interrupted = 0;
    if (rc == 1) {                              /* stopped */
        interrupted = got_text ? RM_STOPPED_REPLY : RM_STOPPED_PROMPT;
        rc = 0;
    }
    if (rc < 0 && !got_text) {
        rm_conv_pop(c);                             /* nothing came back: the conversation is as it was */
    } else if (rm_conv_push(c, "assistant", r->text[RM_CHAN_ANSWER].p ? r->text[RM_CHAN_ANSWER].p : "",
                            r->text[RM_CHAN_REASONING].len ? r->text[RM_CHAN_REASONING].p : NULL,
                            rc < 0 ? RM_STOPPED_REPLY : interrupted)) {
        rc = rm_errf(err, "out of memory");
    } else if (rc < 0) {
        size_t l = strlen(err->msg);
        snprintf(err->msg + l, sizeof err->msg - l, "; the reply so far is kept");
    }
    if (rc >= 0 && r->routes_why[0] && !e->routes_noted) {
        /* the turn worked: its note says why the router stays empty */
        e->routes_noted = 1;
        snprintf(err->msg, sizeof err->msg, "the server's routed experts (base64) are not shown: %s", r->routes_why);
    }
    rm_buf_free(&x.body);
    reply_free(r);
    free(r);
    return rc < 0 ? -1 : 0;
}

/* ---- opening ------------------------------------------------------------------ */

static void destroy(ui_source *src)
{
    endpoint_source *e = (endpoint_source *)src;
    rm_conv_free(&e->conv);
    free(e->model);
    rm_endpoint_free(e->ep);
    free(e);
}

/* The storage ceiling is the server's business: nothing here to measure. */
static double probe(ui_source *src, double seconds)
{
    (void)src, (void)seconds;
    return -1;
}

static const ui_source_vt endpoint_vt = {
    turn, set_system, clear, save, load, messages, last_interrupted, interrupted, probe, destroy,
};

static int collect(void *ud, const char *p, size_t n)
{
    rm_buf *b = ud;
    b->max = 16u << 20;
    return rm_buf_add(b, p, n);
}

/* GET /models: the model (the first one unless named) and whether the
 * server is remora serve. A server without the route (404) is taken at its
 * word when the model is named. */
static int discover(endpoint_source *e, const char *want, rm_err *err)
{
    rm_buf b = { 0 };
    rm_http_reply x = { 0 };
    const char *models_url = rm_endpoint_models_url(e->ep);
    int rc = rm_endpoint_request(e->ep, models_url, NULL, e->timeout < 15 ? e->timeout : 15, NULL, collect, &b, &x,
                                 err);
    int no_list = rc == 0 && want && (x.status == 404 || x.status == 405);
    if (rc == 0 && !no_list && (x.status < 200 || x.status >= 300)) rc = http_error(e, models_url, &x, err);
    json_t *j = rc || no_list ? NULL : json_loadb(b.p ? b.p : "", b.len, 0, NULL);
    json_t *data = json_object_get(j, "data"), *pick = NULL, *m;
    if (!rc && !no_list && !json_is_array(data))
        rc = rm_errf(err, "%s: not a model list (no \"data\" array)", models_url);
    const char *first = NULL;
    size_t i;
    if (!rc && !no_list) {
        json_array_foreach(data, i, m) {
            const char *id = json_string_value(json_object_get(m, "id"));
            if (!id) continue;
            if (!first) first = id;
            if (!want || !strcmp(id, want)) { pick = m; break; }
        }
        if (!first) rc = rm_errf(err, "%s: the server lists no model", models_url);
        else if (!pick)
            rc = rm_errf(err, "%s: the server does not list the model '%s' (it lists '%s'%s)", models_url, want,
                         first, json_array_size(data) > 1 ? ", ..." : "");
    }
    if (pick) {
        const char *owner = json_string_value(json_object_get(pick, "owned_by"));
        e->remora = owner && !strcmp(owner, "remora");
        /* remora serve says which model layer its first routed one is */
        json_t *layers = json_object_get(json_object_get(pick, "remora"), "layers");
        json_t *moe0 = json_object_get(json_object_get(pick, "remora"), "first_moe_layer");
        if (e->remora && json_is_integer(layers) && json_is_integer(moe0) && json_integer_value(moe0) >= 0 &&
            json_integer_value(moe0) < json_integer_value(layers) && json_integer_value(layers) <= 100000) {
            e->layer0 = (int)json_integer_value(moe0);
            e->layers = (int)json_integer_value(layers);
        }
    }
    if (!rc && !(e->model = strdup(want ? want : json_string_value(json_object_get(pick, "id")))))
        rc = rm_errf(err, "out of memory");
    json_decref(j);
    rm_buf_free(&x.body);
    rm_buf_free(&b);
    return rc ? -1 : 0;
}

/* The shapes of the models the engine knows, for base64 routed experts. */
static void known_shapes(endpoint_source *e)
{
    static const char *const which[2] = { "k3", "kimi-linear" }, *const hint[2] = { "k3", "linear" };
    for (int i = 0; i < 2; i++) {
        rm_fmodel *f;
        rm_err ferr;
        if (rm_fmodel_builtin(which[i], &f, &ferr)) continue;     /* out of memory: that model is not known */
        const rm_fmodel_info *fi = rm_fmodel_get_info(f);
        ui_route_shape *sh = &e->shapes[e->nshapes];
        snprintf(e->shape_names[e->nshapes], sizeof e->shape_names[0], "%.63s", fi->name);
        *sh = (ui_route_shape){ e->shape_names[e->nshapes], hint[i], fi->layers, fi->layers - fi->moe_layers,
                                fi->topk, fi->experts };
        e->nshapes++;
        rm_fmodel_free(f);
    }
}

int ui_source_endpoint_open(const ui_endpoint_opts *o, ui_source **out, rm_err *err)
{
    endpoint_source *e = calloc(1, sizeof *e);
    if (!e) return rm_errf(err, "out of memory");
    e->base.vt = &endpoint_vt;
    known_shapes(e);
    e->timeout = o->timeout > 0 ? o->timeout : DEFAULT_TIMEOUT;
    int rc = rm_endpoint_open(o->url, o->api_key, e->timeout, &e->ep, err);
    if (!rc) rc = discover(e, o->model, err);
    if (rc) {
        destroy(&e->base);
        return rc == -2 ? -2 : -1;
    }
    /* what a panel shows when its figures did not come: an endpoint without
     * the stats extension reports neither phases, cache nor speculation,
     * and routes only when the server returns routed experts */
    /* router rows are numbered as the model's layers where the server says
     * which one its first routed layer is (remora serve's model entry);
     * else as it numbers them: neither API says */
    e->base.route_layer0 = e->layer0;
    e->base.model_layers = e->layers;
    e->base.unreported = e->remora ? 0 : UI_FIG_PHASES | UI_FIG_CACHE | UI_FIG_SPEC | UI_FIG_ROUTER | UI_FIG_STORAGE;
    snprintf(e->base.label, sizeof e->base.label, "%.120s:%.15s %.110s", rm_endpoint_host(e->ep), rm_endpoint_port(e->ep),
             e->model);
    /* the welcome names the model; its figures (base.info) stay zero: no
     * API says them */
    snprintf(e->base.name, sizeof e->base.name, "%.95s", e->model);
    *out = &e->base;
    return 0;
}
