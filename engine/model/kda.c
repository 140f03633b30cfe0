/* kda.c — Kimi Delta Attention, the linear-attention mixer of most layers.
 *
 * Per token t and head h (KimiDeltaAttention of K3's modeling_kimi_linear.py
 * and of Kimi-Linear-48B's modeling_kimi.py, whose kernels' torch reference
 * is naive_recurrent_kda in flash-linear-attention's fla/ops/kda/naive.py):
 *   q, k, v  = SiLU(causal depthwise conv_W(W{q,k,v} x))       [H, hd] each
 *   z        = W_fb W_fa x + dt_bias
 *   log α    = LB · sigmoid(exp(A_log[h]) · z)     (K3, gate_lower_bound LB)
 *            = −exp(A_log[h]) · softplus(z)        (Kimi-Linear-48B)
 *   β        = sigmoid(W_b x)[h]
 *   q̂ = q / sqrt(Σq² + 1e-6) / sqrt(hd),   k̂ = k / sqrt(Σk² + 1e-6)
 *   S ← diag(α) S;   u = v − Sᵀk̂;   S ← S + β k̂ uᵀ;   o = Sᵀ q̂
 *   out      = W_o · concat_h( RMSNorm(o_h) · w_onorm · sigmoid(gate_h) )
 * where the output gate is W_g x (full rank, K3) or W_gb W_ga x (48B).
 *
 * The projections run over all T positions at once; the convolution and the
 * recurrence then step through the positions in order, which is the
 * recurrent form of the chunked prefill kernel and exact to fp32 rounding.
 * The recurrence is sequential over tokens but wide over the value channel:
 * kern_kda_step runs each step with 8 or 16 columns of S per instruction,
 * the same bits at every SIMD level, in prefill and in decode alike.
 * kda_probe_s times that part (kda_mix) on synthetic inputs for the
 * forecast, which counts it beside the products.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "model/layers.h"
#include "kernels/kernels.h"
#include "base/clock.h"
#include "base/threadpool.h"

static float softplusf(float x) { return x > 20.0f ? x : crm_log1pf(crm_expf(x)); }

/* Causal depthwise conv + SiLU over T positions, in place on X [T, P];
 * hist [W-1, P] holds the previous W-1 inputs, oldest first, and is updated.
 * W is at most 64 (config.c checks short_conv_kernel_size). Channels are
 * independent, so ranges of them run on the pool, each channel's sums in
 * the same order whatever its thread: on one thread the three convolutions
 * of a 2048-token prompt at K3's widths (12288 channels) took a core for
 * about a second a KDA layer while the others waited. */
typedef struct conv_job {
    float *X, *hist;
    const float *w;
    int T, P, W;
} conv_job;

#define CONV_CHANNELS 256       /* channels a task */

static void short_conv_range(void *ud, int i0, int i1)
{
    const conv_job *j = ud;
    const int P = j->P, W = j->W, c1 = i1 * CONV_CHANNELS < P ? i1 * CONV_CHANNELS : P;
    float win[64];
    for (int t = 0; t < j->T; t++) {
        float *x = j->X + (size_t)t * P;
        for (int c = i0 * CONV_CHANNELS; c < c1; c++) {
            float *hist = j->hist;
            for (int k = 0; k < W - 1; k++) win[k] = hist[(size_t)k * P + c];
            win[W - 1] = x[c];
            float acc = 0;
            for (int k = 0; k < W; k++) acc += j->w[(size_t)c * W + k] * win[k];
            for (int k = 0; k < W - 2; k++) hist[(size_t)k * P + c] = hist[(size_t)(k + 1) * P + c];
            if (W > 1) hist[(size_t)(W - 2) * P + c] = x[c];
            x[c] = acc * crm_sigmoidf(acc);
        }
    }
}

static void short_conv(float *X, float *hist, const float *w, int T, int P, int W)
{
    conv_job j = { X, hist, w, T, P, W };
    pool_for((P + CONV_CHANNELS - 1) / CONV_CHANNELS, short_conv_range, &j);
}

