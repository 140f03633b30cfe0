/* http.h — byte ranges and small files over HTTP(S), for stream mode.
 *
 * One client holds a pool of kept-alive HTTP/1.1 connections to one base URL
 * (libcurl's multi interface, driven by a thread of its own). Any number of
 * threads ask it for byte ranges at once and wait for their own; at most
 * `connections` transfers run together and the others queue. A range must
 * come back as 206 Partial Content with exactly the Content-Range asked for;
 * dropped connections, stalls, short bodies, 429 and 5xx answers are retried
 * with exponential backoff, resuming from the bytes already received, a
 * bounded number of times. Every error names the URL.
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
} http_opts;

int  http_new(const http_opts *o, http_client **out, rm_err *err);
void http_free(http_client *c);

/* Reads bytes [off, off+len) of base/name into dst (len > 0). Blocks until
 * done; safe to call from many threads. *total (may be NULL) receives the
 * file size the server reported in Content-Range. */
int http_range(http_client *c, const char *name, uint64_t off, uint64_t len, void *dst, uint64_t *total,
                rm_err *err);
/* The same, written with pwrite to fd at fd_off instead of into memory. */
int http_range_fd(http_client *c, const char *name, uint64_t off, uint64_t len, int fd, uint64_t fd_off,
                   rm_err *err);
/* A whole file of at most max bytes into *out (malloc'd, NUL-terminated).
 * Returns 0, -1 on error, or 1 when the server answers 404 (no error set). */
int http_file(http_client *c, const char *name, size_t max, char **out, size_t *len, rm_err *err);

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
