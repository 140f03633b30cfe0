/* norm.c — the small element-wise pieces shared by every layer type:
 *
 *   RMSNorm       y = x · rsqrt(mean(x²) + eps) · w   (KimiRMSNorm)
 *   AttnRes mix   s_j = rsqrt(mean(V_j²) + eps) · Σ_d V_j[d]·w[d],  p = softmax(s),
 *                 out = Σ_j p_j V_j   (w = *_res_norm ⊙ *_res_proj;
 *                 KimiDecoderLayer._apply_attn_res)
 *   GLU           SiLU: silu(g)·u;  SiTU: β·tanh(g/β)·sigmoid(g) · βl·tanh(u/βl)
 *                 (SituAndMul)
 * (classes of K3's modeling_kimi_linear.py).
 *
 * Sums of squares and dot products accumulate in double: the reference runs
 * these steps in at least fp32 on fp64 data, and the extra width only brings
 * us closer to it. glu_probe_s times the GLU for the forecast.
 */
#include <stdlib.h>
#include <string.h>
#include "model/layers.h"
#include "base/clock.h"
#include "base/threadpool.h"

void norm_rms(const float *x, const float *w, float *y, int n, float eps)
{
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    float r = (float)(1.0 / sqrt(ss / n + eps));
    for (int i = 0; i < n; i++) y[i] = x[i] * r * w[i];
}

void norm_attn_res_mix(const float *const *src, int n, const float *w, float *out, int D, float eps)
{
    double s[64], mx = -INFINITY;
    for (int j = 0; j < n; j++) {
        double ss = 0, dot = 0;
        for (int d = 0; d < D; d++) {
            ss += (double)src[j][d] * src[j][d];
            dot += (double)src[j][d] * w[d];
        }
        s[j] = dot / sqrt(ss / D + eps);
        if (s[j] > mx) mx = s[j];
    }
    double tot = 0;
    for (int j = 0; j < n; j++) { s[j] = exp(s[j] - mx); tot += s[j]; }
    for (int d = 0; d < D; d++) {
        double acc = 0;
        for (int j = 0; j < n; j++) acc += s[j] / tot * src[j][d];
        out[d] = (float)acc;
    }
}

/* Elements per pool chunk of norm_glu: SiTU costs two tanh and an exp per
 * element (about 20 ns here with glibc's; crmath's are 0.85x that,
 * tests/tools/crmath_bench.c), so a prompt's GLUs — 2048 positions x 16
 * experts x 3072 per MoE layer, 69 M in K3's dense layer — were seconds on
 * one core while the other waited. Each element is computed alone, so the
 * split changes no bit. */
#define GLU_CHUNK 8192

typedef struct { const rm_config *c; float *g; const float *u; int n; } glu_job;

static void glu_range(const rm_config *c, float *g, const float *u, int i0, int i1)
{
    if (c->act == ACT_SILU) {
        for (int i = i0; i < i1; i++) g[i] = g[i] * crm_sigmoidf(g[i]) * u[i];
        return;
    }
    const float b = (float)c->situ_beta, bl = (float)c->situ_linear_beta;
    for (int i = i0; i < i1; i++) {
        float a = b * crm_tanhf(g[i] / b) * crm_sigmoidf(g[i]);
        float lin = bl > 0 ? bl * crm_tanhf(u[i] / bl) : u[i];
        g[i] = a * lin;
    }
}

static void glu_task(void *ud, int b, int e)
{
    const glu_job *j = ud;
    const int i1 = e * GLU_CHUNK < j->n ? e * GLU_CHUNK : j->n;
    glu_range(j->c, j->g, j->u, b * GLU_CHUNK, i1);
}

void norm_glu(const rm_config *c, float *g, const float *u, int n)
{
    if (n <= GLU_CHUNK) {
        glu_range(c, g, u, 0, n);
        return;
    }
    glu_job j = { c, g, u, n };
    pool_for((n + GLU_CHUNK - 1) / GLU_CHUNK, glu_task, &j);
}

/* norm_glu over n elements for glu_probe_s: g is copied in afresh each
 * run (the GLU works in place), a copy beside two tanh and an exp per
 * element for SiTU. */
typedef struct glu_probe { const rm_config *c; float *g; const float *src, *u; int n; } glu_probe;

static void glu_probe_run(void *ud)
{
    glu_probe *p = ud;
    memcpy(p->g, p->src, (size_t)p->n * sizeof *p->g);
    norm_glu(p->c, p->g, p->u, p->n);
}

double glu_probe_s(const rm_config *c, int n, double seconds)
{
    float *src = malloc((size_t)2 * n * sizeof *src), *g = malloc((size_t)n * sizeof *g);
    double s = -1;
    if (src && g) {
        for (size_t i = 0; i < (size_t)2 * n; i++) src[i] = (float)((int)((i * 37) % 101) - 50) / 12.5f;   /* in [-4, 4] */
        glu_probe p = { c, g, src, src + n, n };
        s = rm_time_median(glu_probe_run, &p, seconds);
    }
    free(src);
    free(g);
    return s;
}
