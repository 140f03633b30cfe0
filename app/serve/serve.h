/* serve.h — the parts of `remora serve`, the OpenAI-compatible HTTP server,
 * and what they share:
 *
 *   cmd_serve.c   the options, the API key, start-up and shutdown
 *   http.c        libmicrohttpd: connections, routes, the Host, Origin and
 *                 key checks, the body limit, responses and event streams
 *   openai.c      OpenAI requests parsed into serve_req (and refused with the
 *                 field named), replies, chunks and errors written as JSON
 *   anthropic.c   the same for the Anthropic Messages API (/v1/messages,
 *                 /v1/messages/count_tokens), its stream of named events
 *   calls.c       the tool calls of a reply (ids, names, arguments) as the
 *                 parser's events build them, and the tokens each reply
 *                 with calls was sampled as, so a history sent back is
 *                 rendered as the state holds it
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
#include <jansson.h>
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
    struct serve_replay *replay;    /* the tokens of replies with tool calls (calls.c), shared */
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
typedef struct serve serve;

/* How a reply ended, for each API to name: SERVE_FIN_STOP (the model ended
 * it), _LENGTH (max_tokens), _STRING (a stop string), _TOOLS (tool calls),
 * _BAD_TOOL (a malformed tool call, given back as text). */
enum { SERVE_FIN_STOP = 1, SERVE_FIN_LENGTH, SERVE_FIN_STRING, SERVE_FIN_TOOLS, SERVE_FIN_BAD_TOOL };

/* ---- calls.c ------------------------------------------------------------ */

/* One tool call of a reply, and how much of it a stream has sent. */
typedef struct serve_call {
    char id[48];
    char *name;
    rm_buf args;                    /* the arguments' JSON text so far */
    size_t args_sent;
    int begun_sent, ended, ended_sent;
} serve_call;

typedef struct serve_calls {
    serve_call *v;
    int n, cap;
    int bad;                        /* a malformed call ended the block */
    rm_buf bad_text;                /* its text, markers left out */
    int failed;                     /* out of memory */
} serve_calls;

/* Takes one parser event; ids are PREFIX and random hex. */
void serve_calls_event(serve_calls *c, const rm_tool_event *e, const char *prefix);
/* Calls complete (ended). */
int  serve_calls_whole(const serve_calls *c);
void serve_calls_free(serve_calls *c);

/* The tokens a reply with tool calls was sampled as, by its calls' ids (the
 * most recent SERVE_REPLAY_MAX replies): when a later request sends the
 * reply back, its rendering uses these tokens, so the state that generated
 * them is reused as it is. */
#define SERVE_REPLAY_MAX 64
typedef struct serve_replay serve_replay;      /* serve_cfg.replay */
serve_replay *serve_replay_new(void);
void serve_replay_free(serve_replay *rp);
/* Keeps ids[0..n) (the reply's tokens from its generation prompt on) for
 * the first id of c's calls. */
void serve_replay_put(serve_replay *rp, const serve_calls *c, const int32_t *ids, int n);
/* For each assistant message of conv's "messages" whose first tool call id
 * is kept: "remora_ids" set to the tokens (the renderer's verbatim form);
 * a "remora_ids" that a client sent is removed. */
void serve_replay_apply(serve_replay *rp, json_t *conv);

