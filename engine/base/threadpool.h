/* threadpool.h — the compute pool: a fixed set of persistent worker threads
 * that split loops over rows between them (the kernels use it for large
 * matrix-vector and matrix-matrix products).
 *
 * pool_for(n, fn, ud) cuts [0, n) into contiguous chunks, hands them to the
 * workers and to the calling thread, and returns when every chunk is done.
 * A call made from inside a pool task, from a second thread while the pool is
 * busy, or before pool_init runs the whole range on the caller, so nested or
 * concurrent use never deadlocks. Callers must make their results independent
 * of how the range is cut (the kernels compute each row on one thread in a
 * fixed order, so their output does not depend on the thread count).
 */
#ifndef REMORA_THREADPOOL_H
#define REMORA_THREADPOOL_H

/* Starts the pool with nthreads threads in all, the caller included
 * (0 = the CPUs this process may run on). Idempotent: a second call while the pool runs
 * does nothing. Returns 0, or -1 when a thread cannot be started (the pool
 * then runs everything on the caller). */
int  pool_init(int nthreads);
/* Stops and joins the workers. */
void pool_free(void);
/* Runs fn(ud, begin, end) over contiguous chunks covering [0, n). */
void pool_for(int n, void (*fn)(void *ud, int begin, int end), void *ud);
/* Threads taking part in pool_for, the caller included (1 without a pool). */
int  pool_threads(void);
/* Restarts the pool with n threads (benchmarks); not while a pool_for runs. */
void pool_set_threads(int n);

#endif
