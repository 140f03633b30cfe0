/* kernels.c — the public face of the kernels (kernels.h): picks the SIMD
 * level once from CPUID (lowered by REMORA_SIMD), fills the tables every
 * level decodes with (mx_tables.c), and splits large products by rows
 * across the compute pool.
 *
 * Every level computes a row in the same order, and a row is always computed
 * whole by one thread, so the results depend neither on the level nor on the
 * thread count. The gemm forms pack the inputs once per product and, per
 * work item of rows, decode the weights to fp32 a column block at a time
 * into panels that the level's register-blocked micro-kernel (gemm_tile)
 * takes a tile of rows x inputs at a time, keeping each output's 16 lane
 * accumulators between column blocks — the same fmas as the gemv, in the
 * same order, with the operands in L1/L2 and each weight decoded once per
 * block of inputs (gemm_block). kern_matmul_f32 is the other order of
 * accumulation, attention's axpy chains, blocked the same way.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "kernels_impl.h"
#include "base/threadpool.h"

/* Products smaller than this many weights run on the calling thread: waking
 * the pool costs more than it saves. */
#define PAR_MIN_WEIGHTS 65536
/* Rows per pool work item of a gemv (the row kernels take rows by fours). */
#define GEMV_ROWS 4
/* x of a gemv_mxfp4 up to this many columns is reordered on the stack. */
#define XP_STACK 4096

static const kern_impl *const levels[] = { &kern_impl_scalar, &kern_impl_avx2, &kern_impl_avx512 };
static int cpu_max;                       /* best level the CPU supports */
static const kern_impl *cur;              /* level in use */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static int level_index(const char *name)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, levels[i]->name)) return i;
    return -1;
}

static void kern_init(void)
{
    kern_tables_init();
    __builtin_cpu_init();
    cpu_max = 0;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        cpu_max = 1;
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
            cpu_max = 2;
    }
    int lv = cpu_max;
    const char *env = getenv("REMORA_SIMD");
    int want = env ? level_index(env) : -1;
    if (want >= 0 && want < lv) lv = want;
    cur = levels[lv];
}

static const kern_impl *impl(void)
{
    pthread_once(&init_once, kern_init);
    return cur;
}

const char *kern_level(void)
{
    return impl()->name;
}

int kern_set_level(const char *name)
{
    impl();
    int i = level_index(name);
    if (i < 0 || i > cpu_max) return -1;
    cur = levels[i];
    return 0;
}

float kern_dot_f32(const float *a, const float *b, int n)
{
    return impl()->dot_f32(a, b, n);
}

void kern_axpy_f32(float a, const float *x, float *y, int n)
{
    impl()->axpy_f32(a, x, y, n);
}

/* Columns of B per pass of kern_matmul_f32's k loop: a block of B of
 * MATMUL_KC rows x 64 columns (32 KB) stays in L1 for every group of 4 rows
 * of A. */
#define MATMUL_KC 128

void kern_matmul_f32(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc,
                     int M, int N, const int *klen)
{
    const kern_impl *k = impl();
    int kmax = 0;
    for (int m = 0; m < M; m++) kmax = klen[m] > kmax ? klen[m] : kmax;
    const int nb = k->matmul4x64_f32 ? N & ~63 : 0;
    /* k in blocks, in increasing order: each element's chain of fmas is
     * the same whatever the blocking */
    for (int k0 = 0; k0 < kmax; k0 += MATMUL_KC) {
        const int k1 = kmax - k0 < MATMUL_KC ? kmax : k0 + MATMUL_KC;
        for (int n0 = 0; n0 < nb; n0 += 64)
            for (int m0 = 0; m0 < M; m0 += 4) {
                /* the k every row of the group takes in this block ... */
                int kn = k1 - k0;
                for (int m = m0; m < m0 + 4 && m < M; m++)
                    if (klen[m] - k0 < kn) kn = klen[m] - k0;
                if (m0 + 4 <= M && kn > 0)
                    k->matmul4x64_f32(A + m0 * lda + k0, lda, B + (size_t)k0 * ldb + n0, ldb, C + m0 * ldc + n0, ldc, kn);
                else
                    kn = 0;
                /* ... and each row's rest */
                for (int m = m0; m < m0 + 4 && m < M; m++) {
                    const int ke = klen[m] < k1 ? klen[m] : k1;
                    for (int kk = k0 + kn; kk < ke; kk++)
                        k->axpy_f32(A[m * lda + kk], B + (size_t)kk * ldb + n0, C + m * ldc + n0, 64);
                }
            }
        for (int m = 0; m < M && nb < N; m++) {
            const int ke = klen[m] < k1 ? klen[m] : k1;
            for (int kk = k0; kk < ke; kk++)
                k->axpy_f32(A[m * lda + kk], B + (size_t)kk * ldb + nb, C + m * ldc + nb, N - nb);
        }
    }
}

