/* queue.c — one generation at a time for `remora serve` (serve.h).
 *
 * The model has one state, so one worker thread owns the session and
 * replies to one request at a time, in arrival order; up to queue_max
 * requests wait behind it, and more are refused with 429 and a Retry-After
 * of about one reply's time. Each request is a job shared by the worker and
 * the connection's thread: the worker turns the engine's events into the
 * reply's bytes (stream chunks as they come, or the whole reply at the
 * end) and wakes the connection through an eventfd; the connection's
 * thread waits on that eventfd and on its socket, so a client that hangs
 * up is seen at once: its reply is stopped (the engine looks at the flag
 * between tokens and, while the prompt is processed, between layers) or
 * it leaves the queue. While nothing is sent for keepalive_s (a long
 * prompt, a wait in the queue), a stream gets an SSE comment line so that
 * proxies and SDKs do not time out.
 *
 * Stop strings are matched here, on the answer text: text that could be
 * the start of one is held back until it is not, and a match ends the
 * reply before it (as the API says, the stop string is not returned).
 *
 * The reply's bytes are the API's (serve_req.api: OpenAI or Anthropic):
 * this file hands each writer the text, the tool calls (calls.c) and how
 * the reply ended; a reply with calls leaves its tokens for the replay.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "serve.h"

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };
enum { PHASE_PROMPT, PHASE_REPLY };

struct serve_job {
    serve *sv;
    serve_req req;
    int refs;                   /* the connection's and the queue's */
    int state;                  /* JOB_* */
    volatile int stop;          /* the engine's stop flag */
    int gone;                   /* the client hung up */
    int half_closed;            /* the client shut down its side (probed: see wait_event) */
    int by_string;              /* a stop string ended the reply */
    int cut;                    /* the reply was ended after its first tool call */
    int matched;                /* by_string: the stop string's index */
    int begun;                  /* a stream's first bytes are out (under sv->mu) */
    int fd;                     /* the client's socket */
    int efd;                    /* eventfd: new bytes, or the end */
    serve_job *next;            /* in the queue */
    /* the connection's side, under sv->mu */
    rm_buf out;                 /* stream bytes; `sent` of them handed out */
    size_t sent;
    double last_byte;           /* when bytes last went out (the keep-alive clock) */
    int status;                 /* a whole reply: its HTTP status and body */
    rm_buf body;
    /* the worker's side */
    rm_buf text[2];             /* reasoning and answer text not yet in a chunk (stream), or all of it */
    rm_buf hold;                /* answer text held back by stop-string matching */
    serve_calls calls;          /* the reply's tool calls */
    rm_reply_info info;
    double last_progress;
    int failed;                 /* out of memory building the reply */
    /* for /health and the log, under sv->mu */
    int phase;
    rm_prompt_figures prompt;
    int tokens;
    double t_queued, t_start, t_end;
};

struct serve {
    serve_cfg cfg;
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* the worker: a job, or shutdown */
    pthread_t worker;
    int started, finished;      /* the worker thread: started, and returned */
    int state;                  /* SERVE_* */
    rm_err load_err;
    rm_session *session;
    serve_job *head, *tail;     /* the queue */
    int nqueued;
    serve_job *running;
    int shutdown;
    double reply_s;             /* running mean of a reply's time, for Retry-After */
    unsigned long long served;
};

/* ---- jobs --------------------------------------------------------------- */

static void wake(serve_job *j)
{
    uint64_t one = 1;
    if (write(j->efd, &one, sizeof one) < 0) {}    /* a full counter is awake already */
}

/* Under sv->mu. */
static void job_unref(serve_job *j)
{
    if (--j->refs > 0) return;
    serve_req_free(&j->req);
    rm_buf_free(&j->out);
    rm_buf_free(&j->body);
    rm_buf_free(&j->text[0]);
    rm_buf_free(&j->text[1]);
    rm_buf_free(&j->hold);
    serve_calls_free(&j->calls);
    close(j->efd);
    free(j);
}

