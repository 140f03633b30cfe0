/* http.c — the HTTP side of `remora serve` (serve.h), on libmicrohttpd.
 *
 * One thread per connection (libmicrohttpd's thread-per-connection mode),
 * so a connection's thread may wait for its reply: a stream's content
 * callback blocks until the worker has bytes for it, a whole reply is
 * waited for in the request handler. At most --max-connections
 * connections are open at once, one with no traffic for --idle-timeout
 * seconds is closed (while a reply is being waited for or streamed, the
 * server is the one to send, and keep-alive comments keep the stream
 * busy), and one address may hold at most SERVE_PER_IP_LIMIT of them. The
 * idle time-out restarts at every byte, so a client that trickles its
 * headers or body a byte at a time would hold a connection for ever: a
 * request's headers must also be complete within --idle-timeout seconds of
 * the connection's start (or of the previous reply's end), and its body
 * within as many again; a watchdog thread shuts down the socket of one
 * that is late (the deadline of the file's "deadlines" part).
 *
 * Every request passes the same checks before its body is read, in this
 * order: the head's size (a request target over TARGET_MAX is 414, a
 * request line and headers over HEAD_MAX 431; libmicrohttpd's own limit,
 * its memory pool, lies far above, see MHD_POOL); the framing (RFC 9112:
 * two Content-Length headers that differ, a Content-Length that is not a
 * number or one beside a Transfer-Encoding are 400; a Transfer-Encoding
 * other than one "chunked" is 501), so no request hides in another's body
 * (a Content-Length that is not a number never reaches the handler: the
 * library refuses it, and the connection is closed, close_bad_length); on
 * a loopback bind the Host header must
 * name a loopback address and an Origin header, when there is one, a
 * loopback origin (a web page elsewhere must not reach a local server
 * through DNS rebinding); the route and method (404, 405; a path holding
 * %00 matches no route); the API key when one is set (401; /health is
 * open; "Authorization: Bearer KEY" or Anthropic's "x-api-key: KEY"); the
 * declared body size (413). The Anthropic routes (/v1/messages...) answer
 * errors in that API's envelope, the others in OpenAI's. Bodies are read up to
 * cfg->max_body. Nothing of a request's headers or body is logged, so the
 * key never reaches the log; the path in the log line passes rm_text_safe,
 * so a %0a or %1b in it cannot forge lines or reach a terminal.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <pthread.h>
#include <time.h>
#include <microhttpd.h>
#include "serve.h"

/* A connection's deadline (the file's comment): one per connection, from
 * libmicrohttpd's connection notification to its close. */
typedef struct watch {
    int fd;
    double deadline;            /* 0: none (a reply is being sent) */
    const char *phase;          /* what is late when it passes */
    struct watch *prev, *next;
} watch;

struct serve_http {
    serve *sv;
    struct MHD_Daemon *d;
    pthread_mutex_t mu;         /* guards the watch list */
    pthread_cond_t cv;
    watch *watches;
    int stop;
    int have_watchdog;
    pthread_t watchdog;
};

/* bytes of a refused body read and dropped before the connection is closed */
#define DROP_MAX ((size_t)64 << 20)

/* The size limits of a request's head, ours (JSON errors) below the
 * library's: libmicrohttpd answers a request line or headers that do not
 * fit its per-connection memory pool itself, with an HTML page (414, 431),
 * before the handler runs. The pool is raised from its 32 KiB so that
 * every head within ours fits: the read buffer and the headers' table
 * share it, and 640 KiB holds 9,632 header lines of "a:" (38.6 KB) or one
 * header of 655,008 bytes (measured with tests/sh/lib/hostile.py's
 * probes), so every head of at most 32 KiB (8,192 lines at most) reaches
 * the handler. The pool is zeroed at every request of a kept-alive
 * connection, so it is resident while the connection is open: measured,
 * 684 kB more RSS per connection kept alive after one request (16 of
 * them), about 44 MB at the default --max-connections 64. */
