/* http.c — the HTTP(S) client of stream mode (http.h).
 *
 * Threads. Callers put a job (what to fetch, where the bytes go) on a queue
 * and sleep on the client's condition variable; one thread owns the curl
 * multi handle: it starts queued jobs while fewer than `connections` run,
 * drives the transfers, and finishes, retries or fails each one. The multi
 * handle keeps the connections alive between transfers, so a run of expert
 * misses reuses warm HTTP/1.1 connections.
 *
 * Checking. The first body byte of a range answer is only accepted after the
 * status is 206 and Content-Range names exactly the bytes asked for; a 200
 * (a server that ignores Range) or a wrong Content-Range fails at once with
 * the URL in the message, because retrying cannot help. A body longer than
 * asked is refused; a shorter one (Content-Length too short, or the
 * connection dropped) is resumed with a Range from the first missing byte.
 * 429, 5xx, stalls and network errors are retried after 0.25 s, 0.5 s, 1 s,
 * ... (at most 8 s; a Retry-After of up to 30 s is honoured).
 *
 * Revisions. A range asked for with the ETag the file had at setup is sent
 * with If-Range and (for a strong ETag) If-Match, and the answer's own ETag
 * must be that one: a 412, a 200 in place of 206, or another ETag means the
 * file changed upstream (a repository that moved on), and fails at once
 * without a byte kept, so bytes of two revisions are never mixed. A server
 * that sends no ETag but a Last-Modified (a plain file server) gets a
 * revision made of the two things that change with the file, its
 * Last-Modified and its size ("lm:DATE;SIZE", never sent as an ETag): its
 * ranges go with If-Range: DATE, and an answer whose date or size differs
 * is another revision. A server with neither has no revision to check
 * (the revision is "", and a change upstream is not noticed).
 *
 * Cancelling. http_cancel fails every queued, delayed and running transfer
 * at once (a fetch that already failed stops downloading the rest), and
 * counts an epoch: a range request of work begun at an earlier one fails
 * as it is queued.
 *
 * Credentials. A bearer token goes only to the host of the base URL, and
 * only when it is https: curl does not pass authentication on to another
 * host when it follows a redirect, and an https base may only redirect to
 * https. TLS is verified (libcurl's defaults are never changed). The handle's
 * protocols, redirects, proxy rule and header reading are the policy both
 * engine clients share (http_policy.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <curl/curl.h>
#include "remote/http.h"
#include "remote/http_policy.h"
#include "base/file.h"
#include "base/busy.h"

#define BACKOFF_BASE_S 0.25
#define BACKOFF_MAX_S  8.0
#define RETRY_AFTER_MAX_S 30.0

typedef struct http_job {
    char *url;
    int ranged;                 /* 1: bytes [off, off+len), of work begun at epoch `since` */
    unsigned since;
    uint64_t off, len;
    /* where the body goes: memory (buf), a file (fd), or a growing buffer (whole files) */
    uint8_t *buf;
    rm_buf body;
    int fd;
    uint64_t fd_off;
    size_t max;                 /* whole files: the size limit */
    uint64_t got;               /* bytes kept so far, across attempts */
    uint64_t total;             /* file size from Content-Range */
    /* the current attempt */
    uint64_t att_start;         /* first byte asked for in this attempt */
    int checked, discard;       /* status seen; body of an error answer */
    char crange[128];
    const char *want_etag;      /* ETag the file must have, or NULL */
    char etag[128];             /* ETag of the current answer ("" if none), or its lm: revision */
    char lastmod[64];           /* its Last-Modified ("" if none) */
    int changed;                /* refused: the file changed upstream */
    int too_large;              /* whole files: past max */
    double retry_after;
    int tries;
    double t0;                  /* when the request was queued (its deadline counts from here) */
    double at;                  /* backoff: start no earlier than this */
    /* outcome */
    int done, rc, missing;
    rm_err fail;                /* why it failed ("" while it has not) */
    struct http_job *next;
} http_job;

