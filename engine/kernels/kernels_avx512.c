/* kernels_avx512.c — the AVX-512 level of the kernels (F, BW, VL, DQ + FMA).
 *
 * One 16-wide register holds the 16 lane accumulators of a row, so each
 * vfmadd over a group of 16 columns is exactly the scalar reference's 16
 * per-lane fmaf calls. The column tail (cols % 16) and the reduction are the
 * shared scalar code of kernels_impl.h. Rows are processed four at a time:
 * each row's accumulator is one dependent chain of fmas, and four chains
 * keep the FMA units busy while sharing the loads of x.
 *
 * MXFP4: each group of 16 codes is one 64-bit broadcast load, one variable
 * shift and one vpermps into the block's row of kern_mx_f32 (the 16 weights
 * E2M1[c] * scale, precomputed for all 256 scales), then one fma.
 */
#include <immintrin.h>
#include <string.h>
#include "kernels_impl.h"

/* Rows handled together by the row kernels. */
#define ROWS 4

static inline uint64_t load_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Widens 16 bf16 values exactly: the bits move to the high half. */
static inline __m512 load_bf16x16(const uint16_t *w)
{
    __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)w));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
}

/* Software prefetch: each row kernel fetches, as it goes, the same columns
 * of the next group of rows (which follows in memory). Measured on Zen 4
 * this distance — one group of rows ahead — beats both the hardware
 * prefetcher alone and fixed distances, since it scales with the row length.
 * Prefetching past the end of the matrix is harmless: prefetches never
 * fault. */
static inline void prefetch(const void *p)
{
    _mm_prefetch((const char *)p, _MM_HINT_T0);
}

/* The same into L2 only, for the MXFP4 gemv: its rows are a quarter as
 * long in bytes as bf16's, so one group of rows ahead is near, and into L1
 * the stream of a 3584-column matrix fell behind. Measured on the 2-core
 * Zen 4 host through kern_gemv_mxfp4 (1 thread, weights from memory, per
 * CPU-second, best of 5 windows, 6 interleaved rounds, medians): 3072x3584
 * 10.0 GB/s into L1, 11.6 into L2; 2048x7168 11.9 and 12.2; 12288x7168
 * 12.2 and 12.3. bf16 seemed to lose 1-2% into L2 (two wall-clock rounds
 * of bench-kernels), so it keeps L1. Prefetching two groups of MXFP4 rows
 * ahead instead of one did not win (12288x7168 over 512 MiB, rm_bench_gemv,
 * interleaved rounds, medians: at load 8-10 1 thread 8.2 -> 10.1 GB/s and
 * 2 threads 9.2 -> 9.8; at load 4-6, 3 rounds, 11.5 -> 11.5 and
 * 17.7 -> 17.0), so one group stays. */
static inline void prefetch_l2(const void *p)
{
    _mm_prefetch((const char *)p, _MM_HINT_T1);
}

/* Row pointers for a group of up to ROWS rows starting at r; missing rows
 * repeat the last one (computed and dropped) so the kernels stay uniform. */
static inline int row_group(int r, int r1)
{
    return r1 - r < ROWS ? r1 - r : ROWS;
}

static float dot_f32(const float *a, const float *b, int n)
{
    __m512 acc = _mm512_setzero_ps();
    int c = 0;
    for (; c + 16 <= n; c += 16)
        acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + c), _mm512_loadu_ps(b + c), acc);
    float l[16];
    _mm512_storeu_ps(l, acc);
    for (; c < n; c++)
        l[c & 15] = fmaf(a[c], b[c], l[c & 15]);
    return kern_reduce16(l);
}

/* The gemm micro-kernel (kernels_impl.h: gemm_tile): 4 weight rows x up to
 * 6 inputs, one zmm per output holding its 16 lanes, so the 24 accumulators,
 * the 4 weight vectors of a group and one input vector fill 29 of the 32
 * registers. Per group of 16 columns 10 loads feed 24 fmas. Measured with
 * the operands in L1 (32 groups per call, the best of 15 rounds of a
 * 2-core Sapphire Rapids VM shared with other builds, against a
 * register-only fma loop at 216 GFLOP/s on one thread): 4x4 175 GFLOP/s
 * (0.81), 4x6 183 (0.85), 6x4 188, 5x5 184, 4x7 184, 8x3 and 3x8 138,
 * 2x12 and 12x2 65 (spilled). 6x4 and 5x5 are no better within the noise
 * and would leave row tails on K3's 2048-row matrices, so 4 rows; the input
 * count has a tail (T is anything), done by the same code with fewer
 * inputs. */
