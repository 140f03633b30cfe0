/* io_pool.c — reader threads for io_pool.h.
 *
 * Requests go into a FIFO; each reader thread pops one, loops pread until the
 * span is complete (or fails), and moves it to the done list. A request is
 * owned by the caller throughout; the pool only links it. Busy time is the
 * union of in-flight intervals, measured where the in-flight count goes from
 * 0 to 1 and back, so bandwidth = bytes / busy time is what the device gave
 * while it was being asked.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "engine.h"
#include "io/io_pool.h"
#include "base/busy.h"

struct io_pool {
    pthread_mutex_t mu;
    pthread_cond_t  work, done;
    io_req *q_head, *q_tail;        /* submitted, not started */
    io_req *done_head;              /* completed, not yet collected */
    int pending;                    /* submitted and not collected */
    busy_timer busy;                /* reads being read now (busy.n), and the busy time */
    int nthreads, quit;
    pthread_t *th;
    io_counters c;
    atomic_int outstanding;         /* submitted and not yet read */
    io_pool *yield_to;              /* wait while that pool has reads to do */
};

static void do_read(io_req *r)
{
    size_t got = 0;
    r->err = 0;
    if (r->read_fn) { r->read_fn(r, r->read_ctx); return; }
    while (got < r->len) {
        ssize_t n = pread(r->fd, (char *)r->dst + got, r->len - got, (off_t)(r->off + got));
        if (n < 0) {
            if (errno == EINTR) continue;
            r->err = errno;
            break;
        }
        if (n == 0) break;  /* end of file: a short read, judged by the caller */
        got += (size_t)n;
    }
    r->got = got;
}

static void *reader(void *arg)
{
    io_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->q_head && !p->quit) pthread_cond_wait(&p->work, &p->mu);
        if (p->quit) break;
        if (p->yield_to && atomic_load(&p->yield_to->outstanding) > 0) {
            /* the other pool's reads are on the critical path: let them
             * have the device, and look again shortly */
            pthread_mutex_unlock(&p->mu);
            nanosleep(&(struct timespec){ 0, 100000 }, NULL);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        io_req *r = p->q_head;
        p->q_head = r->next;
        if (!p->q_head) p->q_tail = NULL;
        busy_start(&p->busy);
        if (p->busy.n > p->c.max_depth) p->c.max_depth = p->busy.n;
        pthread_mutex_unlock(&p->mu);
        do_read(r);
        pthread_mutex_lock(&p->mu);
        busy_stop(&p->busy);
        p->c.bytes[r->kind < IO_KINDS ? r->kind : 0] += r->got;
        p->c.reads++;
        atomic_fetch_sub(&p->outstanding, 1);
        r->next = p->done_head;
        p->done_head = r;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

io_pool *io_pool_new(int threads)
{
    io_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    p->th = calloc((size_t)threads, sizeof *p->th);
    if (!p->th) { free(p); return NULL; }
    /* readers only call pread: a small stack keeps the RAM overhead small */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&p->th[i], &attr, reader, p)) break;
        p->nthreads++;
    }
    pthread_attr_destroy(&attr);
    if (!p->nthreads) { io_pool_free(p); return NULL; }
    return p;
}

void io_pool_free(io_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++) pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p->th);
    free(p);
}

void io_submit(io_pool *p, io_req *r)
{
    r->next = NULL;
    r->err = 0;
    r->got = 0;
    pthread_mutex_lock(&p->mu);
    if (p->q_tail) p->q_tail->next = r;
    else p->q_head = r;
    p->q_tail = r;
    p->pending++;
    atomic_fetch_add(&p->outstanding, 1);
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
}

void io_cancel_queued(io_pool *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->q_head) {
        io_req *r = p->q_head;
        p->q_head = r->next;
        r->err = ECANCELED;
        r->got = 0;
        atomic_fetch_sub(&p->outstanding, 1);
        r->next = p->done_head;
        p->done_head = r;
    }
    p->q_tail = NULL;
    pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->mu);
}

io_req *io_wait_any(io_pool *p)
{
    pthread_mutex_lock(&p->mu);
    while (!p->done_head && p->pending > 0) pthread_cond_wait(&p->done, &p->mu);
    io_req *r = p->done_head;
    if (r) { p->done_head = r->next; p->pending--; }
    pthread_mutex_unlock(&p->mu);
    return r;
}

io_req *io_wait_any_for(io_pool *p, double seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);      /* pthread_cond_timedwait's clock */
    long ns = until.tv_nsec + (long)(seconds * 1e9);
    until.tv_sec += ns / 1000000000L;
    until.tv_nsec = ns % 1000000000L;
    pthread_mutex_lock(&p->mu);
    while (!p->done_head && p->pending > 0)
        if (pthread_cond_timedwait(&p->done, &p->mu, &until) == ETIMEDOUT) break;
    io_req *r = p->done_head;
    if (r) { p->done_head = r->next; p->pending--; }
    pthread_mutex_unlock(&p->mu);
    return r;
}

int io_pending(io_pool *p)
{
    pthread_mutex_lock(&p->mu);
    int n = p->pending;
    pthread_mutex_unlock(&p->mu);
    return n;
}

uint64_t io_peek_bytes(io_pool *p)
{
    pthread_mutex_lock(&p->mu);
    uint64_t n = 0;
    for (int k = 0; k < IO_KINDS; k++) n += p->c.bytes[k];
    pthread_mutex_unlock(&p->mu);
    return n;
}

io_req *io_try_any(io_pool *p)
{
    pthread_mutex_lock(&p->mu);
    io_req *r = p->done_head;
    if (r) { p->done_head = r->next; p->pending--; }
    pthread_mutex_unlock(&p->mu);
    return r;
}

void io_wait(io_pool *p, io_req *r)
{
    pthread_mutex_lock(&p->mu);
    for (;;) {
        io_req **pp = &p->done_head;
        while (*pp && *pp != r) pp = &(*pp)->next;
        if (*pp) { *pp = r->next; p->pending--; break; }
        pthread_cond_wait(&p->done, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
}

int io_threads(io_pool *p) { return p->nthreads; }

void io_pool_yield_to(io_pool *p, io_pool *other)
{
    pthread_mutex_lock(&p->mu);
    p->yield_to = other;
    pthread_mutex_unlock(&p->mu);
}

io_counters io_take_counters(io_pool *p)
{
    pthread_mutex_lock(&p->mu);
    io_counters c = p->c;
    c.busy_seconds = busy_take(&p->busy);
    memset(&p->c, 0, sizeof p->c);
    pthread_mutex_unlock(&p->mu);
    return c;
}