#define HEAD_MAX ((size_t)32 << 10)      /* request line and headers: 431 */
#define TARGET_MAX ((size_t)8 << 10)     /* the request target (path and query): 414 */
#define MHD_POOL ((size_t)640 << 10)

enum { ROUTE_NONE, ROUTE_HEALTH, ROUTE_MODELS, ROUTE_MODEL, ROUTE_CHAT, ROUTE_COMPLETIONS, ROUTE_MESSAGES,
       ROUTE_COUNT_TOKENS };
#define ROUTE_POST(r) ((r) >= ROUTE_CHAT)
#define ROUTE_ANTHROPIC(r) ((r) >= ROUTE_MESSAGES)

/* One request on a connection (libmicrohttpd's per-request pointer). */
typedef struct request {
    int route;
    const char *arg;            /* /v1/models/ID: the ID, inside url */
    rm_buf body;
    serve_error refused;        /* status 0: not refused */
    size_t dropped;             /* bytes of a refused body read since */
    serve_job *job;
    int stream;
    int status;
    double t0;
    int http10;
    int started;                /* the handler has seen its headers */
    int fd;                     /* the client's socket */
    size_t target_len;          /* the request target as it came */
    const char *closed;         /* closed without a reply: why */
    /* the client hung up: what the library then says of the connection
     * ("application error", "failed to send") is that normal end, which
     * the request's own line says once */
    int hung_up;
    char method[16], path[96];
} request;

/* The request the connection's thread is reading (thread per connection):
 * the library's messages of a request are logged on that thread, so the
 * logger knows which connection they are about (mhd_log). */
static __thread request *tl_request;

/* ---- checks ------------------------------------------------------------- */

int serve_origin_is_loopback(const char *origin)
{
    const char *rest = !strncasecmp(origin, "http://", 7) ? origin + 7 : !strncasecmp(origin, "https://", 8) ? origin + 8
                                                                                                           : NULL;
    if (!rest || strchr(rest, '/')) return 0;
    return rm_host_is_loopback(rest);
}

/* given == key, in a time that depends on the key's length only. */
static int key_equals(const char *given, const char *key, size_t key_len)
{
    size_t n = strlen(given);
    /* every byte of the key is compared whatever the answer: the time
     * depends on the key's length only, not on what matched */
    volatile unsigned char diff = n != key_len;
    for (size_t i = 0; i < key_len; i++) diff |= (unsigned char)(key[i] ^ (i < n ? given[i] : 0));
    return diff == 0;
}

int serve_key_matches(const char *auth, const char *key, size_t key_len)
{
    if (!auth || strncasecmp(auth, "Bearer ", 7)) return 0;
    const char *given = auth + 7;
    while (*given == ' ') given++;
    return key_equals(given, key, key_len);
}

static int route_of(const char *url, const char **arg)
{
    *arg = NULL;
    if (!strcmp(url, "/health")) return ROUTE_HEALTH;
    if (!strcmp(url, "/v1/models")) return ROUTE_MODELS;
    if (!strncmp(url, "/v1/models/", 11) && url[11]) { *arg = url + 11; return ROUTE_MODEL; }
    if (!strcmp(url, "/v1/chat/completions")) return ROUTE_CHAT;
    if (!strcmp(url, "/v1/completions")) return ROUTE_COMPLETIONS;
    if (!strcmp(url, "/v1/messages")) return ROUTE_MESSAGES;
    if (!strcmp(url, "/v1/messages/count_tokens")) return ROUTE_COUNT_TOKENS;
    return ROUTE_NONE;
}

/* The framing headers of a request, counted (RFC 9112 section 6). */
typedef struct framing {
    int ncl, cl_differ, cl_bad, nte, te_chunked;
    char cl[32], te[64];
} framing;

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    framing *f = cls;
    if (!value) value = "";
    if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
        if (!*value || strspn(value, "0123456789") != strlen(value)) f->cl_bad = 1;
        if (f->ncl++ && strcmp(f->cl, value)) f->cl_differ = 1;
        snprintf(f->cl, sizeof f->cl, "%s", value);
    } else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
        f->nte++;
        f->te_chunked = !strcasecmp(value, "chunked");
        snprintf(f->te, sizeof f->te, "%s", value);
    }
    return MHD_YES;
}