#define TILE_ROWS 4
#define TILE_TOKS 6

#define DEF_TILE(NT)                                                                        \
    static void tile4x##NT(const float *wp, const float *xp, int ng, int first, float *acc) \
    {                                                                                       \
        __m512 a[NT][TILE_ROWS];                                                            \
        _Pragma("GCC unroll 8") for (int t = 0; t < NT; t++)                                \
            _Pragma("GCC unroll 8") for (int j = 0; j < TILE_ROWS; j++)                     \
                a[t][j] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + (t * TILE_ROWS + j) * 16); \
        for (int g = 0; g < ng; g++, wp += TILE_ROWS * 16, xp += NT * 16) {                 \
            __m512 w[TILE_ROWS];                                                            \
            _Pragma("GCC unroll 8") for (int j = 0; j < TILE_ROWS; j++)                     \
                w[j] = _mm512_load_ps(wp + 16 * j);                                         \
            _Pragma("GCC unroll 8") for (int t = 0; t < NT; t++) {                          \
                const __m512 x = _mm512_load_ps(xp + 16 * t);                               \
                _Pragma("GCC unroll 8") for (int j = 0; j < TILE_ROWS; j++)                 \
                    a[t][j] = _mm512_fmadd_ps(w[j], x, a[t][j]);                            \
            }                                                                               \
        }                                                                                   \
        _Pragma("GCC unroll 8") for (int t = 0; t < NT; t++)                                \
            _Pragma("GCC unroll 8") for (int j = 0; j < TILE_ROWS; j++)                     \
                _mm512_storeu_ps(acc + (t * TILE_ROWS + j) * 16, a[t][j]);                  \
    }
DEF_TILE(1)
DEF_TILE(2)
DEF_TILE(3)
DEF_TILE(4)
DEF_TILE(5)
DEF_TILE(6)

static void gemm_tile(const float *wp, const float *xp, int ng, int nt, int first, float *acc)
{
    static void (*const tiles[TILE_TOKS])(const float *, const float *, int, int, float *) = {
        tile4x1, tile4x2, tile4x3, tile4x4, tile4x5, tile4x6,
    };
    tiles[nt - 1](wp, xp, ng, first, acc);
}

/* kern_reduce16 of 16 accumulators at once: each step of the tree adds the
 * same pairs (lane i and lane i + 8, then i and i + 4, i and i + 2, 0 and
 * 1) of two accumulators side by side, so every sum is the scalar tree's,
 * in 15 adds and shuffles for 16 outputs instead of 15 adds each. */
