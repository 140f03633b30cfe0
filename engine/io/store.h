/* store.h — where the weights live under a RAM budget.
 *
 * Nothing is memory-mapped: every weight byte the forward pass touches was
 * read by us, through the reader pool, with O_DIRECT where the filesystem
 * allows it, so the byte counters are what the device delivered.
 *
 * The budget goes first to the spine — per layer, every matrix that every
 * token uses (attention, router, shared experts, latent projections; the
 * final norm and lm_head form one more unit) — in layer order, then to the
 * expert cache (experts.h). Spine units that do not fit are streamed through
 * a ring buffer: while one unit computes, the units after it are read, as
 * many as the ring holds, so the device never waits for the arithmetic.
 */
#ifndef REMORA_STORE_H
#define REMORA_STORE_H
#include "format/weights.h"
#include "io/io_pool.h"
#include "base/align.h"

enum { IO_SPINE = 0, IO_EXPERT = 1, IO_PREFETCH = 2, IO_OTHER = 3 };

typedef struct spine_run {          /* one read: an aligned span of one shard */
    int shard;
    uint64_t off, len;              /* aligned */
    size_t buf_off;                 /* where it lands in the unit buffer */
} spine_run;

typedef struct spine_bind {         /* a matrix to re-point when the buffer moves */
    wmat *m;
    size_t rel_w, rel_scale;
} spine_bind;

typedef struct spine_unit {
    spine_run *runs;
    int nruns, runs_cap;
    spine_bind *binds;
    int nbinds, binds_cap;
    size_t bytes;                   /* buffer size = Σ run lengths */
    uint8_t *buf;                   /* resident copy, or NULL if streamed */
    /* streamed */
    io_req *reqs;                   /* its reads, one per run */
    int in_ring;                    /* its bytes are in (or on their way to) the ring */
    int waited;                     /* its reads have been collected */
    size_t ring_off;
} spine_unit;

typedef struct store {
    st_set *st;
    int *fds;                       /* per shard: O_DIRECT if possible */
    int direct;                     /* all fds are O_DIRECT */
    io_pool *io;
    int nunits;                     /* layers + 1 (the head) */
    int units_cap;
    spine_unit *units;
    /* budget */
    uint64_t budget;                /* bytes for spine + expert cache */
    uint64_t spine_total, spine_resident;
    /* streaming: units in the ring, oldest first, in use order */
    uint8_t *ring;
    size_t ring_size;
    int *rq;                        /* unit ids, a circular FIFO of nunits */
    int rq_head, rq_n;
    int streamed;                   /* number of streamed units */
    uint64_t bytes_other;           /* embedding rows and similar small reads */
} store;

/* Opens the fds and the reader pool; units are described by store_add_mat
 * while the model binds its weights, then store_plan reads the resident ones. */
int  store_init(store *s, st_set *st, int io_threads, rm_err *err);
void store_free(store *s);
/* Registers matrix m (already bound to file offsets by wmat_get) with unit u. */
int  store_add_mat(store *s, int u, wmat *m, rm_err *err);
/* Decides which units are resident given `budget` bytes, leaving at least
 * `min_cache` for experts; reads the resident ones. Returns the bytes left
 * for the expert cache. */
int  store_plan(store *s, uint64_t budget, uint64_t min_cache, uint64_t *cache_bytes, rm_err *err);
/* Makes unit u's matrices usable (waits for or issues its read), and starts
 * reading the next streamed unit in use order. */
int  store_unit_begin(store *s, int u, rm_err *err);
/* Whether unit u's weights are bound for good (resident, or it has none):
 * a streamed unit's are only between its store_unit_begin and the ring
 * reusing its space. */
int  store_unit_resident(const store *s, int u);
/* The device's rate for the spine as the ring reads it: every unit's runs
 * (READ_CHUNK pieces, in use order) read in order through the store's
 * reader pool for about `seconds` (io_read_rate, the loop of the forecast's
 * in-order probe). The ring is emptied first (its next use starts again
 * from the unit asked for). Returns GB/s, or -1. */
double store_bench(store *s, double seconds, rm_err *err);
/* Reads one embedding row into dst (fp32). */
int  store_embed_row(store *s, const wmat *embed, int row, float *dst, rm_err *err);
/* The smallest budget store_plan accepts for this model with `min_cache`. */
uint64_t store_min_budget(const store *s, uint64_t min_cache);

/* The planner's decision alone, from the units' sizes in use order (a size
 * of 0: a unit with nothing to read): store_plan takes it for the model it
 * opens, the forecast (tools/forecast.c) for a model it has not downloaded,
 * so both decide alike. resident (may be NULL) gets one flag per unit.
 * Returns -1 when the budget is below the minimum (*d still filled). */
typedef struct store_decision {
    uint64_t total, largest;        /* spine bytes; the largest unit */
    uint64_t resident;              /* bytes of the resident units */
    uint64_t ring;                  /* the stream ring (0: nothing streamed) */
    uint64_t min_budget;            /* what store_min_budget says */
    uint64_t cache;                 /* bytes left for the expert cache */
    int streamed;                   /* units streamed */
} store_decision;
int store_decide(const uint64_t *unit_bytes, int n, uint64_t budget, uint64_t min_cache, unsigned char *resident,
                 store_decision *d);

#endif
