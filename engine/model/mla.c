/* mla.c — Multi-head Latent Attention without rotary embeddings (NoPE), the
 * full-attention mixer of every fourth layer and the last.
 *
 * Reference (KimiMLAAttention in K3's modeling_kimi_linear.py and in
 * Kimi-Linear-48B's modeling_kimi.py):
 *   q        = W_qb RMSNorm_1e-6(W_qa x)   or   W_q x            [nh, nope+rope]
 *   [c|k_r]  = W_kva x;   ĉ = RMSNorm_1e-6(c)
 *   [k_n|v]  = W_kvb ĉ per head;  k = [k_n | k_r]  (k_r shared by heads, not rotated)
 *   a_h      = softmax_s(q_h·k_s / sqrt(nope+rope)) · v_s        (causal)
 *   out      = W_o (a ⊙ sigmoid(W_g x))   — the gate only with mla_use_output_gate
 *
 * The cache keeps the latent [ĉ | k_r] per token (kv_lora + rope floats), not
 * the expanded keys and values, and attention runs in the absorbed form:
 *   score = (W_UKᵀ q_n) · ĉ_s + q_r · k_r,s ,   a_h = W_UV (Σ_s p_s ĉ_s)
 * which equals the reference in exact arithmetic and differs only in fp32
 * rounding order (the latent cache is vLLM's, vllm/models/kimi_k3/nvidia/mla.py;
 * the q_a and kv_a norms use eps 1e-6, the class default of KimiRMSNorm,
 * as tests/fixtures/README.md records).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "model/layers.h"
#include "kernels/kernels.h"
#include "kernels/softmax.h"
#include "base/clock.h"
#include "base/threadpool.h"

/* Decodes row r of m into fp32. */
static void wmat_row(const wmat *m, int r, float *out)
{
    if (m->kind == WM_F32) {
        memcpy(out, (const float *)m->w + (size_t)r * m->cols, (size_t)m->cols * sizeof *out);
    } else {
        const uint16_t *p = (const uint16_t *)m->w + (size_t)r * m->cols;
        for (int i = 0; i < m->cols; i++) out[i] = bf16_to_f32(p[i]);
    }
}

/* Attention of heads [h0, h1) for all T positions: heads are independent,
 * so they run in parallel; each head's arithmetic is the same whichever
 * thread runs it. W_UK of a head is decoded once per call.
 *
 * A head takes its positions in blocks of up to QB, and each step of the
 * absorbed form is one product over the block instead of a dot product or
 * an axpy per (position, context row) — the same fmas in the same order
 * (kern_matmul_f32 is the axpy chain, kern_gemm_f32_ld each row's dot), so
 * the result is the same whatever the block, and decoding (a block of one)
 * gives the bits of a long pass. Per position and head, in order:
 *   qabs  = Σ_i q_nope[i] · W_UK[i, :]        (axpy chain over i)
 *   sc_s  = qabs · ĉ_s + q_rope · k_r,s         (two dot products per s)
 *   p_s   = softmax_s(sc_s · scale)             (crm_expf, the sum in double)
 *   cavg  = Σ_s p_s · ĉ_s                       (axpy chain over s)
 *   a_h   = W_UV · cavg                         (the kernels' gemv order)
 * At 2048 positions on the 31.6 GB synthetic model this step, as a dot
 * product or an axpy per (position, context row), held 11% of a 125 s
 * prompt's CPU samples (dot_f32 and axpy_f32); as products, 5% of a 105 s
 * one's (mla_heads with what it calls). mla_probe_s times mla_heads on
 * synthetic inputs for the forecast, which counts it beside the products,
 * as a cost per position and one per (position, context row) that
 * mla_score_pairs counts. */
typedef struct mla_heads_job {
    const rm_config *c;
    const mla_weights *w;
    const mla_state *st;
    const float *q;
    float *a;
    int pos0, T;
    volatile int *stop;         /* looked at per block: a head's pass over a long context takes a while */
    atomic_int failed;
    int h_base;                 /* the heads before it were done on the GPU (mla_heads_gpu) */
    int *gpu_rows;              /* the state's: rows of the device's copy still valid */
} mla_heads_job;

/* Positions per block of a head: up to 64, fewer for a long context so that
 * the block's scores (two floats per position and context row) stay within
 * SCORE_BYTES per thread. */
#define SCORE_BYTES (4u << 20)

