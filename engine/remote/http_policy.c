/* http_policy.c — the HTTP client policy the engine's libcurl clients share
 * (http_policy.h), and the loopback rule of clients and server alike
 * (rm_host_is_loopback, engine.h). */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "remote/http_policy.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_global(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

void http_policy_init(void) { pthread_once(&curl_once, curl_global); }

/* host without a trailing ":port" (and IPv6 brackets), into buf */
static const char *host_name(const char *host, char *buf, size_t cap)
{
    if (host[0] == '[') {
        const char *e = strchr(host, ']');
        if (!e || (e[1] && e[1] != ':')) return NULL;
        snprintf(buf, cap, "%.*s", (int)(e - host - 1), host + 1);
        return buf;
    }
    const char *c = strchr(host, ':');
    if (c && strchr(c + 1, ':')) return NULL;           /* an IPv6 address needs brackets */
    snprintf(buf, cap, "%.*s", (int)(c ? (size_t)(c - host) : strlen(host)), host);
    return buf;
}

int rm_host_is_loopback(const char *host)
{
    char buf[256];
    if (!host || strlen(host) >= sizeof buf || !host_name(host, buf, sizeof buf)) return 0;
    size_t n = strlen(buf);
    if (n && buf[n - 1] == '.') buf[--n] = 0;           /* "localhost." */
    static const char sub[] = ".localhost";
    if (!strcasecmp(buf, "localhost") || (n > sizeof sub - 1 && !strcasecmp(buf + n - (sizeof sub - 1), sub)))
        return 1;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, buf, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, buf, &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
    return 0;
}

int http_policy_url_parts(const char *url, char *scheme, size_t scap, char *host, size_t hcap, char *port,
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

static int is_https(const char *url) { return !strncasecmp(url, "https:", 6); }

void http_policy_easy(CURL *h, const char *url, double connect_s, int follow)
{
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "remora");
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(connect_s * 1000));
    char scheme[16], host[256], port[16];
    if (!http_policy_url_parts(url, scheme, sizeof scheme, host, sizeof host, port, sizeof port) &&
        rm_host_is_loopback(host))
        curl_easy_setopt(h, CURLOPT_PROXY, "");     /* a loopback server is never reached through a proxy */
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, follow ? 1L : 0L);
    if (follow) {
        curl_easy_setopt(h, CURLOPT_MAXREDIRS, (long)HTTP_POLICY_MAX_REDIRECTS);
        curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, is_https(url) ? "https" : "http,https");
    }
}

int http_policy_redirect_ok(const char *from, const char *to)
{
    if (strncasecmp(to, "http:", 5) && !is_https(to)) return 0;
    return !is_https(from) || is_https(to);
}

int http_policy_status_line(const char *p, size_t len) { return len >= 5 && !strncmp(p, "HTTP/", 5); }

int http_policy_header(const char *p, size_t len, const char *name, char *out, size_t cap)
{
    size_t k = strlen(name);
    if (len <= k || p[k] != ':' || strncasecmp(p, name, k)) return 0;
    const char *v = p + k + 1, *end = p + len;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t')) end--;
    size_t m = (size_t)(end - v) < cap - 1 ? (size_t)(end - v) : cap - 1;
    memcpy(out, v, m);
    out[m] = 0;
    return 1;
}

double http_policy_retry_after(const char *value, double cap)
{
    char *e;
    double s = strtod(value, &e);
    if (e == value || s < 0 || s != s) return -1;
    while (*e == ' ' || *e == '\t') e++;
    if (*e) return -1;
    return s < cap ? s : cap;
}
