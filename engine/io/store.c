/* store.c — spine residency and streaming under the RAM budget (store.h).
 *
 * A unit's matrices are gathered into runs: their byte spans, widened to the
 * 4 KiB alignment O_DIRECT needs, sorted and merged when they touch or lie
 * within 64 KiB of each other (so a K3 layer's trunk is one read, while the
 * experts that Kimi-Linear stores between trunk tensors are skipped). The
 * runs land back to back in the unit's buffer, and every matrix is re-pointed
 * into whichever buffer holds its unit.
 *
 * Streaming: units that did not fit are used in the same cyclic order every
 * token (layer by layer, then the head), so they are read ahead through a
 * ring buffer: each takes the next free stretch of the ring, big enough
 * for it, and is released when the unit after it begins. When unit u begins,
 * the ring is topped up with the units that follow u until one no longer
 * fits, then u's own reads are awaited. A double buffer read only one unit
 * ahead, and the device idled whenever a small unit's read finished before
 * the unit in use was done. A use out of order (an error mid-pass) empties
 * the ring and starts again from the unit asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "io/store.h"
#include "base/file.h"
#include "base/pages.h"
#include "kernels/kernels.h"

#define MERGE_GAP (64u << 10)
/* Runs are cut into reads of at most this size, so a large unit is read by
 * several reader threads at once (the device wants a queue, not one stream),
 * and so that when expert reads arrive, which the spine readers yield to,
 * little spine data is still ahead of them in the device's queue: on the
 * 31.6 GB synthetic model with the spine streamed, 8 MB pieces left expert
 * reads 78-109% of the device's bandwidth (median 91%), 2 MB pieces 97-116%
 * (median 105%), for the same total throughput. */
#define READ_CHUNK (2u << 20)

/* Weight buffers: page-aligned anonymous memory, populated up front. Reads
 * into pages never touched before are several times slower (each page is
 * faulted in while the device waits), so budget memory is taken at once —
 * in huge pages where the kernel has them (rm_pages_hint). */
static void *buf_alloc(size_t bytes)
{
    const size_t n = bytes ? bytes : RM_ALIGN;
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    rm_pages_hint(p, n);
    rm_pages_populate(p, n);
    return p;
}

static void buf_free(void *p, size_t bytes)
{
    if (p) munmap(p, bytes ? bytes : RM_ALIGN);
}