static void reduce16x16(const float *acc, float *out)
{
    __m512 b[8], c[4], d[2];
    for (int m = 0; m < 8; m++) {             /* b[m] = s8 of acc 2m | acc 2m+1 */
        __m512 x = _mm512_loadu_ps(acc + 32 * m), y = _mm512_loadu_ps(acc + 32 * m + 16);
        b[m] = _mm512_add_ps(_mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(3, 2, 3, 2)));
    }
    for (int n = 0; n < 4; n++)               /* c[n] = s4 of acc 4n .. 4n+3 */
        c[n] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * n], b[2 * n + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_f32x4(b[2 * n], b[2 * n + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    for (int n = 0; n < 2; n++)               /* quarter q of d[n]: s2 of acc 8n+q, 8n+4+q */
        d[n] = _mm512_add_ps(_mm512_shuffle_ps(c[2 * n], c[2 * n + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_ps(c[2 * n], c[2 * n + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    /* element 4q + r: the sum of acc 4r + q */
    __m512 e = _mm512_add_ps(_mm512_shuffle_ps(d[0], d[1], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_ps(d[0], d[1], _MM_SHUFFLE(3, 1, 3, 1)));
    const __m512i to_k = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    _mm512_storeu_ps(out, _mm512_permutexvar_ps(to_k, e));
}

/* 16 weights from element i of f32 or bf16 (bf16) rows W. */
static inline __m512 load_w16(const void *W, int bf16, size_t i)
{
    return bf16 ? load_bf16x16((const uint16_t *)W + i) : _mm512_loadu_ps((const float *)W + i);
}

/* gemv over f32 or bf16 rows (bf16: W holds bf16 values), four rows at a
 * time; the same fmas in the same order for both, only the loads differ.
 * bf16 rows are the large ones and prefetch the next group as they go; f32
 * rows never did. Inlined into each caller with bf16 a constant. */
static inline __attribute__((always_inline)) void gemv_rows(const void *W, int bf16, const float *x, float *y,
                                                          int r0, int r1, int cols)
{
    for (int r = r0; r < r1; r += ROWS) {
        int nw = row_group(r, r1);
        size_t off[ROWS];
        for (int j = 0; j < ROWS; j++)
            off[j] = (size_t)(r + (j < nw ? j : nw - 1)) * cols;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        int c = 0;
        for (; c + 16 <= cols; c += 16) {
            if (bf16 && (c & 31) == 0)
                for (int j = 0; j < ROWS; j++)
                    prefetch((const uint16_t *)W + off[j] + (size_t)ROWS * cols + c);
            __m512 xv = _mm512_loadu_ps(x + c);
            a0 = _mm512_fmadd_ps(load_w16(W, bf16, off[0] + c), xv, a0);
            a1 = _mm512_fmadd_ps(load_w16(W, bf16, off[1] + c), xv, a1);
            a2 = _mm512_fmadd_ps(load_w16(W, bf16, off[2] + c), xv, a2);
            a3 = _mm512_fmadd_ps(load_w16(W, bf16, off[3] + c), xv, a3);
        }
        __m512 acc[ROWS] = { a0, a1, a2, a3 };
        for (int j = 0; j < nw; j++) {
            float l[16];
            _mm512_storeu_ps(l, acc[j]);
            for (int t = c; t < cols; t++)
                l[t & 15] = fmaf(kern_weight(W, bf16, off[j] + t), x[t], l[t & 15]);
            y[r + j] = kern_reduce16(l);
        }
    }
}

static void gemv_f32(const float *W, const float *x, float *y, int r0, int r1, int cols)
{
    gemv_rows(W, 0, x, y, r0, r1, cols);
}

static void gemv_bf16(const uint16_t *W, const float *x, float *y, int r0, int r1, int cols)
{
    gemv_rows(W, 1, x, y, r0, r1, cols);
}

/* MXFP4 register order. Eight packed bytes hold the 16 codes of a group of
 * 16 columns, column n in nibble n of the little-endian 64-bit word.
 * Broadcasting that word to every 64-bit element and shifting element e
 * right by 4*(e/2) leaves in the low nibble of element e the code of column
 * 8*(e%2) + e/2. */
static const uint8_t mx_order[16] = { 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15 };

static inline __m512i mx_shifts(void)
{
    return _mm512_setr_epi32(0, 0, 4, 4, 8, 8, 12, 12, 16, 16, 20, 20, 24, 24, 28, 28);
}

/* The 16 weights of the group whose codes are the 8 bytes at p, in mx_order;
 * table = kern_mx_f32[scale]. vpermps reads only the low four bits of each
 * index, so the bits above the nibble need no masking.
 *
 * Why this form (issue #30, measured on the 2-core Sapphire Rapids VM under
 * load, per thread CPU-second, best of interleaved rounds): 3 vector uops
 * per 16 weights on the two 512-bit ports (vpsrlvd p0, vpermps p5, vfmadd
 * either). A loop of only these, operands in L1, makes 17.3 GB/s of codes,
 * 24.3 without the shift; gemv_mxfp4 12.5-13.4 in L1 (0.72-0.77 of that),
 * 15-16 with one constant table instead of a load per row and block. Tried
 * and no faster within the noise: 8 rows a group, scale tables loaded one
 * block ahead, a pointer table for them, a 2-block unroll (+7-10% at best in
 * L1 from a flat restructuring, nothing from memory). Rejected on paper:
 * byte lookups (vpermb/vpshufb) still need one widening op per 16 outputs
 * plus per-lane tables per scale (29 uops per 128 weights against 24); two
 * codes per index (vpermps on bits 0-3, a zero-masked vpermw on 16-19) need
 * the same lane of two groups, 8 bytes apart, in one dword, which no single
 * op makes from the packed bytes. So with this format at 2 cores the decode,
 * not the memory, bounds the gemv; a faster one needs a repacked layout.
 *
 * Repacked layouts measured on the 2-core Zen 4 host (a standalone harness,
 * bit-identical to the scalar reference, 1 thread, per CPU-second, best of
 * 5 windows, 3-5 interleaved rounds; this form 13.3-13.6 GB/s in L1,
 * 15.5-15.9 in L2, 11.8-12.7 from memory at 12288x7168): each 64 bytes
 * holding 8 groups of 16 codes as nibble fields of 16 dwords, one load
 * then a vpsrld by 4 per group, no broadcast: 15.3-15.8 in L1, 15.4-16.1
 * in L2, 12.3-13.7 from memory (+5-10%); the same with two groups per
 * shift (vpermps on bits 0-3, vpermw on 16-19 plus an and): 11.1, 11.2,
 * 9.3-10.0 (vpermw costs more than vpermps on Zen 4); byte-offset loads
 * instead of the shifts (each crossing a line): 9.0, 8.9, 8.3. A model
 * that fits these to ~10%: on Zen 4 a 512-bit fma, permute or shift each
 * hold two of the pipes FP0-2 for a cycle (fma FP0/1, permutes and shifts
 * FP1/2), so a permute and an fma per 16 weights take at least 1.33
 * cycles, this form's shift makes it 2 and the nibble-field layout 1.92:
 * with table lookups a repack buys ~10% here, not the 1.4x issue #30
 * asks.
 *
 * Moving the shift to other pipes buys little (issue #30's next round).
 * Register-only loop on the Zen 4 host (loads from L1, best of 7 rounds,
 * two runs): an fma and a vpermps per 16 weights take 0.41-0.43 ns;
 * adding any one of vpsrlvd, vpsrld, vpandd, vpaddd or vaddps (with or
 * without a static rounding mode) costs 0.02-0.10 ns more, vpternlogd
 * 0.14-0.16, vpmultishiftqb and vgf2p8affineqb 0.23-0.26. One trick does move the shift to the add
 * pipes: (v & 0x7fffff | 0x4b000000) + 2^(23+k), rounded toward zero,
 * leaves bits k..k+3 of v in bits 0-3 for k <= 19, where vpermps reads
 * them. In the nibble-field layout (per 8 groups one vpternlogd, one
 * vpsrld and six such adds) it is bit-identical but no faster than that
 * layout's shifts: 2 threads, one 12288x7168 matrix read again and again,
 * median of 150 interleaved calls, 15.4 GB/s against 16.8.
 * The nibble-field layout against this form, weights cycling through a
 * 512 MB arena (best/median of 30-300 interleaved calls, under load):
 * 12288x7168 on 1 thread 11.9/8.3 GB/s against 11.8/9.5, on 2 threads
 * 17.7/14.9 against 18.0/15.4; 3072x3584 on 1 thread 12.9/9.5 against
 * 11.5/9.0. That is within the noise from memory, so the file layout
 * stays. Prefetching into L1 (T0) instead of L2, in remora bench-kernels
 * (3 interleaved runs, medians): 12288x7168 on 2 threads 21.7 GB/s against
 * 21.8, 3072x3584 on 1 thread 9.7 against 12.0. So L2 stays. */
static inline __m512 mx_group(const uint8_t *p, __m512 table, __m512i sh)
{
    __m512i codes = _mm512_srlv_epi32(_mm512_set1_epi64((long long)load_u64(p)), sh);
    return _mm512_permutexvar_ps(codes, table);
}

/* One row's update for block k (32 columns): codes at p, scales at sc. */
#define MX_ROW(acc, p, sc)                                                     \
    do {                                                                       \
        __m512 tab = _mm512_load_ps(kern_mx_f32[(sc)[k]]);                     \
        acc = _mm512_fmadd_ps(mx_group((p) + 16 * k, tab, sh), x0, acc);       \
        acc = _mm512_fmadd_ps(mx_group((p) + 16 * k + 8, tab, sh), x1, acc);   \
    } while (0)

/* Block k of the four rows. */
#define MX_BLOCK()                                                             \
    do {                                                                       \
        __m512 x0 = _mm512_loadu_ps(xp + 32 * k);                              \
        __m512 x1 = _mm512_loadu_ps(xp + 32 * k + 16);                         \
        MX_ROW(a0, p0, s0);                                                    \
        MX_ROW(a1, p1, s1);                                                    \
        MX_ROW(a2, p2, s2);                                                    \
        MX_ROW(a3, p3, s3);                                                    \
    } while (0)

static void gemv_mxfp4(const uint8_t *packed, const uint8_t *scale, const float *x,
                       const float *xp, float *y, int r0, int r1, int cols)
{
    (void)x;
    const __m512i sh = mx_shifts();
    const size_t pb = (size_t)cols / 2, sb = (size_t)cols / 32;
    const int nblk = cols / 32;
    for (int r = r0; r < r1; r += ROWS) {
        int nw = row_group(r, r1);
        /* rows of the group; a short last group repeats its last row */
        const uint8_t *p0 = packed + (size_t)r * pb, *s0 = scale + (size_t)r * sb;
        const uint8_t *p1 = p0 + (nw > 1 ? pb : 0), *s1 = s0 + (nw > 1 ? sb : 0);
        const uint8_t *p2 = p0 + (nw > 2 ? 2 * pb : 0), *s2 = s0 + (nw > 2 ? 2 * sb : 0);
        const uint8_t *p3 = p0 + (nw > 3 ? 3 * pb : 0), *s3 = s0 + (nw > 3 ? 3 * sb : 0);
        const uint8_t *next = p0 + ROWS * pb;    /* the next group, to prefetch */
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        int k = 0;
        /* four blocks (one cache line of codes per row) per round */
        for (; k + 4 <= nblk; ) {
            for (int j = 0; j < ROWS; j++)
                prefetch_l2(next + j * pb + 16 * k);
            if ((k & 63) == 0)
                for (int j = 0; j < ROWS; j++)
                    prefetch_l2(s0 + (ROWS + j) * sb + k);
            for (int u = 0; u < 4; u++, k++)
                MX_BLOCK();
        }
        for (; k < nblk; k++)
            MX_BLOCK();
        __m512 acc[ROWS] = { a0, a1, a2, a3 };
        for (int j = 0; j < nw; j++) {
            float e[16], l[16];
            _mm512_storeu_ps(e, acc[j]);
            kern_order_to_lanes(mx_order, e, l);
            y[r + j] = kern_reduce16(l);
        }
    }
}

static void decode_bf16(const uint16_t *w, float *out, int n, size_t gs)
{
    for (int c = 0; c < n; c += 16, out += gs)
        _mm512_store_ps(out, load_bf16x16(w + c));
}

static void decode_mxfp4(const uint8_t *packed, const uint8_t *scale, float *out, int cols, size_t gs)
{
    const __m512i sh = mx_shifts();
    /* to_cols[c] = the element holding column c: the inverse of mx_order */
    const __m512i to_cols = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14,
                                              1, 3, 5, 7, 9, 11, 13, 15);
    for (int k = 0; k < cols / 32; k++, out += 2 * gs) {
        __m512 tab = _mm512_load_ps(kern_mx_f32[scale[k]]);
        __m512 g0 = mx_group(packed + 16 * k, tab, sh);
        __m512 g1 = mx_group(packed + 16 * k + 8, tab, sh);
        _mm512_store_ps(out, _mm512_permutexvar_ps(to_cols, g0));
        _mm512_store_ps(out + gs, _mm512_permutexvar_ps(to_cols, g1));
    }
}

/* A 4 x 64 block of C in 16 registers: per k, 4 broadcasts of A and 4
 * loads of B feed 16 fmas, each element's the same as axpy_f32's. */
static void matmul4x64_f32(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int kn)
{
    __m512 c[4][4];
    for (int m = 0; m < 4; m++)
        for (int v = 0; v < 4; v++) c[m][v] = _mm512_loadu_ps(C + m * ldc + 16 * v);
    for (int k = 0; k < kn; k++) {
        const float *b = B + (size_t)k * ldb;
        const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
        const __m512 b2 = _mm512_loadu_ps(b + 32), b3 = _mm512_loadu_ps(b + 48);
        for (int m = 0; m < 4; m++) {
            const __m512 a = _mm512_set1_ps(A[m * lda + k]);
            c[m][0] = _mm512_fmadd_ps(a, b0, c[m][0]);
            c[m][1] = _mm512_fmadd_ps(a, b1, c[m][1]);
            c[m][2] = _mm512_fmadd_ps(a, b2, c[m][2]);
            c[m][3] = _mm512_fmadd_ps(a, b3, c[m][3]);
        }
    }
    for (int m = 0; m < 4; m++)
        for (int v = 0; v < 4; v++) _mm512_storeu_ps(C + m * ldc + 16 * v, c[m][v]);
}

static void axpy_f32(float a, const float *x, float *y, int n)
{
    const __m512 av = _mm512_set1_ps(a);
    int i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_fmadd_ps(av, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    for (; i < n; i++) y[i] = fmaf(a, x[i], y[i]);
}

/* The KDA step's column loops with 16 columns of S per register: the same
 * multiply and fmas per element as the scalar loops (kern_kda_sweeps). */
static inline void kda_decay(float *row, float a, float kd, float *u, int j0)
{
    const __m512 av = _mm512_set1_ps(a), kv = _mm512_set1_ps(kd);
    for (int j = 0; j < j0; j += 16) {
        __m512 r = _mm512_mul_ps(_mm512_loadu_ps(row + j), av);
        _mm512_storeu_ps(row + j, r);
        _mm512_storeu_ps(u + j, _mm512_fnmadd_ps(r, kv, _mm512_loadu_ps(u + j)));
    }
}

static inline void kda_update(float *row, float kd, float qd, const float *u, float *o, int j0)
{
    const __m512 kv = _mm512_set1_ps(kd), qv = _mm512_set1_ps(qd);
    for (int j = 0; j < j0; j += 16) {
        __m512 r = _mm512_fmadd_ps(kv, _mm512_loadu_ps(u + j), _mm512_loadu_ps(row + j));
        _mm512_storeu_ps(row + j, r);
        _mm512_storeu_ps(o + j, _mm512_fmadd_ps(r, qv, _mm512_loadu_ps(o + j)));
    }
}

static void kda_step(float *S, const float *alpha, const float *k, const float *q,
                     const float *v, float beta, float *o, float *u, int hd)
{
    kern_kda_sweeps(S, alpha, k, q, v, beta, o, u, hd, hd & ~15, kda_decay, kda_update);
}

/* The ceilings (kernels.h): 24 chains of register-only fmas (2 units x 4
 * cycles of latency need 8), and a read loop with 8 independent adds per
 * 8 loads — kern_dot_f32's single chain of fmas reads only a vector per
 * fma latency, which was 25 GB/s against 31 for this loop on the 2-core
 * development machine. */
static float fma_probe(long n)
{
    __m512 a[24];
    const __m512 b = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(1e-7f);
    for (int i = 0; i < 24; i++) a[i] = _mm512_set1_ps((float)i);
    for (long k = 0; k < n; k++) {
        _Pragma("GCC unroll 24") for (int i = 0; i < 24; i++) a[i] = _mm512_fmadd_ps(a[i], b, c);
    }
    __m512 s = a[0];
    for (int i = 1; i < 24; i++) s = _mm512_add_ps(s, a[i]);
    float l[16];
    _mm512_storeu_ps(l, s);
    return l[0];
}

static float read_probe(const float *p, size_t n)
{
    __m512 s[8];
    for (int j = 0; j < 8; j++) s[j] = _mm512_setzero_ps();
    for (size_t i = 0; i < n; i += 8 * 16)
        _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) s[j] = _mm512_add_ps(s[j], _mm512_load_ps(p + i + 16 * j));
    for (int j = 1; j < 8; j++) s[0] = _mm512_add_ps(s[0], s[j]);
    float l[16];
    _mm512_storeu_ps(l, s[0]);
    return l[0];
}

const kern_impl kern_impl_avx512 = {
    .name = "avx512",
    KERN_IMPL_FUNCTIONS,
    .reduce16x16 = reduce16x16,
    .mx_order = mx_order,
    .matmul4x64_f32 = matmul4x64_f32,
    .width = 16,
    .probe_fmas = 24,
};