static void l2_normalise(const float *x, float *y, int n, float scale)
{
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    float r = (float)(1.0 / sqrt(ss + 1e-6)) * scale;
    for (int i = 0; i < n; i++) y[i] = x[i] * r;
}

/* The recurrence of heads [h0, h1) over all T positions. Heads are
 * independent, so they run in parallel; each head's arithmetic is the same
 * whichever thread runs it. */
typedef struct kda_heads_job {
    const rm_config *c;
    const kda_weights *w;
    kda_state *st;
    const float *q, *k, *v, *g, *gate, *beta;
    float *o, *rec;
    int T;
    atomic_int failed;
} kda_heads_job;

static void kda_heads(void *ud, int h0, int h1)
{
    kda_heads_job *j = ud;
    const rm_config *c = j->c;
    const kda_weights *w = j->w;
    const int H = c->kda_heads, hd = c->kda_head_dim, P = H * hd;
    const size_t RS = KDA_REC(P, H);
    const float qscale = 1.0f / sqrtf((float)hd), eps = (float)c->rms_eps;
    float *tmp = malloc((size_t)4 * hd * sizeof *tmp);
    if (!tmp) { atomic_store(&j->failed, 1); return; }
    float *alpha = tmp, *qn = tmp + hd, *kn = tmp + 2 * hd, *u = tmp + 3 * hd;
    for (int h = h0; h < h1; h++) {
        const float A = crm_expf(w->A_log[h]);
        for (int t = 0; t < j->T; t++) {
            const size_t off = (size_t)t * P + (size_t)h * hd;
            for (int d = 0; d < hd; d++) {
                float z = j->g[off + d] + w->dt_bias[(size_t)h * hd + d];
                float lg = c->kda_has_lower_bound ? (float)c->kda_lower_bound * crm_sigmoidf(A * z)
                                                  : -A * softplusf(z);
                alpha[d] = crm_expf(lg);
            }
            l2_normalise(j->q + off, qn, hd, qscale);
            l2_normalise(j->k + off, kn, hd, 1.0f);
            float b = crm_sigmoidf(j->beta[(size_t)t * H + h]);
            float *oh = j->o + off;
            if (j->rec) {
                float *r = j->rec + t * RS;
                memcpy(r + 3 * (size_t)P + (size_t)h * hd, alpha, (size_t)hd * sizeof *r);
                memcpy(r + 4 * (size_t)P + (size_t)h * hd, kn, (size_t)hd * sizeof *r);
                memcpy(r + 5 * (size_t)P + (size_t)h * hd, j->v + off, (size_t)hd * sizeof *r);
                r[6 * (size_t)P + h] = b;
            }
            kern_kda_step(j->st->S + (size_t)h * hd * hd, alpha, kn, qn, j->v + off, b, oh, u, hd);
            /* gated RMSNorm of the head output */
            double ss = 0;
            for (int d = 0; d < hd; d++) ss += (double)oh[d] * oh[d];
            float r = (float)(1.0 / sqrt(ss / hd + eps));
            for (int d = 0; d < hd; d++) oh[d] = oh[d] * r * w->o_norm[d] * crm_sigmoidf(j->gate[off + d]);
        }
    }
    free(tmp);
}

/* The part of a layer between its products: the convolution of q, k and
 * v (in place) and the recurrence of every head into o. -1 when out of
 * memory. */
static int kda_mix(const rm_config *c, const kda_weights *w, kda_state *st, float *q, float *k, float *v,
                   const float *g, const float *gate, const float *beta, float *o, float *rec, int T)
{
    const int P = c->kda_heads * c->kda_head_dim, W = c->conv_size;
    short_conv(q, st->conv, w->conv[0], T, P, W);
    short_conv(k, st->conv + (size_t)(W - 1) * P, w->conv[1], T, P, W);
    short_conv(v, st->conv + (size_t)2 * (W - 1) * P, w->conv[2], T, P, W);
    kda_heads_job job = { c, w, st, q, k, v, g, gate, beta, o, rec, T, 0 };
    pool_for(c->kda_heads, kda_heads, &job);
    return atomic_load(&job.failed) ? -1 : 0;
}

