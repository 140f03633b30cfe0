/* weights.c — tensor lookups with dtype and shape checks, and the dispatch of
 * a typed matrix to the GPU backend or the matching CPU kernel. */
#include <limits.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "format/weights.h"
#include "kernels/kernels.h"
#include "gpu/gpu.h"

static void shape_str(const st_tensor *t, char *buf, size_t n)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, n - o, "[");
    for (int i = 0; i < t->ndim && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    if (o < n) snprintf(buf + o, n - o, "]");
}

static const st_tensor *need(const st_set *s, const char *name, rm_err *err)
{
    const st_tensor *t = st_find(s, name);
    if (!t) rm_errf(err, "%s: tensor '%s' is missing from the checkpoint", s->dir, name);
    return t;
}

static int need_2d(const st_set *s, const st_tensor *t, int rows, int cols, rm_err *err)
{
    if (t->ndim == 2 && t->shape[0] == rows && t->shape[1] == cols) return 0;
    char sh[128];
    shape_str(t, sh, sizeof sh);
    return rm_errf(err, "%s: tensor '%s' has shape %s, expected [%d, %d]", s->shards[t->shard].path,
                   t->name, sh, rows, cols);
}

int wmat_get(const st_set *s, const char *name, int rows, int cols, wmat *out, rm_err *err)
{
    const st_tensor *t = need(s, name, err);
    if (!t) return -1;
    if (t->dtype != ST_F32 && t->dtype != ST_BF16)
        return rm_errf(err, "%s: tensor '%s' has dtype %s, expected BF16 or F32",
                       s->shards[t->shard].path, name, st_dtype_name(t->dtype));
    if (need_2d(s, t, rows, cols, err)) return -1;
    if (t->offset % (t->dtype == ST_F32 ? 4 : 2))
        return rm_errf(err, "%s: tensor '%s' starts at byte %llu, not aligned to its element size",
                       s->shards[t->shard].path, name, (unsigned long long)t->offset);
    *out = (wmat){ t->dtype == ST_F32 ? WM_F32 : WM_BF16, NULL, NULL, rows, cols, t->shard, t->offset, 0, .src = s };
    return 0;
}

int wmat_get_mxfp4(const st_set *s, const char *prefix, int rows, int cols, wmat *out, rm_err *err)
{
    char pn[512], sn[512];
    snprintf(pn, sizeof pn, "%s.weight_packed", prefix);
    snprintf(sn, sizeof sn, "%s.weight_scale", prefix);
    if (cols % 32) return rm_errf(err, "%s: MXFP4 tensor %s has %d columns, not a multiple of 32", s->dir, prefix, cols);
    const st_tensor *tp = need(s, pn, err), *ts = tp ? need(s, sn, err) : NULL;
    if (!ts) return -1;
    if (tp->dtype != ST_U8 || ts->dtype != ST_U8)
        return rm_errf(err, "%s: MXFP4 tensors of %s must be U8 (got %s and %s)", s->shards[tp->shard].path,
                       prefix, st_dtype_name(tp->dtype), st_dtype_name(ts->dtype));
    if (need_2d(s, tp, rows, cols / 2, err) || need_2d(s, ts, rows, cols / 32, err)) return -1;
    if (tp->shard != ts->shard)
        return rm_errf(err, "%s: the packed weights and scales of %s are in different shards", s->dir, prefix);
    *out = (wmat){ WM_MXFP4, NULL, NULL, rows, cols, tp->shard, tp->offset, ts->offset, .src = s };
    return 0;
}

wmat wmat_rows(const wmat *m, int r0, int n)
{
    wmat v = *m;
    v.rows = n;
    switch (m->kind) {
    case WM_F32:
        v.w = (const float *)m->w + (size_t)r0 * m->cols;
        v.off += (uint64_t)r0 * m->cols * 4;
        break;
    case WM_BF16:
        v.w = (const uint16_t *)m->w + (size_t)r0 * m->cols;
        v.off += (uint64_t)r0 * m->cols * 2;
        break;
    case WM_MXFP4:
        v.w = (const uint8_t *)m->w + (size_t)r0 * (m->cols / 2);
        v.scale = m->scale + (size_t)r0 * (m->cols / 32);
        v.off += (uint64_t)r0 * (m->cols / 2);
        v.scale_off += (uint64_t)r0 * (m->cols / 32);
        break;
    default: break;
    }
    return v;
}

uint64_t wmat_bytes(const wmat *m, uint64_t *scale_bytes)
{
    uint64_t n = (uint64_t)m->rows * (uint64_t)m->cols;
    if (scale_bytes) *scale_bytes = m->kind == WM_MXFP4 ? n / 32 : 0;
    switch (m->kind) {
    case WM_F32: return n * 4;
    case WM_BF16: return n * 2;
    case WM_MXFP4: return n / 2;
    default: return 0;
    }
}