static int heads_block(int n_ctx)
{
    int qb = (int)(SCORE_BYTES / (8 * (size_t)n_ctx)) & ~3;
    if (qb < 4) qb = 4;
    return qb < 64 ? qb : 64;
}

/* W_UK of head h decoded into uk [nope][kvl]. */
static void head_uk(const mla_heads_job *j, int h, float *uk)
{
    const rm_config *c = j->c;
    const int kvl = c->kv_lora_rank, per = c->qk_nope + c->v_head_dim;
    for (int i = 0; i < c->qk_nope; i++) wmat_row(&j->w->kv_b, h * per + i, uk + (size_t)i * kvl);
}

/* Passes of at most this many positions absorb their queries row by row
 * of W_UK (head_queries with uk NULL) instead of decoding the head's whole
 * W_UK first: a decoded token used 1 of its 128 rows' 3584 floats per
 * fma otherwise, and decoding 96 heads' 1.8 MB each, written out and read
 * back, cost more than the fmas. */
#define QUERIES_BY_ROW 8

/* Whether a pass of T positions takes its queries by row (no head_uk). */
static int queries_by_row(int T) { return T <= QUERIES_BY_ROW; }

/* Head h's queries of positions [t0, t0+nb) absorbed into qa [nb][kvl]
 * (Σ_i q_nope[i] · W_UK[i, :]) and their rope parts into qr [nb][rope]:
 * with uk from head_uk, one product; with uk NULL, row i of W_UK decoded
 * into `row` (kvl floats) and applied to every position (axpy), i in
 * order — the same fma chain per element as the product's, so the same
 * bits. klen is scratch of nb ints. */
static void head_queries(const mla_heads_job *j, int h, const float *uk, float *row, int t0, int nb, float *qa,
                         float *qr, int *klen)
{
    const rm_config *c = j->c;
    const int nh = c->mla_heads, nope = c->qk_nope, rope = c->qk_rope, dqk = nope + rope, kvl = c->kv_lora_rank;
    const float *qh = j->q + ((size_t)t0 * nh + h) * dqk;
    const size_t ldq = (size_t)nh * dqk;
    memset(qa, 0, (size_t)nb * kvl * sizeof *qa);
    if (uk) {
        for (int t = 0; t < nb; t++) klen[t] = nope;
        kern_matmul_f32(qh, ldq, uk, (size_t)kvl, qa, (size_t)kvl, nb, kvl, klen);
    } else {
        for (int i = 0; i < nope; i++) {
            wmat_row(&j->w->kv_b, h * (nope + c->v_head_dim) + i, row);
            for (int t = 0; t < nb; t++) kern_axpy_f32(qh[t * ldq + i], row, qa + (size_t)t * kvl, kvl);
        }
    }
    for (int t = 0; t < nb; t++) memcpy(qr + (size_t)t * rope, qh + t * ldq + nope, (size_t)rope * sizeof *qr);
}

/* a_h of positions [t0, t0+nb) = W_UV · ca (ca [nb][kvl]; o is scratch of
 * nb x dv floats), into the job's output. */
static void head_values(const mla_heads_job *j, int h, const float *ca, float *o, int t0, int nb)
{
    const rm_config *c = j->c;
    const int nh = c->mla_heads, nope = c->qk_nope, dv = c->v_head_dim;
    const wmat uv = wmat_rows(&j->w->kv_b, h * (nope + dv) + nope, dv);
    wmat_gemm(&uv, ca, o, nb);
    for (int t = 0; t < nb; t++)
        memcpy(j->a + ((size_t)(t0 + t) * nh + h) * dv, o + (size_t)t * dv, (size_t)dv * sizeof *o);
}

