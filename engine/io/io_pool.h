/* io_pool.h — a fixed pool of reader threads doing positioned reads.
 *
 * The engine submits reads (a descriptor, a span, a destination buffer) and
 * carries on computing; io_wait_any() hands back completed reads one at a
 * time, so the caller can compute each expert as soon as its bytes arrive.
 * The pool counts what it really read and the wall time during which at
 * least one read was in flight, which gives the achieved bandwidth.
 */
#ifndef REMORA_IO_POOL_H
#define REMORA_IO_POOL_H
#include <stdint.h>
#include <stddef.h>

typedef struct io_req {
    int fd;
    uint64_t off;           /* aligned to the block size for O_DIRECT fds */
    size_t len;
    void *dst;
    void *tag;              /* caller's: what this read is for */
    int kind;               /* caller's accounting class (spine, expert, ...) */
    /* optional: a reader other than pread (e.g. fetch over HTTP into the
     * disk cache, then read); it fills got and err like pread would */
    void (*read_fn)(struct io_req *r, void *ctx);
    void *read_ctx;
    /* set by the pool */
    int err;                /* errno, or -1 for a short read */
    size_t got;
    struct io_req *next;
} io_req;

typedef struct io_pool io_pool;

io_pool *io_pool_new(int threads);
void     io_pool_free(io_pool *p);
void     io_submit(io_pool *p, io_req *r);
/* Waits for any completed read of this pool; NULL when none is pending. */
io_req  *io_wait_any(io_pool *p);
/* A completed read if one is there, else NULL at once. */
io_req  *io_try_any(io_pool *p);
/* io_wait_any that gives up after `seconds` (NULL then, as when nothing is
 * pending), so a waiter can look at a stop flag. */
io_req  *io_wait_any_for(io_pool *p, double seconds);
/* Reads submitted and not yet collected. */
int      io_pending(io_pool *p);
/* Bytes read since the last io_take_counters, without taking them. */
uint64_t io_peek_bytes(io_pool *p);
/* Waits until the given request has completed (it is then not returned by
 * io_wait_any). */
void     io_wait(io_pool *p, io_req *r);
int      io_threads(io_pool *p);
/* Completes every submitted read not yet started at once, with err
 * ECANCELED and nothing read (reads already running go on to their end):
 * after a failure nothing queued behind it is read for nothing. */
void     io_cancel_queued(io_pool *p);
/* Makes p's readers hold back while `other` has reads submitted and not
 * done: expert reads are waited for now, spine read-ahead only later. */
void     io_pool_yield_to(io_pool *p, io_pool *other);

/* One block of a read-rate probe. */
typedef struct io_span {
    int fd;
    uint64_t off;
    size_t len;
} io_span;
/* The device's read rate in GB/s (device.c): reads of spans chosen at
 * random (in_order: one after the other, as the spine streams),
 * io_threads(p) in flight, for about `seconds`, into buffers of buf_bytes
 * (>= every span's length); -1 with err filled on failure. */
struct rm_err;
double   io_read_rate(io_pool *p, const io_span *spans, int nspans, int in_order, size_t buf_bytes, double seconds,
                      struct rm_err *err);

#define IO_KINDS 4
typedef struct io_counters {
    uint64_t bytes[IO_KINDS];   /* bytes read per kind */
    uint64_t reads;
    double   busy_seconds;      /* wall time with >= 1 read in flight */
    int      max_depth;         /* most reads in flight at once */
} io_counters;
/* Returns the counters accumulated since the last call and resets them. */
io_counters io_take_counters(io_pool *p);

#endif