/* The request's framing: one body length, by one means. */
static int check_framing(struct MHD_Connection *c, serve_error *e)
{
    framing f = { 0 };
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_framing, &f);
    if (f.nte > 1 || (f.nte && !f.te_chunked)) {
        rm_buf b = { 0 };
        int bad = rm_text_safe(&b, f.te, strlen(f.te), 0) || rm_buf_add(&b, "", 1);
        serve_fail(e, 501, "invalid_request_error", "unsupported_transfer_encoding", NULL,
                   "Transfer-Encoding '%.48s'%s is not supported: send a Content-Length or one 'chunked'",
                   bad ? "?" : b.p, f.nte > 1 ? " (more than one)" : "");
        rm_buf_free(&b);
        return -1;
    }
    if (f.cl_differ)
        return serve_fail(e, 400, "invalid_request_error", "invalid_content_length", NULL,
                          "two Content-Length headers that differ: the body's length is ambiguous");
    if (f.cl_bad)
        return serve_fail(e, 400, "invalid_request_error", "invalid_content_length", NULL,
                          "the Content-Length is not a number of bytes");
    if (f.ncl && f.nte)
        return serve_fail(e, 400, "invalid_request_error", "invalid_content_length", NULL,
                          "both a Content-Length and a Transfer-Encoding: the body's length is ambiguous");
    return 0;
}

/* The checks of the file's comment; 0 or -1 with e filled. */
static int check(serve_http *h, struct MHD_Connection *c, const char *url, const char *method, request *rq,
                 serve_error *e)
{
    const serve_cfg *cfg = serve_config(h->sv);
    rq->route = route_of(url, &rq->arg);    /* first: every error below in the route's envelope */
    if (rq->target_len > TARGET_MAX)
        return serve_fail(e, 414, "invalid_request_error", "uri_too_long", NULL,
                          "the request target of %zu bytes is over the limit of %zu", rq->target_len, TARGET_MAX);
    const union MHD_ConnectionInfo *hs = MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (hs && hs->header_size > HEAD_MAX)
        return serve_fail(e, 431, "invalid_request_error", "headers_too_large", NULL,
                          "the request line and headers of %zu bytes are over the limit of %zu", hs->header_size,
                          HEAD_MAX);
    if (check_framing(c, e)) return -1;
    if (cfg->loopback) {
        const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
        if (!rm_host_is_loopback(host))
            return serve_fail(e, 403, "invalid_request_error", "forbidden_host", NULL,
                              "this server listens on a loopback address and answers only requests for a loopback "
                              "host name (localhost, 127.0.0.1, [::1]); the Host header is %s%.64s%s",
                              host ? "'" : "", host ? host : "missing", host ? "'" : "");
        const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
        if (origin && !serve_origin_is_loopback(origin))
            return serve_fail(e, 403, "invalid_request_error", "forbidden_origin", NULL,
                              "requests from the web origin '%.64s' are refused: this server listens on a loopback "
                              "address", origin);
    }
    if (rq->route == ROUTE_NONE)
        return serve_fail(e, 404, "invalid_request_error", "not_found", NULL, "Invalid URL (%s %.64s)", method, url);
    const int post = ROUTE_POST(rq->route);
    if (strcmp(method, post ? "POST" : "GET"))
        return serve_fail(e, 405, "invalid_request_error", "method_not_allowed", NULL, "%.64s takes %s, not %s", url,
                          post ? "POST" : "GET", method);
    const char *xkey = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "x-api-key");
    if (cfg->api_key && rq->route != ROUTE_HEALTH &&
        !serve_key_matches(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
                           cfg->api_key, cfg->api_key_len) &&
        !(xkey && key_equals(xkey, cfg->api_key, cfg->api_key_len)))
        return serve_fail(e, 401, "invalid_request_error", "invalid_api_key", NULL,
                          "a missing or wrong API key: send \"Authorization: Bearer KEY\" or \"x-api-key: KEY\"");
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > cfg->max_body)
        return serve_fail(e, 413, "invalid_request_error", "request_too_large", NULL,
                          "the body of %s bytes is over the limit of %zu (--max-body)", cl, cfg->max_body);
    return 0;
}

