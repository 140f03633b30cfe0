/* experts.c — expert spans, the slot cache and its reads (experts.h).
 *
 * Spans. In K3 the six tensors of an expert (w1, w2, w3 packed and scale)
 * lie back to back, so the expert is one aligned read; this is verified at
 * load from the tensor offsets, and an expert whose tensors are not
 * contiguous (Kimi-Linear's bf16 experts may be) is read per tensor.
 *
 * Policy. Routing is load-balanced by training, so recency alone keeps
 * little; each expert's score is its use count decayed by `decay` per token,
 * which keeps the experts a conversation keeps coming back to and lets
 * one-off uses fade. The victim is a free slot, else the unpinned slot with
 * the lowest decayed score (the least recently used on ties).
 *
 * Counting. A hit is an expert whose bytes were present when the layer
 * asked (a read still in flight from a prefetch counts as a miss, and its
 * bytes were counted when read); bytes read are counted by the reader pool,
 * so they agree with what the kernel reports for the process.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "io/experts.h"
#include "base/pages.h"

/* Fills loc from the expert's matrices (gate, up, down). */
static void locate(expert_loc *loc, const mlp_weights *x)
{
    const wmat *m3[3] = { &x->gate, &x->up, &x->down };
    uint64_t beg[6], end[6];
    int n = 0;
    uint64_t raw = 0;
    for (int i = 0; i < 3; i++) {
        uint64_t scale_bytes;
        beg[n] = m3[i]->off;
        end[n++] = m3[i]->off + wmat_bytes(m3[i], &scale_bytes);
        if (m3[i]->kind == WM_MXFP4) {
            beg[n] = m3[i]->scale_off;
            end[n++] = m3[i]->scale_off + scale_bytes;
        }
    }
    uint64_t lo = beg[0], hi = end[0];
    for (int i = 0; i < n; i++) {
        raw += end[i] - beg[i];
        if (beg[i] < lo) lo = beg[i];
        if (end[i] > hi) hi = end[i];
    }
    loc->shard = x->gate.shard;
    loc->raw_bytes = raw;
    int same_shard = x->up.shard == loc->shard && x->down.shard == loc->shard;
    if (same_shard && hi - lo == raw) {          /* contiguous: one read */
        loc->nparts = 1;
        loc->off[0] = rm_align_down(lo);
        loc->len[0] = rm_align_up(hi) - loc->off[0];
        loc->buf_off[0] = 0;
    } else {
        loc->nparts = n;
        size_t pos = 0;
        for (int i = 0; i < n; i++) {
            loc->off[i] = rm_align_down(beg[i]);
            loc->len[i] = rm_align_up(end[i]) - loc->off[i];
            loc->buf_off[i] = pos;
            pos += loc->len[i];
        }
    }
    loc->bytes = 0;
    for (int i = 0; i < loc->nparts; i++) loc->bytes += loc->len[i];
    /* where each matrix lands in the slot */
    for (int i = 0; i < 3; i++) {
        for (int p = 0; p < loc->nparts; p++) {
            uint64_t o = loc->off[p], e = o + loc->len[p];
            if (m3[i]->off >= o && m3[i]->off < e) loc->rel_w[i] = loc->buf_off[p] + (m3[i]->off - o);
            if (m3[i]->kind == WM_MXFP4 && m3[i]->scale_off >= o && m3[i]->scale_off < e)
                loc->rel_s[i] = loc->buf_off[p] + (m3[i]->scale_off - o);
        }
    }
}

int experts_init(expert_cache *c, store *st, int layers, int experts, const mlp_weights *const *table,
                 int io_threads, rm_err *err)
{
    memset(c, 0, sizeof *c);
    c->st = st;
    c->L = layers;
    c->E = experts;
    c->decay = 0.97;
    if (!c->E) return 0;
    size_t n = (size_t)c->L * c->E;
    c->loc = calloc(n, sizeof *c->loc);
    c->where = malloc(n * sizeof *c->where);
    c->table = malloc((size_t)c->L * sizeof *c->table);
    c->layer_miss_bytes = calloc((size_t)c->L, sizeof *c->layer_miss_bytes);
    c->found = calloc(n, sizeof *c->found);
    if (!c->loc || !c->where || !c->table || !c->layer_miss_bytes || !c->found)
        return rm_errf(err, "out of memory for the expert index");
    for (size_t i = 0; i < n; i++) c->where[i] = -1;
    for (int l = 0; l < c->L; l++) {
        c->table[l] = table[l];
        if (!table[l]) continue;
        for (int e = 0; e < c->E; e++) {
            expert_loc *loc = &c->loc[(size_t)l * c->E + e];
            locate(loc, &table[l][e]);
            if (loc->bytes > c->slot_size) c->slot_size = loc->bytes;
        }
    }
    if (!(c->io = io_pool_new(io_threads > 0 ? io_threads : 8)))
        return rm_errf(err, "cannot start the expert reader threads");
    return 0;
}