struct http_client {
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* a job finished */
    pthread_t th;
    int started, quit;
    int cancel;                 /* http_cancel asked: fail every job now */
    CURLM *multi;
    char *base, *token;
    int https, maxconn, tries;
    double stall;
    double deadline;            /* seconds per request in all, tries included */
    char cancel_why[512];
    unsigned epoch;             /* http_cancel calls so far (under mu) */
    http_job *queue, *queue_tail;  /* ready to start */
    struct body_ctx *running;      /* transfers under way */
    double min_rate;            /* bytes/s below which, for `stall` seconds, a transfer is abandoned */
    http_job *delayed;             /* waiting out a backoff */
    busy_timer busy;            /* transfers running (busy.n) and the busy time */
    http_counters ctr;         /* under mu, except bytes */
    uint64_t bytes;             /* atomic: added to by the body callback */
};

/* ETags compared as If-Range's weak comparison does: the opaque part, with
 * or without the W/ mark. */
int http_etag_same(const char *a, const char *b)
{
    if (!strncmp(a, "W/", 2)) a += 2;
    if (!strncmp(b, "W/", 2)) b += 2;
    return !strcmp(a, b);
}

int http_parse_content_range(const char *v, uint64_t *a, uint64_t *b, uint64_t *total)
{
    while (*v == ' ' || *v == '\t') v++;
    if (strncasecmp(v, "bytes", 5)) return -1;
    v += 5;
    while (*v == ' ') v++;
    char *e;
    if (*v < '0' || *v > '9') return -1;
    unsigned long long x = strtoull(v, &e, 10);
    if (*e != '-' || e[1] < '0' || e[1] > '9') return -1;
    unsigned long long y = strtoull(e + 1, &e, 10);
    if (*e != '/' || y < x) return -1;
    e++;
    if (*e == '*') { *total = UINT64_MAX; e++; }
    else {
        if (*e < '0' || *e > '9') return -1;
        unsigned long long t = strtoull(e, &e, 10);
        if (y >= t) return -1;
        *total = t;
    }
    while (*e == ' ' || *e == '\t' || *e == '\r' || *e == '\n') e++;
    if (*e) return -1;
    *a = x;
    *b = y;
    return 0;
}

/* ---- curl callbacks (the client thread) ---------------------------------- */

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    http_job *j = ud;
    size_t k = sz * n;
    char ra[32];
    if (http_policy_status_line(p, k)) {        /* a new answer (redirects give several) */
        j->crange[0] = 0;
        j->etag[0] = 0;
        j->lastmod[0] = 0;
        j->retry_after = 0;
    } else if (!http_policy_header(p, k, "etag", j->etag, sizeof j->etag) &&
               !http_policy_header(p, k, "last-modified", j->lastmod, sizeof j->lastmod) &&
               !http_policy_header(p, k, "content-range", j->crange, sizeof j->crange) &&
               http_policy_header(p, k, "retry-after", ra, sizeof ra)) {
        double s = http_policy_retry_after(ra, RETRY_AFTER_MAX_S);
        if (s >= 0) j->retry_after = s;
    }
    return k;
}

/* An answer without an ETag: its revision from Last-Modified and the
 * file's size (the file's comment), in j->etag. */
static void lastmod_revision(CURL *h, http_job *j, long code)
{
    if (j->etag[0] || !j->lastmod[0]) return;
    uint64_t a, b, t = UINT64_MAX;
    if (code == 206 && http_parse_content_range(j->crange, &a, &b, &t)) t = UINT64_MAX;
    curl_off_t cl = -1;
    if (code == 200 && curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK && cl >= 0)
        t = (uint64_t)cl;
    if (t == UINT64_MAX) return;        /* no size to go with the date: no revision */
    snprintf(j->etag, sizeof j->etag, "lm:%.64s;%llu", j->lastmod, (unsigned long long)t);
}