/* The client is gone (under sv->mu): stop the reply, or leave the queue. */
static void client_gone(serve_job *j)
{
    serve *sv = j->sv;
    j->gone = 1;
    j->stop = 1;
    if (j->state != JOB_QUEUED) return;
    serve_job **pp = &sv->head, *prev = NULL;
    while (*pp && *pp != j) { prev = *pp; pp = &(*pp)->next; }
    if (*pp) {
        *pp = j->next;
        if (sv->tail == j) sv->tail = prev;
        sv->nqueued--;
    }
    j->state = JOB_DONE;
    job_unref(j);               /* the queue's reference */
}

/* Bytes for the connection (worker, under sv->mu); a failure to keep them
 * ends the reply. */
static void put_out(serve_job *j, int rc)
{
    if (rc) { j->failed = 1; j->stop = 1; }
    wake(j);
}

/* ---- the reply's text ---------------------------------------------------- */

/* Answer text after stop-string matching: what is safe to pass on goes to
 * text[1], a tail that may still become a stop string stays in hold. */
static int answer_text(serve_job *j, const char *text, size_t len)
{
    const serve_req *r = &j->req;
    if (!r->nstops) return rm_buf_add(&j->text[1], text, len);
    if (rm_buf_add(&j->hold, text, len)) return -1;
    const char *h = j->hold.p;
    size_t n = j->hold.len, cut = n;
    int which = 0;
    for (int i = 0; i < r->nstops; i++) {
        const char *m = memmem(h, n, r->stops[i], strlen(r->stops[i]));
        if (m && (size_t)(m - h) < cut) { cut = (size_t)(m - h); which = i; }
    }
    if (cut < n) {
        j->by_string = 1;
        j->matched = which;
        j->stop = 1;
        int rc = rm_buf_add(&j->text[1], h, cut);
        rm_buf_reset(&j->hold);
        return rc;
    }
    size_t keep = 0;
    for (int i = 0; i < r->nstops; i++) {
        size_t sl = strlen(r->stops[i]);
        for (size_t k = sl - 1 < n ? sl - 1 : n; k > keep; k--)
            if (!memcmp(h + n - k, r->stops[i], k)) { keep = k; break; }
    }
    if (rm_buf_add(&j->text[1], h, n - keep)) return -1;
    memmove(j->hold.p, h + n - keep, keep);
    j->hold.len = keep;
    j->hold.p[keep] = 0;
    return 0;
}

static void on_text(void *ud, int channel, const char *text, size_t len)
{
    serve_job *j = ud;
    if (j->by_string || j->failed) return;
    int rc = channel == RM_CHAN_REASONING ? rm_buf_add(&j->text[0], text, len) : answer_text(j, text, len);
    if (rc) { j->failed = 1; j->stop = 1; }
}

static void on_tool(void *ud, const rm_tool_event *e)
{
    serve_job *j = ud;
    if (j->by_string || j->failed || j->cut) return;   /* cut: the block's end that follows is not malformed */
    /* the worker's own, as the text is: writers read it on this thread */
    serve_calls_event(&j->calls, e, j->req.api == &serve_anthropic ? "toolu_" : "call_");
    if (j->calls.failed) { j->failed = 1; j->stop = 1; }
    /* parallel_tool_calls false: one call, and the reply ends with it (the
     * block is cut short, so its tokens are not kept for the replay) */
    if (e->kind == RM_TOOL_END && j->req.one_call) { j->cut = 1; j->stop = 1; }
}

/* How the reply ended (SERVE_FIN_*): max_tokens first (a call it cut short
 * is not malformed), then a malformed call, calls, a stop string. */
static int finish_of(const serve_job *j)
{
    if (j->info.finish == RM_FINISH_LENGTH && !j->by_string && !j->cut) return SERVE_FIN_LENGTH;
    if (j->calls.bad) return SERVE_FIN_BAD_TOOL;
    if (serve_calls_whole(&j->calls)) return SERVE_FIN_TOOLS;
    return j->by_string ? SERVE_FIN_STRING : SERVE_FIN_STOP;
}

/* The writer's view of the reply: the text gathered (since the last chunk
 * of a stream) and the calls. */