/* Where kern_fma_probe's result goes, so that its loop is not dead. */
static volatile float probe_sink;

double kern_fma_probe(long n)
{
    const kern_impl *k = impl();
    probe_sink = k->fma_probe(n);
    return 2.0 * k->probe_fmas * k->width * (double)n;
}

float kern_read_probe(const float *p, size_t n)
{
    return impl()->read_probe(p, n);
}

/* Groups of 16 columns per call of kern_tile_probe: a 512-column block,
 * as the gemm's blocking gives the tile (GEMM_KC). */
#define PROBE_GROUPS 32

double kern_tile_probe(long n)
{
    const kern_impl *k = impl();
    const int R = k->tile_rows, TT = k->tile_toks;
    /* the panels of the largest level (4 x 6 tiles: 8 KB + 12 KB + 1.5 KB),
     * per thread so that concurrent probes share no lines */
    static _Thread_local float wp[8 * PROBE_GROUPS * 16] __attribute__((aligned(64)));
    static _Thread_local float xp[8 * PROBE_GROUPS * 16] __attribute__((aligned(64)));
    static _Thread_local float acc[8 * 8 * 16] __attribute__((aligned(64)));
    if (R > 8 || TT > 8) return 0;
    for (int i = 0; i < 8 * PROBE_GROUPS * 16; i++) wp[i] = xp[i] = 1e-3f;
    for (long i = 0; i < n; i++) k->gemm_tile(wp, xp, PROBE_GROUPS, TT, i == 0, acc);
    probe_sink = acc[0];
    return 2.0 * 16 * R * TT * PROBE_GROUPS * (double)n;
}

void kern_kda_step(float *S, const float *alpha, const float *k, const float *q,
                   const float *v, float beta, float *o, float *u, int hd)
{
    impl()->kda_step(S, alpha, k, q, v, beta, o, u, hd);
}

/* ---- splitting rows across the pool ------------------------------------ */

enum { W_F32, W_BF16, W_MXFP4 };

/* One product: weights of one encoding, X[T, cols] → Y[T, rows]. */
typedef struct {
    const kern_impl *k;
    int enc;
    const void *W;
    const uint8_t *scale;     /* MXFP4 only */
    const float *X, *xp;      /* xp: gemv_mxfp4's reordered x */
    float *xg;                /* gemm: X in gemm_tile's panels (pack_inputs) */
    float *Y;
    int T, rows, cols;
    size_t ldw;               /* F32: floats between rows of W (cols unless a column range,
                               * which the gemv takes as one dot product per row) */
} product;