void experts_free(expert_cache *c)
{
    if (c->populating) {
        atomic_store(&c->stop_populating, 1);
        pthread_join(c->populator, NULL);
    }
    if (c->io) {
        while (io_wait_any(c->io)) {}
        io_pool_free(c->io);
    }
    if (c->slot_mem) munmap(c->slot_mem, (size_t)c->nslots * c->slot_size);
    free(c->slots);
    free(c->loc);
    free(c->where);
    free(c->table);
    free(c->layer_miss_bytes);
    free(c->found);
    memset(c, 0, sizeof *c);
}

size_t experts_slot_bytes(const expert_cache *c) { return c->slot_size; }

void experts_wait_populated(expert_cache *c)
{
    if (!c->populating) return;
    pthread_join(c->populator, NULL);
    c->populating = 0;
}

/* Faults the slots in, in index order (the order free slots are taken). */
static void *populate(void *arg)
{
    expert_cache *c = arg;
    /* only idle CPU: decoding must not wait for this */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
    for (int i = 0; i < c->nslots && !atomic_load(&c->stop_populating); i++) {
        int expect = MEM_UNTOUCHED;
        if (!atomic_compare_exchange_strong(&c->slots[i].mem, &expect, MEM_POPULATING)) continue;
        volatile uint8_t *p = c->slots[i].buf;
        for (size_t o = 0; o < c->slot_size; o += 4096) p[o] = 0;
        atomic_store(&c->slots[i].mem, MEM_READY);
    }
    return NULL;
}