static void mla_heads(void *ud, int h0, int h1)
{
    mla_heads_job *j = ud;
    const rm_config *c = j->c;
    const int nope = c->qk_nope, rope = c->qk_rope, dv = c->v_head_dim;
    const int dqk = nope + rope, kvl = c->kv_lora_rank, lat = kvl + rope;
    const int n_ctx = j->pos0 + j->T, fit = heads_block(n_ctx), qb = fit < j->T ? fit : j->T;
    const float scale = 1.0f / sqrtf((float)dqk);
    const int by_row = queries_by_row(j->T);
    float *uk = malloc((by_row ? 1 : (size_t)nope) * kvl * sizeof *uk), *qa = malloc((size_t)qb * kvl * sizeof *qa);
    float *qr = malloc((size_t)qb * rope * sizeof *qr), *ca = malloc((size_t)qb * kvl * sizeof *ca);
    float *s1 = malloc((size_t)qb * n_ctx * sizeof *s1), *s2 = malloc((size_t)qb * n_ctx * sizeof *s2);
    float *o = malloc((size_t)qb * dv * sizeof *o);
    int *klen = malloc((size_t)qb * sizeof *klen);
    if (!uk || !qa || !qr || !ca || !s1 || !s2 || !o || !klen) {
        atomic_store(&j->failed, 1);
        goto out;
    }
    for (int h = j->h_base + h0; h < j->h_base + h1; h++) {
        if (!by_row) head_uk(j, h, uk);
        for (int t0 = 0; t0 < j->T; t0 += qb) {
            if (j->stop && *j->stop) break;
            const int nb = j->T - t0 < qb ? j->T - t0 : qb, ctx = j->pos0 + t0 + nb;
            head_queries(j, h, by_row ? NULL : uk, uk, t0, nb, qa, qr, klen);
            /* scores of every position of the block against the context up
             * to its last position; each row uses its causal part */
            kern_gemm_f32_ld(j->st->latent, (size_t)lat, qa, s1, nb, ctx, kvl);
            kern_gemm_f32_ld(j->st->latent + kvl, (size_t)lat, qr, s2, nb, ctx, rope);
            for (int t = 0; t < nb; t++) {
                const int ns = j->pos0 + t0 + t + 1;
                kern_attn_softmax(s1 + (size_t)t * ctx, s2 + (size_t)t * ctx, ns, scale);
                klen[t] = ns;
            }
            memset(ca, 0, (size_t)nb * kvl * sizeof *ca);
            kern_matmul_f32(s1, (size_t)ctx, j->st->latent, (size_t)lat, ca, (size_t)kvl, nb, kvl, klen);
            head_values(j, h, ca, o, t0, nb);
        }
    }
out:
    free(uk); free(qa); free(qr); free(ca); free(s1); free(s2); free(o); free(klen);
}

/* The same attention with the O(context) steps — scores, softmax, weighted
 * sums — on the GPU (gpu_mla_core through wmat_mla_core) and the O(1)
 * ones here: heads in groups whose inputs and outputs take GROUP_BYTES of
 * host memory; per group, on the pool, each head's absorbed queries
 * (qabs for every position at once: kern_matmul_f32 gives a row the same
 * bits in any block) and rope parts, then the device's core, then W_UV
 * over every position on the pool. Decoded tokens too: the device keeps
 * the cache (one new row a token), and the CPU's core over a context of
 * 520 at K3's widths (96 heads, 3712 floats a row: 0.37 G fmas a layer)
 * was most of a memory-resident token's time on the H200 machine. Returns
 * the heads done; the rest (all of them when the GPU declines, from the
 * first group it declines) go to mla_heads. */
#define GROUP_BYTES (64u << 20)
#define QUERY_CHUNK 64

typedef struct mla_group_job {
    const mla_heads_job *j;
    int h0;
    float *qa, *qr, *ca;        /* [heads of the group][T][kvl or rope] */
    int chunks, chunk;          /* group_queries' tasks: each head's positions in `chunks` runs of `chunk` */
    atomic_int failed;
} mla_group_job;

/* Task i of group_queries: head i / chunks of the group, its positions
 * [t0, t0 + chunk) — a prompt's group is often one head (2048 positions'
 * scores fill GROUP_BYTES), and one task per head left one core doing its
 * 0.9 G fmas of queries while the others waited. */
static void group_queries(void *ud, int i0, int i1)
{
    mla_group_job *g = ud;
    const rm_config *c = g->j->c;
    const int rope = c->qk_rope, kvl = c->kv_lora_rank, T = g->j->T;
    const int by_row = queries_by_row(g->chunk);
    float *uk = malloc((by_row ? 1 : (size_t)c->qk_nope) * kvl * sizeof *uk);
    int *klen = malloc((size_t)g->chunk * sizeof *klen);
    if (!uk || !klen) atomic_store(&g->failed, 1);
    else
        for (int i = i0; i < i1; i++) {
            const int hi = i / g->chunks, t0 = i % g->chunks * g->chunk, nb = T - t0 < g->chunk ? T - t0 : g->chunk;
            if (nb <= 0) continue;
            if (!by_row) head_uk(g->j, g->h0 + hi, uk);
            head_queries(g->j, g->h0 + hi, by_row ? NULL : uk, uk, t0, nb, g->qa + ((size_t)hi * T + t0) * kvl,
                         g->qr + ((size_t)hi * T + t0) * rope, klen);
        }
    free(uk);
    free(klen);
}

