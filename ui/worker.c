/* worker.c — the generation thread and its mailbox (see worker.h). */
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "worker.h"

#define RING 64

struct ui_worker {
    ui_source      *src;
    pthread_t       thread;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    pthread_cond_t  exit_cv;        /* signalled when the thread ends (monotonic clock) */
    int             exited;
    int             wake[2];
    atomic_int      woken;          /* a wake byte is in the pipe */
    volatile int    stop;
    int             quit;

    /* command slot (UI -> worker) */
    int             has_cmd, busy, cmd;
    char           *arg;
    rm_gen_opts     gen;

    /* published (worker -> UI), under mu */
    rm_buf          text[3];
    int             last_channel;   /* of the latest text, for the next token's sample */
    int             text_lost;      /* a delta could not be kept: the turn stops */
    ui_sample       ring[RING];
    int             ring_n, ring_lost;
    rm_token_stats  full, full_prev;
    int             have_full, have_prev, full_new;
    rm_token_stats  pfull;
    int             pfull_new;
    int             have_done;
    ui_done         done;
    /* worker-side: the previous token's routes, the turn's token records */
    ui_reuse_tracker reuse;
    ui_layer_acc    layers;         /* the turn's per-layer figures; f published under mu */
    ui_layer_figs   layers_pub;
    int             layers_new;
    int             tokens;

    /* UI-side copies handed out by drain */
    rm_buf          out[3];
};

static void wake_ui(ui_worker *w)
{
    if (!atomic_exchange(&w->woken, 1)) {
        ssize_t r;
        do r = write(w->wake[1], "", 1); while (r < 0 && errno == EINTR);
    }
}

/* Text the UI cannot be given whole would leave a transcript with a hole in
 * it, so a delta that does not fit (out of memory) stops the turn, which
 * then ends with an error instead. */
static void on_text(void *ud, int channel, const char *text, size_t len)
{
    ui_worker *w = ud;
    if (channel != RM_CHAN_REASONING && channel != RM_CHAN_ANSWER) return;
    pthread_mutex_lock(&w->mu);
    w->last_channel = channel;
    if (!w->text_lost && rm_buf_add(&w->text[channel], text, len)) {
        w->text_lost = 1;
        w->stop = 1;
    }
    pthread_mutex_unlock(&w->mu);
    wake_ui(w);
}

/* The full records kept are those of tokens fed through the model (the
 * end-of-message token is not: its record has no routes or figures of its
 * own) and of the prompt. */
