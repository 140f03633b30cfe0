/* gpu_cuda.cu — the CUDA backend's host side (gpu.h): the device, the
 * weights placed in VRAM, the staging of inputs and streamed weights, the
 * policy of which products run there, and the figures.
 *
 * Placement. A spine matrix is placed in VRAM at its first product while
 * the budget (--vram) has room, and found again by its checkpoint bytes
 * (shard, offset; a row range of a placed matrix is found inside it); it
 * then runs on the device at every pass size, decode included. A matrix
 * that is not placed — a routed expert, or spine past the budget — is
 * copied in per product (raw, then repacked on the device) and so runs
 * there only for passes of at least gpu_min_tokens() rows, where the
 * product's work pays for its copy (an MXFP4 expert is 17.6 MB: 0.3 ms at
 * the 55 GB/s of pinned PCIe 5, 1.9 ms at the 9.4 GB/s of pageable memory,
 * against 66 MFLOP a token on a CPU of a few hundred GFLOP/s). Products
 * under GPU_MIN_WORK fmas stay on the CPU whatever their weights: a device
 * call's copies and launch take tens of microseconds, more than the CPU
 * needs for them.
 *
 * Routed experts are placed too, for good, in what the budget leaves once
 * the spine's share is kept back (gpu_reserve_spine): a pass that copies an
 * expert in copies it into VRAM of its own instead of a stage, and from
 * then on every pass that chooses it, decode included, computes it there
 * with no copy (on a model VRAM holds, a decoded token's experts took 14 ms
 * of the CPU's MXFP4 gemv from host RAM). They are found by their
 * checkpoint bytes in a hash, as a K3 card holds thousands, and take their
 * memory from slabs ($REMORA_GPU_EXPERTS=0 keeps them staged per use).
 *
 * Failure. Any failed device call closes the device for the process (the
 * reason goes to gpu_status.why) and the product is declined, so the CPU
 * computes it: same bits, nothing lost.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gpu/gpu_kernels.h"
extern "C" {
#include "base/threadpool.h"
}

#define GPU_MIN_WORK (1u << 21)                     /* fmas ($REMORA_GPU_MIN_WORK) */
#define GPU_MARGIN_MIN (2ull << 30)                 /* VRAM kept free: 2 GiB ... */
#define GPU_MARGIN_SHARE 0.10                       /* ... or a tenth of the card */

typedef struct placed {
    const void *owner;
    gpu_wkind kind;
    int shard, rows, cols;
    uint64_t off;
    void *P;            /* packed weights */
    uint8_t *S;         /* packed scales (MXFP4) */
    size_t bytes;
    cudaEvent_t ready;  /* an expert's copy on the copy stream (NULL: placed synchronously) */
} placed;

/* Device memory for placed experts, taken in order (their memory goes back
 * only with their model's, gpu_forget): one cudaMalloc an expert's matrix
 * would cost thousands of calls on a large card. */
#define XSLAB (256ull << 20)
typedef struct slab { const void *owner; char *p; size_t size, used; } slab;

typedef struct dbuf { void *p; size_t cap; } dbuf;

/* A streamed matrix copied in ahead of its product (gpu_stage): its
 * checkpoint identity, the device copy (raw, then repacked), and two
 * events: `ready` when the copy and repack on the copy stream are done,
 * `used[k]` when the last product that read it on stream k is done (k = 0
 * the products' stream, 1 + j expert job j's: two experts in flight may be
 * two blocks of one expert's rows, reading the same stage). */
#define GPU_JOBS 2      /* experts in flight (gpu_expert; see expert_job) */
#define GPU_STAGES 12   /* a routed expert's three matrices, for the one in flight, the one launching, the next, and slack */

typedef struct stage {
    const void *owner;  /* NULL: empty */
    gpu_wkind kind;
    int shard, rows, cols;
    uint64_t off;
    dbuf raw, raw_s, P, S;
    cudaEvent_t ready, used[1 + GPU_JOBS];
    int used_recorded[1 + GPU_JOBS];
} stage;

/* A routed expert's block of rows launched whole (gpu_expert): the four
 * products and the GLU on a stream of its own, its input, intermediates
 * and output in device buffers of its own and its output copied back to
 * page-locked memory, collected later by gpu_expert_collect. Two
 * (GPU_JOBS), so one computes while the next is staged and launched. */

typedef struct expert_job {
    cudaStream_t stream;
    cudaEvent_t done;
    dbuf x, g, u, h, y;         /* device: input, gate and up outputs, GLU output (padded), output */
    dbuf hx, hy;                /* page-locked input and output */
    int busy, T, rows;
    uint64_t seq;               /* launch order: the oldest is collected first */
} expert_job;

/* The latent caches kept on the device between calls of gpu_mla_core, one
 * per layer's cache (by its key): a decoded token copies in its one new
 * row and repacks it, instead of the whole context (at K3's widths 15 KB
 * a row: a context of 4096 is 61 MB a layer and token, 1.1 ms at the bus's
 * pinned rate and more from the pageable cache). A cache is kept while the
 * kept ones take at most MLA_KEPT_BYTES, half of what XWORK keeps free
 * beside the weights; one that does not fit is copied whole each call. */
#define MLA_KEPT 256
#define MLA_KEPT_BYTES (1ull << 30)
typedef struct lat_copy {
    uint64_t key;               /* 0: free */
    int rows, cap;              /* rows as in the host's cache; rows the buffers hold */
    dbuf lat, p1, p2;           /* the rows as they are, and their two parts in the device layout */
} lat_copy;

static struct {
    pthread_mutex_t mu;
    int opened, active, device;
    char name[96], why[160];
    cudaStream_t stream;
    cudaStream_t cstream;       /* the copies of staged matrices; NULL: staging off */
    stage stages[GPU_STAGES];
    int next_stage;
    uint64_t vram_total, budget, resident;
    placed *units;              /* spine matrices placed (found by a scan: row ranges inside them) */
    int nunits, capunits;
    placed *ex;                 /* experts placed */
    int nex, capex;
    int *xhash, xhcap;          /* open addressing over ex by checkpoint bytes; -1 empty */
    slab *slabs;
    int nslabs, capslabs;
    int xfull;                  /* the card said no to a slab: no more experts */
    uint64_t spine_reserve, spine_resident;
    uint64_t xreads;            /* bytes of placed experts read by products */
    dbuf xraw, xraw_s;          /* an expert's raw bytes on the device before its repack */
    dbuf raw, raw_s, tmp, tmp_s, x, y;
    dbuf hx, hy;                /* page-locked host staging of a product's input and output */
    struct {                    /* gpu_mla_core's buffers: device, then page-locked */
        dbuf l1, l2, qa, qr, s1, s2, ca;
        dbuf hqa, hqr, hca;
        dbuf q, cx, o, hq, ho;  /* gpu_mla_attend's: the queries in, the values' inputs and outputs */
        lat_copy kept[MLA_KEPT];
        lat_copy scratch;       /* a cache not kept (no room): copied whole each call */
        uint64_t kept_bytes;
    } mla;
    expert_job jobs[GPU_JOBS];
    int jobs_ok;                /* the jobs' streams exist */
    uint64_t job_seq;
    uint64_t h2d, d2h, products, flops;
    double seconds;
} G = { PTHREAD_MUTEX_INITIALIZER };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *gpu_build(void) { return "cuda"; }

/* A positive whole number from the environment, else def. Read at every
 * product (a getenv is tens of nanoseconds, a device product tens of
 * microseconds), so the tests can change it. */
static uint64_t env_count(const char *name, uint64_t def)
{
    const char *e = getenv(name);
    char *end;
    const unsigned long long n = e && *e ? strtoull(e, &end, 10) : 0;
    return e && *e && !*end && n >= 1 ? (uint64_t)n : def;
}

int gpu_min_tokens(void) { return (int)env_count("REMORA_GPU_MIN_TOKENS", 16); }

/* Closes the device for the process after a failed call (under G.mu). */
static void fail(const char *what, cudaError_t e)
{
    snprintf(G.why, sizeof G.why, "the GPU failed (%s: %s); computing on the CPU", what, cudaGetErrorString(e));
    G.active = 0;
}

/* The copy stream and the stages' events; without them products copy their
 * streamed weights in themselves, as before (slower, same bits). */
static void open_staging(void)
{
    if (cudaStreamCreateWithFlags(&G.cstream, cudaStreamNonBlocking) != cudaSuccess) goto off;
    for (int i = 0; i < GPU_STAGES; i++) {
        if (cudaEventCreateWithFlags(&G.stages[i].ready, cudaEventDisableTiming) != cudaSuccess) goto off;
        for (int k = 0; k < 1 + GPU_JOBS; k++)
            if (cudaEventCreateWithFlags(&G.stages[i].used[k], cudaEventDisableTiming) != cudaSuccess) goto off;
    }
    G.jobs_ok = 1;
    for (int i = 0; i < GPU_JOBS; i++)
        if (cudaStreamCreateWithFlags(&G.jobs[i].stream, cudaStreamNonBlocking) != cudaSuccess ||
            cudaEventCreateWithFlags(&G.jobs[i].done, cudaEventDisableTiming) != cudaSuccess) {
            cudaGetLastError();
            G.jobs_ok = 0;
        }
    return;
off:
    cudaGetLastError();
    G.cstream = NULL;
}

