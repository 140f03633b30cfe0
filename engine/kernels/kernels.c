/* kernels.c — the public face of the kernels (kernels.h): picks the SIMD
 * level once from CPUID (lowered by REMORA_SIMD), holds the E2M1 and E8M0
 * tables, and splits large products by rows across the compute pool.
 *
 * Every level computes a row in the same order, and a row is always computed
 * whole by one thread, so the results depend neither on the level nor on the
 * thread count. The gemm forms decode a block of weight rows to fp32 once and
 * take the dot product of each decoded row with every input row — the same
 * fmas as the gemv, but reading the weights once for all T inputs.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "kernels_impl.h"
#include "base/threadpool.h"

const float kern_e2m1[16] = {
    0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
    -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f,
};

float kern_e8m0_tab[256];
_Alignas(64) float kern_mx_f32[256][16];
_Alignas(64) uint8_t kern_mx_bf16[256][64];

/* Products smaller than this many weights run on the calling thread: waking
 * the pool costs more than it saves. */
#define PAR_MIN_WEIGHTS 65536
/* Rows per pool work item of a gemv (the row kernels take rows by fours). */
#define GEMV_ROWS 4
/* Rows decoded together by a gemm task; their fp32 copy stays in L2 while
 * each input row is streamed past them. */
#define GEMM_ROWS 16
/* x of a gemv_mxfp4 up to this many columns is reordered on the stack. */
#define XP_STACK 4096

static const kern_impl *const levels[] = { &kern_impl_scalar, &kern_impl_avx2, &kern_impl_avx512 };
static int cpu_max;                       /* best level the CPU supports */
static const kern_impl *cur;              /* level in use */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

float kern_e8m0(uint8_t e)
{
    if (e == 255) return INFINITY;
    if (e == 0) return 0x1p-127f;       /* the one subnormal scale */
    union { uint32_t u; float f; } v = { .u = (uint32_t)e << 23 };
    return v.f;
}

static int level_index(const char *name)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, levels[i]->name)) return i;
    return -1;
}

static void kern_init(void)
{
    for (int s = 0; s < 256; s++) {
        kern_e8m0_tab[s] = kern_e8m0((uint8_t)s);
        for (int c = 0; c < 16; c++) {
            /* computed at run time like the scalar level's products, so even
             * 0 * Inf gives the same NaN */
            float w = kern_e2m1[c] * kern_e8m0_tab[s];
            uint32_t bits;
            memcpy(&bits, &w, sizeof bits);
            kern_mx_f32[s][c] = w;
            kern_mx_bf16[s][c] = kern_mx_bf16[s][16 + c] = (uint8_t)(bits >> 16);
            kern_mx_bf16[s][32 + c] = kern_mx_bf16[s][48 + c] = (uint8_t)(bits >> 24);
        }
    }
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
} product;

