/* serve.h — the parts of `remora serve`, the OpenAI-compatible HTTP server,
 * and what they share:
 *
 *   cmd_serve.c   the options, the API key, start-up and shutdown
 *   http.c        libmicrohttpd: connections, routes, the Host, Origin and
 *                 key checks, the body limit, responses and event streams
 *   openai.c      OpenAI requests parsed into serve_req (and refused with the
 *                 field named), replies, chunks and errors written as JSON
 *   queue.c       one generation at a time: the FIFO queue, the worker
 *                 thread that owns the session, the engine's events turned
 *                 into the bytes of a reply, /health
 *
 * The engine is only reached through engine.h: a reply is rendered with
 * rm_session_render (on the connection's thread) and generated with
 * rm_session_reply (on the worker).
 */
#ifndef REMORA_SERVE_H
#define REMORA_SERVE_H
#include <pthread.h>
#include <stddef.h>
#include "engine.h"

#define SERVE_MAX_STOPS 16          /* stop strings of one request */
#define SERVE_PER_IP_LIMIT 16       /* connections from one address, non-loopback binds */

typedef struct serve_cfg {
    const char *model_dir;
    const char *served_name;        /* the model's id in the API */
    rm_open_opts open;
    rm_gen_opts gen;                /* defaults of requests that do not say */
    const char *host;
    int port;
    int loopback;                   /* the bind address is a loopback address */
    const char *api_key;            /* NULL: none; never printed */
    size_t api_key_len;
    int queue_max;                  /* requests waiting behind the running one */
    int max_tokens;                 /* the most tokens of one reply */
    size_t max_body;                /* bytes of a request body */
    double keepalive_s;             /* SSE comment after this long without a byte */
    int max_connections;            /* open at once; more are closed at accept */
    int idle_timeout_s;             /* a connection with no traffic for this long is closed */
} serve_cfg;

/* An error for the client: the HTTP status and the fields of OpenAI's
 * {"error": {"message", "type", "param", "code"}}. */
typedef struct serve_error {
    int status;
    const char *type;               /* static strings */
    const char *code;               /* NULL: null */
    char param[128];                /* "": null */
    char message[1024];
    int retry_after;                /* seconds of a Retry-After header; 0: none */
} serve_error;