/* ---- responses ---------------------------------------------------------- */

static enum MHD_Result respond(struct MHD_Connection *c, request *rq, int status, const char *body, size_t len,
                               int retry_after)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    if (retry_after > 0) {
        char v[24];
        snprintf(v, sizeof v, "%d", retry_after);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, v);
    }
    if (status == 401) MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (status == 405)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW,
                                ROUTE_POST(rq->route) ? "POST" : "GET");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    rq->status = status;
    return ret;
}

static enum MHD_Result respond_error(struct MHD_Connection *c, request *rq, const serve_error *e)
{
    rm_buf b = { 0 };
    static const char oom[] = "{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\",\"param\":null,"
                              "\"code\":null}}";
    /* a 503 (loading, shutting down) is worth retrying within a second */
    int retry = e->retry_after ? e->retry_after : e->status == 503;
    int bad = ROUTE_ANTHROPIC(rq->route) ? an_error(e, 0, &b) : oa_error(e, &b);
    enum MHD_Result ret = bad ? respond(c, rq, 500, oom, sizeof oom - 1, 0) : respond(c, rq, e->status, b.p, b.len, retry);
    rm_buf_free(&b);
    return ret;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    long n = serve_job_read(cls, buf, max);
    if (n < 0 && tl_request) tl_request->hung_up = 1;     /* the reader runs on the connection's thread */
    return n > 0 ? (ssize_t)n : n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static enum MHD_Result start_stream(struct MHD_Connection *c, request *rq)
{
    /* the job is released when the request completes (on_completed), not
     * with the response, which libmicrohttpd may free later */
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, rq->job, NULL);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(r, "X-Accel-Buffering", "no");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    rq->status = 200;
    return ret;
}

static int client_fd(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    return ci ? ci->connect_fd : -1;
}

/* A complete generation request: parse, queue, then stream or wait. */
static enum MHD_Result generate(serve_http *h, struct MHD_Connection *c, request *rq)
{
    serve_req req;
    serve_error e;
    const serve_cfg *cfg = serve_config(h->sv);
    rm_session *s = serve_session(h->sv);       /* NULL while the model loads */
    const char *in = rq->body.p ? rq->body.p : "";
    int rc = rq->route == ROUTE_CHAT       ? oa_parse_chat(cfg, s, in, rq->body.len, &req, &e)
             : rq->route == ROUTE_MESSAGES ? an_parse_messages(cfg, s, in, rq->body.len, &req, &e)
                                           : oa_parse_completion(cfg, s, in, rq->body.len, &req, &e);
    if (rc) return respond_error(c, rq, &e);
    rq->stream = req.stream;
    req.http10 = rq->http10;
    if (serve_submit(h->sv, &req, client_fd(c), &rq->job, &e)) {
        serve_req_free(&req);
        return respond_error(c, rq, &e);
    }
    if (rq->stream) return start_stream(c, rq);
    int status;
    const char *body;
    size_t len;
    if (serve_job_wait(rq->job, &status, &body, &len)) {
        /* the client hung up; 499 is the log's mark for it (nginx's) */
        rq->hung_up = 1;
        rq->status = 499;
        return MHD_NO;
    }
    return respond(c, rq, status, body, len, 0);
}

/* ---- deadlines ---------------------------------------------------------- */