static serve_reply reply_of(serve_job *j, int finish, const rm_token_stats *st)
{
    return (serve_reply){ j->text[0].p, j->text[1].p, j->text[0].len, j->text[1].len, &j->calls, &j->info, finish, st,
                          j->by_string ? j->req.stops[j->matched] : NULL };
}

/* A stream chunk of the text gathered since the last one (and the token's
 * figures when asked for); under sv->mu. */
static int flush_chunk(serve_job *j, const rm_token_stats *st)
{
    serve_reply d = reply_of(j, 0, st);
    int rc = j->req.api->stream_delta(&j->sv->cfg, &j->req, &d, &j->out);
    rm_buf_reset(&j->text[0]);
    rm_buf_reset(&j->text[1]);
    return rc;
}

static void on_stats(void *ud, const rm_token_stats *st)
{
    serve_job *j = ud;
    serve *sv = j->sv;
    const serve_req *r = &j->req;
    double now = rm_now();
    pthread_mutex_lock(&sv->mu);
    if (st->kind == RM_REC_TOKEN) {
        j->tokens++;
        if (r->stream) put_out(j, flush_chunk(j, r->stats ? st : NULL));
    } else {
        j->prompt = st->prompt;
        if (st->kind == RM_REC_PROMPT) j->phase = PHASE_REPLY;
        /* progress comes after every layer; a tenth of a second apart is enough */
        if (r->stream && (st->kind == RM_REC_PROMPT || now - j->last_progress >= 0.1)) {
            j->last_progress = now;
            put_out(j, r->api->stream_progress(&sv->cfg, &j->req, st, &j->out));
        }
    }
    pthread_mutex_unlock(&sv->mu);
}

/* ---- the worker --------------------------------------------------------- */

static void finish_stream(serve_job *j, int rc, const serve_error *e)
{
    if (rc) {
        put_out(j, j->req.api->error(e, 1, &j->out));
        return;
    }
    serve_reply d = reply_of(j, finish_of(j), NULL);
    put_out(j, j->req.api->stream_end(&j->sv->cfg, &j->req, &d, &j->out));
}

static void finish_whole(serve_job *j, int rc, serve_error *e)
{
    serve_reply d = reply_of(j, finish_of(j), NULL);
    if (!rc && j->req.api->whole(&j->sv->cfg, &j->req, &d, &j->body))
        rc = serve_fail(e, 500, "server_error", NULL, NULL, "out of memory writing the reply");
    if (rc) {
        rm_buf_reset(&j->body);
        if (j->req.api->error(e, 0, &j->body)) rm_buf_reset(&j->body);
    }
    j->status = rc ? e->status : 200;
    put_out(j, 0);
}

static void run_job(serve *sv, serve_job *j)
{
    serve_req *r = &j->req;
    if (r->stream) {
        pthread_mutex_lock(&sv->mu);
        put_out(j, r->api->stream_begin(&sv->cfg, r, &j->out));
        j->begun = 1;
        pthread_mutex_unlock(&sv->mu);
    }
    rm_gen_events ev = { j, on_text, on_stats, r->tools ? on_tool : NULL };
    rm_err err = { "" };
    serve_error e = { 0 };
    int rc = rm_session_reply(sv->session, &r->prompt, &r->gen, &ev, &j->stop, &j->info, &err);
    if (rc) serve_fail(&e, 500, "server_error", NULL, NULL, "%s", err.msg);
    if (!rc && serve_calls_whole(&j->calls) && !j->cut) {
        int n;
        const int32_t *ids = rm_session_tokens(sv->session, &n);
        const int from = r->prompt.gen_start;
        if (n > r->prompt.n && from <= r->prompt.n) serve_replay_put(sv->cfg.replay, &j->calls, ids + from, n - from);
    }
    if (!rc && !j->by_string && j->hold.len && rm_buf_add(&j->text[1], j->hold.p, j->hold.len)) j->failed = 1;
    if (!rc && j->failed) rc = serve_fail(&e, 500, "server_error", NULL, NULL, "out of memory writing the reply");
    if (!rc && j->info.finish == RM_FINISH_STOPPED && !j->by_string && !j->cut && sv->shutdown)
        rc = serve_fail(&e, 503, "server_error", "shutting_down", NULL, "the server is shutting down");
    pthread_mutex_lock(&sv->mu);
    if (r->stream) finish_stream(j, rc, &e);
    else finish_whole(j, rc, &e);
    pthread_mutex_unlock(&sv->mu);
}