static void on_stats(void *ud, const rm_token_stats *st)
{
    ui_worker *w = ud;
    ui_sample s;
    uint64_t fed_before = w->layers.f.tokens;
    if (st->kind == RM_REC_TOKEN && !st->prefill) {
        ui_sample probe;
        ui_stats_sample(&probe, st, NULL);
        if (probe.fed) ui_layer_acc_add(&w->layers, st, &w->reuse);
    }
    ui_stats_sample(&s, st, &w->reuse);
    if (s.kind == RM_REC_TOKEN) w->tokens++;
    pthread_mutex_lock(&w->mu);
    if (s.kind == RM_REC_TOKEN) {
        s.channel = w->last_channel;
        w->last_channel = 0;
    }
    if (w->layers.f.tokens != fed_before) {
        w->layers_pub = w->layers.f;
        w->layers_new = 1;
    }
    if (w->ring_n < RING) w->ring[w->ring_n++] = s;
    else w->ring_lost++;
    if (s.kind != RM_REC_TOKEN) {
        w->pfull = *st;
        w->pfull_new = 1;
    } else if (s.fed || (st->route_layers > 0 && st->token_id < 0)) {
        /* an endpoint's record with routes only (after its last text; its
         * token ids are unknown, -1) still goes to the router panel; the
         * end-of-message record of a local source keeps the last token's
         * routes and is not fed, so it must not replace that token's
         * (tui_panels.sh: the zoom lost its verify-pass marks) */
        if (w->have_full) { w->full_prev = w->full; w->have_prev = 1; }
        w->full = *st;
        w->have_full = 1;
        w->full_new = 1;
    }
    pthread_mutex_unlock(&w->mu);
    wake_ui(w);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The storage ceiling in pieces; the median does not move with one piece
 * that another program's reads slowed down. */
static void probe(ui_worker *w, double seconds, ui_done *d)
{
    enum { MAX_PIECES = 64 };
    double g[MAX_PIECES];
    int n = 0;
    for (double t = 0; t < seconds - 1e-9 && n < MAX_PIECES && !w->stop; t += UI_PROBE_PIECE_S) {
        double x = w->src->vt->probe(w->src, UI_PROBE_PIECE_S);
        if (x <= 0) break;
        g[n++] = x;
    }
    if (!n) return;
    qsort(g, (size_t)n, sizeof g[0], cmp_double);
    d->gbps = n % 2 ? g[n / 2] : (g[n / 2 - 1] + g[n / 2]) / 2;
    d->probed = n * UI_PROBE_PIECE_S;
}

static void run(ui_worker *w, int cmd, const char *arg, const rm_gen_opts *gen, ui_done *d)
{
    rm_err err = { "" };
    ui_source *s = w->src;
    d->cmd = cmd;
    d->interrupted = 0;
    d->tokens = 0;
    d->gbps = -1;
    d->probed = 0;
    d->ctx = -1;
    switch (cmd) {
    case UI_CMD_TURN: {
        rm_gen_events ev = { w, on_text, on_stats };
        w->text_lost = 0;
        w->reuse.have = 0;
        ui_layer_acc_reset(&w->layers);
        w->tokens = 0;
        d->rc = s->vt->turn(s, arg, gen, &ev, &w->stop, &err);
        d->interrupted = d->rc == 0 ? s->vt->last_interrupted(s) : 0;
        d->tokens = w->tokens;
        if (w->text_lost && d->rc == 0) {
            d->rc = rm_errf(&err, "out of memory: the reply could not be shown whole, so the turn was stopped");
            d->interrupted = 0;
        }
        break;
    }
    case UI_CMD_SYSTEM: d->rc = s->vt->set_system(s, arg, &err); break;
    case UI_CMD_CLEAR:  s->vt->clear(s); d->rc = 0; break;
    case UI_CMD_SAVE:   d->rc = s->vt->save(s, arg, &err); break;
    case UI_CMD_LOAD:   d->rc = s->vt->load(s, arg, &d->ctx, &err); break;
    case UI_CMD_PROBE: probe(w, atof(arg), d); d->rc = 0; break;
    default:            d->rc = rm_errf(&err, "unknown command %d", cmd); break;
    }
    memcpy(d->msg, err.msg, sizeof d->msg);
}

static void *thread_main(void *arg)
{
    ui_worker *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->quit && !w->has_cmd) pthread_cond_wait(&w->cv, &w->mu);
        if (w->quit) break;
        int cmd = w->cmd;
        char *a = w->arg;
        rm_gen_opts gen = w->gen;
        w->has_cmd = 0;
        w->arg = NULL;
        pthread_mutex_unlock(&w->mu);

        ui_done d;
        run(w, cmd, a ? a : "", &gen, &d);
        free(a);

        pthread_mutex_lock(&w->mu);
        w->done = d;
        w->have_done = 1;
        w->busy = 0;
        pthread_mutex_unlock(&w->mu);
        wake_ui(w);
        pthread_mutex_lock(&w->mu);
    }
    w->exited = 1;
    pthread_cond_signal(&w->exit_cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int ui_worker_start(ui_source *src, ui_worker **out, int *wake_fd)
{
    ui_worker *w = calloc(1, sizeof *w);
    if (!w) return -1;
    w->src = src;
    if (pipe2(w->wake, O_NONBLOCK | O_CLOEXEC)) { free(w); return -1; }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->exit_cv, &ca);
    pthread_condattr_destroy(&ca);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);     /* signals belong to the UI thread */
    int rc = pthread_create(&w->thread, NULL, thread_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        close(w->wake[0]); close(w->wake[1]);
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        pthread_cond_destroy(&w->exit_cv);
        free(w);
        return -1;
    }
    *wake_fd = w->wake[0];
    *out = w;
    return 0;
}