static void gemv_rows(const product *p, int r0, int r1)
{
    switch (p->enc) {
    case W_F32:
        if (p->ldw == (size_t)p->cols)
            p->k->gemv_f32(p->W, p->X, p->Y, r0, r1, p->cols);
        else                    /* a column range: each row's dot product */
            for (int r = r0; r < r1; r++) p->Y[r] = p->k->dot_f32((const float *)p->W + (size_t)r * p->ldw, p->X, p->cols);
        break;
    case W_BF16:
        p->k->gemv_bf16(p->W, p->X, p->Y, r0, r1, p->cols);
        break;
    default:
        p->k->gemv_mxfp4(p->W, p->scale, p->X, p->xp, p->Y, r0, r1, p->cols);
        break;
    }
}

static void gemv_task(void *ud, int b, int e)
{
    const product *p = ud;
    int r1 = e * GEMV_ROWS < p->rows ? e * GEMV_ROWS : p->rows;
    gemv_rows(p, b * GEMV_ROWS, r1);
}

/* Reorders x into the register order of a level's MXFP4 gemv. */
static void reorder_x(const uint8_t order[16], const float *x, float *xp, int cols)
{
    for (int g = 0; g < cols; g += 16)
        for (int e = 0; e < 16; e++)
            xp[g + e] = x[g + order[e]];
}

static void gemv(int enc, const void *W, size_t ldw, const uint8_t *scale, const float *x, float *y,
                 int rows, int cols)
{
    if (rows <= 0) return;
    product p = { .k = impl(), .enc = enc, .W = W, .scale = scale, .X = x, .Y = y,
                  .T = 1, .rows = rows, .cols = cols, .ldw = ldw };
    float stack[XP_STACK], *heap = NULL;
    if (enc == W_MXFP4 && p.k->mx_order) {
        float *xp = cols <= XP_STACK ? stack : (heap = malloc((size_t)cols * sizeof *xp));
        if (xp) {
            reorder_x(p.k->mx_order, x, xp, cols);
            p.xp = xp;
        } else {
            p.k = &kern_impl_scalar;      /* same bits, just slower */
        }
    }
    int items = (rows + GEMV_ROWS - 1) / GEMV_ROWS;
    if ((size_t)rows * (size_t)cols < PAR_MIN_WEIGHTS)
        gemv_task(&p, 0, items);
    else
        pool_for(items, gemv_task, &p);
    free(heap);
}

void kern_gemv_f32(const float *W, const float *x, float *y, int rows, int cols)
{
    gemv(W_F32, W, (size_t)cols, NULL, x, y, rows, cols);
}

void kern_gemv_bf16(const uint16_t *W, const float *x, float *y, int rows, int cols)
{
    gemv(W_BF16, W, (size_t)cols, NULL, x, y, rows, cols);
}

void kern_gemv_mxfp4(const uint8_t *packed, const uint8_t *scale, const float *x,
                     float *y, int rows, int cols)
{
    gemv(W_MXFP4, packed, (size_t)cols, scale, x, y, rows, cols);
}

/* The blocking around the micro-kernel (kern_impl.gemm_tile). A pool work
 * item is GEMM_MC weight rows; its inputs go in blocks of up to GEMM_NT
 * (the T inputs split evenly), the columns in blocks of GEMM_KC. Per column
 * block the item decodes its rows once into packed panels of tile_rows
 * rows (GEMM_MC x GEMM_KC floats, 128 KB, in L2) and packs the input
 * block's columns into panels of tile_toks inputs (12 KB per panel, in L1
 * while every weight panel streams past it); the accumulators of the item's
 * GEMM_MC x GEMM_NT outputs (768 KB) wait in L2 between column blocks,
 * loaded and stored once per micro-kernel call of GEMM_KC / 16 groups.
 * Measured on the 2-core development machine (Sapphire Rapids VM, 48 KB L1
 * and 2 MB L2 per core, shared with other builds: per CPU-second, best of 5
 * products, 3 interleaved rounds, 1 thread, bf16 1024x7168 and MXFP4
 * 3072x3584 at T = 256): MC x NT x KC = 64 x 192 x 512 gave 81-110
 * GFLOP/s, 32 x 192 x 512 84-105, 64 x 96 x 512 72-118, 128 x 96 x 256
 * 89-112, 64 x 192 x 256 80-109 — no shape apart from the noise; the
 * micro-kernel alone on L1-resident panels makes 0.85 of the FMA peak.
 * Packing the inputs per work item instead of once per product took a
 * third of the time (its stores go a panel apart).
 * On the 2-core Zen 4 host (1 MB L2 per core, which the accumulators and
 * panels pass at T = 1024) no shape was better either: 1 thread, per
 * CPU-second, best of 6-24 products, 2-3 interleaved rounds, MXFP4
 * 3072x3584 at T = 1024 73-78 GFLOP/s with this shape, 73-84 with 64 x 96 x
 * 512, 69-72 with 32 x 96 x 512; at T = 256 79-91 against 81-94 and 86-90.
 * Nor were 2 MB pages (madvise(MADV_HUGEPAGE)) for the packed buffers: best
 * windows of 3 interleaved runs from 6% below to 3% above 4 KB pages, at
 * T = 256 and 1024, 1 and 2 threads. MXFP4 at T = 1024 stays below T = 256
 * per CPU-second too (80 against 95 GFLOP/s at best), so that gap is not
 * the co-tenants' scheduling; its cause is still open. */