static void *worker_main(void *arg)
{
    serve *sv = arg;
    rm_err err = { "" };
    rm_session *s = NULL;
    int rc = rm_session_open(sv->cfg.model_dir, &sv->cfg.open, &s, &err);
    pthread_mutex_lock(&sv->mu);
    if (rc) {
        sv->load_err = err;
        sv->state = SERVE_FAILED;
    } else {
        sv->session = s;
        sv->state = SERVE_READY;
    }
    while (!rc) {
        while (!sv->shutdown && !sv->head) pthread_cond_wait(&sv->cv, &sv->mu);
        if (sv->shutdown) break;
        serve_job *j = sv->head;
        sv->head = j->next;
        if (!sv->head) sv->tail = NULL;
        sv->nqueued--;
        sv->running = j;
        j->state = JOB_RUNNING;
        j->t_start = rm_now();
        pthread_mutex_unlock(&sv->mu);
        run_job(sv, j);
        pthread_mutex_lock(&sv->mu);
        j->t_end = rm_now();
        j->state = JOB_DONE;
        sv->running = NULL;
        sv->served++;
        double took = j->t_end - j->t_start;
        sv->reply_s = sv->served == 1 ? took : 0.8 * sv->reply_s + 0.2 * took;
        wake(j);
        job_unref(j);
    }
    sv->finished = 1;
    pthread_mutex_unlock(&sv->mu);
    return NULL;
}

/* ---- the server's state -------------------------------------------------- */

serve *serve_new(const serve_cfg *cfg)
{
    serve *sv = calloc(1, sizeof *sv);
    if (!sv) return NULL;
    sv->cfg = *cfg;
    if (!(sv->cfg.replay = serve_replay_new())) { free(sv); return NULL; }
    pthread_mutex_init(&sv->mu, NULL);
    pthread_cond_init(&sv->cv, NULL);
    sv->state = SERVE_LOADING;
    return sv;
}

int serve_start(serve *sv, rm_err *err)
{
    if (pthread_create(&sv->worker, NULL, worker_main, sv))
        return rm_errf(err, "cannot start the worker thread: %s", strerror(errno));
    sv->started = 1;
    return 0;
}

int serve_state(serve *sv, rm_err *err)
{
    pthread_mutex_lock(&sv->mu);
    int st = sv->state;
    if (st == SERVE_FAILED && err) *err = sv->load_err;
    pthread_mutex_unlock(&sv->mu);
    return st;
}

const serve_cfg *serve_config(const serve *sv) { return &sv->cfg; }

rm_session *serve_session(serve *sv)
{
    pthread_mutex_lock(&sv->mu);
    rm_session *s = sv->state == SERVE_READY ? sv->session : NULL;
    pthread_mutex_unlock(&sv->mu);
    return s;
}

void serve_begin_shutdown(serve *sv, double grace)
{
    pthread_mutex_lock(&sv->mu);
    sv->shutdown = 1;
    pthread_cond_broadcast(&sv->cv);
    /* the queued requests are refused; their clients get a 503 */
    while (sv->head) {
        serve_job *j = sv->head;
        sv->head = j->next;
        sv->nqueued--;
        serve_error e;
        serve_fail(&e, 503, "server_error", "shutting_down", NULL, "the server is shutting down");
        j->state = JOB_DONE;
        if (j->req.stream) put_out(j, j->req.api->error(&e, 1, &j->out));
        else {
            j->status = 503;
            put_out(j, j->req.api->error(&e, 0, &j->body));
        }
        job_unref(j);
    }
    sv->tail = NULL;
    if (sv->running) sv->running->stop = 1;
    pthread_mutex_unlock(&sv->mu);
    for (double t0 = rm_now(); rm_now() - t0 < grace;) {
        pthread_mutex_lock(&sv->mu);
        int busy = sv->running != NULL;
        pthread_mutex_unlock(&sv->mu);
        if (!busy) break;
        usleep(20000);
    }
}