/* Judges the answer before its first body byte is kept; 0 to go on. */
static int check_answer(CURL *h, http_job *j)
{
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    j->checked = 1;
    lastmod_revision(h, j, code);
    if (!j->ranged) {
        j->discard = code != 200;
        return 0;
    }
    /* a 200 that carries the ETag asked for is a server ignoring Range, not a new revision */
    const int other = j->etag[0] && !http_etag_same(j->etag, j->want_etag ? j->want_etag : "");
    if (j->want_etag && (code == 412 || (code == 200 && (other || !j->etag[0])) || (code == 206 && other))) {
        j->changed = 1;
        rm_errf(&j->fail, "%s: the file changed upstream (ETag %s at setup; now %s%s)", j->url, j->want_etag,
                code == 412 ? "412 Precondition Failed" : code == 200 ? "200 with the whole file" : "ETag ",
                code == 206 ? j->etag : "");
        return -1;
    }
    if (code == 200) {
        rm_errf(&j->fail, "%s: the server answered 200 (the whole file) instead of 206 to a request for bytes "
                "%llu-%llu; it must support HTTP range requests", j->url, (unsigned long long)j->att_start,
                (unsigned long long)(j->off + j->len - 1));
        return -1;
    }
    if (code != 206) { j->discard = 1; return 0; }
    uint64_t a, b, t;
    if (http_parse_content_range(j->crange, &a, &b, &t) || a != j->att_start || b != j->off + j->len - 1) {
        rm_errf(&j->fail, "%s: asked for bytes %llu-%llu, the server answered Content-Range '%s'", j->url,
                (unsigned long long)j->att_start, (unsigned long long)(j->off + j->len - 1),
                j->crange[0] ? j->crange : "(none)");
        return -1;
    }
    if (t != UINT64_MAX) {
        if (j->total && j->total != t) {
            rm_errf(&j->fail, "%s: the file size changed between requests (%llu, now %llu bytes)", j->url,
                    (unsigned long long)j->total, (unsigned long long)t);
            return -1;
        }
        j->total = t;
    }
    return 0;
}

typedef struct body_ctx {
    http_client *c;
    http_job *j;
    CURL *h;
    struct curl_slist *headers;     /* If-Range / If-Match */
    struct body_ctx *next;          /* the client's running transfers */
} body_ctx;

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    body_ctx *bc = ud;
    http_job *j = bc->j;
    size_t k = sz * n;
    if (!j->checked && check_answer(bc->h, j)) return 0;
    if (j->discard) return k;
    if (j->ranged) {
        if (j->got + k > j->len) {
            rm_errf(&j->fail, "%s: the server sent more than the %llu bytes asked for", j->url,
                    (unsigned long long)j->len);
            return 0;
        }
        if (j->buf) memcpy(j->buf + j->got, p, k);
        else if (file_pwrite_all(j->fd, p, k, j->fd_off + j->got)) {
            rm_errf(&j->fail, "%s: cannot write the downloaded bytes: %s", j->url, strerror(errno));
            return 0;
        }
    } else {
        if (j->got + k > j->max) {
            rm_errf(&j->fail, "%s: the file is larger than %zu bytes, the cap of this file", j->url, j->max);
            j->too_large = 1;
            return 0;
        }
        if (rm_buf_add(&j->body, p, k)) { rm_errf(&j->fail, "%s: out of memory", j->url); return 0; }
    }
    j->got += k;
    __atomic_fetch_add(&bc->c->bytes, (uint64_t)k, __ATOMIC_RELAXED);
    return k;
}

/* ---- the client thread --------------------------------------------------- */