/* One request, parsed and rendered, ready for the queue. */
typedef struct serve_api serve_api;
typedef struct serve_req {
    const serve_api *api;           /* the API that writes the reply */
    int kind;                       /* REQ_* */
    int tools;                      /* tools were declared: tool calls are taken */
    int one_call;                   /* parallel_tool_calls false: the reply ends after its first call */
    int think;                      /* the prompt opens the think channel */
    struct {                        /* an Anthropic stream's blocks (anthropic.c) */
        int next, open, call;       /* the next block's index; the open one's kind; its call */
        int content;                /* text and tool_use blocks begun */
        uint64_t sig;               /* the thinking's signature so far */
        double ping_at;             /* when the last ping went out */
        char model[128];            /* the request's model, echoed */
    } an;
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

/* What a reply's writer is given: text (new since the last chunk of a
 * stream, or all of it), the tool calls, and at the end the figures and
 * how it ended (finish 0: not the end). */
typedef struct serve_reply {
    const char *reasoning, *answer;
    size_t rlen, alen;
    serve_calls *calls;
    const rm_reply_info *info;
    int finish;                     /* SERVE_FIN_*, 0 */
    const rm_token_stats *st;       /* the stats extension's record, or NULL */
    const char *stop_string;        /* SERVE_FIN_STRING: the one that matched */
} serve_reply;

/* An API's replies, streamed and whole, and errors. */
struct serve_api {
    const char *name;
    /* a stream's first bytes (the job is queued; the prompt not yet in) */
    int (*stream_begin)(const serve_cfg *cfg, serve_req *r, rm_buf *out);
    /* the text and calls since the last chunk */
    int (*stream_delta)(const serve_cfg *cfg, serve_req *r, const serve_reply *d, rm_buf *out);
    /* a prompt or progress record (stats extension), or a ping while the
     * prompt is processed */
    int (*stream_progress)(const serve_cfg *cfg, serve_req *r, const rm_token_stats *st, rm_buf *out);
    /* the rest and the end of the stream */
    int (*stream_end)(const serve_cfg *cfg, serve_req *r, const serve_reply *d, rm_buf *out);
    /* the whole reply */
    int (*whole)(const serve_cfg *cfg, serve_req *r, const serve_reply *d, rm_buf *out);
    /* an error body (sse: as an event of a stream) */
    int (*error)(const serve_error *e, int sse, rm_buf *out);
    /* the finish's name for the log */
    const char *(*finish_name)(int finish);
    /* what a stream sends after --keep-alive seconds without a byte */
    const char *keepalive;
};
extern const serve_api serve_openai, serve_anthropic;

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
/* One line about the reply for the server's log: tokens and the seconds in
 * the queue. Returns 1 when the client hung up. */
int   serve_job_summary(serve_job *j, char *buf, size_t cap);
/* The connection is done with the job: stops it if it still runs. */
void  serve_job_release(serve_job *j);
/* GET /health into out. */
int   serve_health_json(serve *sv, rm_buf *out);

/* ---- openai.c ----------------------------------------------------------- */

/* Shared with anthropic.c: a request begun (r reset, its api and kind
 * REQ_* set) with the body as a JSON object; the fields both
 * OpenAI endpoints share (model, stream, temperature, top_p, seed,
 * max_tokens, stop, the stats extension...) into r; a conversation
 * (messages, tools, thinking...) rendered into r->prompt; a fresh id. */
json_t *serve_parse_body(serve_req *r, const serve_api *api, int kind, const char *body, size_t len,
                         serve_error *e);
int  serve_parse_common(const serve_cfg *cfg, const json_t *o, serve_req *r, int default_max, serve_error *e);
int  serve_render(const serve_cfg *cfg, rm_session *s, json_t *conv, serve_req *r, serve_error *e);
void serve_new_id(serve_req *r, const char *prefix);

/* POST /v1/chat/completions and /v1/completions bodies. */
int oa_parse_chat(const serve_cfg *cfg, rm_session *s, const char *body, size_t len, serve_req *r, serve_error *e);
int oa_parse_completion(const serve_cfg *cfg, rm_session *s, const char *body, size_t len, serve_req *r, serve_error *e);
/* {"error": {...}} */
int oa_error(const serve_error *e, rm_buf *out);
/* GET /v1/models, and /v1/models/ID (404 when ID is not the model). Once
 * the model is loaded (s not NULL) its entry says the layers and the first
 * MoE layer ("remora": {"layers", "first_moe_layer"}), so that a chat over
 * --endpoint numbers the router's layers as a local one does. */
int oa_models(const serve_cfg *cfg, rm_session *s, const char *id, rm_buf *out, serve_error *e);

/* ---- anthropic.c -------------------------------------------------------- */

/* POST /v1/messages: the body into r (its reply written by serve_anthropic). */
int an_parse_messages(const serve_cfg *cfg, rm_session *s, const char *body, size_t len, serve_req *r, serve_error *e);
/* POST /v1/messages/count_tokens: {"input_tokens": N} into out. */
int an_count_tokens(const serve_cfg *cfg, rm_session *s, const char *body, size_t len, rm_buf *out, serve_error *e);
/* {"type": "error", "error": {"type", "message"}} (sse: as an error event). */
int an_error(const serve_error *e, int sse, rm_buf *out);

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