int wvec_get(const st_set *s, const char *name, int n, int take, float **out, rm_err *err)
{
    const st_tensor *t = need(s, name, err);
    if (!t) return -1;
    if (t->dtype != ST_F32 && t->dtype != ST_BF16)
        return rm_errf(err, "%s: tensor '%s' has dtype %s, expected BF16 or F32",
                       s->shards[t->shard].path, name, st_dtype_name(t->dtype));
    if (st_numel(t) != n) {
        char sh[128];
        shape_str(t, sh, sizeof sh);
        return rm_errf(err, "%s: tensor '%s' has shape %s, expected %d elements",
                       s->shards[t->shard].path, name, sh, n);
    }
    int k = take > 0 ? take : n;
    float *v = malloc((size_t)k * sizeof *v);
    if (!v) return rm_errf(err, "out of memory loading %s", name);
    const size_t esz = t->dtype == ST_F32 ? 4 : 2;
    unsigned char *d = malloc((size_t)k * esz);
    if (!d || st_pread(s, t, d, (size_t)k * esz, err)) { free(d); free(v); return -1; }
    for (int i = 0; i < k; i++) {
        if (t->dtype == ST_F32) memcpy(&v[i], d + 4 * (size_t)i, 4);
        else { uint16_t h; memcpy(&h, d + 2 * (size_t)i, 2); v[i] = bf16_to_f32(h); }
    }
    free(d);
    *out = v;
    return 0;
}

/* Multiply-add work of every product since the start, in flops (2 per
 * weight and row): what the prefill benchmark divides by its compute time.
 * Products run on the calling thread or, for MLA's per-head gemv, on the
 * compute pool, hence the atomic. */
static _Atomic uint64_t product_flops;

uint64_t wmat_flops(void) { return atomic_load_explicit(&product_flops, memory_order_relaxed); }

static void count(const wmat *m, int T)
{
    atomic_fetch_add_explicit(&product_flops, 2ull * (uint64_t)m->rows * (uint64_t)m->cols * (uint64_t)T,
                              memory_order_relaxed);
}

/* The matrix as the GPU backend names it. */
static gpu_mat gpu_view(const wmat *m)
{
    static const gpu_wkind kinds[] = { [WM_F32] = GPU_W_F32, [WM_BF16] = GPU_W_BF16, [WM_MXFP4] = GPU_W_MXFP4 };
    const gpu_mat g = { kinds[m->kind], m->w, m->scale, m->rows, m->cols, m->src, m->shard, m->off, !m->routed };
    return g;
}

/* The product on the GPU if the backend takes it (0), else 1. */
static int on_gpu(const wmat *m, const float *X, float *Y, int T)
{
    if (m->kind == WM_NONE) return 1;
    const gpu_mat g = gpu_view(m);
    return gpu_gemm(&g, X, Y, T);
}

void wmat_stage(const wmat *m, int T)
{
    if (m->kind == WM_NONE) return;
    const gpu_mat g = gpu_view(m);
    gpu_stage(&g, T);
}

void wmat_unstage(void) { gpu_unstage(); }

int wmat_expert(const wmat *gate, const wmat *up, const wmat *down, int situ, float beta, float linear_beta,
                const float *X, int T)
{
    if (gate->kind == WM_NONE || up->kind == WM_NONE || down->kind == WM_NONE) return 1;
    const gpu_mat g = gpu_view(gate), u = gpu_view(up), d = gpu_view(down);
    if (gpu_expert(&g, &u, &d, situ, beta, linear_beta, X, T)) return 1;
    count(gate, T);
    count(up, T);
    count(down, T);
    return 0;
}

int wmat_expert_collect(float *Y) { return gpu_expert_collect(Y); }

int wmat_mla_core(uint64_t key, int valid, const float *latent, int lat, int kvl, int rope, int n_ctx, int pos0,
                  int T, int nh, const float *qa, const float *qr, float scale, float *ca)
{
    return gpu_mla_core(key, valid, latent, lat, kvl, rope, n_ctx, pos0, T, nh, qa, qr, scale, ca);
}

int wmat_mla_attend(const wmat *kv_b, int nope, int dv, uint64_t key, int valid, const float *latent, int lat,
                    int kvl, int rope, int n_ctx, int pos0, int T, int nh, const float *q, float scale, float *a)
{
    if (kv_b->kind == WM_NONE) return 1;
    const gpu_mat g = gpu_view(kv_b);
    if (gpu_mla_attend(&g, nope, dv, key, valid, latent, lat, kvl, rope, n_ctx, pos0, T, nh, q, scale, a)) return 1;
    const wmat uv = wmat_rows(kv_b, nope, dv);     /* counted as the CPU's path counts: W_UV's products */
    count(&uv, T * nh);
    return 0;
}

int wmat_mla_takes(int nh, int T, int n_ctx, int lat) { return gpu_mla_takes(nh, T, n_ctx, lat); }

void wmat_mla_drop(uint64_t key) { gpu_mla_drop(key); }

void wmat_gemv(const wmat *m, const float *x, float *y)
{
    count(m, 1);
    if (!on_gpu(m, x, y, 1)) return;
    switch (m->kind) {
    case WM_F32: kern_gemv_f32(m->w, x, y, m->rows, m->cols); break;
    case WM_BF16: kern_gemv_bf16(m->w, x, y, m->rows, m->cols); break;
    case WM_MXFP4: kern_gemv_mxfp4(m->w, m->scale, x, y, m->rows, m->cols); break;
    default: break;
    }
}

void wmat_gemm(const wmat *m, const float *X, float *Y, int T)
{
    count(m, T);
    if (!on_gpu(m, X, Y, T)) return;
    switch (m->kind) {
    case WM_F32: kern_gemm_f32(m->w, X, Y, T, m->rows, m->cols); break;
    case WM_BF16: kern_gemm_bf16(m->w, X, Y, T, m->rows, m->cols); break;
    case WM_MXFP4: kern_gemm_mxfp4(m->w, m->scale, X, Y, T, m->rows, m->cols); break;
    default: break;
    }
}
