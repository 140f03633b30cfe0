/* http.h — byte ranges and small files over HTTP(S), for stream mode.
 *
 * One client holds a pool of kept-alive HTTP/1.1 connections to one base URL
 * (libcurl's multi interface, driven by a thread of its own). Any number of
 * threads ask it for byte ranges at once and wait for their own; at most
 * `connections` transfers run together and the others queue. A range must
 * come back as 206 Partial Content with exactly the Content-Range asked for;
 * dropped connections, stalls, short bodies, 429 and 5xx answers are retried
 * with exponential backoff, resuming from the bytes already received, a
 * bounded number of times, within one deadline per request; a transfer
 * slower than a minimum rate over a window is abandoned (and retried).
 * A range asked for with an ETag must come from that revision of the file
 * (If-Range, If-Match, the answer's ETag): otherwise it fails at once as
 * "changed upstream". Every error names the URL.
 */
#ifndef REMORA_HTTP_H
#define REMORA_HTTP_H
#include <stddef.h>
#include <stdint.h>
#include "engine.h"

typedef struct http_client http_client;

typedef struct http_opts {
    const char *base;       /* base URL; file NAME is at base/NAME */
    const char *token;      /* bearer token or NULL; sent only when base is https:// */
    int connections;        /* transfers (and kept-alive connections) at once; 0 = 8 */
    double stall_s;         /* below 1 KB/s for this long: abandon and retry;
                             * 0 = $REMORA_HTTP_STALL or 30 */
    int tries;              /* attempts per request; 0 = $REMORA_HTTP_TRIES or 6 */
    double min_rate;        /* bytes/s a transfer must keep up over stall_s;
                             * 0 = $REMORA_HTTP_MIN_RATE or 32768 */
    double deadline_s;      /* one request in all, retries included;
                             * 0 = $REMORA_HTTP_DEADLINE or 900 */
} http_opts;

/* What an answer said about its file. */
typedef struct http_meta {
    uint64_t total;         /* the file size from Content-Range (UINT64_MAX: not given) */
    char etag[128];         /* its ETag; without one, "lm:LAST-MODIFIED;SIZE" (http.c), else "" */
    int changed;            /* the request failed because the file changed upstream */
} http_meta;

int  http_new(const http_opts *o, http_client **out, rm_err *err);
void http_free(http_client *c);

/* Reads bytes [off, off+len) of base/name into dst (len > 0). Blocks until
 * done; safe to call from many threads. since: the http_epoch at which the
 * caller's work began; after a later http_cancel the request fails at once,
 * with no transfer. etag (may be NULL): the ETag the file must still have
 * (else the request fails with meta->changed set and nothing kept). *meta
 * (may be NULL) receives what the answer said. */
int http_range(http_client *c, unsigned since, const char *name, const char *etag, uint64_t off, uint64_t len,
               void *dst, http_meta *meta, rm_err *err);
/* The same, written with pwrite to fd at fd_off instead of into memory. */
int http_range_fd(http_client *c, unsigned since, const char *name, const char *etag, uint64_t off, uint64_t len,
                  int fd, uint64_t fd_off, http_meta *meta, rm_err *err);
/* A whole file of at most max bytes into *out (malloc'd, NUL-terminated).
 * Returns 0, -1 on error, or 1 when the server answers 404 (no error set). */
int http_file(http_client *c, const char *name, size_t max, char **out, size_t *len, http_meta *meta, rm_err *err);
/* Fails every request queued, waiting out a backoff or running now, at
 * once, with "cancelled: why" (one failed download ends the others), and
 * every later range request of work begun before it (its `since`); other
 * requests made later run as usual. */
void http_cancel(http_client *c, const char *why);
/* How many http_cancel calls there have been: the `since` of work that
 * begins now. A worker between two requests of the cancelled work, or one
 * that took its next item just before the cancel, would otherwise start a
 * transfer the cancel missed, which a hung server holds for every retry:
 * http_reliability's fetch cancel took 189 s (6 tries of 30 s) in CI. */
unsigned http_epoch(http_client *c);
/* Whether two ETags name the same revision (the W/ mark aside). */
int http_etag_same(const char *a, const char *b);

typedef struct http_counters {
    uint64_t bytes;         /* body bytes received (retried bytes included) */
    uint64_t requests, retries;
    double busy_s;          /* wall time with at least one transfer running */
} http_counters;
/* Counters since the last call, then reset. */
http_counters http_take_counters(http_client *c);

/* Parses a Content-Range value "bytes A-B/T" (T may be '*': *total is then
 * UINT64_MAX). Returns 0, or -1 when malformed. Exposed for the tests. */
int http_parse_content_range(const char *v, uint64_t *a, uint64_t *b, uint64_t *total);

#endif