int gpu_open(gpu_mode mode, int device, double vram_gb)
{
    pthread_mutex_lock(&G.mu);
    if (G.opened) { const int a = G.active; pthread_mutex_unlock(&G.mu); return a; }
    G.opened = 1;
    const char *env = getenv("REMORA_GPU");
    if (mode == GPU_AUTO && env && *env && strcmp(env, "auto")) {
        if (!strcmp(env, "off")) mode = GPU_OFF;
        else { mode = GPU_DEVICE; device = atoi(env); }
    }
    int n = 0;
    cudaError_t e;
    if (mode == GPU_OFF) {
        snprintf(G.why, sizeof G.why, "off (--gpu off)");
    } else if ((e = cudaGetDeviceCount(&n)) != cudaSuccess || n == 0) {
        snprintf(G.why, sizeof G.why, "no CUDA device (%s); computing on the CPU",
                 e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    } else if (mode == GPU_DEVICE && (device < 0 || device >= n)) {
        snprintf(G.why, sizeof G.why, "no CUDA device %d (this machine has %d); computing on the CPU", device, n);
    } else {
        if (mode != GPU_DEVICE) device = 0;
        cudaDeviceProp p;
        size_t fr = 0, tot = 0;
        if ((e = cudaSetDevice(device)) != cudaSuccess || (e = cudaGetDeviceProperties(&p, device)) != cudaSuccess ||
            (e = cudaStreamCreateWithFlags(&G.stream, cudaStreamNonBlocking)) != cudaSuccess ||
            (e = cudaMemGetInfo(&fr, &tot)) != cudaSuccess) {
            snprintf(G.why, sizeof G.why, "CUDA device %d could not be opened (%s); computing on the CPU", device,
                     cudaGetErrorString(e));
        } else {
            G.device = device;
            snprintf(G.name, sizeof G.name, "%s", p.name);
            G.vram_total = tot;
            uint64_t margin = (uint64_t)(GPU_MARGIN_SHARE * (double)tot);
            if (margin < GPU_MARGIN_MIN) margin = GPU_MARGIN_MIN;
            const uint64_t avail = fr > margin ? fr - margin : 0;
            G.budget = vram_gb > 0 ? (uint64_t)(vram_gb * 1e9) : avail;
            if (G.budget > avail) G.budget = avail;
            G.active = 1;
            open_staging();
        }
    }
    const int a = G.active;
    pthread_mutex_unlock(&G.mu);
    return a;
}

void gpu_status_get(gpu_status *st)
{
    pthread_mutex_lock(&G.mu);
    memset(st, 0, sizeof *st);
    st->active = G.active;
    st->device = G.device;
    snprintf(st->name, sizeof st->name, "%s", G.name);
    snprintf(st->why, sizeof st->why, "%s", G.opened ? G.why : "not opened");
    st->vram_total = G.vram_total;
    st->vram_budget = G.budget;
    st->vram_resident = G.resident;
    st->units_resident = G.nunits + G.nex;
    st->vram_experts = G.resident - G.spine_resident;
    st->expert_vram_reads = G.xreads;
    st->h2d_bytes = G.h2d;
    st->d2h_bytes = G.d2h;
    st->products = G.products;
    st->flops = G.flops;
    st->seconds = G.seconds;
    pthread_mutex_unlock(&G.mu);
}

void gpu_counters(uint64_t *h2d_bytes, double *seconds, uint64_t *vram_resident)
{
    *h2d_bytes = 0;
    *seconds = 0;
    *vram_resident = 0;
    if (!G.active) return;      /* a build with CUDA on a machine without a GPU takes no lock */
    pthread_mutex_lock(&G.mu);
    *h2d_bytes = G.h2d;
    *seconds = G.seconds;
    *vram_resident = G.resident;
    pthread_mutex_unlock(&G.mu);
}

/* Bytes of one row in the CPU's layout (MXFP4: the packed nibbles). */
static uint64_t raw_row_bytes(gpu_wkind k, int cols)
{
    return k == GPU_W_F32 ? 4ull * cols : k == GPU_W_BF16 ? 2ull * cols : (uint64_t)cols / 2;
}

static uint64_t xkey(const void *owner, int shard, uint64_t off)
{
    uint64_t h = (uint64_t)(uintptr_t)owner * 0x9e3779b97f4a7c15ull ^ (uint64_t)shard * 0xc2b2ae3d27d4eb4full ^ off;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}

static int same_unit(const placed *u, const gpu_mat *m)
{
    return u->owner == m->owner && u->kind == m->kind && u->shard == m->shard && u->off == m->off &&
           u->rows == m->rows && u->cols == m->cols;
}

static const placed *xfind(const gpu_mat *m)
{
    if (!G.xhcap) return NULL;
    for (uint64_t i = xkey(m->owner, m->shard, m->off) & (uint64_t)(G.xhcap - 1);; i = (i + 1) & (uint64_t)(G.xhcap - 1)) {
        const int k = G.xhash[i];
        if (k < 0) return NULL;
        if (same_unit(&G.ex[k], m)) return &G.ex[k];
    }
}

/* Enters G.ex[k] in the hash h of cap slots (a power of two). */
static void xinsert(int *h, int cap, int k)
{
    uint64_t i = xkey(G.ex[k].owner, G.ex[k].shard, G.ex[k].off) & (uint64_t)(cap - 1);
    while (h[i] >= 0) i = (i + 1) & (uint64_t)(cap - 1);
    h[i] = k;
}

/* Rebuilds the hash over G.ex at twice its count at least; -1 out of memory. */
static int xrehash(int want)
{
    int cap = 64;
    while (cap < 2 * want) cap *= 2;
    int *h = (int *)malloc((size_t)cap * sizeof *h);
    if (!h) return -1;
    for (int i = 0; i < cap; i++) h[i] = -1;
    for (int k = 0; k < G.nex; k++) xinsert(h, cap, k);
    free(G.xhash);
    G.xhash = h;
    G.xhcap = cap;
    return 0;
}

/* The placed matrix holding m's rows, and the first of them in it: an
 * expert by its exact bytes, a spine matrix also as a row range. */
static const placed *find(const gpu_mat *m, int *r0)
{
    *r0 = 0;
    if (!m->spine) return xfind(m);
    const uint64_t rb = raw_row_bytes(m->kind, m->cols);
    for (int i = 0; i < G.nunits; i++) {
        const placed *u = &G.units[i];
        if (u->owner != m->owner || u->kind != m->kind || u->shard != m->shard || u->cols != m->cols ||
            m->off < u->off)
            continue;
        const uint64_t d = m->off - u->off;
        if (d % rb || d / rb + (uint64_t)m->rows > (uint64_t)u->rows) continue;
        *r0 = (int)(d / rb);
        return u;
    }
    return NULL;
}

/* The figures of products done (under G.mu): activations copied in and
 * out, products, flops, and the caller's time since t0. */
static void tally(uint64_t in, uint64_t out, int products, uint64_t flops, double t0)
{
    G.h2d += in;
    G.d2h += out;
    G.products += (uint64_t)products;
    G.flops += flops;
    G.seconds += now_s() - t0;
}

/* The end of a device call under G.mu: unlocks, and on an error closes the
 * device (the caller's product goes to the CPU). 0 when e is a success,
 * else 1. */
static int unlock_after(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) fail(what, e);
    pthread_mutex_unlock(&G.mu);
    return e != cudaSuccess;
}

/* The packed weights (and scales) of m's rows inside placed matrix u, from
 * its row r0 (find). */
static void placed_rows(const placed *u, const gpu_mat *m, int r0, const void **P, const uint8_t **S)
{
    const size_t units = (size_t)r0 * gpu_blocks(m->cols) * GPU_LANES, quads = (size_t)r0 * gpu_quads(m->cols);
    *P = (const char *)u->P +
         (m->kind == GPU_W_F32 ? units * 32 : m->kind == GPU_W_BF16 ? units * 16 : quads * GPU_LANES * 16);
    *S = u->S ? u->S + quads * 16 : NULL;
}

/* A buffer of at least `need` bytes, regrown (contents lost) when smaller:
 * device memory, or page-locked host memory for `host`. */
