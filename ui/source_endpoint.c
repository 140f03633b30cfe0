/* source_endpoint.c — the chat's source on an OpenAI-compatible server
 * (vLLM, SGLang, Moonshot's API, a remote `remora serve`): every turn sends
 * the conversation to POST {base}/chat/completions with "stream": true and
 * reads the reply as it streams (ui/sse.h reads what the servers send).
 *
 * The transfer runs on the calling thread (the chat's worker, or `remora
 * run`) through libcurl's multi interface, polled every 50 ms so that the
 * stop flag ends it within that (a plain easy transfer only looks at its
 * progress callback about once a second while nothing arrives), and a
 * stream with no byte for `timeout` seconds fails with a note saying so.
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
 * or in one of their own at the end.
 *
 * The server's word is not trusted for a reply's length: the reply is cut
 * (finish reason "length") after --max-new chunks of text (one token each
 * from every server seen; one that packs several per chunk gets more, up
 * to the byte cap) or REPLY_TEXT_MAX bytes of text, and a whole exchange
 * has an overall deadline of DEADLINE_TIMEOUTS times the stall time-out
 * besides it, so an endless stream ends; every buffer is capped (an
 * event's data and line, UI_SSE_EVENT_MAX; an error body, ERROR_BODY_MAX;
 * the model list, 16 MB; the headers kept, 64 bytes each).
 *
 * The API key (taken from the environment by the caller) is never printed
 * and goes in an Authorization header only to the endpoint's own host and
 * port, over HTTPS or to a loopback address. Redirects are followed here,
 * not by libcurl (up to 5), so that the header is left out of every request
 * to another host: libcurl itself stops resending it only since 7.58, and
 * a Bearer header set by hand is not covered by CURLOPT_UNRESTRICTED_AUTH.
 * TLS peers and host names are verified.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "conv.h"
#include "source.h"
#include "sse.h"

#define MAX_REDIRECTS 5
#define ERROR_BODY_MAX (256u << 10)     /* bytes of an error reply kept for its message */
#define POLL_MS 50
#define DEFAULT_TIMEOUT 300.0
#define REPLY_TEXT_MAX (64u << 20)      /* bytes of a reply's text */
#define DEADLINE_TIMEOUTS 24            /* an exchange's deadline, in stall time-outs (2 h by default) */

typedef struct endpoint_source {
    ui_source base;
    char *chat_url, *models_url;
    char *key;                  /* NULL: none; wiped when freed */
    char *model;
    char host[256], port[16];   /* where the key may go */
    double timeout;
    int remora;                 /* the endpoint is remora serve */
    ui_conv conv;
    CURL *easy;                 /* kept between requests: the connection is reused */
    CURLM *multi;
} endpoint_source;

/* ---- URLs and the key's rule ---------------------------------------------- */

static int is_loopback(const char *host)
{
    char h[256];
    size_t n = strlen(host);
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']') { host++; n -= 2; }
    if (n >= sizeof h) return 0;
    memcpy(h, host, n);
    h[n] = 0;
    if (!strcasecmp(h, "localhost")) return 1;
    unsigned char a[16];
    if (inet_pton(AF_INET, h, a) == 1) return a[0] == 127;
    if (inet_pton(AF_INET6, h, a) == 1) return !memcmp(a, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16);
    return 0;
}

/* The scheme, host and port of url; -1 when it is not an http(s) URL. */
static int url_parts(const char *url, char *scheme, size_t scap, char *host, size_t hcap, char *port,
                     size_t pcap)
{
    CURLU *u = curl_url();
    char *s = NULL, *h = NULL, *p = NULL;
    int rc = !u || curl_url_set(u, CURLUPART_URL, url, 0) || curl_url_get(u, CURLUPART_SCHEME, &s, 0) ||
             curl_url_get(u, CURLUPART_HOST, &h, 0) || curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT)
                 ? -1 : 0;
    if (!rc && strcasecmp(s, "http") && strcasecmp(s, "https")) rc = -1;
    if (!rc) {
        snprintf(scheme, scap, "%s", s);
        snprintf(host, hcap, "%s", h);
        snprintf(port, pcap, "%s", p);
    }
    curl_free(s);
    curl_free(h);
    curl_free(p);
    curl_url_cleanup(u);
    return rc;
}