static void group_values(void *ud, int i0, int i1)
{
    mla_group_job *g = ud;
    const int T = g->j->T;
    float *o = malloc((size_t)T * g->j->c->v_head_dim * sizeof *o);
    if (!o) { atomic_store(&g->failed, 1); return; }
    for (int i = i0; i < i1; i++)
        head_values(g->j, g->h0 + i, g->ca + (size_t)i * T * g->j->c->kv_lora_rank, o, 0, T);
    free(o);
}

static int mla_heads_gpu(mla_heads_job *j)
{
    const rm_config *c = j->c;
    const int nh = c->mla_heads, rope = c->qk_rope, kvl = c->kv_lora_rank, lat = kvl + rope, T = j->T;
    const float scale = 1.0f / sqrtf((float)(c->qk_nope + rope));
    if (!wmat_mla_takes(nh, T, j->pos0 + T, lat)) return 0;
    if (!wmat_mla_attend(&j->w->kv_b, c->qk_nope, c->v_head_dim, j->st->gpu_key, *j->gpu_rows, j->st->latent, lat,
                         kvl, rope, j->pos0 + T, j->pos0, T, nh, j->q, scale, j->a)) {
        *j->gpu_rows = j->pos0 + T;
        return nh;
    }
    int hg = (int)(GROUP_BYTES / ((size_t)T * (2 * (size_t)kvl + rope) * sizeof(float)));
    if (hg < 1) hg = 1;
    if (hg > nh) hg = nh;
    mla_group_job g = { j, 0, malloc((size_t)hg * T * kvl * sizeof(float)), malloc((size_t)hg * T * rope * sizeof(float)),
                        malloc((size_t)hg * T * kvl * sizeof(float)), 1, T, 0 };
    /* two tasks a thread, each at least QUERY_CHUNK positions (a head's W_UK is decoded once a task) */
    const int want = (2 * pool_threads() + hg - 1) / hg, most = (T + QUERY_CHUNK - 1) / QUERY_CHUNK;
    g.chunks = want < most ? want : most;
    if (g.chunks < 1) g.chunks = 1;
    g.chunk = (T + g.chunks - 1) / g.chunks;
    int done = 0;
    if (!g.qa || !g.qr || !g.ca) goto out;
    for (int h0 = 0; h0 < nh; h0 += hg) {
        if (j->stop && *j->stop) break;
        const int n = nh - h0 < hg ? nh - h0 : hg;
        g.h0 = h0;
        pool_for(n * g.chunks, group_queries, &g);
        if (atomic_load(&g.failed) || wmat_mla_core(j->st->gpu_key, *j->gpu_rows, j->st->latent, lat, kvl, rope,
                                                    j->pos0 + T, j->pos0, T, n, g.qa, g.qr, scale, g.ca))
            break;
        *j->gpu_rows = j->pos0 + T;     /* the device's copy is the whole context now */
        pool_for(n, group_values, &g);
        if (atomic_load(&g.failed)) break;
        done = h0 + n;
    }
out:
    free(g.qa); free(g.qr); free(g.ca);
    return done;
}

/* The keys of the device's copies of the caches: one per layer's cache,
 * for the process (a freed state's key is dropped, never reused). */
static atomic_uint_fast64_t gpu_keys;