void serve_free(serve *sv, double grace)
{
    if (!sv) return;
    if (!sv->started) { serve_replay_free(sv->cfg.replay); free(sv); return; }
    int ended = 0;
    for (double t0 = rm_now(); !ended && rm_now() - t0 < grace;) {
        pthread_mutex_lock(&sv->mu);
        ended = sv->finished;
        pthread_mutex_unlock(&sv->mu);
        if (!ended) usleep(20000);
    }
    if (!ended) {
        fprintf(stderr, "remora serve: the reply in progress did not stop within %.0f s; leaving it to the exit\n",
                grace);
        return;
    }
    pthread_join(sv->worker, NULL);
    rm_session_free(sv->session);
    serve_replay_free(sv->cfg.replay);
    pthread_cond_destroy(&sv->cv);
    pthread_mutex_destroy(&sv->mu);
    free(sv);
}

/* ---- the connection's side ----------------------------------------------- */

int serve_submit(serve *sv, serve_req *req, int fd, serve_job **out, serve_error *e)
{
    *out = NULL;
    serve_job *j = calloc(1, sizeof *j);
    if (!j) return serve_fail(e, 500, "server_error", NULL, NULL, "out of memory");
    if ((j->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
        free(j);
        return serve_fail(e, 500, "server_error", NULL, NULL, "cannot make an eventfd: %s", strerror(errno));
    }
    pthread_mutex_lock(&sv->mu);
    int rc = 0;
    if (sv->shutdown) rc = serve_fail(e, 503, "server_error", "shutting_down", NULL, "the server is shutting down");
    else if (sv->state != SERVE_READY)
        rc = serve_fail(e, 503, "server_error", "model_loading", NULL, "the model is still loading");
    else if (sv->nqueued >= sv->cfg.queue_max + (sv->running ? 0 : 1)) {
        rc = serve_fail(e, 429, "rate_limit_error", "rate_limit_exceeded", NULL,
                        "the server is busy: one reply runs and %d wait (--queue %d); retry later", sv->nqueued,
                        sv->cfg.queue_max);
        e->retry_after = sv->reply_s > 1 ? (int)ceil(sv->reply_s) : 1;
    }
    if (rc) {
        pthread_mutex_unlock(&sv->mu);
        close(j->efd);
        free(j);
        return -1;
    }
    j->sv = sv;
    j->req = *req;
    memset(req, 0, sizeof *req);
    j->refs = 2;
    j->fd = fd;
    j->state = JOB_QUEUED;
    j->t_queued = j->last_byte = rm_now();
    if (sv->tail) sv->tail->next = j;
    else sv->head = j;
    sv->tail = j;
    sv->nqueued++;
    pthread_cond_signal(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
    *out = j;
    return 0;
}

/* Waits up to `timeout` seconds (< 0: no limit) for the worker's eventfd
 * or the client's hang-up; returns -1 on a hang-up, 1 when the client has
 * shut down its sending side. That is a hang-up or a half-close after a
 * complete request (shutdown(SHUT_WR), which wants the reply): the two
 * look the same until the server writes, so the caller writes something
 * harmless (wait_locked) and later waits look for the reset a closed
 * socket answers that with (POLLHUP, POLLERR, always reported). Called
 * unlocked. */
static int wait_event(serve_job *j, double timeout)
{
    struct pollfd p[2] = { { j->fd, j->half_closed ? 0 : POLLRDHUP, 0 }, { j->efd, POLLIN, 0 } };
    int ms = timeout < 0 ? -1 : (int)ceil(timeout * 1000);
    int n = poll(p, 2, ms);
    if (n < 0 && errno != EINTR) return -1;
    if (n > 0 && (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))) return -1;
    uint64_t v;
    if (n > 0 && (p[1].revents & POLLIN) && read(j->efd, &v, sizeof v) < 0) {}
    return n > 0 && (p[0].revents & POLLRDHUP) ? 1 : 0;
}

/* wait_event with sv->mu held around it; a hang-up lets the job go
 * (client_gone) and returns -1, still locked. A half-close is probed: a
 * stream gets a keep-alive comment now (`*probe` set), a whole reply an
 * interim "100 Continue", which HTTP/1.1 clients skip (none for an
 * HTTP/1.0 client, whose reply is then waited for to its end). */
static int wait_locked(serve_job *j, double timeout, int *probe)
{
    pthread_mutex_unlock(&j->sv->mu);
    int r = wait_event(j, timeout);
    pthread_mutex_lock(&j->sv->mu);
    if (r > 0) {
        j->half_closed = 1;
        if (probe) *probe = 1;
        else if (!j->req.http10) {
            static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
            if (send(j->fd, cont, sizeof cont - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) r = -1;
        }
    }
    if (r < 0) client_gone(j);
    return r < 0 ? -1 : 0;
}

long serve_job_read(serve_job *j, char *buf, size_t cap)
{
    serve *sv = j->sv;
    pthread_mutex_lock(&sv->mu);
    for (;;) {
        /* the API's own once its stream has begun (an Anthropic ping comes
         * after message_start), a comment before */
        const char *keepalive = j->begun ? j->req.api->keepalive : ": keep-alive\n\n";
        const size_t kn = strlen(keepalive);
        double now = rm_now();
        if (j->sent < j->out.len) {
            size_t n = j->out.len - j->sent < cap ? j->out.len - j->sent : cap;
            memcpy(buf, j->out.p + j->sent, n);
            j->sent += n;
            if (j->sent == j->out.len) { rm_buf_reset(&j->out); j->sent = 0; }
            j->last_byte = now;
            pthread_mutex_unlock(&sv->mu);
            return (long)n;
        }
        if (j->state == JOB_DONE) break;
        double left = j->last_byte + sv->cfg.keepalive_s - now;
        if (left <= 0 && cap >= kn) {
            memcpy(buf, keepalive, kn);
            j->last_byte = now;
            pthread_mutex_unlock(&sv->mu);
            return (long)kn;
        }
        int probe = 0;
        if (wait_locked(j, left > 0 ? left : 0.05, &probe)) {
            pthread_mutex_unlock(&sv->mu);
            return -1;
        }
        if (probe) j->last_byte = now - sv->cfg.keepalive_s;      /* the comment goes now */
    }
    pthread_mutex_unlock(&sv->mu);
    return 0;
}

int serve_job_wait(serve_job *j, int *status, const char **body, size_t *len)
{
    serve *sv = j->sv;
    pthread_mutex_lock(&sv->mu);
    while (j->state != JOB_DONE)
        if (wait_locked(j, -1, NULL)) {
            pthread_mutex_unlock(&sv->mu);
            return -1;
        }
    *status = j->status;
    *body = j->body.p ? j->body.p : "";
    *len = j->body.len;
    pthread_mutex_unlock(&sv->mu);
    return 0;
}

void serve_job_release(serve_job *j)
{
    if (!j) return;
    serve *sv = j->sv;
    pthread_mutex_lock(&sv->mu);
    if (j->state != JOB_DONE) client_gone(j);
    job_unref(j);
    pthread_mutex_unlock(&sv->mu);
}

int serve_job_summary(serve_job *j, char *buf, size_t cap)
{
    serve *sv = j->sv;
    pthread_mutex_lock(&sv->mu);
    const rm_reply_info *i = &j->info;
    /* the prefix cache: the state this request replaced, kept first, and
     * the one it restored, each with its tier and its time */
    char from[160] = "";
    int at = 0;
    if (i->kept)
        at = snprintf(from, sizeof from, "the state before (%d tokens) kept %s in %.3f s, ", i->kept,
                      i->kept_ram ? "in RAM" : "on disk", i->keep_s);
    if (i->restored_tokens)
        snprintf(from + at, sizeof from - at, "%d restored from %s in %.3f s, ", i->restored_tokens,
                 i->restored_ram ? "RAM" : "disk", i->restore_s);
    if (j->state != JOB_DONE || !j->t_end)
        snprintf(buf, cap, "%s", j->gone ? "client gone, stopped" : "not run");
    else
        snprintf(buf, cap, "%d prompt tokens (%d cached), %s%d generated, %s%s, %.2f s in the queue",
                 i->prompt_tokens, i->cached_tokens, from,
                 i->completion_tokens,
                 i->finish == RM_FINISH_STOPPED && !j->by_string && !j->cut ? "stopped"
                                                                             : j->req.api->finish_name(finish_of(j)),
                 j->gone ? ", client gone" : "", j->t_start - j->t_queued);
    const int gone = j->gone;
    pthread_mutex_unlock(&sv->mu);
    return gone;
}

/* ---- /health ------------------------------------------------------------ */

static double finite_or_minus1(double v) { return isfinite(v) ? v : -1; }

static json_t *prompt_figures(const rm_prompt_figures *p)
{
    return json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:f,s:f,s:f}", "ctx", p->ctx, "reused", p->reused,
                     "restored", p->restored, "restored_ram", p->restored_ram, "total", p->total, "done", p->done, "chunk", p->chunk, "chunks",
                     p->chunks, "layer", p->layer, "layers", p->layers, "elapsed", finite_or_minus1(p->elapsed), "tok_per_s",
                     finite_or_minus1(p->tok_per_s), "eta", finite_or_minus1(p->eta));
}