/* Whether the key may go with a request to url. */
static int key_allowed(const endpoint_source *e, const char *url)
{
    char scheme[16], host[256], port[16];
    if (!e->key || url_parts(url, scheme, sizeof scheme, host, sizeof host, port, sizeof port)) return 0;
    if (strcasecmp(host, e->host) || strcmp(port, e->port)) return 0;
    return !strcasecmp(scheme, "https") || is_loopback(host);
}

/* {base}/chat/completions and {base}/models from the URL the user gave: an
 * API base (…/v1), a server's root (/v1 is added) or the chat URL itself. */
static int make_urls(endpoint_source *e, const char *url, rm_err *err)
{
    char scheme[16];
    if (url_parts(url, scheme, sizeof scheme, e->host, sizeof e->host, e->port, sizeof e->port))
        return rm_errf(err, "--endpoint %s: not an http:// or https:// URL", url);
    if (strchr(url, '?') || strchr(url, '#'))
        return rm_errf(err, "--endpoint %s: give the API's base URL, without a query", url);
    rm_buf b = { 0 };
    size_t n = strlen(url);
    while (n && url[n - 1] == '/') n--;
    static const char chat[] = "/chat/completions";
    if (n >= sizeof chat - 1 && !strncmp(url + n - (sizeof chat - 1), chat, sizeof chat - 1)) n -= sizeof chat - 1;
    const char *path = strstr(url, "://");
    path = path ? strchr(path + 3, '/') : NULL;
    int rootless = !path || (size_t)(path - url) >= n;
    int bad = rm_buf_add(&b, url, n) || (rootless && rm_buf_adds(&b, "/v1"));
    size_t base = b.len;
    bad = bad || rm_buf_adds(&b, chat) || !(e->chat_url = strdup(b.p));
    b.len = base;
    bad = bad || rm_buf_adds(&b, "/models") || !(e->models_url = strdup(b.p));
    rm_buf_free(&b);
    return bad ? rm_errf(err, "out of memory") : 0;
}

/* ---- one HTTP exchange ---------------------------------------------------- */

typedef struct xfer {
    endpoint_source *e;
    volatile int *stop;
    /* the body of a 2xx reply goes to sink; other replies are kept in body */
    int (*sink)(void *ud, const char *p, size_t n);
    void *ud;
    long status;
    rm_buf body;
    char retry_after[64], ctype[128];
    double last_byte;
    double deadline;            /* rm_now() past which the exchange is given up */
    uint64_t bytes;             /* body bytes of this exchange */
    int sink_failed;            /* sink returned non-zero: the transfer was ended */
} xfer;

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    xfer *x = ud;
    size_t len = size * n;
    x->last_byte = rm_now();
    if (len >= 5 && !strncasecmp(p, "HTTP/", 5)) {     /* a new response: forget the last one's */
        x->retry_after[0] = x->ctype[0] = 0;
        return len;
    }
    const char *colon = memchr(p, ':', len);
    if (!colon) return len;
    size_t k = (size_t)(colon - p);
    const char *v = colon + 1, *end = p + len;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) end--;
    char *dst = k == 11 && !strncasecmp(p, "retry-after", 11) ? x->retry_after
              : k == 12 && !strncasecmp(p, "content-type", 12) ? x->ctype : NULL;
    if (dst) snprintf(dst, 64, "%.*s", (int)(end - v), v);
    return len;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    xfer *x = ud;
    size_t len = size * n;
    x->last_byte = rm_now();
    x->bytes += len;
    if (!x->status) curl_easy_getinfo(x->e->easy, CURLINFO_RESPONSE_CODE, &x->status);
    if (x->status >= 200 && x->status < 300 && x->sink) {
        if (x->sink(x->ud, p, len)) { x->sink_failed = 1; return 0; }
        return len;
    }
    if (x->status >= 300 && x->status < 400) return len;        /* a redirect's page */
    size_t room = x->body.len < ERROR_BODY_MAX ? ERROR_BODY_MAX - x->body.len : 0;
    if (rm_buf_add(&x->body, p, len < room ? len : room)) return 0;
    return len;
}