int store_init(store *s, st_set *st, int io_threads, rm_err *err)
{
    memset(s, 0, sizeof *s);
    s->st = st;
    s->fds = malloc((size_t)st->nshards * sizeof *s->fds);
    if (!s->fds) return rm_errf(err, "out of memory");
    s->direct = 1;
    for (int i = 0; i < st->nshards; i++) {
        /* O_NONBLOCK: never wait on a FIFO put there since st.c checked the shard */
        s->fds[i] = open(st->shards[i].path, O_RDONLY | O_DIRECT | O_NONBLOCK | O_CLOEXEC);
        if (s->fds[i] < 0 && errno == EINVAL) {    /* tmpfs and some others refuse O_DIRECT */
            s->direct = 0;
            s->fds[i] = open(st->shards[i].path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        }
        if (s->fds[i] < 0) {
            int e = errno;
            for (int j = 0; j < i; j++) close(s->fds[j]);
            free(s->fds);
            s->fds = NULL;
            return file_open_error(st->shards[i].path, e, err);
        }
    }
    if (!(s->io = io_pool_new(io_threads > 0 ? io_threads : 8)))
        return rm_errf(err, "cannot start the reader threads");
    return 0;
}

static void ring_drain(store *s);

void store_free(store *s)
{
    if (!s->st) return;
    if (s->rq) ring_drain(s);
    io_pool_free(s->io);
    for (int u = 0; u < s->nunits; u++) {
        free(s->units[u].runs);
        free(s->units[u].binds);
        free(s->units[u].reqs);
        buf_free(s->units[u].buf, s->units[u].bytes);
    }
    free(s->units);
    buf_free(s->ring, s->ring_size);
    free(s->rq);
    if (s->fds) for (int i = 0; i < s->st->nshards; i++) close(s->fds[i]);
    free(s->fds);
    memset(s, 0, sizeof *s);
}

static int ensure_units(store *s, int u, rm_err *err)
{
    if (u < s->nunits) return 0;
    if (RM_GROW(s->units, s->units_cap, u + 1)) return rm_errf(err, "out of memory");
    memset(s->units + s->nunits, 0, (size_t)(u + 1 - s->nunits) * sizeof *s->units);
    s->nunits = u + 1;
    return 0;
}

/* Adds the aligned span [off, off+len) of shard to the unit's runs (merged
 * later in store_plan). */
static int add_span(spine_unit *un, int shard, uint64_t off, uint64_t len)
{
    if (RM_GROW(un->runs, un->runs_cap, un->nruns + 1)) return -1;
    un->runs[un->nruns++] = (spine_run){ shard, rm_align_down(off), rm_align_up(off + len) - rm_align_down(off), 0 };
    return 0;
}

int store_add_mat(store *s, int u, wmat *m, rm_err *err)
{
    if (ensure_units(s, u, err)) return -1;
    spine_unit *un = &s->units[u];
    if (RM_GROW(un->binds, un->binds_cap, un->nbinds + 1)) return rm_errf(err, "out of memory");
    un->binds[un->nbinds++] = (spine_bind){ m, 0, 0 };
    uint64_t scale_bytes, bytes = wmat_bytes(m, &scale_bytes);
    if (add_span(un, m->shard, m->off, bytes)) return rm_errf(err, "out of memory");
    if (m->kind == WM_MXFP4 && add_span(un, m->shard, m->scale_off, scale_bytes)) return rm_errf(err, "out of memory");
    return 0;
}

static int cmp_run(const void *a, const void *b)
{
    const spine_run *x = a, *y = b;
    if (x->shard != y->shard) return x->shard - y->shard;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Sorts and merges a unit's runs, lays them out in its buffer and computes
 * each matrix's offset inside that buffer. */
static void layout_unit(spine_unit *un)
{
    if (!un->nruns) return;
    qsort(un->runs, (size_t)un->nruns, sizeof *un->runs, cmp_run);
    int k = 0;
    for (int i = 1; i < un->nruns; i++) {
        spine_run *a = &un->runs[k], *b = &un->runs[i];
        if (b->shard == a->shard && b->off <= a->off + a->len + MERGE_GAP) {
            uint64_t end = b->off + b->len > a->off + a->len ? b->off + b->len : a->off + a->len;
            a->len = end - a->off;
        } else {
            un->runs[++k] = *b;
        }
    }
    un->nruns = k + 1;
    /* cut long runs into chunks; they stay back to back in the buffer */
    int extra = 0;
    for (int i = 0; i < un->nruns; i++) extra += (int)((un->runs[i].len - 1) / READ_CHUNK);
    if (extra) {
        spine_run *nr = malloc((size_t)(un->nruns + extra) * sizeof *nr);
        if (nr) {
            int j = 0;
            for (int i = 0; i < un->nruns; i++)
                for (uint64_t o = 0; o < un->runs[i].len; o += READ_CHUNK) {
                    uint64_t n = un->runs[i].len - o < READ_CHUNK ? un->runs[i].len - o : READ_CHUNK;
                    nr[j++] = (spine_run){ un->runs[i].shard, un->runs[i].off + o, n, 0 };
                }
            free(un->runs);
            un->runs = nr;
            un->nruns = un->runs_cap = j;
        }
    }
    size_t pos = 0;
    for (int i = 0; i < un->nruns; i++) { un->runs[i].buf_off = pos; pos += un->runs[i].len; }
    un->bytes = pos;
    for (int j = 0; j < un->nbinds; j++) {
        spine_bind *b = &un->binds[j];
        for (int i = 0; i < un->nruns; i++) {
            const spine_run *r = &un->runs[i];
            if (r->shard != b->m->shard) continue;
            if (b->m->off >= r->off && b->m->off < r->off + r->len) b->rel_w = r->buf_off + (b->m->off - r->off);
            if (b->m->kind == WM_MXFP4 && b->m->scale_off >= r->off && b->m->scale_off < r->off + r->len)
                b->rel_scale = r->buf_off + (b->m->scale_off - r->off);
        }
    }
}

static void bind_unit(spine_unit *un, const uint8_t *buf)
{
    for (int j = 0; j < un->nbinds; j++) {
        un->binds[j].m->w = buf + un->binds[j].rel_w;
        if (un->binds[j].m->kind == WM_MXFP4) un->binds[j].m->scale = buf + un->binds[j].rel_scale;
    }
}

/* Issues the reads of unit u into buf; reqs gets one request per run. */
static void read_unit(store *s, spine_unit *un, uint8_t *buf, io_req *reqs)
{
    for (int i = 0; i < un->nruns; i++) {
        const spine_run *r = &un->runs[i];
        reqs[i] = (io_req){ s->fds[r->shard], r->off, r->len, buf + r->buf_off, un, IO_SPINE, NULL, NULL, 0, 0, NULL };
        io_submit(s->io, &reqs[i]);
    }
}

/* A run may end past the end of the file (alignment); only the bytes of
 * the file must arrive. */
static int check_reads(store *s, spine_unit *un, io_req *reqs, rm_err *err)
{
    for (int i = 0; i < un->nruns; i++) {
        const spine_run *r = &un->runs[i];
        uint64_t fsize = s->st->shards[r->shard].size;
        uint64_t want = r->off + r->len > fsize ? fsize - r->off : r->len;
        if (reqs[i].err > 0 || reqs[i].got < want)
            return rm_errf(err, "%s: read of %llu bytes at %llu failed: %s", s->st->shards[r->shard].path,
                           (unsigned long long)r->len, (unsigned long long)r->off,
                           reqs[i].err > 0 ? strerror(reqs[i].err) : "short read (file changed?)");
    }
    return 0;
}

uint64_t store_min_budget(const store *s, uint64_t min_cache)
{
    uint64_t mx = 0;
    for (int u = 0; u < s->nunits; u++) if (s->units[u].bytes > mx) mx = s->units[u].bytes;
    return 2 * mx + min_cache;
}

int store_decide(const uint64_t *unit_bytes, int n, uint64_t budget, uint64_t min_cache, unsigned char *resident,
                 store_decision *d)
{
    memset(d, 0, sizeof *d);
    for (int u = 0; u < n; u++) {
        d->total += unit_bytes[u];
        if (unit_bytes[u] > d->largest) d->largest = unit_bytes[u];
    }
    d->min_budget = 2 * d->largest + min_cache;
    const int all = d->total + min_cache <= budget;
    if (!all && budget < d->min_budget) return -1;
    const uint64_t reserve = all ? min_cache : 2 * d->largest + min_cache;
    for (int u = 0; u < n; u++) {
        int in = 0;
        if (unit_bytes[u] && d->resident + unit_bytes[u] + reserve <= budget) { in = 1; d->resident += unit_bytes[u]; }
        else if (unit_bytes[u]) d->streamed++;
        if (resident) resident[u] = (unsigned char)in;
    }
    d->ring = d->streamed ? 2 * d->largest : 0;
    const uint64_t used = d->resident + d->ring;
    d->cache = budget > used ? budget - used : 0;
    return 0;
}

int store_plan(store *s, uint64_t budget, uint64_t min_cache, uint64_t *cache_bytes, rm_err *err)
{
    uint64_t *sizes = malloc((size_t)(s->nunits ? s->nunits : 1) * sizeof *sizes);
    unsigned char *in = malloc((size_t)(s->nunits ? s->nunits : 1));
    if (!sizes || !in) { free(sizes); free(in); return rm_errf(err, "out of memory"); }
    for (int u = 0; u < s->nunits; u++) {
        layout_unit(&s->units[u]);
        sizes[u] = s->units[u].nruns ? s->units[u].bytes : 0;
    }
    store_decision d;
    const int fits = store_decide(sizes, s->nunits, budget, min_cache, in, &d);
    free(sizes);
    s->budget = budget;
    s->spine_total = d.total;
    if (fits) {
        free(in);
        return rm_errf(err, "a RAM budget of %.2f GB is too small for this model: at least %.2f GB is needed "
                       "(a spine stream ring of twice the largest unit, %.2f GB, and %.2f GB of expert slots)", budget / 1e9,
                       d.min_budget / 1e9, 2 * d.largest / 1e9, min_cache / 1e9);
    }
    const uint64_t mx = d.largest;
    uint64_t resident = 0;
    for (int u = 0; u < s->nunits; u++) {
        spine_unit *un = &s->units[u];
        if (!un->nruns) continue;
        if (!in[u]) { s->streamed++; continue; }
        if (!(un->buf = buf_alloc(un->bytes))) {
            free(in);
            return rm_errf(err, "out of memory for %llu bytes of resident weights", (unsigned long long)un->bytes);
        }
        resident += un->bytes;
    }
    free(in);
    s->spine_resident = resident;
    /* read every resident unit, several at a time */
    int nr = 0;
    for (int u = 0; u < s->nunits; u++) if (s->units[u].buf) nr += s->units[u].nruns;
    io_req *reqs = calloc((size_t)(nr ? nr : 1), sizeof *reqs);
    if (!reqs) return rm_errf(err, "out of memory");
    int k = 0, rc = 0;
    for (int u = 0; u < s->nunits; u++)
        if (s->units[u].buf) { read_unit(s, &s->units[u], s->units[u].buf, reqs + k); k += s->units[u].nruns; }
    for (int i = 0; i < nr; i++) io_wait(s->io, &reqs[i]);
    k = 0;
    for (int u = 0; u < s->nunits && !rc; u++) {
        spine_unit *un = &s->units[u];
        if (!un->buf) continue;
        rc = check_reads(s, un, reqs + k, err);
        k += un->nruns;
        bind_unit(un, un->buf);
    }
    free(reqs);
    if (rc) return rc;
    if (s->streamed) {
        s->ring_size = 2 * mx;
        if (!(s->ring = buf_alloc(s->ring_size)) || !(s->rq = calloc((size_t)s->nunits, sizeof *s->rq)))
            return rm_errf(err, "out of memory for the spine stream ring");
        for (int u = 0; u < s->nunits; u++) {
            spine_unit *un = &s->units[u];
            if (!un->buf && un->nruns && !(un->reqs = calloc((size_t)un->nruns, sizeof *un->reqs)))
                return rm_errf(err, "out of memory");
        }
    }
    *cache_bytes = d.cache;
    io_take_counters(s->io);    /* load-time reads are not per-token figures */
    return 0;
}

static int streamed_unit(const store *s, int u) { return !s->units[u].buf && s->units[u].nruns; }

/* Collects unit u's reads (once). */
static void unit_wait(store *s, spine_unit *un)
{
    if (un->waited) return;
    for (int i = 0; i < un->nruns; i++) io_wait(s->io, &un->reqs[i]);
    un->waited = 1;
}

/* Releases the oldest unit in the ring, waiting for its reads if needed. */
static void ring_pop(store *s)
{
    spine_unit *un = &s->units[s->rq[s->rq_head]];
    unit_wait(s, un);
    un->in_ring = 0;
    s->rq_head = (s->rq_head + 1) % s->nunits;
    s->rq_n--;
}

/* Empties the ring, waiting for reads still in flight. */
static void ring_drain(store *s)
{
    while (s->rq_n) ring_pop(s);
    s->rq_head = 0;
}

/* Where a unit of `bytes` can go after the newest unit in the ring, or -1. */
static long ring_place(const store *s, size_t bytes)
{
    if (!s->rq_n) return bytes <= s->ring_size ? 0 : -1;
    const spine_unit *head = &s->units[s->rq[s->rq_head]];
    const spine_unit *tail = &s->units[s->rq[(s->rq_head + s->rq_n - 1) % s->nunits]];
    size_t end = tail->ring_off + tail->bytes;
    if (tail->ring_off >= head->ring_off) {     /* free: [end, size) and [0, head) */
        if (end + bytes <= s->ring_size) return (long)end;
        return bytes <= head->ring_off ? 0 : -1;
    }
    return end + bytes <= head->ring_off ? (long)end : -1;    /* free: [end, head) */
}

/* Starts reading streamed units, in use order from `from`, while they fit. */
static void ring_fill(store *s, int from)
{
    for (int v = from, seen = 0; seen < s->nunits; v = (v + 1) % s->nunits, seen++) {
        if (!streamed_unit(s, v)) continue;
        spine_unit *vn = &s->units[v];
        if (vn->in_ring) {
            if (v == from) continue;
            return;                 /* every streamed unit is in the ring */
        }
        long off = ring_place(s, vn->bytes);
        if (off < 0) return;
        vn->ring_off = (size_t)off;
        vn->in_ring = 1;
        vn->waited = 0;
        read_unit(s, vn, s->ring + off, vn->reqs);
        s->rq[(s->rq_head + s->rq_n++) % s->nunits] = v;
    }
}

int store_unit_begin(store *s, int u, rm_err *err)
{
    spine_unit *un = &s->units[u];
    if (un->buf || !un->nruns) return 0;
    if (!un->in_ring) ring_drain(s);            /* out of order: start again from u */
    /* the units before u are done: give their space back */
    while (s->rq_n && s->rq[s->rq_head] != u) ring_pop(s);
    ring_fill(s, s->rq_n ? s->rq[(s->rq_head + s->rq_n - 1) % s->nunits] : u);
    unit_wait(s, un);
    int rc = check_reads(s, un, un->reqs, err);
    if (rc) { ring_drain(s); return rc; }
    bind_unit(un, s->ring + un->ring_off);
    return 0;
}

double store_bench(store *s, double seconds, rm_err *err)
{
    int n = 0;
    for (int u = 0; u < s->nunits; u++) n += s->units[u].nruns;
    io_span *spans = malloc((size_t)(n ? n : 1) * sizeof *spans);
    if (!spans) return rm_errf(err, "out of memory"), -1.0;
    n = 0;
    for (int u = 0; u < s->nunits; u++)
        for (int i = 0; i < s->units[u].nruns; i++) {
            const spine_run *r = &s->units[u].runs[i];
            spans[n++] = (io_span){ s->fds[r->shard], r->off, r->len };
        }
    if (s->rq) ring_drain(s);       /* the pool's reads are then the probe's alone */
    const double gbps = io_read_rate(s->io, spans, n, 1, READ_CHUNK, seconds, err);
    free(spans);
    return gbps;
}

int store_unit_resident(const store *s, int u)
{
    return u >= 0 && u < s->nunits && (s->units[u].buf || !s->units[u].nruns);
}

/* Reads `len` bytes of shard at off (any alignment) into dst. */
static int read_small(store *s, int shard, uint64_t off, size_t len, void *dst, rm_err *err)
{
    /* O_DIRECT wants aligned spans: read the covering blocks into a bounce buffer */
    uint64_t a = rm_align_down(off), e = rm_align_up(off + len);
    uint8_t *bounce;
    if (posix_memalign((void **)&bounce, RM_ALIGN, e - a)) return rm_errf(err, "out of memory");
    io_req r = { s->fds[shard], a, e - a, bounce, NULL, IO_OTHER, NULL, NULL, 0, 0, NULL };
    io_submit(s->io, &r);
    io_wait(s->io, &r);
    int rc = 0;
    if (r.err > 0 || r.got < off + len - a)
        rc = rm_errf(err, "%s: read at %llu failed: %s", s->st->shards[shard].path, (unsigned long long)off,
                     r.err > 0 ? strerror(r.err) : "short read");
    else memcpy(dst, bounce + (off - a), len);
    free(bounce);
    return rc;
}

int store_embed_row(store *s, const wmat *embed, int row, float *dst, rm_err *err)
{
    const size_t esz = embed->kind == WM_F32 ? 4 : 2, n = (size_t)embed->cols;
    uint8_t buf[16384];
    uint8_t *p = n * esz <= sizeof buf ? buf : malloc(n * esz);
    if (!p) return rm_errf(err, "out of memory");
    int rc = read_small(s, embed->shard, embed->off + (uint64_t)row * n * esz, n * esz, p, err);
    if (!rc) {
        for (size_t i = 0; i < n; i++) {
            if (esz == 4) memcpy(&dst[i], p + 4 * i, 4);
            else { uint16_t h; memcpy(&h, p + 2 * i, 2); dst[i] = bf16_to_f32(h); }
        }
    }
    if (p != buf) free(p);
    return rc;
}