/* Fills e and returns -1. */
int serve_fail(serve_error *e, int status, const char *type, const char *code, const char *param,
               const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* src made safe for a terminal and for JSON (rm_text_safe, one line) into
 * dst (cap bytes, cut at a character's start): what a client sent, quoted
 * in an error message or the log. */
void serve_safe_copy(char *dst, size_t cap, const char *src);

enum { REQ_CHAT, REQ_COMPLETION };

/* One request, parsed and rendered, ready for the queue. */
typedef struct serve_req {
    int kind;                       /* REQ_* */
    int stream, include_usage, stats;
    int http10;                     /* an HTTP/1.0 request (no interim 1xx replies) */
    rm_prompt prompt;
    rm_gen_opts gen;
    char *stops[SERVE_MAX_STOPS];   /* malloc'd */
    int nstops;
    size_t stop_max;                /* length of the longest */
    char id[48];                    /* "chatcmpl-..." or "cmpl-..." */
    long long created;              /* Unix time */
} serve_req;
void serve_req_free(serve_req *r);

typedef struct serve serve;
typedef struct serve_job serve_job;

/* ---- queue.c ------------------------------------------------------------ */

/* The server's state, made by serve_new with no model yet: /health says
 * "loading" and generation requests get 503 until the worker has opened
 * it. NULL when out of memory. */
serve *serve_new(const serve_cfg *cfg);
/* Starts the worker thread, which opens the model and then serves. */
int   serve_start(serve *sv, rm_err *err);
enum { SERVE_LOADING, SERVE_READY, SERVE_FAILED };
/* SERVE_*; when the model could not be opened, err says why. */
int   serve_state(serve *sv, rm_err *err);
/* Joins the worker (after serve_begin_shutdown) and frees everything;
 * when the worker does not end within `grace` seconds (a prompt pass that
 * cannot be stopped), the session is left to the process's exit. */
void  serve_free(serve *sv, double grace);
const serve_cfg *serve_config(const serve *sv);
/* The session for rendering requests (NULL while loading). */
rm_session *serve_session(serve *sv);
/* Refuses what is queued (503), stops the running reply, and waits up to
 * `grace` seconds for it to end, so its client gets the end of it. */
void  serve_begin_shutdown(serve *sv, double grace);

/* Admits a request: 503 while loading or shutting down, 429 when the
 * queue is full, else queued (taking over *req) and *job set; fd is the
 * client's socket, watched for a hang-up while the request waits or runs. */
int   serve_submit(serve *sv, serve_req *req, int fd, serve_job **job, serve_error *e);
/* For an event stream: up to cap bytes of the reply into buf, waiting for
 * them; a comment line when nothing came for keepalive_s. Returns the
 * count, 0 at the end of the stream, -1 when the client hung up (the reply
 * is then stopped, or taken out of the queue). */
long  serve_job_read(serve_job *j, char *buf, size_t cap);
/* For a whole reply: waits for the end; then *status and *body (the JSON
 * reply or error, owned by the job) are set. Returns -1 when the client
 * hung up first (the reply is then stopped, or taken out of the queue). */
int   serve_job_wait(serve_job *j, int *status, const char **body, size_t *len);
/* One line about the reply for the server's log: tokens and seconds. */
void  serve_job_summary(serve_job *j, char *buf, size_t cap);
/* The connection is done with the job: stops it if it still runs. */
void  serve_job_release(serve_job *j);
/* GET /health into out. */
int   serve_health_json(serve *sv, rm_buf *out);

/* ---- openai.c ----------------------------------------------------------- */

/* POST /v1/chat/completions and /v1/completions bodies, rendered or
 * tokenised by session s (NULL while the model loads: 503). */
int oa_parse_chat(const serve_cfg *cfg, rm_session *s, const char *body, size_t len, serve_req *r, serve_error *e);
int oa_parse_completion(const serve_cfg *cfg, rm_session *s, const char *body, size_t len, serve_req *r, serve_error *e);
/* "data: {chunk}\n\n" of a streamed reply: text of the reasoning and answer
 * channels (either may be empty), the finish reason (NULL: not the last),
 * the record's figures when the request asked for them (NULL: none). */
int oa_chunk(const serve_cfg *cfg, const serve_req *r, const char *reasoning, size_t rlen, const char *answer,
             size_t alen, const char *finish, const rm_token_stats *st, rm_buf *out);
/* A chunk with no choices that carries a prompt or progress record of the
 * stats extension. */
int oa_chunk_stats(const serve_cfg *cfg, const serve_req *r, const rm_token_stats *st, rm_buf *out);
/* The first chunk of a chat stream (the assistant role). */
int oa_chunk_role(const serve_cfg *cfg, const serve_req *r, rm_buf *out);
/* The usage chunk (choices: []) and "data: [DONE]". */
int oa_chunk_usage(const serve_cfg *cfg, const serve_req *r, const rm_reply_info *info, rm_buf *out);
int oa_chunk_done(rm_buf *out);
/* "data: {error}\n\n": a failure after the stream began. */
int oa_chunk_error(const serve_error *e, rm_buf *out);
/* The whole reply of a request that did not stream. */
int oa_reply(const serve_cfg *cfg, const serve_req *r, const char *reasoning, size_t rlen, const char *answer,
             size_t alen, const rm_reply_info *info, const char *finish, rm_buf *out);
/* {"error": {...}} */
int oa_error(const serve_error *e, rm_buf *out);
/* GET /v1/models, and /v1/models/ID (404 when ID is not the model). */
int oa_models(const serve_cfg *cfg, const char *id, rm_buf *out, serve_error *e);
/* "stop" or "length" for the client. */
const char *oa_finish_reason(const rm_reply_info *info, int stopped_by_string);

/* ---- http.c ------------------------------------------------------------- */

typedef struct serve_http serve_http;
/* Listens on cfg->host:cfg->port (0: a free port); *port gets the port. */
int  serve_http_start(serve *sv, serve_http **out, int *port, rm_err *err);
void serve_http_stop(serve_http *h);
/* Whether the address host resolves to for listening is a loopback one. */
int  serve_bind_is_loopback(const char *host, int *loopback, rm_err *err);
/* (Whether a Host header names a loopback address is rm_host_is_loopback,
 * the rule the endpoint client follows too.) */
/* Whether an Origin header's value is a loopback origin (http or https). */
int  serve_origin_is_loopback(const char *origin);
/* Constant-time comparison of an Authorization header with the key. */
int  serve_key_matches(const char *authorization, const char *key, size_t key_len);

#endif