static cudaError_t grow_in(dbuf *b, size_t need, int host)
{
    if (need <= b->cap) return cudaSuccess;
    if (b->p) host ? cudaFreeHost(b->p) : cudaFree(b->p);
    b->p = NULL;
    b->cap = 0;
    cudaError_t e = host ? cudaMallocHost(&b->p, need) : cudaMalloc(&b->p, need);
    if (e == cudaSuccess) b->cap = need;
    return e;
}

static cudaError_t grow(dbuf *b, size_t need) { return grow_in(b, need, 0); }
static cudaError_t hgrow(dbuf *b, size_t need) { return grow_in(b, need, 1); }

/* Rows of a product's input copied into the pinned staging, each padded
 * with zeros to ldx floats (in lane order for a pass k_gemv computes), or
 * its output copied out of it: on the compute pool, since one thread's
 * memcpy runs at about a fifth of the bus. */
typedef struct rows_copy {
    const float *from;
    float *to;
    int cols, ldx;      /* input: cols floats a row to ldx; output: rows of ldx = cols */
    int lanes;          /* input in lane order (gpu_in_lanes) */
} rows_copy;

static void copy_rows(void *ud, int r0, int r1)
{
    const rows_copy *c = (const rows_copy *)ud;
    for (int r = r0; r < r1; r++) {
        float *to = c->to + (size_t)r * c->ldx;
        const float *from = c->from + (size_t)r * c->cols;
        if (c->lanes) {
            for (int k = 0; k < c->ldx; k++) to[gpu_lane_col((size_t)k)] = k < c->cols ? from[k] : 0.0f;
            continue;
        }
        memcpy(to, from, (size_t)c->cols * sizeof(float));
        if (c->ldx > c->cols) memset(to + c->cols, 0, (size_t)(c->ldx - c->cols) * sizeof(float));
    }
}

#define IN_CHUNKS 4     /* pieces of a long input: the bus copies one while the CPU stages the next */

/* X[T][cols] to the device's G.x[T][ldx] through the pinned staging: the
 * driver's own copy from pageable memory runs at 9.4 GB/s on the H200
 * machine, the pinned one at 55 GB/s, and on a 2048-token prompt the
 * activations are most of what a product copies. */