enum { X_DONE, X_STOPPED, X_STALLED, X_LATE, X_FAILED };

/* Runs the easy handle to its end, looking at the stop flag and the stall
 * clock between polls. */
static int perform(endpoint_source *e, xfer *x, CURLcode *res)
{
    CURLM *m = e->multi;
    curl_multi_add_handle(m, e->easy);
    int running = 1, outcome = X_DONE;
    *res = CURLE_OK;
    x->last_byte = rm_now();
    if (!x->deadline) x->deadline = x->last_byte + DEADLINE_TIMEOUTS * e->timeout;
    while (running) {
        if (curl_multi_perform(m, &running) != CURLM_OK) { outcome = X_FAILED; *res = CURLE_FAILED_INIT; break; }
        if (!running) break;
        if (x->stop && *x->stop) { outcome = X_STOPPED; break; }
        if (rm_now() - x->last_byte > e->timeout) { outcome = X_STALLED; break; }
        if (rm_now() > x->deadline) { outcome = X_LATE; break; }
        curl_multi_poll(m, NULL, 0, POLL_MS, NULL);
    }
    if (outcome == X_DONE) {
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left)))
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == e->easy) *res = msg->data.result;
        if (*res == CURLE_WRITE_ERROR && x->sink_failed) *res = CURLE_OK;
        if (*res != CURLE_OK) outcome = X_FAILED;
    }
    curl_multi_remove_handle(m, e->easy);      /* a transfer cut short closes its connection */
    return outcome;
}

/* A transport failure as the user should read it. */
static void transport_error(const endpoint_source *e, const char *url, CURLcode res, const char *detail,
                            rm_err *err)
{
    char host[300];
    snprintf(host, sizeof host, "%s:%s", e->host, e->port);
    switch (res) {
    case CURLE_COULDNT_RESOLVE_HOST:
        rm_errf(err, "%s: cannot resolve the host name %s (DNS): %s", url, e->host, detail);
        break;
    case CURLE_COULDNT_CONNECT:
        rm_errf(err, "%s: cannot connect to %s: %s (is the server running?)", url, host, detail);
        break;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
        rm_errf(err, "%s: TLS with %s failed, the connection was not used: %s", url, host, detail);
        break;
    case CURLE_OPERATION_TIMEDOUT:
        rm_errf(err, "%s: %s did not answer in time: %s", url, host, detail);
        break;
    default:
        rm_errf(err, "%s: %s", url, detail[0] ? detail : curl_easy_strerror(res));
        break;
    }
}

/* One request (body NULL: GET), redirects followed here. Returns 0 when a
 * reply came (x->status says which), 1 when stopped, -1 on a failure. */
