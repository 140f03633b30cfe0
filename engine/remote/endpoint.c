/* endpoint.c — the HTTP of an OpenAI-compatible endpoint (engine.h,
 * rm_endpoint): the URLs from what the user gave, the key's rule, and one
 * request at a time on a kept-alive connection, the reply's body handed to
 * the caller's sink as it streams. The chat's endpoint source and `remora
 * run --endpoint` (ui/source_endpoint.c) speak the API over it.
 *
 * The transfer runs on the calling thread through libcurl's multi
 * interface, polled every 50 ms so that the stop flag ends it within that
 * (a plain easy transfer only looks at its progress callback about once a
 * second while nothing arrives), and a request with no byte for `timeout`
 * seconds fails with a note saying so. A request also has an overall
 * deadline of DEADLINE_TIMEOUTS times `timeout` (2 h by default), so a
 * server that streams for ever at a steady pace cannot hold it either; the
 * caller caps what the reply holds (ui/source_endpoint.c: --max-new, 64 MB
 * of text).
 *
 * The API key goes in an Authorization header only to the endpoint's own
 * host and port, over HTTPS or to a loopback address (rm_host_is_loopback).
 * Redirects are followed here, not by libcurl (up to 5, by the shared
 * policy: http_policy.h), so that the header is left out of every request
 * to another host: libcurl itself stops resending it only since 7.58, and
 * a Bearer header set by hand is not covered by CURLOPT_UNRESTRICTED_AUTH.
 * TLS peers and host names are verified.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "remote/http_policy.h"

#define ERROR_BODY_MAX (256u << 10)     /* bytes of an error reply kept for its message */
#define POLL_MS 50
#define DEFAULT_TIMEOUT 300.0
#define DEADLINE_TIMEOUTS 24            /* a request's deadline, in stall time-outs */

struct rm_endpoint {
    char *chat_url, *models_url;
    char *key;                  /* NULL: none; wiped when freed */
    char host[256], port[16];   /* where the key may go */
    double timeout;
    CURL *easy;                 /* kept between requests: the connection is reused */
    CURLM *multi;
};

const char *rm_endpoint_chat_url(const rm_endpoint *e) { return e->chat_url; }
const char *rm_endpoint_models_url(const rm_endpoint *e) { return e->models_url; }
const char *rm_endpoint_host(const rm_endpoint *e) { return e->host; }
const char *rm_endpoint_port(const rm_endpoint *e) { return e->port; }
int rm_endpoint_has_key(const rm_endpoint *e) { return e->key != NULL; }

/* ---- URLs and the key's rule ---------------------------------------------- */

/* Whether the key may go with a request to url. */
static int key_allowed(const rm_endpoint *e, const char *url)
{
    char scheme[16], host[256], port[16];
    if (!e->key || http_policy_url_parts(url, scheme, sizeof scheme, host, sizeof host, port, sizeof port))
        return 0;
    if (strcasecmp(host, e->host) || strcmp(port, e->port)) return 0;
    return !strcasecmp(scheme, "https") || rm_host_is_loopback(host);
}

/* {base}/chat/completions and {base}/models from the URL the user gave: an
 * API base (…/v1), a server's root (/v1 is added) or the chat URL itself. */
static int make_urls(rm_endpoint *e, const char *url, rm_err *err)
{
    char scheme[16];
    if (http_policy_url_parts(url, scheme, sizeof scheme, e->host, sizeof e->host, e->port, sizeof e->port))
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
    rm_endpoint *e;
    volatile int *stop;
    /* the body of a 2xx reply goes to sink; other replies are kept in r->body */
    int (*sink)(void *ud, const char *p, size_t n);
    void *ud;
    rm_http_reply *r;
    double last_byte, timeout;
    double deadline;            /* rm_now() past which the request is given up (set by perform) */
    int sink_failed;            /* sink returned non-zero: the transfer was ended */
} xfer;

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    xfer *x = ud;
    rm_http_reply *r = x->r;
    size_t len = size * n;
    x->last_byte = rm_now();
    if (http_policy_status_line(p, len)) {     /* a new response: forget the last one's */
        r->retry_after[0] = r->content_type[0] = 0;
        r->retry_after_s = -1;
    } else if (http_policy_header(p, len, "retry-after", r->retry_after, sizeof r->retry_after)) {
        r->retry_after_s = http_policy_retry_after(r->retry_after, 1e9);
    } else {
        http_policy_header(p, len, "content-type", r->content_type, sizeof r->content_type);
    }
    return len;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    xfer *x = ud;
    rm_http_reply *r = x->r;
    size_t len = size * n;
    x->last_byte = rm_now();
    r->bytes += len;
    if (!r->status) curl_easy_getinfo(x->e->easy, CURLINFO_RESPONSE_CODE, &r->status);
    if (r->status >= 200 && r->status < 300 && x->sink) {
        if (x->sink(x->ud, p, len)) { x->sink_failed = 1; return 0; }
        return len;
    }
    if (r->status >= 300 && r->status < 400) return len;        /* a redirect's page */
    size_t room = r->body.len < ERROR_BODY_MAX ? ERROR_BODY_MAX - r->body.len : 0;
    if (rm_buf_add(&r->body, p, len < room ? len : room)) return 0;
    return len;
}

