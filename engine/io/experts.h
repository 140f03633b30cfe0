/* experts.h — the routed experts: where each one's bytes are, a cache of
 * expert-sized slots in the RAM left by the spine, and parallel reads that
 * the MoE layer consumes in expert order as they arrive.
 *
 * A MoE layer asks for its chosen experts with experts_begin(); hits are
 * pinned at once, misses are read by the expert reader pool into slots freed
 * by the eviction policy, in batch order, as many at once as slots allow;
 * experts_wait() hands back the entries in batch order, each as soon as its
 * bytes are present; experts_done() unpins it, which lets another read
 * start.
 */
#ifndef REMORA_EXPERTS_H
#define REMORA_EXPERTS_H
#include <pthread.h>
#include <stdatomic.h>
#include "io/store.h"


typedef struct expert_loc {
    int shard;
    int nparts;                 /* 1: the whole expert is one span */
    uint64_t off[6], len[6];    /* aligned spans to read */
    size_t buf_off[6];          /* where each span lands in the slot */
    size_t rel_w[3], rel_s[3];  /* gate, up, down: data and scales in the slot */
    uint64_t bytes;             /* Σ len */
    uint64_t raw_bytes;         /* the expert's own bytes (without alignment) */
} expert_loc;

enum { SLOT_FREE, SLOT_LOADING, SLOT_READY };

/* a slot's memory: not yet faulted in, being faulted in by the populator,
 * faulted in, or taken by the cache before the populator reached it */
enum { MEM_UNTOUCHED, MEM_POPULATING, MEM_READY, MEM_TAKEN };

typedef struct expert_slot {
    uint8_t *buf;
    atomic_int mem;
    int key;                    /* layer * E + expert, or -1 */
    int state, pins, outstanding, failed, prefetched;
    double score;               /* decayed use count */
    uint64_t last_tick;
    io_req reqs[6];
} expert_slot;

/* Stream mode: experts whose bytes are not in the local shards are read by
 * `read` on a reader thread instead of pread. It gets the request of one
 * span (r->tag is the expert_slot, whose key = layer * E + expert; r->off and
 * r->len are the span in the shard, r->dst where it goes) and must fill it
 * exactly as a local read would, setting r->got and r->err. `is_local` says
 * whether an expert's bytes can be pread from the shards as they are; `why`
 * explains a failed read. */
typedef struct expert_remote {
    void (*read)(io_req *r, void *ctx);
    int  (*is_local)(void *ctx, int key);
    /* why the last read of `key` failed (e.g. the URL and the HTTP error),
     * or "" when it does not know */
    void (*why)(void *ctx, int key, char *buf, size_t cap);
    void *ctx;
    /* ends every download under way or queued at once (a read failed and
     * the pass is given up); may be NULL */
    void (*cancel)(void *ctx, const char *why);
} expert_remote;

#define EXP_MAX_BATCH 4096

typedef struct expert_cache {
    store *st;
    const mlp_weights **table;  /* [L]: the E experts of layer l, NULL if not MoE */
    io_pool *io;
    int L, E;
    expert_loc *loc;            /* [L*E]; nparts 0 for non-MoE layers */
    expert_slot *slots;
    int nslots;
    uint8_t *slot_mem;          /* one mapping for all slots */
    /* a background thread faults the slots in ahead of use (reads into
     * untouched pages are several times slower) */
    pthread_t populator;
    int populating;
    atomic_int stop_populating;
    size_t slot_size;
    int *where;                 /* [L*E] slot or -1 */
    uint64_t tick;              /* advances once per token */
    double decay;
    /* the batch of one MoE layer */
    int b_layer, b_n;
    int b_ids[EXP_MAX_BATCH], b_slot[EXP_MAX_BATCH];
    unsigned char b_state[EXP_MAX_BATCH];   /* 0 waiting for a slot, 1 pinned, 2 computed */
    /* counters since the model last took them (model_take_stats, counters.c) */
    uint64_t hits, misses, bytes_hit, prefetch_issued, prefetch_used;
    uint64_t *layer_miss_bytes;     /* L entries: bytes of the experts each layer missed */
    uint8_t  *found;                /* L*E: how each expert was found at its last lookup (RM_ROUTE_*) */
    int resident;               /* experts READY now */
    expert_remote remote;       /* stream mode; all NULL for a local model */
} expert_cache;

/* Indexes the experts of `table` ([layers]: the `experts` weights of each MoE
 * layer, NULL for the others; the cache keeps a copy of the pointers) and
 * starts the expert reader pool. */
int  experts_init(expert_cache *c, store *st, int layers, int experts, const mlp_weights *const *table,
                  int io_threads, rm_err *err);
void experts_free(expert_cache *c);
/* Bytes one slot needs; the minimum cache is topk slots. */
size_t experts_slot_bytes(const expert_cache *c);
/* Returns when the populator has faulted in every slot (at once if none
 * runs). */
void experts_wait_populated(expert_cache *c);
/* Allocates as many slots as `bytes` allows (at least one, at most all). */
int  experts_alloc(expert_cache *c, uint64_t bytes, rm_err *err);

int  experts_begin(expert_cache *c, int layer, const int *ids, int n, rm_err *err);
/* Waits until entry idx of the batch has its bytes and binds its weights
 * into *w. A layer takes its entries in batch order (experts_begin's ids, in
 * expert order), so the sum over a row's experts has one order whatever the
 * cache held; the reads of the later entries go on meanwhile. Returns 0, 1
 * when *stop (may be NULL) became non-zero while waiting, -1 on a read
 * error. */
int  experts_wait(expert_cache *c, int idx, mlp_weights *w, volatile int *stop, rm_err *err);
void experts_done(expert_cache *c, int idx);
/* Binds entry idx's weights into *w if its bytes are in already, without
 * waiting or taking it (experts_wait still does): 1 if bound, 0 if not
 * (yet). Its slot stays pinned until experts_done(idx), so *w's memory is
 * valid until then. */
int  experts_peek(const expert_cache *c, int idx, mlp_weights *w);
/* Ends the batch early (a stop): unpins what it held; reads in flight land
 * in their slots as usual. */
void experts_abort(expert_cache *c);
/* Starts background reads for experts likely to be used next (best effort:
 * only into free slots or slots colder than the expert). */
void experts_prefetch(expert_cache *c, int layer, const int *ids, int n);
void experts_tick(expert_cache *c);
/* What reading expert `key` (layer * E + expert) would cost now: 0 when it
 * is resident or already being read, else its bytes. */
uint64_t experts_missing_bytes(const expert_cache *c, int key);
/* The device's random-read bandwidth in GB/s at the cache's block size (one
 * expert) and queue depth (its reader threads), measured for about `seconds`
 * by reading random experts stored in the shards as one span (device.c). */
double device_bench(expert_cache *c, double seconds, int *block_bytes, int *queue_depth, rm_err *err);

#endif