#define GEMM_MC 64
#define GEMM_KC 512
#define GEMM_NT 192

/* Per-thread float buffers kept between products, one key per use (a
 * fresh megabyte per product is a megabyte of page faults): the task's
 * working memory (task_work) and the packed inputs (inputs_buf). */
enum { BUF_WORK, BUF_INPUTS, BUF_KINDS };
static pthread_key_t buf_key[BUF_KINDS];
static pthread_once_t buf_once = PTHREAD_ONCE_INIT;
static void buf_keys_init(void)
{
    for (int k = 0; k < BUF_KINDS; k++) pthread_key_create(&buf_key[k], free);
}

typedef struct { size_t floats; size_t pad[7]; float f[]; } work_buf;   /* f 64-byte aligned */

/* The calling thread's buffer `kind` of at least `floats` floats, grown
 * as needed; NULL when out of memory. */
static float *thread_buf(int kind, size_t floats)
{
    pthread_once(&buf_once, buf_keys_init);
    work_buf *w = pthread_getspecific(buf_key[kind]);
    if (w && w->floats >= floats) return w->f;
    free(w);
    w = aligned_alloc(64, (sizeof *w + floats * sizeof(float) + 63) & ~(size_t)63);
    if (w) w->floats = floats;
    pthread_setspecific(buf_key[kind], w);
    return w ? w->f : NULL;
}

/* A task's working memory: packed weights, packed inputs and accumulators. */
static float *task_work(size_t floats) { return thread_buf(BUF_WORK, floats); }

/* The weight of column c of row r, for the columns past the last group of
 * 16 (never MXFP4, whose rows are whole blocks of 32). */
static float weight_at(const product *p, int r, int c)
{
    if (p->enc == W_F32) return ((const float *)p->W)[(size_t)r * p->ldw + c];
    return bf16_to_f32(((const uint16_t *)p->W)[(size_t)r * p->cols + c]);
}

/* Asks for the encoded weights of rows [r0, r0+nr), columns [c0, c0+kc),
 * the ones the next decode reads: they are a row length apart, which the
 * hardware prefetchers do not follow, and they come from memory. */
static void prefetch_rows(const product *p, int r0, int nr, int c0, int kc)
{
    if (nr <= 0) return;
    const size_t esz = p->enc == W_F32 ? 4 : 2;
    const size_t row = p->enc == W_MXFP4 ? (size_t)p->cols / 2 : (p->enc == W_F32 ? p->ldw : (size_t)p->cols) * esz;
    const size_t off = p->enc == W_MXFP4 ? (size_t)c0 / 2 : (size_t)c0 * esz;
    const size_t len = p->enc == W_MXFP4 ? (size_t)kc / 2 : (size_t)kc * esz;
    for (int r = r0; r < r0 + nr; r++) {
        const char *q = (const char *)p->W + (size_t)r * row + off;
        for (size_t b = 0; b < len; b += 64) __builtin_prefetch(q + b, 0, 2);
        if (p->enc == W_MXFP4) __builtin_prefetch(p->scale + (size_t)r * (p->cols / 32) + c0 / 32, 0, 2);
    }
}