static int exchange(endpoint_source *e, const char *url0, const char *body, xfer *x, rm_err *err)
{
    char *url = strdup(url0);
    if (!url) return rm_errf(err, "out of memory");
    int rc = -1;
    for (int hop = 0;; hop++) {
        CURL *h = e->easy;
        char cerr[CURL_ERROR_SIZE] = "";
        curl_easy_reset(h);
        struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
        hdr = curl_slist_append(hdr, body ? "Accept: text/event-stream" : "Accept: application/json");
        hdr = curl_slist_append(hdr, "Expect:");    /* no 100-continue wait on long conversations */
        char auth[1100] = "";
        if (key_allowed(e, url)) {
            snprintf(auth, sizeof auth, "Authorization: Bearer %s", e->key);
            hdr = curl_slist_append(hdr, auth);
            memset(auth, 0, sizeof auth);       /* curl copied it */
        }
        curl_easy_setopt(h, CURLOPT_URL, url);
        char scheme[16], host[256], port[16];
        if (!url_parts(url, scheme, sizeof scheme, host, sizeof host, port, sizeof port) && is_loopback(host))
            curl_easy_setopt(h, CURLOPT_PROXY, "");     /* a loopback server is never reached through a proxy */
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(1000 * (e->timeout < 30 ? e->timeout : 30)));
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
        curl_easy_setopt(h, CURLOPT_USERAGENT, "remora");
        if (body) {
            curl_easy_setopt(h, CURLOPT_POST, 1L);
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
        }
        x->status = 0;
        rm_buf_reset(&x->body);
        CURLcode res;
        int outcome = perform(e, x, &res);
        curl_slist_free_all(hdr);
        if (outcome == X_STOPPED) { rc = 1; break; }
        if (outcome == X_STALLED) {
            rm_errf(err, "%s: no data from %s:%s for %g s: the request was given up (--endpoint-timeout)", url,
                    e->host, e->port, e->timeout);
            break;
        }
        if (outcome == X_LATE) {
            rm_errf(err, "%s: the exchange with %s:%s took longer than %g s in all (%d times --endpoint-timeout): "
                    "it was given up", url, e->host, e->port, DEADLINE_TIMEOUTS * e->timeout, DEADLINE_TIMEOUTS);
            break;
        }
        if (outcome == X_FAILED) { transport_error(e, url, res, cerr, err); break; }
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &x->status);
        char *next = NULL;
        if (x->status >= 300 && x->status < 400) curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &next);
        if (!next) { rc = 0; break; }
        if (hop == MAX_REDIRECTS) { rm_errf(err, "%s: more than %d redirects", url0, MAX_REDIRECTS); break; }
        char *n2 = strdup(next);
        free(url);
        if (!(url = n2)) { rm_errf(err, "out of memory"); break; }
    }
    free(url);
    return rc;
}

/* The message of an HTTP error reply. */
static int http_error(const endpoint_source *e, const char *url, const xfer *x, rm_err *err)
{
    char msg[600];
    const char *m = ui_sse_error_message(x->body.p ? x->body.p : "", x->body.len, msg, sizeof msg);
    if (!m) {
        snprintf(msg, sizeof msg, "%.200s", x->body.len ? x->body.p : "no message");
        for (char *p = msg; *p; p++) if ((unsigned char)*p < 32) *p = ' ';
        m = msg;
    }
    if (x->status == 429)
        return rm_errf(err, "%s:%s is busy (HTTP 429): %s%s%s%s", e->host, e->port, m,
                       x->retry_after[0] ? "; it asks to retry after " : "", x->retry_after,
                       x->retry_after[0] && strspn(x->retry_after, "0123456789") == strlen(x->retry_after) ? " s" : "");
    if (x->status == 401 || x->status == 403)
        return rm_errf(err, "%s: HTTP %ld: %s%s", url, x->status, m,
                       e->key ? "" : " (no API key was sent: --api-key-env VAR)");
    return rm_errf(err, "%s: HTTP %ld: %s", url, x->status, m);
}

/* ---- the conversation ------------------------------------------------------ */

static void clear(ui_source *src) { ui_conv_clear(&((endpoint_source *)src)->conv); }

static int set_system(ui_source *src, const char *text, rm_err *err)
{
    return ui_conv_set_system(&((endpoint_source *)src)->conv, text) ? rm_errf(err, "out of memory") : 0;
}

static int messages(ui_source *src, const rm_chat_msg **out)
{
    return ui_conv_view(&((endpoint_source *)src)->conv, out);
}

static int last_interrupted(ui_source *src) { return ui_conv_last_interrupted(&((endpoint_source *)src)->conv); }

/* Transcripts are the engine's, as for a local model. */
static int save(ui_source *src, const char *path, rm_err *err)
{
    return ui_conv_save(&((endpoint_source *)src)->conv, path, err);
}

static int load(ui_source *src, const char *path, rm_err *err)
{
    return ui_conv_load(&((endpoint_source *)src)->conv, path, err);
}

/* The request: the whole conversation, prior reasoning both as
 * reasoning_content (SGLang, K3's template, remora serve) and as reasoning
 * (vLLM's name for it, which its interleaved thinking reads back); an
 * exchange stopped in its prompt is not sent (rm_chat_left_out). */