static json_t *model_value(serve *sv)
{
    json_t *m = json_pack("{s:s,s:s}", "id", sv->cfg.served_name, "dir", sv->cfg.model_dir);
    if (!m || !sv->session) return m;
    const rm_model_info *i = rm_model_get_info(rm_session_model(sv->session));
    json_object_set_new(m, "family", json_string(i->family));
    json_object_set_new(m, "layers", json_integer(i->num_layers));
    json_object_set_new(m, "ram_plan",
                        json_pack("{s:I,s:I,s:I,s:I,s:I,s:i,s:i,s:I,s:b}", "budget_bytes", (json_int_t)i->ram_budget,
                                  "spine_bytes", (json_int_t)i->spine_bytes, "spine_resident_bytes",
                                  (json_int_t)i->spine_resident_bytes, "expert_bytes", (json_int_t)i->expert_bytes,
                                  "expert_cache_bytes", (json_int_t)i->expert_cache_bytes, "expert_cache_slots",
                                  i->expert_cache_slots, "total_experts", i->total_experts, "overhead_bytes",
                                  (json_int_t)i->overhead_bytes, "direct_io", i->direct_io));
    return m;
}

int serve_health_json(serve *sv, rm_buf *out)
{
    pthread_mutex_lock(&sv->mu);
    static const char *const states[] = { "loading", "ready", "failed" };
    serve_job *j = sv->running;
    const char *state = sv->shutdown ? "stopping" : sv->state != SERVE_READY ? states[sv->state] : j ? "busy" : "idle";
    json_t *h = json_pack("{s:s,s:s,s:{s:i,s:i},s:I}", "status", sv->state == SERVE_READY ? "ok" : states[sv->state],
                          "state", state, "queue", "waiting", sv->nqueued, "capacity", sv->cfg.queue_max,
                          "served", (json_int_t)sv->served);
    if (h) {
        json_object_set_new(h, "model", model_value(sv));
        json_t *req = json_null();
        if (j)
            req = json_pack("{s:s,s:s,s:o,s:i,s:f}", "id", j->req.id, "phase",
                            j->phase == PHASE_PROMPT ? "prompt" : "generating", "prompt", prompt_figures(&j->prompt),
                            "completion_tokens", j->tokens, "seconds", rm_now() - j->t_start);
        json_object_set_new(h, "request", req);
    }
    pthread_mutex_unlock(&sv->mu);
    char *s = h ? json_dumps(h, JSON_COMPACT) : NULL;
    json_decref(h);
    int rc = !s || rm_buf_adds(out, s) ? -1 : 0;
    free(s);
    return rc;
}