/* Decodes row r, columns [c0, c0+kc), into one row of a packed panel:
 * group g at out + g * gs. */
static void pack_row(const product *p, int r, int c0, int kc, float *out, size_t gs)
{
    const int cols = p->cols;
    if (p->enc == W_F32) {
        const float *w = (const float *)p->W + (size_t)r * p->ldw + c0;
        for (int g = 0; g < kc / 16; g++) memcpy(out + g * gs, w + 16 * g, 16 * sizeof *w);
    } else if (p->enc == W_BF16) {
        p->k->decode_bf16((const uint16_t *)p->W + (size_t)r * cols + c0, out, kc, gs);
    } else {
        p->k->decode_mxfp4((const uint8_t *)p->W + (size_t)r * (cols / 2) + c0 / 2,
                           p->scale + (size_t)r * (cols / 32) + c0 / 32, out, kc, gs);
    }
}

/* X[T, cols] into gemm_tile's input panels, for all column blocks at once
 * (packed per task instead, the copy took a third of the time: its stores
 * go a panel apart): column block c0 (kc columns) at xg + T c0, in it the
 * panel of inputs from t (a multiple of tile_toks; n = min(tile_toks, T -
 * t) inputs), group g, input i at t kc + (g n + i) 16. Panels [b, e). */
static void pack_inputs(void *ud, int b, int e)
{
    const product *p = ud;
    const int TT = p->k->tile_toks, cols = p->cols, full = cols & ~15;
    for (int c0 = 0; c0 < full; c0 += GEMM_KC) {
        const int kc = full - c0 < GEMM_KC ? full - c0 : GEMM_KC, ng = kc / 16;
        for (int t = b * TT; t < e * TT && t < p->T; t += TT) {
            const int n = p->T - t < TT ? p->T - t : TT;
            float *xo = p->xg + (size_t)p->T * c0 + (size_t)t * kc;
            for (int g = 0; g < ng; g++)
                for (int i = 0; i < n; i++, xo += 16)
                    memcpy(xo, p->X + (size_t)(t + i) * cols + c0 + 16 * g, 16 * sizeof *xo);
        }
    }
}

/* Outputs of rows [r0, r0+nr) x inputs [t0, t0+nt), nr <= GEMM_MC,
 * nt <= GEMM_NT and t0 a multiple of tile_toks: one block of a task.
 *
 * Layouts, with R = tile_rows, TT = tile_toks, ng = kc / 16:
 *   wp: row panel q (rows r0 + qR ..), group g, row j at ((q ng + g) R + j) 16
 *       (a short last panel repeats its last row, computed and dropped);
 *   xp: the block's inputs in p->xg (pack_inputs);
 *   acc: the outputs of input panel t, row panel q, input i, row j at
 *       (t npan R + q R n + i R + j) 16 — so in output order each panel
 *       pair's tile is contiguous, as gemm_tile leaves it.
 * The column tail and the reduction end each output. */