/* dl = now + seconds on the monotonic clock. */
static void deadline_in(struct timespec *dl, double seconds)
{
    clock_gettime(CLOCK_MONOTONIC, dl);
    long long ns = (long long)dl->tv_nsec + (long long)(seconds * 1e9);
    dl->tv_sec += (time_t)(ns / 1000000000);
    dl->tv_nsec = (long)(ns % 1000000000);
}

int ui_worker_close(ui_worker *w, double seconds)
{
    if (!w) return 0;
    struct timespec dl;
    deadline_in(&dl, seconds);
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    int timed_out = 0;
    while (!w->exited && !timed_out) timed_out = pthread_cond_timedwait(&w->exit_cv, &w->mu, &dl) == ETIMEDOUT;
    /* a save is a write that ends by itself (a K3 snapshot of a long
     * conversation takes many seconds): cut, it would leave the old snapshot
     * and the conversation to be computed again, so it is waited for, up to
     * WORKER_SAVE_WAIT_S */
    if (!w->exited && w->busy && w->cmd == UI_CMD_SAVE) {
        deadline_in(&dl, WORKER_SAVE_WAIT_S);
        timed_out = 0;
        while (!w->exited && !timed_out) timed_out = pthread_cond_timedwait(&w->exit_cv, &w->mu, &dl) == ETIMEDOUT;
    }
    int exited = w->exited;
    pthread_mutex_unlock(&w->mu);
    if (!exited) return -1;         /* still inside the source: the process exits around it */
    pthread_join(w->thread, NULL);  /* it has returned: this does not wait */
    for (int i = 0; i < 3; i++) { rm_buf_free(&w->text[i]); rm_buf_free(&w->out[i]); }
    free(w->arg);
    close(w->wake[0]);
    close(w->wake[1]);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    pthread_cond_destroy(&w->exit_cv);
    free(w);
    return 0;
}

int ui_worker_submit(ui_worker *w, int cmd, const char *arg, const rm_gen_opts *gen)
{
    char *a = arg ? strdup(arg) : NULL;
    if (arg && !a) return -1;
    pthread_mutex_lock(&w->mu);
    if (w->busy) { pthread_mutex_unlock(&w->mu); free(a); return -1; }
    w->busy = 1;
    w->has_cmd = 1;
    w->cmd = cmd;
    w->arg = a;
    if (gen) w->gen = *gen;
    w->stop = 0;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

void ui_worker_stop(ui_worker *w) { w->stop = 1; }

void ui_worker_drain(ui_worker *w, ui_drain *d)
{
    char buf[256];
    while (read(w->wake[0], buf, sizeof buf) > 0) {}
    atomic_store(&w->woken, 0);     /* before taking: a later publish wakes again */

    pthread_mutex_lock(&w->mu);
    for (int c = 1; c < 3; c++) {
        rm_buf t = w->out[c];               /* swap: no copy of the text */
        w->out[c] = w->text[c];
        rm_buf_reset(&t);
        w->text[c] = t;
    }
    d->nsamples = w->ring_n;
    memcpy(d->samples, w->ring, (size_t)w->ring_n * sizeof w->ring[0]);
    d->lost_samples = w->ring_lost;
    w->ring_n = w->ring_lost = 0;
    d->have_full = w->full_new;
    if (d->have_full) d->full = w->full;
    d->have_prev = d->have_full && w->have_prev;
    if (d->have_prev) d->full_prev = w->full_prev;
    w->full_new = 0;
    d->have_pfull = w->pfull_new;
    if (d->have_pfull) d->pfull = w->pfull;
    w->pfull_new = 0;
    d->have_layers = w->layers_new;
    if (d->have_layers) d->layers = w->layers_pub;
    w->layers_new = 0;
    d->have_done = w->have_done;
    if (w->have_done) d->done = w->done;
    w->have_done = 0;
    pthread_mutex_unlock(&w->mu);

    d->text[0] = NULL;
    d->len[0] = 0;
    for (int c = 1; c < 3; c++) { d->text[c] = w->out[c].p; d->len[c] = w->out[c].len; }
}
