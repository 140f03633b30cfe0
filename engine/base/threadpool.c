/* threadpool.c — the compute pool behind pool_for (see threadpool.h).
 *
 * One job runs at a time. The caller publishes the job (function, range,
 * chunk count) and bumps a generation counter; workers notice the new
 * generation, then everyone — caller included — takes chunk numbers from an
 * atomic counter until none are left. The caller returns once every worker
 * has left the job.
 *
 * Workers and the waiting caller spin briefly before sleeping on a condition
 * variable: decode issues many small products back to back, and a sleeping
 * worker costs tens of microseconds to wake. The spin is short so an idle
 * pool does not steal CPU from the rest of the program.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "base/threadpool.h"

#define POOL_MAX_THREADS 256
/* Chunks per thread: more than one so a thread that is descheduled (the
 * cores may be shared) does not hold everyone up. */
#define POOL_CHUNKS_PER_THREAD 8
#define POOL_SPIN 4096

static struct {
    pthread_mutex_t lock;        /* guards sleeping on wake/done, stop */
    pthread_cond_t wake, done;
    pthread_mutex_t busy;        /* held by the thread running a pool_for */
    pthread_t *workers;
    int nworkers;                /* threads besides the caller */
    int running;
    int stop;
    atomic_uint gen;             /* bumped for each job */
    atomic_int next;             /* next chunk to take */
    atomic_int active;           /* workers still inside the current job */
    /* the current job, written before gen is bumped */
    void (*fn)(void *, int, int);
    void *ud;
    int n, chunk, nchunks;
} P = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
    .busy = PTHREAD_MUTEX_INITIALIZER,
};

/* Set in pool workers and in a caller while it runs chunks: a pool_for made
 * from there runs inline. */
static __thread int in_pool_task;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void run_chunks(void)
{
    int i;
    while ((i = atomic_fetch_add(&P.next, 1)) < P.nchunks) {
        int b = i * P.chunk;
        int e = b + P.chunk < P.n ? b + P.chunk : P.n;
        P.fn(P.ud, b, e);
    }
}

static void *worker_main(void *arg)
{
    in_pool_task = 1;
    /* The generation at pool_init: a job may be posted before this thread
     * first runs, and it must still take part in it. */
    unsigned seen = (unsigned)(uintptr_t)arg;
    for (;;) {
        unsigned g = seen;
        for (int s = 0; s < POOL_SPIN && (g = atomic_load(&P.gen)) == seen; s++)
            cpu_relax();
        if (g == seen) {
            pthread_mutex_lock(&P.lock);
            while ((g = atomic_load(&P.gen)) == seen && !P.stop)
                pthread_cond_wait(&P.wake, &P.lock);
            int stop = P.stop;
            pthread_mutex_unlock(&P.lock);
            if (stop) break;
        }
        seen = g;
        run_chunks();
        if (atomic_fetch_sub(&P.active, 1) == 1) {
            pthread_mutex_lock(&P.lock);
            pthread_cond_signal(&P.done);
            pthread_mutex_unlock(&P.lock);
        }
    }
    return NULL;
}

/* The cores this process may run on (taskset, a cgroup's cpuset), not all
 * the machine's: a pool wider than them spins and wakes against itself.
 * Two `remora run --chat` of the embedded model at once, each held to one
 * core of the two (taskset), took 5.2-5.8 s and 5.0-5.7 CPU-s each with
 * the machine's two threads, against 1.7-1.8 s and 1.4-1.6 CPU-s with one
 * (two runs of each pair). */
static int usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (int)c : 1;
}

int pool_init(int nthreads)
{
    if (P.running) return 0;
    if (nthreads <= 0) nthreads = usable_cores();
    if (nthreads > POOL_MAX_THREADS) nthreads = POOL_MAX_THREADS;
    P.stop = 0;
    P.nworkers = 0;
    P.running = 1;
    if (nthreads == 1) return 0;
    P.workers = calloc((size_t)nthreads - 1, sizeof *P.workers);
    if (!P.workers) return -1;
    for (int i = 0; i < nthreads - 1; i++) {
        void *gen = (void *)(uintptr_t)atomic_load(&P.gen);
        if (pthread_create(&P.workers[i], NULL, worker_main, gen) != 0)
            return -1;          /* the workers started so far still serve */
        P.nworkers++;
    }
    return 0;
}

void pool_free(void)
{
    if (!P.running) return;
    pthread_mutex_lock(&P.busy);         /* wait out a job in flight */
    pthread_mutex_lock(&P.lock);
    P.stop = 1;
    pthread_cond_broadcast(&P.wake);
    pthread_mutex_unlock(&P.lock);
    for (int i = 0; i < P.nworkers; i++)
        pthread_join(P.workers[i], NULL);
    free(P.workers);
    P.workers = NULL;
    P.nworkers = 0;
    P.running = 0;
    pthread_mutex_unlock(&P.busy);
}

int pool_threads(void)
{
    return P.nworkers + 1;
}

void pool_set_threads(int n)
{
    pool_free();
    pool_init(n < 1 ? 1 : n);
}

void pool_for(int n, void (*fn)(void *ud, int begin, int end), void *ud)
{
    if (n <= 0) return;
    if (in_pool_task || P.nworkers == 0 || n == 1 || pthread_mutex_trylock(&P.busy) != 0) {
        fn(ud, 0, n);
        return;
    }
    int want = (P.nworkers + 1) * POOL_CHUNKS_PER_THREAD;
    P.fn = fn;
    P.ud = ud;
    P.n = n;
    P.chunk = (n + want - 1) / want;
    P.nchunks = (n + P.chunk - 1) / P.chunk;
    atomic_store(&P.next, 0);
    atomic_store(&P.active, P.nworkers);
    pthread_mutex_lock(&P.lock);
    atomic_fetch_add(&P.gen, 1);         /* publishes the job fields above */
    pthread_cond_broadcast(&P.wake);
    pthread_mutex_unlock(&P.lock);

    in_pool_task = 1;
    run_chunks();
    in_pool_task = 0;

    for (int s = 0; s < POOL_SPIN && atomic_load(&P.active) > 0; s++)
        cpu_relax();
    if (atomic_load(&P.active) > 0) {
        pthread_mutex_lock(&P.lock);
        while (atomic_load(&P.active) > 0)
            pthread_cond_wait(&P.done, &P.lock);
        pthread_mutex_unlock(&P.lock);
    }
    pthread_mutex_unlock(&P.busy);
}
