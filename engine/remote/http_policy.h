/* http_policy.h — the one HTTP client policy of the engine's two libcurl
 * clients: stream mode's range client (http.c) and the OpenAI-compatible
 * endpoint's transfer (endpoint.c). Both start libcurl the same way, set up
 * their handles with the same protocols, TLS checks, proxy rule and
 * redirect bound, read header lines with one parser, read Retry-After with
 * one rule, and judge loopback hosts with rm_host_is_loopback, the rule
 * `remora serve` applies to its Host headers too. */
#ifndef REMORA_HTTP_POLICY_H
#define REMORA_HTTP_POLICY_H
#include <stddef.h>
#include <curl/curl.h>
#include "engine.h"

/* Redirects followed per request, by libcurl or by hand. */
#define HTTP_POLICY_MAX_REDIRECTS 5

/* curl_global_init, once per process, from any thread. */
void http_policy_init(void);

/* The options every handle gets, for a request to url: http and https
 * only; TLS peers and host names verified; no signals; the user agent; a
 * connect timeout of connect_s seconds; no proxy for a loopback host. With
 * follow, libcurl follows up to HTTP_POLICY_MAX_REDIRECTS redirects, from
 * an https URL only to https (http_policy_redirect_ok); without, none. */
void http_policy_easy(CURL *h, const char *url, double connect_s, int follow);

/* Whether a redirect from `from` may go to `to`: http(s) only, and never
 * from https down to http. */
int  http_policy_redirect_ok(const char *from, const char *to);

/* The header line p[0..len) as libcurl hands it over: 1 when it is a status
 * line ("HTTP/...", a new answer: the last one's headers no longer count),
 * else 0. */
int  http_policy_status_line(const char *p, size_t len);
/* When the line is header `name` (case-insensitive), its value without the
 * blanks around it and the line end, cut to cap - 1 bytes, into out:
 * returns 1; else 0 and out is untouched. */
int  http_policy_header(const char *p, size_t len, const char *name, char *out, size_t cap);

/* A Retry-After value in seconds (delta-seconds, fractions taken), capped
 * at cap; -1 for anything else (an HTTP date is not waited for). */
double http_policy_retry_after(const char *value, double cap);

/* The scheme, host and port (the scheme's default when none) of url; -1
 * when it is not an http(s) URL. */
int  http_policy_url_parts(const char *url, char *scheme, size_t scap, char *host, size_t hcap, char *port,
                           size_t pcap);

#endif