static watch *watch_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* The connection's next deadline: `secs` from now for `phase`, or none (secs 0). */
static void watch_set(serve_http *h, struct MHD_Connection *c, double secs, const char *phase)
{
    watch *w = watch_of(c);
    if (!w) return;
    pthread_mutex_lock(&h->mu);
    w->deadline = secs > 0 ? rm_now() + secs : 0;
    w->phase = phase;
    pthread_mutex_unlock(&h->mu);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    serve_http *h = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        watch *w = calloc(1, sizeof *w);
        if (!w) return;             /* no deadline for it: the idle time-out still holds */
        w->fd = client_fd(c);
        w->deadline = rm_now() + serve_config(h->sv)->idle_timeout_s;
        w->phase = "request headers";
        pthread_mutex_lock(&h->mu);
        w->next = h->watches;
        if (h->watches) h->watches->prev = w;
        h->watches = w;
        pthread_mutex_unlock(&h->mu);
        *socket_context = w;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        /* called before the socket is closed, so the watchdog never shuts
         * down a descriptor that was reused */
        watch *w = *socket_context;
        pthread_mutex_lock(&h->mu);
        if (w->prev) w->prev->next = w->next;
        else h->watches = w->next;
        if (w->next) w->next->prev = w->prev;
        pthread_mutex_unlock(&h->mu);
        free(w);
        *socket_context = NULL;
    }
}

/* Every 100 ms: a connection past its deadline has its socket shut down,
 * which ends its thread's read at once. */
static void *watchdog(void *arg)
{
    serve_http *h = arg;
    pthread_mutex_lock(&h->mu);
    while (!h->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
        pthread_cond_timedwait(&h->cv, &h->mu, &ts);
        const double now = rm_now();
        for (watch *w = h->watches; w; w = w->next) {
            if (!w->deadline || now < w->deadline || w->fd < 0) continue;
            fprintf(stderr, "remora serve: a connection closed: its %s took longer than %d s (--idle-timeout)\n",
                    w->phase, serve_config(h->sv)->idle_timeout_s);
            shutdown(w->fd, SHUT_RDWR);
            w->deadline = 0;
        }
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* libmicrohttpd's unescaping of the path, except that a path holding %00
 * is left as it came: decoded, the NUL would cut it ("/v1/models%00x"
 * answered as /v1/models), so it matches no route instead. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *uri)
{
    if (strstr(uri, "%00")) return strlen(uri);
    return MHD_http_unescape(uri);
}

/* A request's record, made when its request line is in (libmicrohttpd's
 * URI log callback, whose answer is the request's pointer): so a request
 * the library refuses after that (a head too large for its pool, a bad
 * Content-Length) has its line in the log too, and the logger knows the
 * connection of the library's messages. */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *c)
{
    request *rq = calloc(1, sizeof *rq);
    tl_request = rq;
    if (!rq) return NULL;       /* on_request makes it later */
    rq->t0 = rm_now();
    rq->fd = client_fd(c);
    rq->target_len = uri ? strlen(uri) : 0;
    serve_safe_copy(rq->path, sizeof rq->path, uri ? uri : "");
    return rq;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    serve_http *h = cls;
    request *rq = *con_cls;
    const serve_cfg *cfg = serve_config(h->sv);
    if (!rq) {
        if (!(rq = calloc(1, sizeof *rq))) return MHD_NO;
        *con_cls = rq;
        rq->t0 = rm_now();
    }
    if (!rq->started) {         /* the headers are in; the body follows */
        rq->started = 1;
        rq->http10 = !strcmp(version, MHD_HTTP_VERSION_1_0);
        serve_safe_copy(rq->method, sizeof rq->method, method);
        serve_safe_copy(rq->path, sizeof rq->path, url);
        rq->body.max = cfg->max_body;
        watch_set(h, c, cfg->idle_timeout_s, "request body");
        /* a refused request is answered before its body is read */
        if (check(h, c, url, method, rq, &rq->refused)) return respond_error(c, rq, &rq->refused);
        return MHD_YES;
    }
    if (*upload_size) {
        /* a body without a Content-Length that grows past the limit:
         * libmicrohttpd cannot answer before the body has been read, so
         * the rest is read and dropped, up to a bound past which the
         * connection is closed instead */
        if (rq->refused.status) rq->dropped += *upload_size;
        else if (rm_buf_add(&rq->body, upload, *upload_size)) {
            serve_fail(&rq->refused, 413, "invalid_request_error", "request_too_large", NULL,
                       "the body is over the limit of %zu bytes (--max-body)", cfg->max_body);
            rm_buf_free(&rq->body);
        }
        *upload_size = 0;
        return rq->dropped > DROP_MAX ? MHD_NO : MHD_YES;
    }
    watch_set(h, c, 0, NULL);     /* the request is in: the server sends now */
    if (rq->refused.status) return respond_error(c, rq, &rq->refused);
    rm_buf out = { 0 };
    serve_error e;
    enum MHD_Result ret;
    switch (rq->route) {
    case ROUTE_HEALTH: {
        int ready = serve_state(h->sv, NULL) == SERVE_READY;
        ret = serve_health_json(h->sv, &out) ? MHD_NO : respond(c, rq, ready ? 200 : 503, out.p, out.len, ready ? 0 : 1);
        break;
    }
    case ROUTE_MODELS:
    case ROUTE_MODEL:
        ret = oa_models(serve_config(h->sv), serve_session(h->sv), rq->arg, &out, &e) ? respond_error(c, rq, &e) : respond(c, rq, 200, out.p, out.len, 0);
        break;
    case ROUTE_COUNT_TOKENS:
        ret = an_count_tokens(serve_config(h->sv), serve_session(h->sv), rq->body.p ? rq->body.p : "", rq->body.len,
                              &out, &e)
                  ? respond_error(c, rq, &e) : respond(c, rq, 200, out.p, out.len, 0);
        break;
    default:
        ret = generate(h, c, rq);
        break;
    }
    rm_buf_free(&out);
    return ret;
}

