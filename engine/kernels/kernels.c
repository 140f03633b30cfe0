/* kernels.c — the public face of the kernels (kernels.h): picks the SIMD
 * level once from CPUID (lowered by REMORA_SIMD), fills the tables every
 * level decodes with (mx_tables.c), and splits large products by rows
 * across the compute pool.
 *
 * Every level computes a row in the same order, and a row is always computed
 * whole by one thread, so the results depend neither on the level nor on the
 * thread count. The gemm forms decode the weights to fp32 a column block at a
 * time and take each block's part of every dot product, keeping the 16 lane
 * accumulators of each output between blocks — the same fmas as the gemv, in
 * the same order, but with the operands in L1 and each weight read once per
 * tile of inputs (gemm_tile). kern_matmul_f32 is the other order of
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
/* Weight rows decoded together, a column block at a time: their fp32 copy
 * (GEMM_ROWS x GEMM_KC floats, 16 KB) stays in L1 while the inputs go past
 * it. */
#define GEMM_ROWS 8
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

/* The weight of column c of row r, for the columns past the last group of
 * 16 (never MXFP4, whose rows are whole blocks of 32). */
static float weight_at(const product *p, int r, int c)
{
    if (p->enc == W_F32) return ((const float *)p->W)[(size_t)r * p->ldw + c];
    return bf16_to_f32(((const uint16_t *)p->W)[(size_t)r * p->cols + c]);
}

/* A gemm task's tile (gemm_tile): GEMM_TILE_ROWS weight rows, as many
 * inputs as keep their accumulators (64 bytes per output) within
 * GEMM_ACC_BYTES of L2, the columns in blocks of GEMM_KC. Measured on the
 * 2-core development machine (Sapphire Rapids: 48 KB L1, 2 MB L2), 2
 * threads, against 16-row tiles over 2 MB sweeps of the inputs: bf16 1024 x
 * 7168 at T = 256 141 -> 158 GFLOP/s, 12288 x 7168 at T = 1024 135 -> 151,
 * MXFP4 3072 x 3584 at T = 42 (a routed expert's rows in a 2048-token
 * prompt) 170 -> 187. 64 or 256 rows, 512 KB of accumulators, groups of 16
 * rows or column blocks of 256 or 1024 were each no better. */
#define GEMM_TILE_ROWS 128
#define GEMM_KC 512
#define GEMM_ACC_BYTES (1u << 20)

/* A task's working memory: one decoded column block of GEMM_ROWS rows and
 * the accumulators of its rows x inputs. Kept per thread between products
 * (a fresh megabyte per product is a megabyte of page faults). */
static pthread_key_t work_key;
static pthread_once_t work_once = PTHREAD_ONCE_INIT;
static void work_key_init(void) { pthread_key_create(&work_key, free); }

typedef struct { size_t floats; float f[]; } work_buf;

static float *task_work(size_t floats)
{
    pthread_once(&work_once, work_key_init);
    work_buf *w = pthread_getspecific(work_key);
    if (w && w->floats >= floats) return w->f;
    free(w);
    w = aligned_alloc(64, (sizeof *w + floats * sizeof(float) + 63) & ~(size_t)63);
    if (w) w->floats = floats;
    pthread_setspecific(work_key, w);
    return w ? w->f : NULL;
}

/* Asks for the encoded weights of rows [r0, r0+nr), columns [c0, c0+kc),
 * the ones the next decode reads: they are a row length apart, which the
 * hardware prefetchers do not follow, and they come from memory. */
static void prefetch_rows(const product *p, int r0, int nr, int c0, int kc)
{
    if (p->enc == W_F32 || nr <= 0) return;
    const size_t row = p->enc == W_BF16 ? (size_t)p->cols * 2 : (size_t)p->cols / 2;
    const size_t off = p->enc == W_BF16 ? (size_t)c0 * 2 : (size_t)c0 / 2;
    const size_t len = p->enc == W_BF16 ? (size_t)kc * 2 : (size_t)kc / 2;
    for (int r = r0; r < r0 + nr; r++) {
        const char *q = (const char *)p->W + (size_t)r * row + off;
        for (size_t b = 0; b < len; b += 64) __builtin_prefetch(q + b, 0, 2);
        if (p->enc == W_MXFP4) __builtin_prefetch(p->scale + (size_t)r * (p->cols / 32) + c0 / 32, 0, 2);
    }
}