enum { X_DONE, X_STOPPED, X_STALLED, X_LATE, X_FAILED };

/* Runs the easy handle to its end, looking at the stop flag and the stall
 * clock between polls. */
static int perform(rm_endpoint *e, xfer *x, CURLcode *res)
{
    CURLM *m = e->multi;
    curl_multi_add_handle(m, e->easy);
    int running = 1, outcome = X_DONE;
    *res = CURLE_OK;
    x->last_byte = rm_now();
    if (!x->deadline) x->deadline = x->last_byte + DEADLINE_TIMEOUTS * x->timeout;
    while (running) {
        if (curl_multi_perform(m, &running) != CURLM_OK) { outcome = X_FAILED; *res = CURLE_FAILED_INIT; break; }
        if (!running) break;
        if (x->stop && *x->stop) { outcome = X_STOPPED; break; }
        if (rm_now() - x->last_byte > x->timeout) { outcome = X_STALLED; break; }
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
static void transport_error(const rm_endpoint *e, const char *url, CURLcode res, const char *detail,
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

int rm_endpoint_request(rm_endpoint *e, const char *url0, const char *body, double timeout, volatile int *stop,
                        int (*sink)(void *ud, const char *p, size_t n), void *ud, rm_http_reply *r, rm_err *err)
{
    rm_buf_free(&r->body);
    *r = (rm_http_reply){ .retry_after_s = -1 };
    xfer x = { e, stop, sink, ud, r, 0, timeout > 0 ? timeout : e->timeout, 0 };
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
        http_policy_easy(h, url, x.timeout < 30 ? x.timeout : 30, 0);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
        if (body) {
            curl_easy_setopt(h, CURLOPT_POST, 1L);
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
        }
        r->status = 0;
        rm_buf_reset(&r->body);
        CURLcode res;
        int outcome = perform(e, &x, &res);
        curl_slist_free_all(hdr);
        if (outcome == X_STOPPED) { rc = 1; break; }
        if (outcome == X_STALLED) {
            rm_errf(err, "%s: no data from %s:%s for %g s: the request was given up (--endpoint-timeout)", url,
                    e->host, e->port, x.timeout);
            break;
        }
        if (outcome == X_LATE) {
            rm_errf(err, "%s: the exchange with %s:%s took longer than %g s in all (%d times --endpoint-timeout): "
                    "it was given up", url, e->host, e->port, DEADLINE_TIMEOUTS * x.timeout, DEADLINE_TIMEOUTS);
            break;
        }
        if (outcome == X_FAILED) { transport_error(e, url, res, cerr, err); break; }
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
        char *next = NULL;
        if (r->status >= 300 && r->status < 400) curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &next);
        if (!next) { rc = 0; break; }
        if (hop == HTTP_POLICY_MAX_REDIRECTS) {
            rm_errf(err, "%s: more than %d redirects", url0, HTTP_POLICY_MAX_REDIRECTS);
            break;
        }
        if (!http_policy_redirect_ok(url, next)) {
            rm_errf(err, "%s: a redirect to %.300s was not followed (from https only to https)", url, next);
            break;
        }
        char *n2 = strdup(next);
        free(url);
        if (!(url = n2)) { rm_errf(err, "out of memory"); break; }
    }
    free(url);
    return rc;
}

/* ---- opening ---------------------------------------------------------------- */

void rm_endpoint_free(rm_endpoint *e)
{
    if (!e) return;
    free(e->chat_url);
    free(e->models_url);
    if (e->key) {
        memset(e->key, 0, strlen(e->key));
        free(e->key);
    }
    if (e->multi) curl_multi_cleanup(e->multi);
    if (e->easy) curl_easy_cleanup(e->easy);
    free(e);
}

int rm_endpoint_open(const char *url, const char *api_key, double timeout, rm_endpoint **out, rm_err *err)
{
    *out = NULL;
    http_policy_init();
    rm_endpoint *e = calloc(1, sizeof *e);
    if (!e) return rm_errf(err, "out of memory");
    e->timeout = timeout > 0 ? timeout : DEFAULT_TIMEOUT;
    int rc = make_urls(e, url, err);
    if (!rc && api_key && strncasecmp(url, "https:", 6) && !rm_host_is_loopback(e->host))
        rc = rm_errf(err, "--endpoint %s: an API key is sent only over HTTPS (or to a loopback address): it would "
                     "cross the network in clear text", url);
    if (rc) {
        rm_endpoint_free(e);
        return -2;
    }
    if (api_key && !(e->key = strdup(api_key))) rc = rm_errf(err, "out of memory");
    if (!rc && (!(e->easy = curl_easy_init()) || !(e->multi = curl_multi_init())))
        rc = rm_errf(err, "cannot start libcurl");
    if (rc) {
        rm_endpoint_free(e);
        return -1;
    }
    *out = e;
    return 0;
}