static char *request_body(const endpoint_source *e, const rm_gen_opts *o)
{
    json_t *msgs = json_array();
    const ui_conv *c = &e->conv;
    if (c->system) json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "system", "content", c->system));
    for (int i = 0; i < c->n; i++) {
        const ui_conv_msg *cm = &c->msgs[i], *nx = i + 1 < c->n ? &c->msgs[i + 1] : NULL;
        if (rm_chat_left_out(cm->role, cm->interrupted, nx ? nx->role : NULL, nx ? nx->interrupted : 0)) continue;
        json_t *m = json_pack("{s:s,s:s}", "role", cm->role, "content", cm->content);
        if (m && cm->reasoning && *cm->reasoning) {
            json_object_set_new(m, "reasoning_content", json_string(cm->reasoning));
            json_object_set_new(m, "reasoning", json_string(cm->reasoning));
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
    xfer *x;
    rm_token_stats rec;         /* a token record */
    rm_token_stats routes;      /* routed experts not yet published */
    int have_routes;
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
        const char *ct = r->x->ctype;
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
    ui_conv *c = &e->conv;
    if (ui_conv_push(c, "user", user, NULL, 0)) return rm_errf(err, "out of memory");
    char *body = request_body(e, o);
    if (!body) { ui_conv_pop(c); return rm_errf(err, "out of memory"); }
    reply *r = calloc(1, sizeof *r);
    if (!r) { free(body); ui_conv_pop(c); return rm_errf(err, "out of memory"); }
    xfer x = { .e = e, .stop = stop, .sink = stream_sink, .ud = r };
    r->e = e;
    r->ev = ev;
    r->x = &x;
    r->max_new = o->max_new;
    r->t0 = rm_now();
    /* remora serve always sends reasoning in a field of its own */
    ui_sse_think_init(&r->think, o->think && !e->remora);
    int rc = exchange(e, e->chat_url, body, &x, err);
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
    if (rc == 0 && (x.status < 200 || x.status >= 300)) rc = http_error(e, e->chat_url, &x, err);
    else if (rc == 0 && r->parse_failed) rc = rm_errf(err, "%s: %s", e->chat_url, r->parse_err.msg);
    else if (rc == 0 && r->error[0]) rc = rm_errf(err, "%s:%s reported an error in mid-reply: %s", e->host, e->port, r->error);
    else if (rc == 0 && r->lost) rc = rm_errf(err, "out of memory: the reply could not be kept whole");
    else if (rc == 0 && !r->done && !r->finish[0])
        rc = rm_errf(err, "%s:%s ended the reply before its end (no finish_reason, no [DONE])", e->host, e->port);
    int interrupted = 0;
    if (rc == 1) {                              /* stopped */
        interrupted = got_text ? RM_STOPPED_REPLY : RM_STOPPED_PROMPT;
        rc = 0;
    }
    if (rc < 0 && !got_text) {
        ui_conv_pop(c);                             /* nothing came back: the conversation is as it was */
    } else if (ui_conv_push(c, "assistant", r->text[RM_CHAN_ANSWER].p ? r->text[RM_CHAN_ANSWER].p : "",
                            r->text[RM_CHAN_REASONING].len ? r->text[RM_CHAN_REASONING].p : NULL,
                            rc < 0 ? RM_STOPPED_REPLY : interrupted)) {
        rc = rm_errf(err, "out of memory");
    } else if (rc < 0) {
        size_t l = strlen(err->msg);
        snprintf(err->msg + l, sizeof err->msg - l, "; the reply so far is kept");
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
    ui_conv_free(&e->conv);
    free(e->chat_url);
    free(e->models_url);
    free(e->model);
    if (e->key) {
        memset(e->key, 0, strlen(e->key));
        free(e->key);
    }
    if (e->multi) curl_multi_cleanup(e->multi);
    if (e->easy) curl_easy_cleanup(e->easy);
    free(e);
}

/* The storage ceiling is the server's business: nothing here to measure. */
static double probe(ui_source *src, double seconds)
{
    (void)src, (void)seconds;
    return -1;
}

static const ui_source_vt endpoint_vt = {
    turn, set_system, clear, save, load, messages, last_interrupted, probe, destroy,
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
    xfer x = { .e = e, .sink = collect, .ud = &b };
    double t = e->timeout;
    if (e->timeout > 15) e->timeout = 15;
    int rc = exchange(e, e->models_url, NULL, &x, err);
    e->timeout = t;
    int no_list = rc == 0 && want && (x.status == 404 || x.status == 405);
    if (rc == 0 && !no_list && (x.status < 200 || x.status >= 300)) rc = http_error(e, e->models_url, &x, err);
    json_t *j = rc || no_list ? NULL : json_loadb(b.p ? b.p : "", b.len, 0, NULL);
    json_t *data = json_object_get(j, "data"), *pick = NULL, *m;
    if (!rc && !no_list && !json_is_array(data))
        rc = rm_errf(err, "%s: not a model list (no \"data\" array)", e->models_url);
    const char *first = NULL;
    size_t i;
    if (!rc && !no_list) {
        json_array_foreach(data, i, m) {
            const char *id = json_string_value(json_object_get(m, "id"));
            if (!id) continue;
            if (!first) first = id;
            if (!want || !strcmp(id, want)) { pick = m; break; }
        }
        if (!first) rc = rm_errf(err, "%s: the server lists no model", e->models_url);
        else if (!pick)
            rc = rm_errf(err, "%s: the server does not list the model '%s' (it lists '%s'%s)", e->models_url, want,
                         first, json_array_size(data) > 1 ? ", ..." : "");
    }
    if (pick) {
        const char *owner = json_string_value(json_object_get(pick, "owned_by"));
        e->remora = owner && !strcmp(owner, "remora");
    }
    if (!rc && !(e->model = strdup(want ? want : json_string_value(json_object_get(pick, "id")))))
        rc = rm_errf(err, "out of memory");
    json_decref(j);
    rm_buf_free(&x.body);
    rm_buf_free(&b);
    return rc ? -1 : 0;
}

int ui_source_endpoint_open(const ui_endpoint_opts *o, ui_source **out, rm_err *err)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    endpoint_source *e = calloc(1, sizeof *e);
    if (!e) return rm_errf(err, "out of memory");
    e->base.vt = &endpoint_vt;
    e->timeout = o->timeout > 0 ? o->timeout : DEFAULT_TIMEOUT;
    int rc = make_urls(e, o->url, err);
    if (!rc && o->api_key && strncasecmp(o->url, "https:", 6) && !is_loopback(e->host))
        rc = rm_errf(err, "--endpoint %s: an API key is sent only over HTTPS (or to a loopback address): it would "
                     "cross the network in clear text", o->url);
    if (rc) {
        destroy(&e->base);
        return -2;
    }
    if (o->api_key && !(e->key = strdup(o->api_key))) rc = rm_errf(err, "out of memory");
    if (!rc && (!(e->easy = curl_easy_init()) || !(e->multi = curl_multi_init())))
        rc = rm_errf(err, "cannot start libcurl");
    if (!rc) rc = discover(e, o->model, err);
    if (rc) {
        destroy(&e->base);
        return -1;
    }
    /* what a panel shows when its figures did not come: an endpoint without
     * the stats extension reports neither phases, cache nor speculation,
     * and routes only when the server returns routed experts */
    /* router rows are numbered as the server numbers its routed layers:
     * neither API says which model layer the first one is */
    e->base.route_layer0 = 0;
    e->base.model_layers = 0;
    e->base.unreported = e->remora ? 0 : UI_FIG_PHASES | UI_FIG_CACHE | UI_FIG_SPEC | UI_FIG_ROUTER | UI_FIG_STORAGE;
    snprintf(e->base.label, sizeof e->base.label, "%.120s:%.15s %.110s", e->host, e->port, e->model);
    /* the welcome names the model; its figures (base.info) stay zero: no
     * API says them */
    snprintf(e->base.name, sizeof e->base.name, "%.95s", e->model);
    *out = &e->base;
    return 0;
}