static void gemv_rows(const product *p, int r0, int r1)
{
    switch (p->enc) {
    case W_F32:
        p->k->gemv_f32(p->W, p->X, p->Y, r0, r1, p->cols);
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

static void gemv(int enc, const void *W, const uint8_t *scale, const float *x, float *y,
                 int rows, int cols)
{
    if (rows <= 0) return;
    product p = { .k = impl(), .enc = enc, .W = W, .scale = scale, .X = x, .Y = y,
                  .T = 1, .rows = rows, .cols = cols };
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
    gemv(W_F32, W, NULL, x, y, rows, cols);
}

void kern_gemv_bf16(const uint16_t *W, const float *x, float *y, int rows, int cols)
{
    gemv(W_BF16, W, NULL, x, y, rows, cols);
}

void kern_gemv_mxfp4(const uint8_t *packed, const uint8_t *scale, const float *x,
                     float *y, int rows, int cols)
{
    gemv(W_MXFP4, packed, scale, x, y, rows, cols);
}

/* Rows [r0, r1) of a gemm: decode up to GEMM_ROWS weight rows to fp32, then
 * take the dot products with the input rows in tiles of 4 rows x 4 tokens. */
static void gemm_block(const product *p, float *buf, int r0, int r1)
{
    const int cols = p->cols;
    const float *w = buf;
    for (int r = r0; r < r1; r++) {
        float *o = buf + (size_t)(r - r0) * cols;
        if (p->enc == W_BF16)
            p->k->decode_bf16((const uint16_t *)p->W + (size_t)r * cols, o, cols);
        else if (p->enc == W_MXFP4)
            p->k->decode_mxfp4((const uint8_t *)p->W + (size_t)r * (cols / 2),
                               p->scale + (size_t)r * (cols / 32), o, cols);
    }
    if (p->enc == W_F32)
        w = (const float *)p->W + (size_t)r0 * cols;
    for (int t = 0; t < p->T; t += 4) {
        int nx = p->T - t < 4 ? p->T - t : 4;
        for (int r = r0; r < r1; r += 4)
            p->k->tile_f32(w + (size_t)(r - r0) * cols, (size_t)cols, r1 - r < 4 ? r1 - r : 4,
                           p->X + (size_t)t * cols, (size_t)cols, nx, cols,
                           p->Y + (size_t)t * p->rows + r, (size_t)p->rows);
    }
}

static void gemm_task(void *ud, int b, int e)
{
    const product *p = ud;
    int r0 = b * GEMM_ROWS, r1 = e * GEMM_ROWS < p->rows ? e * GEMM_ROWS : p->rows;
    float *buf = NULL;
    if (p->enc != W_F32 && !(buf = malloc((size_t)GEMM_ROWS * p->cols * sizeof *buf))) {
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
    for (int r = r0; r < r1; r += GEMM_ROWS)
        gemm_block(p, buf, r, r1 - r < GEMM_ROWS ? r1 : r + GEMM_ROWS);
    free(buf);
}

/* Tokens of X taken per sweep over the weights: every block of decoded
 * weight rows is dotted with each of them, so they should stay in the last
 * level cache between blocks. Past it, X streams from memory once per
 * GEMM_ROWS rows: at T = 1024 and 7168 columns (28 MB of X) a 7168x12288
 * bf16 product fell from 145 to 108 GFLOP/s on the 2-core development
 * machine (32 MB L3); in sweeps of <= 8 MB of X it keeps the T = 256 rate.
 * Each sweep decodes the weights again, which costs less than one more
 * 4-token tile. */
#define GEMM_SWEEP_BYTES (8u << 20)

static void gemm(int enc, const void *W, const uint8_t *scale, const float *X, float *Y,
                 int T, int rows, int cols)
{
    if (T <= 0 || rows <= 0) return;
    if (T == 1) {
        gemv(enc, W, scale, X, Y, rows, cols);
        return;
    }
    int sweep = (int)(GEMM_SWEEP_BYTES / ((size_t)cols * sizeof *X)) & ~3;
    if (sweep < 16) sweep = 16;
    for (int t0 = 0; t0 < T; t0 += sweep) {
        const int nt = T - t0 < sweep ? T - t0 : sweep;
        product p = { .k = impl(), .enc = enc, .W = W, .scale = scale, .X = X + (size_t)t0 * cols,
                      .Y = Y + (size_t)t0 * rows, .T = nt, .rows = rows, .cols = cols };
        int items = (rows + GEMM_ROWS - 1) / GEMM_ROWS;
        if ((size_t)nt * rows * cols < PAR_MIN_WEIGHTS)
            gemm_task(&p, 0, items);
        else
            pool_for(items, gemm_task, &p);
    }
}

void kern_gemm_f32(const float *W, const float *X, float *Y, int T, int rows, int cols)
{
    gemm(W_F32, W, NULL, X, Y, T, rows, cols);
}

void kern_gemm_bf16(const uint16_t *W, const float *X, float *Y, int T, int rows, int cols)
{
    gemm(W_BF16, W, NULL, X, Y, T, rows, cols);
}

void kern_gemm_mxfp4(const uint8_t *packed, const uint8_t *scale, const float *X,
                     float *Y, int T, int rows, int cols)
{
    gemm(W_MXFP4, packed, scale, X, Y, T, rows, cols);
}
