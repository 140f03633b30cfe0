/* counters.c — what an open model reports about itself. Per token
 * (rm_model_take_stats): bytes read for the spine and the experts (from the
 * reader pools' own counts, so they agree with what the device delivered),
 * cache hits, phase times, and in stream mode the network bytes, of which
 * the bytes a download put straight into a slot are not storage reads. On
 * request: the storage ceiling (rm_bench_device, io/device.c) and how much
 * of the expert pool is local (rm_model_pool_status, remote/pool.c). */
#include <string.h>
#include "model/model.h"
#include "gpu/gpu.h"
#include "remote/source.h"
#include "base/file.h"

void model_route_states(const rm_model *m, rm_token_stats *st)
{
    const expert_cache *c = &m->experts;
    if (!c->found) return;
    const int k = st->route_k < RM_MAX_TOPK ? st->route_k : RM_MAX_TOPK;
    for (int l = 0, row = 0; l < c->L && row < st->route_layers && row < RM_MAX_ROUTE_LAYERS; l++) {
        if (!c->table[l]) continue;     /* not a MoE layer: no row */
        for (int i = 0; i < k; i++) {
            const int id = st->route_ids[row][i];
            st->route_state[row][i] = id >= 0 && id < c->E ? c->found[(size_t)l * c->E + id] : RM_ROUTE_UNKNOWN;
        }
        row++;
    }
}

void model_take_stats(rm_model *m, rm_token_stats *st, int tick)
{
    const uint64_t flops = wmat_flops();
    io_counters a = io_take_counters(m->store.io);
    io_counters e = m->experts.io ? io_take_counters(m->experts.io) : (io_counters){ { 0 }, 0, 0, 0 };
    expert_cache *c = &m->experts;
    st->bytes_spine_read = a.bytes[IO_SPINE] + a.bytes[IO_OTHER];
    st->bytes_expert_read = e.bytes[IO_EXPERT] + e.bytes[IO_PREFETCH];
    st->bytes_expert_from_cache = c->bytes_hit;
    st->expert_hits = c->hits;
    st->expert_misses = c->misses;
    st->spine_resident_bytes = m->store.spine_resident;
    st->spine_total_bytes = m->store.spine_total;
    st->expert_cache_bytes = (uint64_t)c->resident * c->slot_size;
    st->expert_cache_capacity = (uint64_t)c->nslots * c->slot_size;
    st->retained_fraction = m->info.total_experts ? (double)c->resident / m->info.total_experts : 0;
    st->bytes_net = 0;
    st->net_gbps = 0;
    if (m->remote) {    /* bytes a download put in a slot were not read from storage */
        uint64_t served = 0;
        double net_s = 0;
        remote_take_counters(m->remote, &st->bytes_net, &served, &net_s);
        st->bytes_expert_read -= served < st->bytes_expert_read ? served : st->bytes_expert_read;
        st->net_gbps = net_s > 0 ? (double)st->bytes_net / net_s / 1e9 : 0;
    }
    st->read_gbps = e.busy_seconds > 0 ? (double)st->bytes_expert_read / e.busy_seconds / 1e9 : 0;
    st->read_busy_seconds = e.busy_seconds;
    st->flops = flops - m->ctr.flops0;
    m->ctr.flops0 = flops;
    uint64_t h2d;
    double gpu_s;
    gpu_counters(&h2d, &gpu_s, &st->vram_resident_bytes);
    st->gpu_h2d_bytes = h2d - m->ctr.gpu_h2d0;
    st->gpu_seconds = gpu_s - m->ctr.gpu_s0;
    m->ctr.gpu_h2d0 = h2d;
    m->ctr.gpu_s0 = gpu_s;
    st->queue_depth = e.max_depth;
    for (int i = 0; i < RM_PHASE_COUNT; i++) st->phase_seconds[i] = m->ctr.phase[i];
    st->prefetch_issued = c->prefetch_issued;
    st->prefetch_used = c->prefetch_used;
    c->hits = c->misses = c->bytes_hit = c->prefetch_issued = c->prefetch_used = 0;
    /* per MoE layer, as route_ids numbers them */
    for (int l = 0, row = 0; l < c->L && c->layer_miss_bytes; l++) {
        if (!c->table[l]) continue;
        if (row < RM_MAX_ROUTE_LAYERS) st->layer_bytes_read[row++] = c->layer_miss_bytes[l];
        c->layer_miss_bytes[l] = 0;
    }
    memset(m->ctr.phase, 0, sizeof m->ctr.phase);
    m->ctr.tokens = 0;
    if (tick) experts_tick(c);
}

void rm_model_take_stats(rm_model *m, rm_token_stats *st) { model_take_stats(m, st, 1); }

uint64_t rm_model_expert_read_bytes(const rm_model *m, int layer, int expert)
{
    const expert_cache *c = &m->experts;
    if (!c->E || layer < 0 || layer >= c->L || expert < 0 || expert >= c->E || !m->cfg.is_moe[layer]) return 0;
    return c->loc[(size_t)layer * c->E + expert].bytes;
}

double rm_model_wait_memory(rm_model *m)
{
    const double t0 = rm_now();
    experts_wait_populated(&m->experts);
    return rm_now() - t0;
}

double rm_bench_device(rm_model *m, double seconds, int *block_bytes, int *queue_depth, rm_err *err)
{
    return device_bench(&m->experts, seconds, block_bytes, queue_depth, err);
}

double rm_bench_spine(rm_model *m, double seconds, rm_err *err)
{
    return store_bench(&m->store, seconds, err);
}

/* The pool status of an open model: stream mode asks its source (remote/pool.c);
 * a local model has every expert in its shards. */
int rm_model_pool_status(const rm_model *m, rm_pool_status *st, rm_err *err)
{
    (void)err;
    if (m->remote) { remote_pool_status(m->remote, -1, -1, st); return 0; }
    memset(st, 0, sizeof *st);
    st->experts_total = st->experts_local = m->info.total_experts;
    st->bytes_total = st->bytes_local = m->info.expert_bytes;
    st->disk_free = file_free_space(m->st->dir);
    return 0;
}

