/* tasks.c — a bounded pool of threads over an index range (tasks.h). Threads
 * take the next index from a shared counter, so slow items do not hold up
 * the others; the pool lives for one call. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "base/tasks.h"

typedef struct tasks_ctx {
    int (*fn)(void *, int, int, rm_err *);
    void (*on_fail)(void *, const char *);
    void *ud;
    int n, next, failed;
    pthread_mutex_t mu;
    rm_err err;
} tasks_ctx;

typedef struct tasks_arg { tasks_ctx *p; int worker; } tasks_arg;

static void *tasks_worker(void *arg)
{
    tasks_arg *a = arg;
    tasks_ctx *p = a->p;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        int i = p->failed || p->next >= p->n ? -1 : p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i < 0) break;
        rm_err e = { "" };
        if (p->fn(p->ud, i, a->worker, &e)) {
            pthread_mutex_lock(&p->mu);
            int first = !p->failed;
            if (first) { p->failed = 1; p->err = e; }
            pthread_mutex_unlock(&p->mu);
            /* items failing because of this cancel keep the first message */
            if (first && p->on_fail) p->on_fail(p->ud, e.msg);
            break;
        }
    }
    return NULL;
}

int tasks_for_cancel(int n, int threads, int (*fn)(void *ud, int i, int worker, rm_err *err), void *ud,
                     void (*on_fail)(void *ud, const char *why), rm_err *err)
{
    if (threads < 1) threads = 1;
    if (threads > n) threads = n > 0 ? n : 1;
    tasks_ctx p = { fn, on_fail, ud, n, 0, 0, PTHREAD_MUTEX_INITIALIZER, { "" } };
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    tasks_arg *args = calloc((size_t)threads, sizeof *args);
    if (!th || !args) { free(th); free(args); return rm_errf(err, "out of memory"); }
    int started = 0;
    for (int t = 0; t < threads; t++) {
        args[t] = (tasks_arg){ &p, t };
        if (pthread_create(&th[t], NULL, tasks_worker, &args[t])) break;
        started++;
    }
    if (!started) { args[0] = (tasks_arg){ &p, 0 }; tasks_worker(&args[0]); }
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    free(th);
    free(args);
    pthread_mutex_destroy(&p.mu);
    if (p.failed) { if (err) *err = p.err; return -1; }
    return 0;
}