static CURL *start(http_client *c, http_job *j)
{
    CURL *h = curl_easy_init();
    body_ctx *bc = calloc(1, sizeof *bc);
    if (!h || !bc) { curl_easy_cleanup(h); free(bc); return NULL; }
    *bc = (body_ctx){ c, j, h };
    j->checked = j->discard = 0;
    j->crange[0] = 0;
    j->retry_after = 0;
    j->fail.msg[0] = 0;
    if (!j->ranged) { j->got = 0; rm_buf_reset(&j->body); }    /* whole files start again */
    j->att_start = j->off + j->got;
    http_policy_easy(h, j->url, 15, 1);
    curl_easy_setopt(h, CURLOPT_PRIVATE, bc);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, bc);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, j);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, (long)c->min_rate);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)(c->stall + 0.5));
    double left = j->t0 + c->deadline - rm_now();
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(left > 0.001 ? left * 1000 : 1));
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    if (j->ranged) {
        char range[64];
        snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)j->att_start,
                 (unsigned long long)(j->off + j->len - 1));
        curl_easy_setopt(h, CURLOPT_RANGE, range);
        if (j->want_etag && j->want_etag[0]) {
            char a[192], b[192];
            const char *semi = strrchr(j->want_etag, ';');
            if (!strncmp(j->want_etag, "lm:", 3) && semi)     /* a Last-Modified revision: If-Range takes its date */
                snprintf(a, sizeof a, "If-Range: %.*s", (int)(semi - j->want_etag - 3), j->want_etag + 3);
            else
                snprintf(a, sizeof a, "If-Range: %s", j->want_etag);
            snprintf(b, sizeof b, "If-Match: %s", j->want_etag);
            struct curl_slist *l = curl_slist_append(NULL, a);
            /* If-Match compares strongly: a weak ETag never matches, so it goes only with a strong one
             * (and a Last-Modified revision is no ETag at all) */
            if (l && strncmp(j->want_etag, "W/", 2) && strncmp(j->want_etag, "lm:", 3)) {
                struct curl_slist *l2 = curl_slist_append(l, b);
                if (l2) l = l2;
            }
            if (!l) { curl_easy_cleanup(h); free(bc); return NULL; }
            bc->headers = l;
            curl_easy_setopt(h, CURLOPT_HTTPHEADER, l);
        }
    }
    if (c->token) {
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, c->token);
    }
    if (curl_multi_add_handle(c->multi, h) != CURLM_OK) {
        curl_easy_cleanup(h);
        curl_slist_free_all(bc->headers);
        free(bc);
        return NULL;
    }
    bc->next = c->running;
    c->running = bc;
    return h;
}

static int retryable_code(long code) { return code == 408 || code == 429 || (code >= 500 && code <= 599); }

static int retryable_curl(CURLcode r)
{
    switch (r) {
    case CURLE_COULDNT_CONNECT: case CURLE_PARTIAL_FILE: case CURLE_RECV_ERROR: case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING: case CURLE_OPERATION_TIMEDOUT: case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_HTTP2: case CURLE_HTTP2_STREAM:
        return 1;
    default:
        return 0;
    }
}

/* Decides what a finished attempt means: 0 done, 1 retry, -1 failed (fail set). */
static int judge(http_client *c, http_job *j, CURL *h, CURLcode res)
{
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (j->fail.msg[0]) return -1;                  /* refused by a callback */
    if (res == CURLE_OK && !j->checked && j->ranged && (code == 412 || code == 200) && check_answer(h, j)) return -1;
    if (res == CURLE_OK && !j->checked && code == 206 && j->ranged && check_answer(h, j)) return -1;
    if (res == CURLE_OK) {
        if (j->ranged ? code == 206 : code == 200) {
            if (!j->ranged || j->got == j->len) return 0;
            rm_errf(&j->fail, "%s: short body: %llu of %llu bytes", j->url, (unsigned long long)j->got,
                    (unsigned long long)j->len);
            return 1;
        }
        if (code == 404) {
            j->missing = 1;
            rm_errf(&j->fail, "%s: not found (HTTP 404)", j->url);
            return -1;
        }
        rm_errf(&j->fail, "%s: HTTP %ld", j->url, code);
        return retryable_code(code) ? 1 : -1;
    }
    if (res == CURLE_OPERATION_TIMEDOUT && rm_now() - j->t0 >= c->deadline - 0.01) {
        rm_errf(&j->fail, "%s: not done within the %.0f s a request may take (%llu of %llu bytes received; "
                "$REMORA_HTTP_DEADLINE sets it)", j->url, c->deadline, (unsigned long long)j->got,
                (unsigned long long)j->len);
        return -1;
    }
    if (res == CURLE_OPERATION_TIMEDOUT)
        rm_errf(&j->fail, "%s: too slow (less than %.0f bytes/s for %.0f s, %llu of %llu bytes received; "
                "$REMORA_HTTP_MIN_RATE and $REMORA_HTTP_STALL set the limit)", j->url, c->min_rate, c->stall,
                (unsigned long long)j->got, (unsigned long long)j->len);
    else
        rm_errf(&j->fail, "%s: %s", j->url, curl_easy_strerror(res));
    return retryable_curl(res) ? 1 : -1;
}