int kda_forward(const rm_config *c, const kda_weights *w, kda_state *st, int layer, const float *X, float *Y, int T,
                volatile int *stop, rm_err *err)
{
    const int H = c->kda_heads, hd = c->kda_head_dim, P = H * hd;
    const size_t TP = (size_t)T * P;
    float *q = malloc(TP * sizeof *q), *k = malloc(TP * sizeof *k), *v = malloc(TP * sizeof *v);
    float *g = malloc(TP * sizeof *g), *gate = malloc(TP * sizeof *gate), *o = malloc(TP * sizeof *o);
    float *low = malloc((size_t)T * hd * sizeof *low), *beta = malloc((size_t)T * H * sizeof *beta);
    int rc = 0;
    if (!q || !k || !v || !g || !gate || !o || !low || !beta) {
        rc = rm_errf(err, "out of memory in KDA layer %d", layer);
        goto out;
    }
    wmat_gemm(&w->q, X, q, T);
    wmat_gemm(&w->k, X, k, T);
    wmat_gemm(&w->v, X, v, T);
    /* a stop between the products leaves S half-updated: the caller of a
     * stoppable pass puts the state back to its mark */
    if (stop && *stop) { rc = 1; goto out; }
    const size_t RS = KDA_REC(P, H);
    float *rec = NULL;
    if (st->recording) {        /* since a checkpoint */
        if (rm_grow((void **)&st->rec, &st->rec_cap, st->nrec + T, RS * sizeof *st->rec)) {
            rc = rm_errf(err, "out of memory recording KDA layer %d", layer);
            goto out;
        }
        rec = st->rec + (size_t)st->nrec * RS;
        for (int t = 0; t < T; t++) {
            memcpy(rec + t * RS, q + (size_t)t * P, (size_t)P * sizeof *rec);
            memcpy(rec + t * RS + P, k + (size_t)t * P, (size_t)P * sizeof *rec);
            memcpy(rec + t * RS + 2 * (size_t)P, v + (size_t)t * P, (size_t)P * sizeof *rec);
        }
        st->nrec += T;
    }
    wmat_gemm(&w->f_a, X, low, T);
    wmat_gemm(&w->f_b, low, g, T);
    wmat_gemm(&w->b, X, beta, T);
    if (c->kda_full_rank_gate) {
        wmat_gemm(&w->g, X, gate, T);
    } else {
        wmat_gemm(&w->g_a, X, low, T);
        wmat_gemm(&w->g_b, low, gate, T);
    }
    if (stop && *stop) { rc = 1; goto out; }
    if (kda_mix(c, w, st, q, k, v, g, gate, beta, o, rec, T)) {
        rc = rm_errf(err, "out of memory in KDA layer %d", layer);
        goto out;
    }
    wmat_gemm(&w->o, o, Y, T);
out:
    free(q); free(k); free(v); free(g); free(gate); free(o); free(low); free(beta);
    return rc;
}

/* kda_mix on synthetic inputs for kda_probe_s: q, k and v are copied in
 * afresh each run (the convolution works in place; run on its own output
 * the values would drift towards 0 or infinity), a copy of 3·T·P floats
 * beside the recurrence's 4·hd² fmas per position and head. */
typedef struct kda_probe {
    const rm_config *c;
    kda_weights w;
    kda_state st;
    float *src, *qkv, *g, *gate, *beta, *o;
    int T, failed;
} kda_probe;