static void gemm_block(const product *p, float *wp, float *acc, int r0, int nr, int t0, int nt)
{
    const kern_impl *k = p->k;
    const int R = k->tile_rows, TT = k->tile_toks, cols = p->cols, full = cols & ~15;
    const int npan = (nr + R - 1) / R, ntp = (nt + TT - 1) / TT;
    const float *X = p->X + (size_t)t0 * cols;
    for (int c0 = 0; c0 < full; c0 += GEMM_KC) {
        const int kc = full - c0 < GEMM_KC ? full - c0 : GEMM_KC, ng = kc / 16;
        for (int j = 0; j < npan * R; j++)
            pack_row(p, r0 + (j < nr ? j : nr - 1), c0, kc, wp + ((size_t)(j / R) * ng * R + j % R) * 16,
                     (size_t)R * 16);
        const float *xp = p->xg + (size_t)p->T * c0 + (size_t)t0 * kc;
        /* the next column block's weights, asked for a few rows per input
         * panel while this block computes */
        int nx_r0 = r0, nx_c0 = c0 + GEMM_KC, nx_n = nr;
        if (nx_c0 >= full) {          /* the next input block's, or the next tile's (pool_for's
                                       * chunks are contiguous) */
            nx_c0 = 0;
            if (t0 + nt >= p->T) {
                nx_r0 = r0 + nr;
                nx_n = p->rows - nx_r0 < GEMM_MC ? p->rows - nx_r0 : GEMM_MC;
            }
        }
        const int nx_kc = full - nx_c0 < GEMM_KC ? full - nx_c0 : GEMM_KC;
        const int per_tp = (nx_n + ntp - 1) / ntp;
        for (int t = 0, tp = 0; t < nt; t += TT, tp++) {
            const int n = nt - t < TT ? nt - t : TT;
            if (tp * per_tp < nx_n)
                prefetch_rows(p, nx_r0 + tp * per_tp, nx_n - tp * per_tp < per_tp ? nx_n - tp * per_tp : per_tp,
                              nx_c0, nx_kc);
            const float *xo = xp + (size_t)t * kc;
            float *a = acc + (size_t)t * npan * R * 16;
            for (int q = 0; q < npan; q++, a += (size_t)R * n * 16)
                k->gemm_tile(wp + (size_t)q * ng * R * 16, xo, ng, n, c0 == 0, a);
        }
    }
    if (full == 0)
        memset(acc, 0, (size_t)npan * R * nt * 16 * sizeof *acc);
    /* the input and row of each output, in acc's order */
    const int nout = npan * R * nt;
    uint16_t *ot = (uint16_t *)(acc + ((size_t)nout + 16) * 16), *oj = ot + nout;
    for (int t = 0, o = 0; t < nt; t += TT) {
        const int n = nt - t < TT ? nt - t : TT;
        for (int q = 0; q < npan; q++)
            for (int i = 0; i < n; i++)
                for (int j = 0; j < R; j++, o++) {
                    ot[o] = (uint16_t)(t + i);
                    oj[o] = (uint16_t)(q * R + j);
                }
    }
    if (full < cols)
        for (int o = 0; o < nout; o++) {
            const int r = r0 + (oj[o] < nr ? oj[o] : nr - 1);
            const float *x = X + (size_t)ot[o] * cols;
            float *l = acc + (size_t)o * 16;
            for (int c = full; c < cols; c++)
                l[c & 15] = fmaf(weight_at(p, r, c), x[c], l[c & 15]);
        }
    float *Y = p->Y + (size_t)t0 * p->rows + r0;
    for (int o0 = 0; o0 < nout; o0 += 16) {
        float sum[16];
        k->reduce16x16(acc + (size_t)o0 * 16, sum);     /* acc has room for a last 16 */
        for (int o = o0; o < o0 + 16 && o < nout; o++)
            if (oj[o] < nr) Y[(size_t)ot[o] * p->rows + oj[o]] = sum[o - o0];
    }
}