/* The request is over (answered, failed, or the client left): its line in
 * the log, and the job let go, which stops a reply still running. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why)
{
    request *rq = *con_cls;
    if (!rq) return;
    if (tl_request == rq) tl_request = NULL;
    char what[320] = "";
    /* a client that hung up is a normal end, said once by the summary */
    if (rq->job && serve_job_summary(rq->job, what, sizeof what) && why == MHD_REQUEST_TERMINATED_WITH_ERROR)
        why = MHD_REQUEST_TERMINATED_COMPLETED_OK;
    int by_library = 0;         /* libmicrohttpd answered it (a head or a chunk it refused) */
    if (!rq->status && !rq->closed) {
        const union MHD_ConnectionInfo *st = MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
        if (st && st->http_status) { rq->status = (int)st->http_status; by_library = 1; }
    }
    if (rq->closed || by_library) snprintf(what, sizeof what, "%s", rq->closed ? rq->closed : "refused by libmicrohttpd");
    if (!rq->started) snprintf(rq->method, sizeof rq->method, "-");     /* the handler never saw it */
    static const char *const whys[] = {
        [MHD_REQUEST_TERMINATED_COMPLETED_OK] = "", [MHD_REQUEST_TERMINATED_WITH_ERROR] = " (connection failed)",
        [MHD_REQUEST_TERMINATED_TIMEOUT_REACHED] = " (timed out)", [MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN] = " (shutdown)",
        [MHD_REQUEST_TERMINATED_READ_ERROR] = " (read error)", [MHD_REQUEST_TERMINATED_CLIENT_ABORT] = " (client left)",
    };
    const char *w = (unsigned)why < sizeof whys / sizeof whys[0] && whys[why] ? whys[why] : "";
    fprintf(stderr, "remora serve: %s %s %d%s%s %.3f s%s%s\n", rq->method, rq->path, rq->status,
            rq->stream ? " stream" : "", w, rm_now() - rq->t0, *what ? ": " : "", what);
    serve_job_release(rq->job);
    rm_buf_free(&rq->body);
    free(rq);
    *con_cls = NULL;
    watch_set(cls, c, serve_config(((serve_http *)cls)->sv)->idle_timeout_s, "request headers");
}