static void kda_probe_run(void *ud)
{
    kda_probe *p = ud;
    const size_t TP = (size_t)p->T * p->c->kda_heads * p->c->kda_head_dim;
    memcpy(p->qkv, p->src, 3 * TP * sizeof *p->qkv);
    if (kda_mix(p->c, &p->w, &p->st, p->qkv, p->qkv + TP, p->qkv + 2 * TP, p->g, p->gate, p->beta, p->o, NULL, p->T))
        p->failed = 1;
}

double kda_probe_s(const rm_config *c, int T, double seconds)
{
    const int H = c->kda_heads, hd = c->kda_head_dim, P = H * hd, W = c->conv_size;
    const size_t TP = (size_t)T * P, nsrc = 3 * TP + 2 * TP + (size_t)T * H;
    kda_probe p = { .c = c, .T = T };
    float *taps = malloc((size_t)P * W * sizeof *taps), *a_log = calloc((size_t)H, sizeof *a_log);
    float *dt = calloc((size_t)P, sizeof *dt), *onorm = malloc((size_t)hd * sizeof *onorm);
    p.st.S = calloc((size_t)H * hd * hd, sizeof *p.st.S);
    p.st.conv = calloc((size_t)3 * (W > 1 ? W - 1 : 1) * P, sizeof *p.st.conv);
    p.src = malloc(nsrc * sizeof *p.src);
    p.qkv = malloc(3 * TP * sizeof *p.qkv);
    p.o = malloc(TP * sizeof *p.o);
    double s = -1;
    if (taps && a_log && dt && onorm && p.st.S && p.st.conv && p.src && p.qkv && p.o) {
        for (size_t i = 0; i < (size_t)P * W; i++) taps[i] = 0.25f;
        for (int i = 0; i < hd; i++) onorm[i] = 1.0f;
        for (size_t i = 0; i < nsrc; i++) p.src[i] = (float)((int)((i * 37) % 101) - 50) / 50.0f;   /* in [-1, 1] */
        p.g = p.src + 3 * TP;
        p.gate = p.g + TP;
        p.beta = p.gate + TP;
        p.w.conv[0] = p.w.conv[1] = p.w.conv[2] = taps;
        p.w.A_log = a_log;
        p.w.dt_bias = dt;
        p.w.o_norm = onorm;
        s = rm_time_median(kda_probe_run, &p, seconds);
        if (p.failed) s = -1;
    }
    free(taps); free(a_log); free(dt); free(onorm); free(p.st.S); free(p.st.conv); free(p.src); free(p.qkv); free(p.o);
    return s;
}

void kda_rollback(const rm_config *c, kda_state *st, int keep)
{
    const int H = c->kda_heads, hd = c->kda_head_dim, P = H * hd, W = c->conv_size;
    const size_t RS = KDA_REC(P, H), hist = (size_t)(W > 1 ? W - 1 : 1) * P;
    memcpy(st->S, st->S0, (size_t)H * hd * hd * sizeof *st->S);
    memcpy(st->conv, st->conv0, 3 * hist * sizeof *st->conv);
    float *u = malloc((size_t)2 * hd * sizeof *u), *o = u + hd;
    for (int t = 0; t < keep && t < st->nrec && u; t++) {
        const float *r = st->rec + (size_t)t * RS;
        for (int i = 0; i < 3; i++) {   /* the convolution history moves on by one input */
            float *hi = st->conv + (size_t)i * hist;
            if (W > 1) {
                memmove(hi, hi + P, (size_t)(W - 2) * P * sizeof *hi);
                memcpy(hi + (size_t)(W - 2) * P, r + (size_t)i * P, (size_t)P * sizeof *hi);
            }
        }
        for (int h = 0; h < H; h++)     /* the same arithmetic as the forward step */
            kern_kda_step(st->S + (size_t)h * hd * hd, r + 3 * (size_t)P + (size_t)h * hd,
                       r + 4 * (size_t)P + (size_t)h * hd, r + 4 * (size_t)P + (size_t)h * hd,
                       r + 5 * (size_t)P + (size_t)h * hd, r[6 * (size_t)P + h], o, u, hd);
    }
    free(u);
    st->nrec = 0;
}