static void gemm_task(void *ud, int b, int e)
{
    const product *p = ud;
    const int R = p->k->tile_rows, TT = p->k->tile_toks;
    const int r0 = b * GEMM_MC, r1 = e * GEMM_MC < p->rows ? e * GEMM_MC : p->rows;
    /* input blocks of equal size, whole panels */
    const int nblk = (p->T + GEMM_NT - 1) / GEMM_NT;
    const int per = ((p->T + nblk - 1) / nblk + TT - 1) / TT * TT;
    const size_t wfl = (size_t)(GEMM_MC + R) * GEMM_KC;
    const size_t nout = (size_t)(GEMM_MC + R) * (GEMM_NT + TT);
    float *buf = task_work(wfl + (nout + 16) * 16 + nout);   /* + the output map (gemm_block) */
    if (!buf || !p->xg) {
        /* No room to pack: one gemv per input row gives the same bits. */
        for (int t = 0; t < p->T; t++) {
            product q = *p;
            q.k = &kern_impl_scalar;
            q.X = p->X + (size_t)t * p->cols;
            q.Y = p->Y + (size_t)t * p->rows;
            gemv_rows(&q, r0, r1);
        }
        return;
    }
    for (int r = r0; r < r1; r += GEMM_MC)
        for (int t0 = 0; t0 < p->T; t0 += per)
            gemm_block(p, buf, buf + wfl, r, r1 - r < GEMM_MC ? r1 - r : GEMM_MC,
                       t0, p->T - t0 < per ? p->T - t0 : per);
}

/* The packed inputs' buffer, one per calling thread, kept between products
 * (prefill's products repeat the same sizes). A product whose packed inputs
 * would pass XG_FLOATS (16 MB) runs in input ranges that fit, so the copy
 * adds at most that to the memory the RAM budget's overhead allows for
 * (each output's fmas do not depend on the range it is computed in). */
#define XG_FLOATS ((size_t)4 << 20)
static float *inputs_buf(size_t floats) { return thread_buf(BUF_INPUTS, floats); }

static void gemm(int enc, const void *W, size_t ldw, const uint8_t *scale, const float *X, float *Y,
                 int T, int rows, int cols)
{
    if (T <= 0 || rows <= 0) return;
    if (T == 1) {
        gemv(enc, W, ldw, scale, X, Y, rows, cols);
        return;
    }
    product p = { .k = impl(), .enc = enc, .W = W, .scale = scale, .X = X, .Y = Y,
                  .T = T, .rows = rows, .cols = cols, .ldw = ldw };
    const int TT = p.k->tile_toks, full = cols & ~15;
    int range = full > 0 ? (int)(XG_FLOATS / (size_t)full) / TT * TT : T;
    if (range < TT) range = TT;
    const int items = (rows + GEMM_MC - 1) / GEMM_MC;
    for (int t0 = 0; t0 < T; t0 += range) {
        p.T = T - t0 < range ? T - t0 : range;
        p.X = X + (size_t)t0 * cols;
        p.Y = Y + (size_t)t0 * rows;
        p.xg = inputs_buf((size_t)p.T * full + 16);
        const int panels = (p.T + TT - 1) / TT;
        const int par = (size_t)p.T * rows * cols >= PAR_MIN_WEIGHTS;
        if (p.xg) {
            if (par) pool_for(panels, pack_inputs, &p);
            else pack_inputs(&p, 0, panels);
        }
        if (par) pool_for(items, gemm_task, &p);
        else gemm_task(&p, 0, items);
    }
}

void kern_gemm_f32(const float *W, const float *X, float *Y, int T, int rows, int cols)
{
    gemm(W_F32, W, (size_t)cols, NULL, X, Y, T, rows, cols);
}

void kern_gemm_f32_ld(const float *W, size_t ldw, const float *X, float *Y, int T, int rows, int cols)
{
    gemm(W_F32, W, ldw, NULL, X, Y, T, rows, cols);
}

void kern_gemm_bf16(const uint16_t *W, const float *X, float *Y, int T, int rows, int cols)
{
    gemm(W_BF16, W, (size_t)cols, NULL, X, Y, T, rows, cols);
}

void kern_gemm_mxfp4(const uint8_t *packed, const uint8_t *scale, const float *X,
                     float *Y, int T, int rows, int cols)
{
    gemm(W_MXFP4, packed, (size_t)cols, scale, X, Y, T, rows, cols);
}