/* libmicrohttpd 0.9.75 to 0.9.77 refuse a Content-Length that is not a
 * number (400) or is over 2^64 (413) in parse_connection_headers, whose
 * caller then moves the connection on as if nothing had been answered, so
 * the status line and headers of its reply go out twice: a reply no client
 * can parse. It logs the fault just before, on the connection's thread, so
 * the connection is shut down there and then, and the client sees it
 * closed without a reply (RFC 9112 section 6.3: the framing is invalid, an
 * unrecoverable error) rather than a malformed one. */
static void close_bad_length(const char *line)
{
    if (strncmp(line, "Failed to parse `Content-Length'", 32) && strncmp(line, "Too large value of 'Content-Length'", 35))
        return;
    /* the message comes after the request line's callback on this thread */
    if (!tl_request || tl_request->fd < 0 || tl_request->started) return;
    tl_request->closed = "closed without a reply: a Content-Length that is not a number of bytes below 2^64";
    shutdown(tl_request->fd, SHUT_RDWR);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512], safe[512];
    if (tl_request && tl_request->hung_up) return;
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && line[n - 1] == '\n') line[--n] = 0;
    close_bad_length(line);
    serve_safe_copy(safe, sizeof safe, line);   /* it may quote what a client sent */
    fprintf(stderr, "remora serve: libmicrohttpd: %s\n", safe);
}

/* ---- the daemon --------------------------------------------------------- */

static struct addrinfo *listen_addr(const char *host, int port, rm_err *err)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int g = getaddrinfo(host, ps, &hints, &ai);
    if (g) { rm_errf(err, "--host %s: %s", host, gai_strerror(g)); return NULL; }
    return ai;
}

int serve_bind_is_loopback(const char *host, int *loopback, rm_err *err)
{
    struct addrinfo *ai = listen_addr(host, 0, err);
    if (!ai) return -1;
    if (ai->ai_family == AF_INET)
        *loopback = (ntohl(((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr) >> 24) == 127;
    else
        *loopback = ai->ai_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr);
    freeaddrinfo(ai);
    return 0;
}

int serve_http_start(serve *sv, serve_http **out, int *port, rm_err *err)
{
    const serve_cfg *cfg = serve_config(sv);
    *out = NULL;
    struct addrinfo *ai = listen_addr(cfg->host, cfg->port, err);
    if (!ai) return -1;
    serve_http *h = calloc(1, sizeof *h);
    if (!h) { freeaddrinfo(ai); return rm_errf(err, "out of memory"); }
    h->sv = sv;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    if (pthread_create(&h->watchdog, NULL, watchdog, h)) {
        freeaddrinfo(ai);
        serve_http_stop(h);
        return rm_errf(err, "cannot start a thread");
    }
    h->have_watchdog = 1;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
                     (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    errno = 0;
    h->d = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, on_request, h,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,     /* first, so it sees every message */
                            MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->idle_timeout_s,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)SERVE_PER_IP_LIMIT,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                            MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
                            MHD_OPTION_UNESCAPE_CALLBACK, unescape, h,
                            MHD_OPTION_URI_LOG_CALLBACK, on_request_line, h,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, MHD_POOL,
                            MHD_OPTION_END);
    int saved = errno;
    freeaddrinfo(ai);
    if (!h->d) {
        serve_http_stop(h);
        return rm_errf(err, "cannot listen on %s port %d%s%s", cfg->host, cfg->port, saved ? ": " : "",
                       saved ? strerror(saved) : "");
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    *port = di ? di->port : cfg->port;
    *out = h;
    return 0;
}

void serve_http_stop(serve_http *h)
{
    if (!h) return;
    if (h->d) MHD_stop_daemon(h->d);
    if (h->have_watchdog) {
        pthread_mutex_lock(&h->mu);
        h->stop = 1;
        pthread_cond_signal(&h->cv);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->watchdog, NULL);
    }
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h);
}