int experts_alloc(expert_cache *c, uint64_t bytes, rm_err *err)
{
    if (!c->E) return 0;
    uint64_t n = c->slot_size ? bytes / c->slot_size : 0;
    uint64_t all = 0;
    for (int l = 0; l < c->L; l++) all += c->table[l] ? (uint64_t)c->E : 0;
    if (n > all) n = all;
    if (n < 1) n = 1;
    c->slots = calloc((size_t)n, sizeof *c->slots);
    if (!c->slots) return rm_errf(err, "out of memory for the expert cache");
    void *mem = mmap(NULL, (size_t)n * c->slot_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return rm_errf(err, "out of memory: cannot take %.2f GB for %llu expert slots", (double)n * c->slot_size / 1e9,
                       (unsigned long long)n);
    rm_pages_hint(mem, (size_t)n * c->slot_size);
    c->slot_mem = mem;
    for (uint64_t i = 0; i < n; i++) {
        c->slots[i].key = -1;
        c->slots[i].buf = c->slot_mem + i * c->slot_size;
    }
    c->nslots = (int)n;
    c->populating = pthread_create(&c->populator, NULL, populate, c) == 0;
    return 0;
}

static double eff_score(const expert_cache *c, const expert_slot *s)
{
    return s->score * pow(c->decay, (double)(c->tick - s->last_tick));
}

static void touch(expert_cache *c, expert_slot *s)
{
    s->score = eff_score(c, s) + 1.0;
    s->last_tick = c->tick;
}

/* A slot to (re)use, or -1 when all are pinned or loading. With max_score
 * >= 0 only victims colder than that qualify (prefetch). */
static int victim(expert_cache *c, double max_score)
{
    int best = -1, spare = -1;
    double bs = 0;
    for (int i = 0; i < c->nslots; i++) {
        expert_slot *s = &c->slots[i];
        if (s->state == SLOT_FREE) {
            int mem = atomic_load(&s->mem);
            if (mem == MEM_READY || mem == MEM_TAKEN) return i;
            if (mem == MEM_UNTOUCHED) spare = i;      /* the last one: furthest from the populator */
            continue;
        }
        if (s->pins || s->state == SLOT_LOADING) continue;
        double sc = eff_score(c, s);
        if (best < 0 || sc < bs || (sc == bs && s->last_tick < c->slots[best].last_tick)) { best = i; bs = sc; }
    }
    if (best >= 0 && (max_score < 0 || bs < max_score)) return best;
    /* no faulted-in slot to reuse: take one the populator has not reached */
    if (spare >= 0 && max_score < 0) {
        int expect = MEM_UNTOUCHED;
        if (atomic_compare_exchange_strong(&c->slots[spare].mem, &expect, MEM_TAKEN)) return spare;
    }
    return -1;
}

static void start_read(expert_cache *c, int si, int key, int kind)
{
    expert_slot *s = &c->slots[si];
    if (s->key >= 0) { c->where[s->key] = -1; if (s->state == SLOT_READY) c->resident--; }
    const expert_loc *loc = &c->loc[key];
    s->key = key;
    s->state = SLOT_LOADING;
    s->failed = 0;
    s->outstanding = loc->nparts;
    s->prefetched = kind == IO_PREFETCH;
    c->where[key] = si;
    const int remote = c->remote.read && !c->remote.is_local(c->remote.ctx, key);
    for (int p = 0; p < loc->nparts; p++) {
        s->reqs[p] = (io_req){ c->st->fds[loc->shard], loc->off[p], loc->len[p], s->buf + loc->buf_off[p],
                               s, kind, remote ? c->remote.read : NULL, remote ? c->remote.ctx : NULL, 0, 0, NULL };
        io_submit(c->io, &s->reqs[p]);
    }
}

/* Handles one completed read; returns the slot when it became READY. */
static expert_slot *complete(expert_cache *c, io_req *r)
{
    expert_slot *s = r->tag;
    uint64_t fsize = c->st->st->shards[c->loc[s->key].shard].size;
    uint64_t want = r->off + r->len > fsize ? fsize - r->off : r->len;
    if (r->err > 0 || r->got < want) s->failed = 1;
    if (--s->outstanding > 0) return NULL;
    if (s->failed) {
        c->where[s->key] = -1;
        s->key = -1;
        s->state = SLOT_FREE;
        return s;
    }
    s->state = SLOT_READY;
    c->resident++;
    return s;
}

static void drain(expert_cache *c);

/* Starts reads for waiting batch entries while slots can be had. */
static void issue_waiting(expert_cache *c)
{
    for (int i = 0; i < c->b_n; i++) {
        if (c->b_state[i] != 0) continue;
        int key = c->b_layer * c->E + c->b_ids[i];
        int si = c->where[key];
        if (si >= 0) {                  /* loading already (prefetch), or read meanwhile */
            c->slots[si].pins++;
            c->b_slot[i] = si;
            c->b_state[i] = 1;
            continue;
        }
        si = victim(c, -1);
        if (si < 0) return;
        start_read(c, si, key, IO_EXPERT);
        c->slots[si].pins++;
        touch(c, &c->slots[si]);
        c->b_slot[i] = si;
        c->b_state[i] = 1;
    }
}

int experts_begin(expert_cache *c, int layer, const int *ids, int n, rm_err *err)
{
    if (n > EXP_MAX_BATCH) return rm_errf(err, "too many experts in one batch (%d)", n);
    drain(c);
    c->b_layer = layer;
    c->b_n = n;
    for (int i = 0; i < n; i++) {
        int key = layer * c->E + ids[i];
        c->b_ids[i] = ids[i];
        c->b_state[i] = 0;
        int si = c->where[key];
        if (si >= 0 && c->slots[si].state == SLOT_READY) {
            c->hits++;
            c->found[key] = RM_ROUTE_RESIDENT;
            c->bytes_hit += c->loc[key].bytes;
            if (c->slots[si].prefetched) { c->prefetch_used++; c->slots[si].prefetched = 0; }
            c->slots[si].pins++;
            touch(c, &c->slots[si]);
            c->b_slot[i] = si;
            c->b_state[i] = 1;
        } else {
            c->misses++;
            c->layer_miss_bytes[layer] += c->loc[key].bytes;
            c->found[key] = si >= 0 ? RM_ROUTE_INFLIGHT : RM_ROUTE_READ;
            if (si >= 0) { c->slots[si].prefetched = 0; c->prefetch_used++; }
        }
    }
    issue_waiting(c);
    return 0;
}

static void bind(expert_cache *c, int key, const expert_slot *s, mlp_weights *w)
{
    const expert_loc *loc = &c->loc[key];
    *w = c->table[key / c->E][key % c->E];
    wmat *m3[3] = { &w->gate, &w->up, &w->down };
    for (int i = 0; i < 3; i++) {
        m3[i]->w = s->buf + loc->rel_w[i];
        if (m3[i]->kind == WM_MXFP4) m3[i]->scale = s->buf + loc->rel_s[i];
    }
}

/* The message of a failed read of batch entry i; the pass is given up, so
 * nothing queued or downloading behind it is waited for. */
static int read_error(const expert_cache *c, int i, rm_err *err)
{
    const int key = c->b_layer * c->E + c->b_ids[i];
    const expert_loc *loc = &c->loc[key];
    char why[768] = "";
    if (c->remote.why) c->remote.why(c->remote.ctx, key, why, sizeof why);
    io_cancel_queued(c->io);
    if (c->remote.cancel) c->remote.cancel(c->remote.ctx, why[0] ? why : "another read failed");
    if (why[0]) return rm_errf(err, "expert %d of layer %d: %s", c->b_ids[i], c->b_layer, why);
    return rm_errf(err, "%s: reading expert %d of layer %d (%llu bytes at %llu) failed",
                   c->st->st->shards[loc->shard].path, c->b_ids[i], c->b_layer,
                   (unsigned long long)loc->bytes, (unsigned long long)loc->off[0]);
}

/* Entry idx waits for a slot that every other pinned entry holds: the hits
 * pinned at experts_begin can fill the cache when the layer needs more
 * experts than it has slots. The pinned, already-read entry computed last
 * (the highest index) lets go of its slot; it is read again when its turn
 * comes, which costs bytes but never stalls. Returns 0 when one was found. */
static int make_room(expert_cache *c, int idx)
{
    for (int j = c->b_n - 1; j > idx; j--) {
        if (c->b_state[j] != 1) continue;
        expert_slot *s = &c->slots[c->b_slot[j]];
        if (s->state != SLOT_READY) continue;
        if (s->pins > 0) s->pins--;
        c->b_state[j] = 0;
        return 0;
    }
    return -1;
}

int experts_wait(expert_cache *c, int idx, mlp_weights *w, volatile int *stop, rm_err *err)
{
    for (;;) {
        if (c->b_state[idx] == 0) {
            issue_waiting(c);
            if (c->b_state[idx] == 0 && io_pending(c->io) == 0 && make_room(c, idx)) {
                rm_errf(err, "expert cache deadlock: no slot free for layer %d", c->b_layer);
                return -1;
            }
            if (c->b_state[idx] == 0 && io_pending(c->io) == 0) continue;
        }
        if (c->b_state[idx] == 1) {
            expert_slot *s = &c->slots[c->b_slot[idx]];
            if (s->state == SLOT_READY) {
                c->b_state[idx] = 2;
                bind(c, c->b_layer * c->E + c->b_ids[idx], s, w);
                return 0;
            }
        }
        if (stop && *stop) return 1;
        /* a bounded wait, so a stop is seen within a tenth of a second even
         * when a read takes long (a slow disk or server) */
        io_req *r = io_wait_any_for(c->io, 0.1);
        if (!r) continue;
        expert_slot *s = complete(c, r);
        if (s && s->state == SLOT_FREE)     /* a failed read: fatal if this batch needs that expert */
            for (int i = 0; i < c->b_n; i++)
                if (c->b_state[i] == 1 && &c->slots[c->b_slot[i]] == s) return read_error(c, i, err);
    }
}

int experts_peek(const expert_cache *c, int idx, mlp_weights *w)
{
    if (idx < 0 || idx >= c->b_n || c->b_state[idx] != 1 || c->slots[c->b_slot[idx]].state != SLOT_READY) return 0;
    bind((expert_cache *)c, c->b_layer * c->E + c->b_ids[idx], &c->slots[c->b_slot[idx]], w);
    return 1;
}

void experts_abort(expert_cache *c)
{
    for (int i = 0; i < c->b_n; i++)
        if (c->b_state[i] == 1) {
            expert_slot *s = &c->slots[c->b_slot[i]];
            if (s->pins > 0) s->pins--;
        }
    c->b_n = 0;
}

void experts_done(expert_cache *c, int idx)
{
    expert_slot *s = &c->slots[c->b_slot[idx]];
    if (s->pins > 0) s->pins--;
    issue_waiting(c);
}

void experts_prefetch(expert_cache *c, int layer, const int *ids, int n)
{
    for (int i = 0; i < n; i++) {
        int key = layer * c->E + ids[i];
        if (c->where[key] >= 0) continue;
        int si = victim(c, 1.0);    /* never evict an expert used more than once lately */
        if (si < 0) return;
        start_read(c, si, key, IO_PREFETCH);
        touch(c, &c->slots[si]);
        c->prefetch_issued++;
    }
}

/* Collects reads that completed meanwhile, without blocking. */
static void drain(expert_cache *c)
{
    io_req *r;
    while ((r = io_try_any(c->io))) complete(c, r);
}

void experts_tick(expert_cache *c)
{
    c->tick++;
    if (c->io) drain(c);
}

uint64_t experts_missing_bytes(const expert_cache *c, int key)
{
    return c->where && c->where[key] >= 0 ? 0 : c->loc[key].bytes;
}