static void finish(http_client *c, http_job *j, int verdict)
{
    if (verdict == 1 && j->tries < c->tries) {
        double wait = BACKOFF_BASE_S * (double)(1u << (j->tries - 1 < 5 ? j->tries - 1 : 5));
        if (wait > BACKOFF_MAX_S) wait = BACKOFF_MAX_S;
        if (j->retry_after > wait) wait = j->retry_after;
        if (rm_now() + wait < j->t0 + c->deadline) {
            j->at = rm_now() + wait;
            j->next = c->delayed;
            c->delayed = j;
            c->ctr.retries++;
            return;
        }
    }
    if (verdict == 1) {
        char last[sizeof j->fail.msg];
        snprintf(last, sizeof last, "%s", j->fail.msg);
        rm_errf(&j->fail, "%s (gave up after %d tries)", last, j->tries);
    }
    j->rc = verdict ? -1 : 0;
    j->done = 1;
    pthread_cond_broadcast(&c->cv);
}

/* Ends a transfer's handle and takes it off the running list (under mu). */
static void drop_running(http_client *c, body_ctx *bc)
{
    for (body_ctx **pp = &c->running; *pp; pp = &(*pp)->next)
        if (*pp == bc) { *pp = bc->next; break; }
    curl_multi_remove_handle(c->multi, bc->h);
    curl_easy_cleanup(bc->h);
    curl_slist_free_all(bc->headers);
    free(bc);
}

/* http_cancel's work, on the client thread (under mu): every queued,
 * delayed and running job fails now with the reason given. */
static void cancel_all(http_client *c)
{
    c->cancel = 0;
    http_job *lists[2] = { c->queue, c->delayed };
    c->queue = c->queue_tail = c->delayed = NULL;
    for (int k = 0; k < 2; k++)
        for (http_job *j = lists[k], *nx; j; j = nx) {
            nx = j->next;
            rm_errf(&j->fail, "%s: cancelled: %s", j->url, c->cancel_why);
            finish(c, j, -1);
        }
    while (c->running) {
        body_ctx *bc = c->running;
        rm_errf(&bc->j->fail, "%s: cancelled: %s", bc->j->url, c->cancel_why);
        busy_stop(&c->busy);
        finish(c, bc->j, -1);
        drop_running(c, bc);
    }
}