/* Decodes rows [r0, r0+nr), columns [c0, c0+kc) to fp32 rows of GEMM_KC. */
static void decode_block(const product *p, int r0, int nr, int c0, int kc, float *out)
{
    const int cols = p->cols;
    for (int r = 0; r < nr; r++) {
        float *o = out + (size_t)r * GEMM_KC;
        if (p->enc == W_BF16)
            p->k->decode_bf16((const uint16_t *)p->W + (size_t)(r0 + r) * cols + c0, o, kc);
        else
            p->k->decode_mxfp4((const uint8_t *)p->W + (size_t)(r0 + r) * (cols / 2) + c0 / 2,
                               p->scale + (size_t)(r0 + r) * (cols / 32) + c0 / 32, o, kc);
    }
}

/* Outputs of rows [r0, r1) x inputs [t0, t0+nt): the tile of a task.
 *
 * Its accumulators (16 lanes per output, acc) stay in L2 while the columns
 * go by in blocks of GEMM_KC: per block, each group of GEMM_ROWS weight rows
 * is decoded to fp32 (wbuf, in L1) and every 4 x 4 tile of those rows x 4
 * inputs takes the block's columns, with the inputs' block (nt x GEMM_KC)
 * staying in L2 for all the row groups. So each weight is decoded once per
 * tile and each input read from memory once per tile: at 128 rows x 128
 * inputs, 1/128 of a byte per flop for bf16 weights and 1/64 for the fp32
 * inputs, where cutting only the inputs (2 MB sweeps, 16 rows at a time)
 * read the 33792-column weights of K3's dense layer again every 16 inputs.
 * The column tail and the reduction end each output. */
static void gemm_tile(const product *p, float *wbuf, float *acc, int r0, int r1, int t0, int nt)
{
    const int cols = p->cols, full = cols & ~15, nr = r1 - r0;
    const int nrg = (nr + GEMM_ROWS - 1) / GEMM_ROWS, tgs = (nt + 3) / 4;
    const int rgs = GEMM_ROWS / 4;             /* tiles of 4 rows per row group */
    const size_t per_group = (size_t)tgs * rgs * 256;
    memset(acc, 0, (size_t)nrg * per_group * sizeof *acc);
    const float *X = p->X + (size_t)t0 * cols;
    for (int c0 = 0; c0 < full; c0 += GEMM_KC) {
        const int kc = full - c0 < GEMM_KC ? full - c0 : GEMM_KC;
        for (int g = 0; g < nrg; g++) {
            const int gr0 = r0 + g * GEMM_ROWS, gn = r1 - gr0 < GEMM_ROWS ? r1 - gr0 : GEMM_ROWS;
            const float *w = wbuf;
            size_t ldw = (size_t)GEMM_KC;
            if (p->enc == W_F32) {
                w = (const float *)p->W + (size_t)gr0 * p->ldw + c0;
                ldw = p->ldw;
            } else {
                decode_block(p, gr0, gn, c0, kc, wbuf);
            }
            /* the next group's weights (or the next block's first), asked
             * for a few rows per input group while this group computes */
            int nx_r0 = gr0 + GEMM_ROWS, nx_c0 = c0;
            if (g + 1 == nrg) { nx_r0 = r0; nx_c0 = c0 + GEMM_KC; }
            const int nx_n = nx_c0 >= full ? 0 : (r1 - nx_r0 < GEMM_ROWS ? r1 - nx_r0 : GEMM_ROWS);
            const int nx_kc = full - nx_c0 < GEMM_KC ? full - nx_c0 : GEMM_KC;
            const int per_tg = (nx_n + tgs - 1) / tgs;
            const int grgs = (gn + 3) / 4;
            float *gacc = acc + (size_t)g * per_group;
            for (int tg = 0; tg < tgs; tg++) {
                const int pr = tg * per_tg;
                if (pr < nx_n) prefetch_rows(p, nx_r0 + pr, nx_n - pr < per_tg ? nx_n - pr : per_tg, nx_c0, nx_kc);
                const float *xr[4], *wr[4];
                for (int t = 0; t < 4; t++)
                    xr[t] = X + (size_t)(4 * tg + t < nt ? 4 * tg + t : nt - 1) * cols + c0;
                for (int rg = 0; rg < grgs; rg++) {
                    for (int j = 0; j < 4; j++)
                        wr[j] = w + (size_t)(4 * rg + j < gn ? 4 * rg + j : gn - 1) * ldw;
                    p->k->tile_acc_f32(wr, xr, kc, gacc + ((size_t)tg * rgs + rg) * 256);
                }
            }
        }
    }
    float *Y = p->Y + (size_t)t0 * p->rows;
    for (int g = 0; g < nrg; g++) {
        const int gr0 = g * GEMM_ROWS, gn = nr - gr0 < GEMM_ROWS ? nr - gr0 : GEMM_ROWS;
        const float *gacc = acc + (size_t)g * per_group;
        for (int tg = 0; tg < tgs; tg++)
            for (int rg = 0; rg < (gn + 3) / 4; rg++) {
                const float *tile = gacc + ((size_t)tg * rgs + rg) * 256;
                float sum[16];
                if (full == cols)              /* no column tail: 16 reductions at once */
                    p->k->reduce16x16(tile, sum);
                for (int t = 4 * tg; t < 4 * tg + 4 && t < nt; t++)
                    for (int j = 4 * rg; j < 4 * rg + 4 && j < gn; j++) {
                        const int k = 4 * (t % 4) + j % 4, r = r0 + gr0 + j;
                        if (full < cols) {
                            float l[16];
                            memcpy(l, tile + 16 * k, sizeof l);
                            for (int c = full; c < cols; c++)
                                l[c & 15] = fmaf(weight_at(p, r, c), X[(size_t)t * cols + c], l[c & 15]);
                            sum[k] = kern_reduce16(l);
                        }
                        Y[(size_t)t * p->rows + r] = sum[k];
                    }
            }
    }
}