int mla_forward(const rm_config *c, const mla_weights *w, mla_state *st, int layer, int pos0, const float *X, float *Y,
                int T, volatile int *stop, rm_err *err)
{
    const int nh = c->mla_heads, nope = c->qk_nope, rope = c->qk_rope, dv = c->v_head_dim;
    const int dqk = nope + rope, kvl = c->kv_lora_rank, lat = kvl + rope;
    float *q = malloc((size_t)T * nh * dqk * sizeof *q);
    float *ckv = malloc((size_t)T * lat * sizeof *ckv);
    float *a = malloc((size_t)T * nh * dv * sizeof *a);
    float *qa = c->q_lora_rank ? malloc((size_t)T * c->q_lora_rank * sizeof *qa) : NULL;
    float *gate = c->mla_output_gate ? malloc((size_t)T * nh * dv * sizeof *gate) : NULL;
    int rc = 0;
    if (!q || !ckv || !a || (c->q_lora_rank && !qa) || (c->mla_output_gate && !gate)) {
        rc = rm_errf(err, "out of memory in MLA layer %d", layer);
        goto out;
    }
    if (c->q_lora_rank) {
        wmat_gemm(&w->q_a, X, qa, T);
        for (int t = 0; t < T; t++)
            norm_rms(qa + (size_t)t * c->q_lora_rank, w->q_a_norm, qa + (size_t)t * c->q_lora_rank,
                     c->q_lora_rank, 1e-6f);
        wmat_gemm(&w->q_b, qa, q, T);
    } else {
        wmat_gemm(&w->q, X, q, T);
    }
    wmat_gemm(&w->kv_a, X, ckv, T);
    for (int t = 0; t < T; t++) {
        float *dst = st->latent + (size_t)(pos0 + t) * lat;
        norm_rms(ckv + (size_t)t * lat, w->kv_a_norm, dst, kvl, 1e-6f);
        memcpy(dst + kvl, ckv + (size_t)t * lat + kvl, (size_t)rope * sizeof *dst);
    }
    if (st->gpu_rows > pos0) st->gpu_rows = pos0;      /* rows from pos0 were just written */
    if (!st->gpu_key) st->gpu_key = atomic_fetch_add(&gpu_keys, 1) + 1;
    if (stop && *stop) { rc = 1; goto out; }
    mla_heads_job job = { c, w, st, q, a, pos0, T, stop, 0, 0, &st->gpu_rows };
    job.h_base = mla_heads_gpu(&job);
    if (job.h_base < nh && !(stop && *stop)) pool_for(nh - job.h_base, mla_heads, &job);
    if (atomic_load(&job.failed)) { rc = rm_errf(err, "out of memory in MLA layer %d", layer); goto out; }
    if (stop && *stop) { rc = 1; goto out; }
    if (gate) {
        wmat_gemm(&w->g, X, gate, T);
        for (size_t i = 0; i < (size_t)T * nh * dv; i++) a[i] *= crm_sigmoidf(gate[i]);
    }
    wmat_gemm(&w->o, a, Y, T);
out:
    free(q); free(ckv); free(a); free(qa); free(gate);
    return rc;
}

/* mla_heads of every head on synthetic inputs for mla_probe_s: the queries
 * of T positions against a latent cache of T (the context of a first
 * pass), the product work mla_forward does per head beside its big
 * products. */
static void mla_probe_run(void *ud)
{
    mla_heads_job *j = ud;
    pool_for(j->c->mla_heads, mla_heads, j);
}

double mla_probe_s(const rm_config *c, int T, double seconds)
{
    const int nh = c->mla_heads, dqk = c->qk_nope + c->qk_rope, kvl = c->kv_lora_rank, lat = kvl + c->qk_rope;
    const size_t nkvb = (size_t)nh * (c->qk_nope + c->v_head_dim) * kvl, nq = (size_t)T * nh * dqk;
    uint16_t *kvb = malloc(nkvb * sizeof *kvb);
    float *q = malloc(nq * sizeof *q), *a = malloc((size_t)T * nh * c->v_head_dim * sizeof *a);
    mla_state st = { malloc((size_t)T * lat * sizeof(float)) };
    double s = -1;
    if (kvb && q && a && st.latent) {
        for (size_t i = 0; i < nkvb; i++) kvb[i] = (uint16_t)(0x3c00 + (i * 37) % 256);   /* bf16 in [2^-7, 2^-5) */
        for (size_t i = 0; i < nq; i++) q[i] = (float)((int)((i * 37) % 101) - 50) / 50.0f;
        for (size_t i = 0; i < (size_t)T * lat; i++) st.latent[i] = (float)((int)((i * 41) % 101) - 50) / 50.0f;
        mla_weights w = { .kv_b = { .kind = WM_BF16, .w = kvb, .rows = nh * (c->qk_nope + c->v_head_dim), .cols = kvl } };
        mla_heads_job j = { c, &w, &st, q, a, 0, T, NULL, 0, 0 };
        s = rm_time_median(mla_probe_run, &j, seconds);
        if (atomic_load(&j.failed)) s = -1;
    }
    free(kvb); free(q); free(a); free(st.latent);
    return s;
}

double mla_score_pairs(int pos0, int T)
{
    const int qb0 = heads_block(pos0 + T), qb = qb0 < T ? qb0 : T;
    double pairs = 0;
    for (int t0 = 0; t0 < T; t0 += qb) {
        const int nb = T - t0 < qb ? T - t0 : qb;
        pairs += (double)nb * (pos0 + t0 + nb);
    }
    return pairs;
}