static void *client_main(void *arg)
{
    http_client *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->quit) {
        if (c->cancel) cancel_all(c);
        double now = rm_now(), next = now + 1.0;
        for (http_job **pp = &c->delayed; *pp;) {      /* backoffs that are over */
            http_job *j = *pp;
            if (j->at <= now) {
                *pp = j->next;
                j->next = NULL;
                if (c->queue_tail) c->queue_tail->next = j; else c->queue = j;
                c->queue_tail = j;
            } else {
                if (j->at < next) next = j->at;
                pp = &j->next;
            }
        }
        while (c->busy.n < c->maxconn && c->queue) {
            http_job *j = c->queue;
            c->queue = j->next;
            if (!c->queue) c->queue_tail = NULL;
            j->tries++;
            if (!start(c, j)) {
                rm_errf(&j->fail, "%s: cannot start a transfer (out of memory)", j->url);
                finish(c, j, -1);
                continue;
            }
            c->ctr.requests++;
            busy_start(&c->busy);
        }
        pthread_mutex_unlock(&c->mu);
        int running = 0;
        curl_multi_perform(c->multi, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(c->multi, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            CURL *h = msg->easy_handle;
            CURLcode res = msg->data.result;
            body_ctx *bc = NULL;
            curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&bc);
            pthread_mutex_lock(&c->mu);
            int verdict = judge(c, bc->j, h, res);
            busy_stop(&c->busy);
            finish(c, bc->j, verdict);
            drop_running(c, bc);
            pthread_mutex_unlock(&c->mu);
        }
        int ms = (int)((next - rm_now()) * 1000);
        curl_multi_poll(c->multi, NULL, 0, ms < 1 ? 1 : ms > 1000 ? 1000 : ms, NULL);
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ---- the caller's side --------------------------------------------------- */

static double env_num(const char *name, double dflt)
{
    const char *v = getenv(name);
    char *e;
    double x = v ? strtod(v, &e) : 0;
    return v && e != v && !*e && x > 0 ? x : dflt;
}

int http_new(const http_opts *o, http_client **out, rm_err *err)
{
    *out = NULL;
    http_policy_init();
    if (strncmp(o->base, "http://", 7) && strncmp(o->base, "https://", 8))
        return rm_errf(err, "%s: not an http:// or https:// URL", o->base);
    http_client *c = calloc(1, sizeof *c);
    if (!c) return rm_errf(err, "out of memory");
    size_t n = strlen(o->base);
    while (n && o->base[n - 1] == '/') n--;
    c->base = strndup(o->base, n);
    c->https = !strncmp(o->base, "https://", 8);
    if (o->token && o->token[0] && c->https) c->token = strdup(o->token);
    c->maxconn = o->connections > 0 ? o->connections : 8;
    c->stall = o->stall_s > 0 ? o->stall_s : env_num("REMORA_HTTP_STALL", 30);
    c->tries = o->tries > 0 ? o->tries : (int)env_num("REMORA_HTTP_TRIES", 6);
    c->min_rate = o->min_rate > 0 ? o->min_rate : env_num("REMORA_HTTP_MIN_RATE", 32768);
    c->deadline = o->deadline_s > 0 ? o->deadline_s : env_num("REMORA_HTTP_DEADLINE", 900);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (!c->base || !(c->multi = curl_multi_init())) { http_free(c); return rm_errf(err, "cannot start libcurl"); }
    curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)c->maxconn);
    curl_multi_setopt(c->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)c->maxconn);
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, (long)c->maxconn);
    curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
    if (pthread_create(&c->th, NULL, client_main, c)) { http_free(c); return rm_errf(err, "cannot start the HTTP thread"); }
    c->started = 1;
    *out = c;
    return 0;
}

void http_free(http_client *c)
{
    if (!c) return;
    if (c->started) {
        pthread_mutex_lock(&c->mu);
        c->quit = 1;
        pthread_mutex_unlock(&c->mu);
        curl_multi_wakeup(c->multi);
        pthread_join(c->th, NULL);
    }
    while (c->running) drop_running(c, c->running);
    if (c->multi) curl_multi_cleanup(c->multi);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c->base);
    free(c->token);
    free(c);
}