static cudaError_t send_input(const float *X, int cols, int ldx, int T)
{
    const size_t xb = (size_t)T * ldx * sizeof(float);
    cudaError_t e;
    if ((e = hgrow(&G.hx, xb)) != cudaSuccess) return e;
    const int per = T >= 256 ? (T + IN_CHUNKS - 1) / IN_CHUNKS : T;
    for (int t0 = 0; t0 < T; t0 += per) {
        const int n = T - t0 < per ? T - t0 : per;
        rows_copy c = { X + (size_t)t0 * cols, (float *)G.hx.p + (size_t)t0 * ldx, cols, ldx, gpu_in_lanes(T) };
        pool_for(n, copy_rows, &c);
        if ((e = cudaMemcpyAsync((float *)G.x.p + (size_t)t0 * ldx, c.to, (size_t)n * ldx * sizeof(float),
                                 cudaMemcpyHostToDevice, G.stream)) != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

/* Copies m's weights in and repacks them into P (and S). */
static cudaError_t upload(const gpu_mat *m, void *P, uint8_t *S)
{
    const size_t wb = (size_t)raw_row_bytes(m->kind, m->cols) * (size_t)m->rows;
    const size_t sb = m->kind == GPU_W_MXFP4 ? (size_t)m->rows * (size_t)(m->cols / 32) : 0;
    cudaError_t e;
    if ((e = grow(&G.raw, wb)) != cudaSuccess || (sb && (e = grow(&G.raw_s, sb)) != cudaSuccess)) return e;
    if ((e = cudaMemcpyAsync(G.raw.p, m->w, wb, cudaMemcpyHostToDevice, G.stream)) != cudaSuccess) return e;
    if (sb && (e = cudaMemcpyAsync(G.raw_s.p, m->scale, sb, cudaMemcpyHostToDevice, G.stream)) != cudaSuccess)
        return e;
    G.h2d += wb + sb;
    return gpu_repack(m->kind, G.raw.p, (const uint8_t *)G.raw_s.p, m->rows, m->cols, P, S, G.stream);
}

/* Room in a growing array *a of n elements for one more (doubling from
 * `first`); -1 out of memory, the array unchanged. */
static int array_room(void **a, int n, int *cap, size_t size, int first)
{
    if (n < *cap) return 0;
    const int nc = *cap ? 2 * *cap : first;
    void *p = realloc(*a, (size_t)nc * size);
    if (!p) return -1;
    *a = p;
    *cap = nc;
    return 0;
}

/* Places m in VRAM if the budget has room; NULL when it has not. */
static const placed *place(const gpu_mat *m, cudaError_t *err)
{
    size_t sb = 0;
    const size_t pb = gpu_packed_bytes(m->kind, m->rows, m->cols, &sb);
    *err = cudaSuccess;
    if (G.resident + pb + sb > G.budget) return NULL;
    if (array_room((void **)&G.units, G.nunits, &G.capunits, sizeof *G.units, 256)) return NULL;
    placed u = { m->owner, m->kind, m->shard, m->rows, m->cols, m->off, NULL, NULL, pb + sb, NULL };
    if ((*err = cudaMalloc(&u.P, pb)) != cudaSuccess) { u.P = NULL; goto fail; }
    if (sb && (*err = cudaMalloc((void **)&u.S, sb)) != cudaSuccess) { u.S = NULL; goto fail; }
    if ((*err = upload(m, u.P, u.S)) != cudaSuccess) goto fail;
    G.units[G.nunits] = u;
    G.resident += pb + sb;
    G.spine_resident += pb + sb;
    return &G.units[G.nunits++];
fail:
    if (u.P) cudaFree(u.P);
    if (u.S) cudaFree(u.S);
    /* out of device memory is not a failure of the device: stop placing */
    if (*err == cudaErrorMemoryAllocation) { cudaGetLastError(); *err = cudaSuccess; G.budget = G.resident; }
    return NULL;
}

/* n bytes (256-aligned) of owner's slabs; NULL when the card has no more. */
static void *slab_take(const void *owner, size_t n, cudaError_t *err)
{
    n = (n + 255) & ~(size_t)255;
    *err = cudaSuccess;
    for (int i = G.nslabs - 1; i >= 0; i--)
        if (G.slabs[i].owner == owner) {
            if (G.slabs[i].size - G.slabs[i].used >= n) {
                void *p = G.slabs[i].p + G.slabs[i].used;
                G.slabs[i].used += n;
                return p;
            }
            break;      /* taken in order: only the owner's newest slab has room */
        }
    if (array_room((void **)&G.slabs, G.nslabs, &G.capslabs, sizeof *G.slabs, 64)) return NULL;
    slab sl = { owner, NULL, n > XSLAB ? n : XSLAB, n };
    if ((*err = cudaMalloc((void **)&sl.p, sl.size)) != cudaSuccess) return NULL;
    G.slabs[G.nslabs++] = sl;
    return sl.p;
}

/* Whether an expert of `bytes` fits beside the spine's share and XWORK of
 * the budget left for the buffers that grow later (activations, attention's
 * scores, stages): a failed allocation there closes the device, and placed
 * experts, unlike the spine, would otherwise fill the budget on any model
 * larger than the card. */
#define XWORK (2ull << 30)
static int expert_room(size_t bytes)
{
    const char *e = getenv("REMORA_GPU_EXPERTS");
    if ((e && !strcmp(e, "0")) || G.xfull || !G.cstream) return 0;
    const uint64_t kept = G.spine_reserve > G.spine_resident ? G.spine_reserve - G.spine_resident : 0;
    return G.resident + bytes + kept + XWORK <= G.budget;
}

/* Places expert matrix m in VRAM for good, copied and repacked on the copy
 * stream (its `ready` event says when), if the budget has room (under G.mu;
 * the host bytes must stay until a product that waited on `ready` is done,
 * as for a stage). NULL when it has not, or when a call failed (*err). */
static const placed *place_expert(const gpu_mat *m, cudaError_t *err)
{
    size_t sb = 0;
    const size_t pb = gpu_packed_bytes(m->kind, m->rows, m->cols, &sb);
    const size_t wb = (size_t)raw_row_bytes(m->kind, m->cols) * (size_t)m->rows;
    const size_t rsb = m->kind == GPU_W_MXFP4 ? (size_t)m->rows * (size_t)(m->cols / 32) : 0;
    *err = cudaSuccess;
    if (!expert_room(pb + sb)) return NULL;
    if (array_room((void **)&G.ex, G.nex, &G.capex, sizeof *G.ex, 1024)) return NULL;
    if (2 * (G.nex + 1) > G.xhcap && xrehash(G.nex + 1)) return NULL;
    placed u = { m->owner, m->kind, m->shard, m->rows, m->cols, m->off, NULL, NULL, pb + sb, NULL };
    u.P = slab_take(m->owner, pb, err);
    if (u.P && sb) u.S = (uint8_t *)slab_take(m->owner, sb, err);
    if (!u.P || (sb && !u.S)) {
        /* out of device memory is not a failure of the device: stop placing experts */
        if (*err == cudaErrorMemoryAllocation) { cudaGetLastError(); *err = cudaSuccess; G.xfull = 1; }
        return NULL;
    }
    if ((*err = cudaEventCreateWithFlags(&u.ready, cudaEventDisableTiming)) != cudaSuccess ||
        (*err = grow(&G.xraw, wb)) != cudaSuccess || (rsb && (*err = grow(&G.xraw_s, rsb)) != cudaSuccess) ||
        (*err = cudaMemcpyAsync(G.xraw.p, m->w, wb, cudaMemcpyHostToDevice, G.cstream)) != cudaSuccess ||
        (rsb && (*err = cudaMemcpyAsync(G.xraw_s.p, m->scale, rsb, cudaMemcpyHostToDevice, G.cstream)) != cudaSuccess) ||
        (*err = gpu_repack(m->kind, G.xraw.p, (const uint8_t *)G.xraw_s.p, m->rows, m->cols, u.P, u.S, G.cstream)) !=
            cudaSuccess ||
        (*err = cudaEventRecord(u.ready, G.cstream)) != cudaSuccess)
        return NULL;    /* the caller closes the device; its memory goes with the slabs */
    G.ex[G.nex] = u;
    xinsert(G.xhash, G.xhcap, G.nex);
    G.resident += pb + sb;
    G.h2d += wb + rsb;
    return &G.ex[G.nex++];
}

/* m's packed weights when placed, ready for `stream` (which waits for an
 * expert's copy); NULL when m is not placed or the wait failed (*err). */
static const placed *placed_for(const gpu_mat *m, cudaStream_t stream, int *r0, cudaError_t *err)
{
    *err = cudaSuccess;
    const placed *u = find(m, r0);
    if (u && u->ready && (*err = cudaStreamWaitEvent(stream, u->ready, 0)) != cudaSuccess) return NULL;
    if (u && !m->spine) G.xreads += u->bytes;
    return u;
}

static int same_matrix(const stage *g, const gpu_mat *m)
{
    return g->owner == m->owner && g->kind == m->kind && g->shard == m->shard && g->off == m->off &&
           g->rows == m->rows && g->cols == m->cols;
}

static stage *staged(const gpu_mat *m)
{
    for (int i = 0; i < GPU_STAGES; i++)
        if (G.stages[i].owner && same_matrix(&G.stages[i], m)) return &G.stages[i];
    return NULL;
}

/* Whether gpu_gemm would compute a product of T rows over m on the device
 * at all (before placement). */
static int worth_device(const gpu_mat *m, int T)
{
    return T > 0 && (uint64_t)m->rows * (uint64_t)m->cols * (uint64_t)T >= env_count("REMORA_GPU_MIN_WORK", GPU_MIN_WORK);
}

/* Starts the copy of m into the next stage on the copy stream (under G.mu,
 * G.cstream open); NULL when a device call failed (the device is closed). */
static stage *stage_in(const gpu_mat *m)
{
    stage *g = &G.stages[G.next_stage];
    G.next_stage = (G.next_stage + 1) % GPU_STAGES;
    g->owner = NULL;
    const size_t wb = (size_t)raw_row_bytes(m->kind, m->cols) * (size_t)m->rows;
    const size_t rsb = m->kind == GPU_W_MXFP4 ? (size_t)m->rows * (size_t)(m->cols / 32) : 0;
    size_t sb = 0;
    const size_t pb = gpu_packed_bytes(m->kind, m->rows, m->cols, &sb);
    cudaError_t e = cudaSuccess;
    /* the stage's last reader must be done before it is overwritten */
    for (int k = 0; k < 1 + GPU_JOBS && e == cudaSuccess; k++)
        if (g->used_recorded[k]) e = cudaStreamWaitEvent(G.cstream, g->used[k], 0);
    if (e == cudaSuccess) e = grow(&g->raw, wb);
    if (e == cudaSuccess && rsb) e = grow(&g->raw_s, rsb);
    if (e == cudaSuccess) e = grow(&g->P, pb);
    if (e == cudaSuccess && sb) e = grow(&g->S, sb);
    if (e == cudaSuccess) e = cudaMemcpyAsync(g->raw.p, m->w, wb, cudaMemcpyHostToDevice, G.cstream);
    if (e == cudaSuccess && rsb) e = cudaMemcpyAsync(g->raw_s.p, m->scale, rsb, cudaMemcpyHostToDevice, G.cstream);
    if (e == cudaSuccess)
        e = gpu_repack(m->kind, g->raw.p, (const uint8_t *)g->raw_s.p, m->rows, m->cols, g->P.p, (uint8_t *)g->S.p,
                       G.cstream);
    if (e == cudaSuccess) e = cudaEventRecord(g->ready, G.cstream);
    if (e != cudaSuccess) { fail("staging weights", e); return NULL; }
    g->owner = m->owner; g->kind = m->kind; g->shard = m->shard; g->off = m->off;
    g->rows = m->rows; g->cols = m->cols;
    G.h2d += wb + rsb;
    return g;
}

void gpu_stage(const gpu_mat *m, int T)
{
    if (!G.active || m->spine || !worth_device(m, T) || T < gpu_min_tokens()) return;
    const char *env = getenv("REMORA_GPU_STAGE");
    if (env && !strcmp(env, "0")) return;
    pthread_mutex_lock(&G.mu);
    int r0 = 0;
    if (G.active && G.cstream && !staged(m) && !find(m, &r0)) {
        cudaError_t e;
        if (!place_expert(m, &e)) {
            if (e != cudaSuccess) fail("placing an expert", e);
            else stage_in(m);
        }
    }
    pthread_mutex_unlock(&G.mu);
}

void gpu_unstage(void)
{
    if (!G.active) return;
    pthread_mutex_lock(&G.mu);
    cudaError_t e = cudaSuccess;
    /* experts launched and not collected (a stop): their results are dropped */
    for (int i = 0; i < GPU_JOBS; i++)
        if (G.jobs[i].busy) {
            const cudaError_t ej = cudaStreamSynchronize(G.jobs[i].stream);
            if (e == cudaSuccess) e = ej;
            G.jobs[i].busy = 0;
        }
    if (G.cstream) {
        const cudaError_t ec = cudaStreamSynchronize(G.cstream);
        if (e == cudaSuccess) e = ec;
    }
    if (e != cudaSuccess) fail("staging weights ahead", e);
    for (int i = 0; i < GPU_STAGES; i++) G.stages[i].owner = NULL;
    pthread_mutex_unlock(&G.mu);
}

/* m's packed weights on the device for a product of T rows on `stream`:
 * placed in VRAM, staged ahead (the stream waits for its copy), or staged
 * now when T is worth the copy (gpu_gemm's rule). Under G.mu; 0, 1 when
 * declined, -1 when a device call failed. */
static int weights_on_device(const gpu_mat *m, int T, cudaStream_t stream, const void **P, const uint8_t **S,
                             stage **sg)
{
    int r0 = 0;
    *sg = NULL;
    *S = NULL;
    cudaError_t we;
    const placed *u = placed_for(m, stream, &r0, &we);
    if (we != cudaSuccess) { fail("waiting for an expert's copy", we); return -1; }
    if (!u && !m->spine && T >= gpu_min_tokens() && !staged(m)) {
        /* placed now: found again as any placed expert, waited for and counted */
        if (place_expert(m, &we)) u = placed_for(m, stream, &r0, &we);
        if (we != cudaSuccess) { fail("placing an expert", we); return -1; }
    }
    if (!u && m->spine) {
        cudaError_t e;
        if (!(u = place(m, &e)) && e != cudaSuccess) { fail("placing weights", e); return -1; }
        /* placed by a copy on the products' stream: done before another stream reads it */
        if (u && (e = cudaStreamSynchronize(G.stream)) != cudaSuccess) { fail("placing weights", e); return -1; }
    }
    if (u) {
        placed_rows(u, m, r0, P, S);
        return 0;
    }
    stage *g = staged(m);
    if (!g && T < gpu_min_tokens()) return 1;
    if (!g && !(g = stage_in(m))) return -1;
    const cudaError_t e = cudaStreamWaitEvent(stream, g->ready, 0);
    if (e != cudaSuccess) { fail("staging weights", e); return -1; }
    *P = g->P.p;
    *S = (const uint8_t *)g->S.p;
    *sg = g;
    return 0;
}

int gpu_expert(const gpu_mat *gate, const gpu_mat *up, const gpu_mat *down, int situ, float beta, float linear_beta,
               const float *X, int T)
{
    if (!G.active || !worth_device(gate, T)) return 1;
    pthread_mutex_lock(&G.mu);
    int r0 = 0;
    /* a short pass of an expert takes the device only where it is placed */
    if (!gate->spine && T < gpu_min_tokens() && !(find(gate, &r0) && find(up, &r0) && find(down, &r0))) {
        pthread_mutex_unlock(&G.mu);
        return 1;
    }
    expert_job *j = NULL;
    for (int i = 0; i < GPU_JOBS; i++)
        if (!G.jobs[i].busy) { j = &G.jobs[i]; break; }
    if (!G.active || !G.cstream || !G.jobs_ok || !j) { pthread_mutex_unlock(&G.mu); return 1; }
    const double t0 = now_s();
    const gpu_mat *ms[3] = { gate, up, down };
    const void *P[3];
    const uint8_t *S[3];
    stage *sg[3];
    for (int i = 0; i < 3; i++)
        if (weights_on_device(ms[i], T, j->stream, &P[i], &S[i], &sg[i])) { pthread_mutex_unlock(&G.mu); return 1; }
    const int I = gate->rows, D = gate->cols, O = down->rows;
    const int ldx = gpu_blocks(D) * GPU_BLK, ldh = gpu_blocks(I) * GPU_BLK;
    const size_t xb = (size_t)T * ldx * sizeof(float), ib = (size_t)T * I * sizeof(float);
    const size_t hb = (size_t)T * ldh * sizeof(float), yb = (size_t)T * O * sizeof(float);
    cudaError_t e;
    if ((e = grow(&j->x, xb)) != cudaSuccess || (e = grow(&j->g, ib)) != cudaSuccess ||
        (e = grow(&j->u, ib)) != cudaSuccess || (e = grow(&j->h, hb)) != cudaSuccess ||
        (e = grow(&j->y, yb)) != cudaSuccess || (e = hgrow(&j->hx, xb)) != cudaSuccess ||
        (e = hgrow(&j->hy, yb)) != cudaSuccess)
        goto failed;
    {
        rows_copy c = { X, (float *)j->hx.p, D, ldx, gpu_in_lanes(T) };
        pool_for(T, copy_rows, &c);
    }
    if ((e = cudaMemcpyAsync(j->x.p, j->hx.p, xb, cudaMemcpyHostToDevice, j->stream)) != cudaSuccess ||
        (e = gpu_product(gate->kind, P[0], S[0], I, D, (const float *)j->x.p, ldx, (float *)j->g.p, T, j->stream)) !=
            cudaSuccess ||
        (e = gpu_product(up->kind, P[1], S[1], I, D, (const float *)j->x.p, ldx, (float *)j->u.p, T, j->stream)) !=
            cudaSuccess ||
        (e = gpu_glu(situ, beta, linear_beta, (const float *)j->g.p, (const float *)j->u.p, (float *)j->h.p, T, I,
                     ldh, j->stream)) != cudaSuccess ||
        (e = gpu_product(down->kind, P[2], S[2], O, I, (const float *)j->h.p, ldh, (float *)j->y.p, T, j->stream)) !=
            cudaSuccess)
        goto failed;
    for (int i = 0; i < 3; i++)
        if (sg[i]) {
            const int k = 1 + (int)(j - G.jobs);
            if ((e = cudaEventRecord(sg[i]->used[k], j->stream)) != cudaSuccess) goto failed;
            sg[i]->used_recorded[k] = 1;
        }
    if ((e = cudaMemcpyAsync(j->hy.p, j->y.p, yb, cudaMemcpyDeviceToHost, j->stream)) != cudaSuccess ||
        (e = cudaEventRecord(j->done, j->stream)) != cudaSuccess)
        goto failed;
    j->busy = 1;
    j->T = T;
    j->rows = O;
    j->seq = ++G.job_seq;
    tally((uint64_t)T * D * sizeof(float), yb, 3, 2ull * (uint64_t)T * (2ull * I * D + (uint64_t)O * I), t0);
    return unlock_after(cudaSuccess, NULL);
failed:
    return unlock_after(e, "launching an expert");
}

/* Scores of one group of heads over the context take two floats a row and
 * context position in VRAM: the groups are sized to this. */
#define MLA_SCORE_BYTES (1ull << 30)

int gpu_mla_takes(int nh, int T, int n_ctx, int lat)
{
    return G.active && T > 0 &&
           (uint64_t)nh * (uint64_t)T * (uint64_t)n_ctx * (uint64_t)lat >= env_count("REMORA_GPU_MIN_WORK", GPU_MIN_WORK);
}

static uint64_t lat_copy_bytes(const lat_copy *k) { return k->lat.cap + k->p1.cap + k->p2.cap; }

static void lat_copy_free(lat_copy *k)
{
    if (k != &G.mla.scratch) G.mla.kept_bytes -= lat_copy_bytes(k);
    dbuf *b[3] = { &k->lat, &k->p1, &k->p2 };
    for (int i = 0; i < 3; i++) {
        if (b[i]->p) cudaFree(b[i]->p);
        b[i]->p = NULL;
        b[i]->cap = 0;
    }
    k->key = 0;
    k->rows = k->cap = 0;
}

void gpu_mla_drop(uint64_t key)
{
    if (!key) return;
    pthread_mutex_lock(&G.mu);
    for (int i = 0; i < MLA_KEPT; i++)
        if (G.mla.kept[i].key == key) lat_copy_free(&G.mla.kept[i]);
    pthread_mutex_unlock(&G.mu);
}

/* The device's copy of cache `key`, holding at least n_ctx rows: the kept
 * one, a new kept one where there is room, else the scratch (its rows 0).
 * Buffers regrown lose their rows. Under G.mu. */
static lat_copy *lat_copy_for(uint64_t key, int n_ctx, int lat, int kvl, int rope, cudaError_t *err)
{
    lat_copy *k = NULL, *free_slot = NULL;
    for (int i = 0; i < MLA_KEPT && !k; i++) {
        if (G.mla.kept[i].key == key) k = &G.mla.kept[i];
        else if (!G.mla.kept[i].key && !free_slot) free_slot = &G.mla.kept[i];
    }
    const size_t row = (size_t)lat * 4 + gpu_packed_bytes(GPU_W_F32, 1, kvl, NULL) +
                       gpu_packed_bytes(GPU_W_F32, 1, rope, NULL);
    if (k && k->cap < n_ctx) {
        /* regrown by doubling, so a conversation's copies stay O(its length) */
        const int want = n_ctx > 2 * k->cap ? n_ctx : 2 * k->cap;
        if (G.mla.kept_bytes - lat_copy_bytes(k) + (size_t)want * row > MLA_KEPT_BYTES) lat_copy_free(k), k = NULL;
    }
    if (!k && free_slot && G.mla.kept_bytes + (size_t)n_ctx * row <= MLA_KEPT_BYTES) k = free_slot;
    if (!k) {
        k = &G.mla.scratch;
        k->rows = 0;
    }
    if (k->cap < n_ctx) {
        const int want = k != &G.mla.scratch && 2 * k->cap > n_ctx ? 2 * k->cap : n_ctx;
        if (k != &G.mla.scratch) G.mla.kept_bytes -= lat_copy_bytes(k);
        if ((*err = grow(&k->lat, (size_t)want * lat * 4)) != cudaSuccess ||
            (*err = grow(&k->p1, gpu_packed_bytes(GPU_W_F32, want, kvl, NULL))) != cudaSuccess ||
            (*err = grow(&k->p2, gpu_packed_bytes(GPU_W_F32, want, rope, NULL))) != cudaSuccess) {
            if (k != &G.mla.scratch) G.mla.kept_bytes += lat_copy_bytes(k);
            return NULL;
        }
        if (k != &G.mla.scratch) G.mla.kept_bytes += lat_copy_bytes(k);
        k->cap = want;
        k->rows = 0;
    }
    if (k != &G.mla.scratch) k->key = key;
    return k;
}

/* Rows [from, n_ctx) of the host's cache into k: copied in, split into the
 * latent and rope parts, and those repacked (row by row independent, so a
 * range repacks in place). */
static cudaError_t lat_copy_update(lat_copy *k, int from, const float *latent, int lat, int kvl, int rope, int n_ctx)
{
    if (from > k->rows) from = k->rows;
    k->rows = n_ctx;
    const int n = n_ctx - from;
    if (n <= 0) return cudaSuccess;
    const size_t r1 = gpu_packed_bytes(GPU_W_F32, 1, kvl, NULL), r2 = gpu_packed_bytes(GPU_W_F32, 1, rope, NULL);
    float *dst = (float *)k->lat.p + (size_t)from * lat;
    cudaError_t e;
    if ((e = grow(&G.mla.l1, (size_t)n * kvl * 4)) != cudaSuccess ||
        (e = grow(&G.mla.l2, (size_t)n * rope * 4)) != cudaSuccess ||
        (e = cudaMemcpyAsync(dst, latent + (size_t)from * lat, (size_t)n * lat * 4, cudaMemcpyHostToDevice,
                             G.stream)) != cudaSuccess ||
        (e = gpu_cols(dst, lat, 0, kvl, (float *)G.mla.l1.p, n, G.stream)) != cudaSuccess ||
        (e = gpu_cols(dst, lat, kvl, rope, (float *)G.mla.l2.p, n, G.stream)) != cudaSuccess ||
        (e = gpu_repack(GPU_W_F32, G.mla.l1.p, NULL, n, kvl, (char *)k->p1.p + (size_t)from * r1, NULL, G.stream)) !=
            cudaSuccess ||
        (e = gpu_repack(GPU_W_F32, G.mla.l2.p, NULL, n, rope, (char *)k->p2.p + (size_t)from * r2, NULL, G.stream)) !=
            cudaSuccess)
        k->rows = 0;
    G.h2d += (uint64_t)n * lat * 4;
    return e;
}

/* One group's core on the device: rows (heads x T) of G.mla.qa and qr
 * scored against the kept cache k, softmax, and the weighted sums into
 * G.mla.ca [rows][kvl]. */
static cudaError_t core_group(const lat_copy *k, int lat, int kvl, int rope, int n_ctx, int pos0, int T, int rows,
                              float scale)
{
    const int ld1 = gpu_blocks(kvl) * GPU_BLK, ld2 = gpu_blocks(rope) * GPU_BLK;
    cudaError_t e;
    if ((e = gpu_product(GPU_W_F32, k->p1.p, NULL, n_ctx, kvl, (const float *)G.mla.qa.p, ld1, (float *)G.mla.s1.p,
                         rows, G.stream)) != cudaSuccess ||
        (e = gpu_product(GPU_W_F32, k->p2.p, NULL, n_ctx, rope, (const float *)G.mla.qr.p, ld2, (float *)G.mla.s2.p,
                         rows, G.stream)) != cudaSuccess ||
        (e = gpu_softmax((float *)G.mla.s1.p, (const float *)G.mla.s2.p, n_ctx, T, pos0, scale, rows, G.stream)) !=
            cudaSuccess)
        return e;
    return gpu_wsum((const float *)G.mla.s1.p, n_ctx, (const float *)k->lat.p, lat, kvl, T, pos0, (float *)G.mla.ca.p,
                    rows, G.stream);
}

/* core_group's device buffers for groups of gr rows. */
static cudaError_t core_buffers(size_t gr, int ld1, int ld2, int n_ctx, int kvl)
{
    cudaError_t e;
    if ((e = grow(&G.mla.qa, gr * ld1 * 4)) != cudaSuccess || (e = grow(&G.mla.qr, gr * ld2 * 4)) != cudaSuccess ||
        (e = grow(&G.mla.s1, gr * n_ctx * 4)) != cudaSuccess || (e = grow(&G.mla.s2, gr * n_ctx * 4)) != cudaSuccess)
        return e;
    return grow(&G.mla.ca, gr * kvl * 4);
}

/* Heads of a group whose scores fit MLA_SCORE_BYTES. */
static size_t score_group(int nh, int T, int n_ctx)
{
    size_t hg = MLA_SCORE_BYTES / (8ull * (size_t)T * (size_t)n_ctx);
    if (hg < 1) hg = 1;
    return hg > (size_t)nh ? (size_t)nh : hg;
}

int gpu_mla_core(uint64_t key, int valid, const float *latent, int lat, int kvl, int rope, int n_ctx, int pos0, int T,
                 int nh, const float *qa, const float *qr, float scale, float *ca)
{
    if (!gpu_mla_takes(nh, T, n_ctx, lat)) return 1;
    pthread_mutex_lock(&G.mu);
    if (!G.active) { pthread_mutex_unlock(&G.mu); return 1; }
    const double t0 = now_s();
    const int ld1 = gpu_blocks(kvl) * GPU_BLK, ld2 = gpu_blocks(rope) * GPU_BLK;
    const size_t hg = score_group(nh, T, n_ctx), gr = hg * (size_t)T;      /* heads and rows of a group */
    cudaError_t e = cudaSuccess;
    lat_copy *k = NULL;
    if ((e = core_buffers(gr, ld1, ld2, n_ctx, kvl)) != cudaSuccess || (e = hgrow(&G.mla.hqa, gr * ld1 * 4)) != cudaSuccess ||
        (e = hgrow(&G.mla.hqr, gr * ld2 * 4)) != cudaSuccess || (e = hgrow(&G.mla.hca, gr * kvl * 4)) != cudaSuccess ||
        !(k = lat_copy_for(key, n_ctx, lat, kvl, rope, &e))) {
        /* no room for the scores is not a failure of the device: the CPU computes them */
        if (e == cudaErrorMemoryAllocation) { cudaGetLastError(); pthread_mutex_unlock(&G.mu); return 1; }
        goto failed;
    }
    /* the context's rows not on the device yet, as two matrices in the device layout */
    if ((e = lat_copy_update(k, valid, latent, lat, kvl, rope, n_ctx)) != cudaSuccess) goto failed;
    for (size_t h0 = 0; h0 < (size_t)nh; h0 += hg) {
        const int rows = (int)((h0 + hg <= (size_t)nh ? hg : nh - h0) * T);
        const size_t r0 = h0 * T;
        {
            rows_copy a = { qa + r0 * kvl, (float *)G.mla.hqa.p, kvl, ld1, gpu_in_lanes(rows) };
            pool_for(rows, copy_rows, &a);
            rows_copy b = { qr + r0 * rope, (float *)G.mla.hqr.p, rope, ld2, gpu_in_lanes(rows) };
            pool_for(rows, copy_rows, &b);
        }
        if ((e = cudaMemcpyAsync(G.mla.qa.p, G.mla.hqa.p, (size_t)rows * ld1 * 4, cudaMemcpyHostToDevice, G.stream)) !=
                cudaSuccess ||
            (e = cudaMemcpyAsync(G.mla.qr.p, G.mla.hqr.p, (size_t)rows * ld2 * 4, cudaMemcpyHostToDevice, G.stream)) !=
                cudaSuccess ||
            (e = core_group(k, lat, kvl, rope, n_ctx, pos0, T, rows, scale)) != cudaSuccess ||
            (e = cudaMemcpyAsync(G.mla.hca.p, G.mla.ca.p, (size_t)rows * kvl * 4, cudaMemcpyDeviceToHost, G.stream)) !=
                cudaSuccess ||
            (e = cudaStreamSynchronize(G.stream)) != cudaSuccess)
            goto failed;
        rows_copy c = { (const float *)G.mla.hca.p, ca + r0 * kvl, kvl, kvl, 0 };
        pool_for(rows, copy_rows, &c);
        const uint64_t sc = (uint64_t)rows * n_ctx;
        tally((uint64_t)rows * (ld1 + ld2) * 4, (uint64_t)rows * kvl * 4, 2,
              2ull * sc * (uint64_t)(kvl + rope) + 2ull * sc / 2 * (uint64_t)kvl, t0);
    }
    return unlock_after(cudaSuccess, NULL);
failed:
    if (k) k->rows = 0;
    return unlock_after(e, "computing attention");
}

/* Rows of a group's values [heads][T][dv] into the caller's a [T][nh][dv]. */
typedef struct values_out {
    const float *from;
    float *a;
    int T, nh, h0, dv;
} values_out;

static void copy_values(void *ud, int r0, int r1)
{
    const values_out *v = (const values_out *)ud;
    for (int r = r0; r < r1; r++) {
        const int h = r / v->T, t = r % v->T;
        memcpy(v->a + ((size_t)t * v->nh + v->h0 + h) * v->dv, v->from + (size_t)r * v->dv, (size_t)v->dv * 4);
    }
}

int gpu_mla_attend(const gpu_mat *kv_b, int nope, int dv, uint64_t key, int valid, const float *latent, int lat,
                   int kvl, int rope, int n_ctx, int pos0, int T, int nh, const float *q, float scale, float *a)
{
    if (!gpu_mla_takes(nh, T, n_ctx, lat) || kv_b->kind == GPU_W_MXFP4 || kv_b->cols != kvl) return 1;
    pthread_mutex_lock(&G.mu);
    if (!G.active) { pthread_mutex_unlock(&G.mu); return 1; }
    const double t0 = now_s();
    int r0 = 0;
    cudaError_t e = cudaSuccess;
    const placed *u = find(kv_b, &r0);
    if (!u && kv_b->spine) u = place(kv_b, &e);
    if (e != cudaSuccess) { fail("placing weights", e); pthread_mutex_unlock(&G.mu); return 1; }
    if (!u) { pthread_mutex_unlock(&G.mu); return 1; }     /* not in VRAM: the caller's path */
    const void *P;
    const uint8_t *S;
    placed_rows(u, kv_b, r0, &P, &S);
    const int per = nope + dv, dqk = nope + rope;
    const int ld1 = gpu_blocks(kvl) * GPU_BLK, ld2 = gpu_blocks(rope) * GPU_BLK;
    const size_t hg = score_group(nh, T, n_ctx), gr = hg * (size_t)T, prow = gpu_packed_bytes(kv_b->kind, 1, kvl, NULL);
    const size_t qb = (size_t)T * nh * dqk * 4;
    lat_copy *k = NULL;
    if ((e = grow(&G.mla.q, qb)) != cudaSuccess || (e = hgrow(&G.mla.hq, qb)) != cudaSuccess ||
        (e = core_buffers(gr, ld1, ld2, n_ctx, kvl)) != cudaSuccess || (e = grow(&G.mla.cx, gr * ld1 * 4)) != cudaSuccess ||
        (e = grow(&G.mla.o, gr * dv * 4)) != cudaSuccess || (e = hgrow(&G.mla.ho, gr * dv * 4)) != cudaSuccess ||
        !(k = lat_copy_for(key, n_ctx, lat, kvl, rope, &e))) {
        if (e == cudaErrorMemoryAllocation) { cudaGetLastError(); pthread_mutex_unlock(&G.mu); return 1; }
        goto failed;
    }
    {
        rows_copy c = { q, (float *)G.mla.hq.p, nh * dqk, nh * dqk, 0 };
        pool_for(T, copy_rows, &c);
    }
    if ((e = cudaMemcpyAsync(G.mla.q.p, G.mla.hq.p, qb, cudaMemcpyHostToDevice, G.stream)) != cudaSuccess ||
        (e = lat_copy_update(k, valid, latent, lat, kvl, rope, n_ctx)) != cudaSuccess)
        goto failed;
    for (size_t h0 = 0; h0 < (size_t)nh; h0 += hg) {
        const int heads = (int)(h0 + hg <= (size_t)nh ? hg : nh - h0), rows = heads * T;
        if ((e = gpu_absorb(kv_b->kind, P, per, nope, (const float *)G.mla.q.p, nh, dqk, (int)h0, heads, kvl, ld1, rope,
                            ld2, T, gpu_in_lanes(rows), (float *)G.mla.qa.p, (float *)G.mla.qr.p, G.stream)) !=
                cudaSuccess ||
            (e = core_group(k, lat, kvl, rope, n_ctx, pos0, T, rows, scale)) != cudaSuccess ||
            (e = gpu_lay((const float *)G.mla.ca.p, kvl, ld1, gpu_in_lanes(T), (float *)G.mla.cx.p, rows, G.stream)) !=
                cudaSuccess ||
            (e = gpu_product_heads(kv_b->kind, (const char *)P + (h0 * per + nope) * prow, per * prow, dv, kvl,
                                   (const float *)G.mla.cx.p, ld1, (float *)G.mla.o.p, T, heads, G.stream)) !=
                cudaSuccess ||
            (e = cudaMemcpyAsync(G.mla.ho.p, G.mla.o.p, (size_t)rows * dv * 4, cudaMemcpyDeviceToHost, G.stream)) !=
                cudaSuccess ||
            (e = cudaStreamSynchronize(G.stream)) != cudaSuccess)
            goto failed;
        values_out v = { (const float *)G.mla.ho.p, a, T, nh, (int)h0, dv };
        pool_for(rows, copy_values, &v);
        const uint64_t sc = (uint64_t)rows * n_ctx;
        tally(0, (uint64_t)rows * dv * 4, 4,
              2ull * rows * nope * (uint64_t)kvl + 2ull * sc * (uint64_t)(kvl + rope) + 2ull * sc / 2 * (uint64_t)kvl +
                  2ull * rows * dv * (uint64_t)kvl,
              t0);
    }
    G.h2d += qb;
    return unlock_after(cudaSuccess, NULL);
failed:
    if (k) k->rows = 0;
    return unlock_after(e, "computing attention");
}

int gpu_expert_collect(float *Y)
{
    const double t0 = now_s();
    pthread_mutex_lock(&G.mu);
    expert_job *j = NULL;
    for (int i = 0; i < GPU_JOBS; i++)
        if (G.jobs[i].busy && (!j || G.jobs[i].seq < j->seq)) j = &G.jobs[i];
    pthread_mutex_unlock(&G.mu);
    if (!j) return -1;
    /* waited for without the lock: the spine's products may go on meanwhile */
    cudaError_t e = cudaEventSynchronize(j->done);
    if (e == cudaSuccess) {
        rows_copy c = { (const float *)j->hy.p, Y, j->rows, j->rows, 0 };
        pool_for(j->T, copy_rows, &c);
    }
    pthread_mutex_lock(&G.mu);
    j->busy = 0;
    G.seconds += now_s() - t0;  /* the time the caller waited for the device, as for gpu_gemm (with the launch's) */
    if (e != cudaSuccess) fail("computing an expert", e);
    pthread_mutex_unlock(&G.mu);
    return e == cudaSuccess ? 0 : -1;
}

int gpu_gemm(const gpu_mat *m, const float *X, float *Y, int T)
{
    if (!G.active || !worth_device(m, T)) return 1;
    pthread_mutex_lock(&G.mu);
    if (!G.active) { pthread_mutex_unlock(&G.mu); return 1; }
    const double t0 = now_s();
    int r0 = 0;
    cudaError_t e = cudaSuccess;
    const placed *u = placed_for(m, G.stream, &r0, &e);
    if (!u && e == cudaSuccess && m->spine) u = place(m, &e);
    if (e != cudaSuccess) { fail("placing weights", e); pthread_mutex_unlock(&G.mu); return 1; }
    const void *P;
    const uint8_t *S = NULL;
    stage *sg = NULL;
    const int nb = gpu_blocks(m->cols);
    if (u) placed_rows(u, m, r0, &P, &S);
    else {
        if (T < gpu_min_tokens()) { pthread_mutex_unlock(&G.mu); return 1; }
        sg = staged(m);
    }
    if (sg) {
        /* copied in ahead (gpu_stage): the product waits on the copy stream */
        if ((e = cudaStreamWaitEvent(G.stream, sg->ready, 0)) != cudaSuccess) {
            fail("staging weights ahead", e);
            pthread_mutex_unlock(&G.mu);
            return 1;
        }
        P = sg->P.p;
        S = (const uint8_t *)sg->S.p;
    } else if (!u) {
        size_t sb = 0;
        const size_t pb = gpu_packed_bytes(m->kind, m->rows, m->cols, &sb);
        if ((e = grow(&G.tmp, pb)) != cudaSuccess || (sb && (e = grow(&G.tmp_s, sb)) != cudaSuccess) ||
            (e = upload(m, G.tmp.p, (uint8_t *)G.tmp_s.p)) != cudaSuccess) {
            fail("staging weights", e);
            pthread_mutex_unlock(&G.mu);
            return 1;
        }
        P = G.tmp.p;
        S = (const uint8_t *)G.tmp_s.p;
    }
    const int ldx = nb * GPU_BLK;
    const size_t xb = (size_t)T * ldx * sizeof(float), yb = (size_t)T * m->rows * sizeof(float);
    if ((e = grow(&G.x, xb)) != cudaSuccess || (e = grow(&G.y, yb)) != cudaSuccess ||
        (e = hgrow(&G.hy, yb)) != cudaSuccess)
        goto failed;
    /* (the staging is free: every product ends with its stream synchronized) */
    if ((e = send_input(X, m->cols, ldx, T)) != cudaSuccess) goto failed;
    if ((e = gpu_product(m->kind, P, S, m->rows, m->cols, (const float *)G.x.p, ldx, (float *)G.y.p, T, G.stream)) !=
        cudaSuccess)
        goto failed;
    if (sg) {
        if ((e = cudaEventRecord(sg->used[0], G.stream)) != cudaSuccess) goto failed;
        sg->used_recorded[0] = 1;
    }
    if ((e = cudaMemcpyAsync(G.hy.p, G.y.p, yb, cudaMemcpyDeviceToHost, G.stream)) != cudaSuccess) goto failed;
    if ((e = cudaStreamSynchronize(G.stream)) != cudaSuccess) goto failed;
    {
        rows_copy c = { (const float *)G.hy.p, Y, m->rows, m->rows, 0 };
        pool_for(T, copy_rows, &c);
    }
    tally((uint64_t)T * m->cols * sizeof(float), yb, 1, 2ull * m->rows * m->cols * (uint64_t)T, t0);
    return unlock_after(cudaSuccess, NULL);
failed:
    return unlock_after(e, "computing a product");
}

void gpu_forget(const void *owner)
{
    pthread_mutex_lock(&G.mu);
    int k = 0;
    for (int i = 0; i < G.nunits; i++) {
        placed *u = &G.units[i];
        if (u->owner != owner) { G.units[k++] = *u; continue; }
        cudaFree(u->P);
        if (u->S) cudaFree(u->S);
        G.resident -= u->bytes;
    }
    G.nunits = k;
    k = 0;
    for (int i = 0; i < G.nex; i++) {
        placed *u = &G.ex[i];
        if (u->owner != owner) { G.ex[k++] = *u; continue; }
        if (u->ready) cudaEventDestroy(u->ready);
        G.resident -= u->bytes;
    }
    G.nex = k;
    k = 0;
    for (int i = 0; i < G.nslabs; i++) {
        if (G.slabs[i].owner != owner) { G.slabs[k++] = G.slabs[i]; continue; }
        cudaFree(G.slabs[i].p);
    }
    G.nslabs = k;
    G.xfull = 0;
    if (xrehash(G.nex)) { free(G.xhash); G.xhash = NULL; G.xhcap = 0; G.nex = 0; }
    G.spine_resident = 0;
    for (int i = 0; i < G.nunits; i++) G.spine_resident += G.units[i].bytes;
    pthread_mutex_unlock(&G.mu);
}

void gpu_reserve_spine(uint64_t bytes)
{
    pthread_mutex_lock(&G.mu);
    G.spine_reserve = bytes;
    pthread_mutex_unlock(&G.mu);
}

void gpu_pin(void *p, size_t n)
{
    const char *e = getenv("REMORA_GPU_PIN");
    if (!G.active || !p || !n || (e && !strcmp(e, "0"))) return;
    pthread_mutex_lock(&G.mu);
    if (cudaHostRegister(p, n, cudaHostRegisterPortable) != cudaSuccess) cudaGetLastError();   /* then pageable */
    pthread_mutex_unlock(&G.mu);
}

void gpu_unpin(void *p)
{
    if (!G.active || !p) return;
    pthread_mutex_lock(&G.mu);
    if (cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();   /* it was never pinned */
    pthread_mutex_unlock(&G.mu);
}

/* ---- bench-kernels' figures ---------------------------------------------- */

/* Median of n event-timed runs of launch() (after one warm-up), in seconds. */
static int time_median(cudaError_t (*launch)(void *), void *ud, int n, double *sec)
{
    cudaEvent_t a, b;
    double t[16];
    if (n > 16) n = 16;
    if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess) return -1;
    int rc = launch(ud) == cudaSuccess && cudaStreamSynchronize(G.stream) == cudaSuccess ? 0 : -1;
    for (int i = 0; i < n && !rc; i++) {
        float ms = 0;
        if (cudaEventRecord(a, G.stream) != cudaSuccess || launch(ud) != cudaSuccess ||
            cudaEventRecord(b, G.stream) != cudaSuccess || cudaEventSynchronize(b) != cudaSuccess ||
            cudaEventElapsedTime(&ms, a, b) != cudaSuccess)
            rc = -1;
        t[i] = ms * 1e-3;
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    if (rc) return -1;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { const double s = t[j]; t[j] = t[j - 1]; t[j - 1] = s; }
    *sec = t[n / 2];
    return 0;
}

typedef struct probe_args {
    float *out;
    const void *buf;
    size_t bytes;
    double flops;
    gpu_wkind kind;
    const void *P;
    const uint8_t *S;
    int rows, cols, T, ldx;
    const float *X;
    float *Y;
} probe_args;

static cudaError_t run_fma(void *ud)
{
    probe_args *a = (probe_args *)ud;
    return gpu_probe_fma(a->out, 1 << 16, G.stream, &a->flops);
}
static cudaError_t run_read(void *ud)
{
    probe_args *a = (probe_args *)ud;
    return gpu_probe_read(a->buf, a->bytes, a->out, G.stream);
}
static cudaError_t run_h2d(void *ud)
{
    probe_args *a = (probe_args *)ud;
    return cudaMemcpyAsync((void *)a->Y, a->buf, a->bytes, cudaMemcpyHostToDevice, G.stream);
}
static cudaError_t run_product(void *ud)
{
    probe_args *a = (probe_args *)ud;
    return gpu_product(a->kind, a->P, a->S, a->rows, a->cols, a->X, a->ldx, a->Y, a->T, G.stream);
}

int gpu_bench_peak(double *fma_gflops, double *read_gbs)
{
    if (!G.active) return -1;
    pthread_mutex_lock(&G.mu);
    probe_args a;
    memset(&a, 0, sizeof a);
    const size_t bytes = 4ull << 30;    /* many times the 60 MB L2 */
    void *buf = NULL;
    double s1 = 0, s2 = 0;
    int rc = -1;
    if (cudaMalloc((void **)&a.out, 1 << 24) == cudaSuccess && cudaMalloc(&buf, bytes) == cudaSuccess &&
        gpu_fill_random(GPU_W_F32, buf, bytes / 4, 7, G.stream) == cudaSuccess) {
        a.buf = buf;
        a.bytes = bytes;
        if (!time_median(run_fma, &a, 5, &s1) && !time_median(run_read, &a, 5, &s2)) {
            *fma_gflops = a.flops / s1 * 1e-9;
            *read_gbs = (double)bytes / s2 * 1e-9;
            rc = 0;
        }
    }
    if (buf) cudaFree(buf);
    if (a.out) cudaFree(a.out);
    cudaGetLastError();
    pthread_mutex_unlock(&G.mu);
    return rc;
}

int gpu_bench_product(gpu_wkind kind, int rows, int cols, int T, double *gflops, double *wgbs)
{
    if (!G.active) return -1;
    pthread_mutex_lock(&G.mu);
    probe_args a;
    memset(&a, 0, sizeof a);
    const int nb = gpu_blocks(cols);
    size_t sb = 0;
    const size_t pb = gpu_packed_bytes(kind, rows, cols, &sb);
    const size_t raw = (size_t)raw_row_bytes(kind, cols) * rows, raws = kind == GPU_W_MXFP4 ? (size_t)rows * (cols / 32) : 0;
    void *P = NULL, *R = NULL, *Sv = NULL, *RS = NULL, *X = NULL, *Y = NULL;
    double sec = 0;
    int rc = -1;
    a.kind = kind; a.rows = rows; a.cols = cols; a.T = T; a.ldx = nb * GPU_BLK;
    const size_t xb = (size_t)T * a.ldx * sizeof(float);
    if (cudaMalloc(&P, pb) == cudaSuccess && cudaMalloc(&R, raw) == cudaSuccess &&
        (!sb || (cudaMalloc(&Sv, sb) == cudaSuccess && cudaMalloc(&RS, raws) == cudaSuccess)) &&
        cudaMalloc(&X, xb) == cudaSuccess && cudaMalloc(&Y, (size_t)T * rows * sizeof(float)) == cudaSuccess &&
        gpu_fill_random(kind, R, kind == GPU_W_MXFP4 ? raw : raw / (kind == GPU_W_F32 ? 4 : 2), 11, G.stream) ==
            cudaSuccess &&
        (!sb || gpu_fill_random((gpu_wkind)0, RS, raws, 13, G.stream) == cudaSuccess) &&
        gpu_fill_random(GPU_W_F32, X, xb / 4, 17, G.stream) == cudaSuccess &&
        gpu_repack(kind, R, (const uint8_t *)RS, rows, cols, P, (uint8_t *)Sv, G.stream) == cudaSuccess) {
        a.P = P; a.S = (const uint8_t *)Sv; a.X = (const float *)X; a.Y = (float *)Y;
        if (!time_median(run_product, &a, 7, &sec)) {
            *gflops = 2.0 * rows * (double)cols * T / sec * 1e-9;
            *wgbs = (double)(pb + sb) / sec * 1e-9;
            rc = 0;
        }
    }
    cudaFree(P); cudaFree(R); cudaFree(Sv); cudaFree(RS); cudaFree(X); cudaFree(Y);
    cudaGetLastError();
    pthread_mutex_unlock(&G.mu);
    return rc;
}

int gpu_bench_h2d(double *gbs)
{
    if (!G.active) return -1;
    pthread_mutex_lock(&G.mu);
    probe_args a;
    memset(&a, 0, sizeof a);
    a.bytes = 64u << 20;
    void *host = NULL, *dev = NULL;
    double sec = 0;
    int rc = -1;
    if (cudaMallocHost(&host, a.bytes) == cudaSuccess && cudaMalloc(&dev, a.bytes) == cudaSuccess) {
        memset(host, 1, a.bytes);
        a.buf = host;
        a.Y = (float *)dev;
        if (!time_median(run_h2d, &a, 5, &sec)) { *gbs = (double)a.bytes / sec * 1e-9; rc = 0; }
    }
    if (host) cudaFreeHost(host);
    if (dev) cudaFree(dev);
    cudaGetLastError();
    pthread_mutex_unlock(&G.mu);
    return rc;
}