/* Inputs per tile: as many as keep the tile's accumulators within
 * GEMM_ACC_BYTES, a multiple of 4. */
static int tile_inputs(const product *p)
{
    int n = (int)(GEMM_ACC_BYTES / ((size_t)GEMM_TILE_ROWS * 64)) & ~3;
    if (n < 4) n = 4;
    return n < p->T ? n : p->T;
}

static void gemm_task(void *ud, int b, int e)
{
    const product *p = ud;
    const int r0 = b * GEMM_TILE_ROWS, r1 = e * GEMM_TILE_ROWS < p->rows ? e * GEMM_TILE_ROWS : p->rows;
    const int nt = tile_inputs(p);
    const int tgs = (nt + 3) / 4, nrg = (GEMM_TILE_ROWS + GEMM_ROWS - 1) / GEMM_ROWS;
    float *buf = task_work((size_t)GEMM_ROWS * GEMM_KC + (size_t)nrg * tgs * (GEMM_ROWS / 4) * 256);
    if (!buf) {
        /* No room to decode: one gemv per input row gives the same bits. */
        for (int t = 0; t < p->T; t++) {
            product q = *p;
            q.k = &kern_impl_scalar;
            q.X = p->X + (size_t)t * p->cols;
            q.Y = p->Y + (size_t)t * p->rows;
            gemv_rows(&q, r0, r1);
        }
        return;
    }
    for (int r = r0; r < r1; r += GEMM_TILE_ROWS)
        for (int t0 = 0; t0 < p->T; t0 += nt)
            gemm_tile(p, buf, buf + (size_t)GEMM_ROWS * GEMM_KC, r, r1 - r < GEMM_TILE_ROWS ? r1 : r + GEMM_TILE_ROWS,
                      t0, p->T - t0 < nt ? p->T - t0 : nt);
}

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
    int items = (rows + GEMM_TILE_ROWS - 1) / GEMM_TILE_ROWS;
    if ((size_t)T * rows * cols < PAR_MIN_WEIGHTS)
        gemm_task(&p, 0, items);
    else
        pool_for(items, gemm_task, &p);
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