/* Queues j, waits for its outcome and turns it into the return value. */
static int run_job(http_client *c, http_job *j, const char *name, rm_err *err)
{
    size_t ul = strlen(c->base) + strlen(name) + 2;
    if (!(j->url = malloc(ul))) return rm_errf(err, "out of memory");
    snprintf(j->url, ul, "%s/%s", c->base, name);
    j->t0 = rm_now();
    pthread_mutex_lock(&c->mu);
    if (j->ranged && j->since != c->epoch) {     /* its work was cancelled */
        rm_errf_runtime(err, "%s: cancelled: %s", j->url, c->cancel_why);
        pthread_mutex_unlock(&c->mu);
        free(j->url);
        return -1;
    }
    if (c->queue_tail) c->queue_tail->next = j; else c->queue = j;
    c->queue_tail = j;
    pthread_mutex_unlock(&c->mu);
    curl_multi_wakeup(c->multi);
    pthread_mutex_lock(&c->mu);
    while (!j->done) pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    int rc = j->rc;
    if (rc) rm_errf_runtime(err, "%s", j->fail.msg);
    free(j->url);
    return rc;
}

void http_cancel(http_client *c, const char *why)
{
    pthread_mutex_lock(&c->mu);
    c->cancel = 1;
    c->epoch++;
    snprintf(c->cancel_why, sizeof c->cancel_why, "%s", why);
    pthread_mutex_unlock(&c->mu);
    curl_multi_wakeup(c->multi);
}

unsigned http_epoch(http_client *c)
{
    pthread_mutex_lock(&c->mu);
    unsigned e = c->epoch;
    pthread_mutex_unlock(&c->mu);
    return e;
}

/* What an answer said, for the caller (meta may be NULL). */
static void answer_meta(const http_job *j, http_meta *meta)
{
    if (!meta) return;
    meta->total = j->total;
    meta->changed = j->changed;
    snprintf(meta->etag, sizeof meta->etag, "%s", j->etag);
}

int http_range(http_client *c, unsigned since, const char *name, const char *etag, uint64_t off, uint64_t len,
               void *dst, http_meta *meta, rm_err *err)
{
    http_job j = { .ranged = 1, .since = since, .off = off, .len = len, .buf = dst, .fd = -1, .want_etag = etag };
    int rc = run_job(c, &j, name, err);
    answer_meta(&j, meta);
    return rc;
}

int http_range_fd(http_client *c, unsigned since, const char *name, const char *etag, uint64_t off, uint64_t len,
                  int fd, uint64_t fd_off, http_meta *meta, rm_err *err)
{
    http_job j = { .ranged = 1, .since = since, .off = off, .len = len, .fd = fd, .fd_off = fd_off, .want_etag = etag };
    int rc = run_job(c, &j, name, err);
    answer_meta(&j, meta);
    return rc;
}

int http_file(http_client *c, const char *name, size_t max, char **out, size_t *len, http_meta *meta, rm_err *err)
{
    *out = NULL;
    http_job j = { .fd = -1, .max = max };
    rm_err e2 = { "" };
    int rc = run_job(c, &j, name, &e2);
    if (rc && j.missing) { rm_buf_free(&j.body); return 1; }
    if (rc) {
        rm_buf_free(&j.body);
        /* a file past its cap is the server's fault, not the user's input:
         * a runtime failure (exit 1), said so */
        return j.too_large ? rm_errf_runtime(err, "%s (the server sent more than a valid file holds)", e2.msg)
                           : rm_errf_runtime(err, "%s", e2.msg);
    }
    if (!(*out = rm_buf_take(&j.body, NULL))) return rm_errf_runtime(err, "out of memory");
    if (len) *len = (size_t)j.got;
    j.total = j.got;
    answer_meta(&j, meta);
    return 0;
}

http_counters http_take_counters(http_client *c)
{
    pthread_mutex_lock(&c->mu);
    http_counters r = c->ctr;
    r.bytes = __atomic_exchange_n(&c->bytes, 0, __ATOMIC_RELAXED);
    r.busy_s = busy_take(&c->busy);
    memset(&c->ctr, 0, sizeof c->ctr);
    pthread_mutex_unlock(&c->mu);
    return r;
}
