/* device.c — the storage ceiling the engine is judged against: random
 * reads of whole experts (the engine's block size) kept `queue depth` deep
 * (the expert reader threads), through the same O_DIRECT descriptors and the
 * same reader pool the forward pass uses. */
#include <stdlib.h>
#include <string.h>
#include "io/experts.h"

double device_bench(expert_cache *c, double seconds, int *block_bytes, int *queue_depth, rm_err *err)
{
    if (!c->E || !c->io) return rm_errf(err, "the model has no routed experts to read"), -1.0;
    const int qd = io_threads(c->io);
    int nkeys = 0;
    int *keys = malloc((size_t)c->L * c->E * sizeof *keys);
    io_req *reqs = calloc((size_t)qd, sizeof *reqs);
    uint8_t **bufs = calloc((size_t)qd, sizeof *bufs);
    if (!keys || !reqs || !bufs) { free(keys); free(reqs); free(bufs); return rm_errf(err, "out of memory"), -1.0; }
    for (int k = 0; k < c->L * c->E; k++)   /* stream mode: only experts in the shards (not holes) */
        if (c->loc[k].nparts == 1 && (!c->remote.is_local || c->remote.is_local(c->remote.ctx, k))) keys[nkeys++] = k;
    int ok = nkeys > 0;
    for (int i = 0; i < qd && ok; i++) ok = !posix_memalign((void **)&bufs[i], RM_ALIGN, c->slot_size);
    double gbps = -1;
    if (!ok) { rm_errf(err, nkeys ? "out of memory" : "no expert is stored in the shards as one span"); goto out; }
    uint64_t rng = 88172645463325252ull, bytes = 0;
    io_take_counters(c->io);
    double t0 = rm_now(), end = t0 + seconds;
    for (int i = 0; i < qd; i++) {
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
        const expert_loc *l = &c->loc[keys[rng % (uint64_t)nkeys]];
        reqs[i] = (io_req){ c->st->fds[l->shard], l->off[0], l->len[0], bufs[i], NULL, IO_OTHER, NULL, NULL, 0, 0, NULL };
        io_submit(c->io, &reqs[i]);
    }
    int inflight = qd;
    while (inflight) {
        io_req *r = io_wait_any(c->io);
        if (!r) break;
        inflight--;
        bytes += r->got;
        if (rm_now() < end) {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
            const expert_loc *l = &c->loc[keys[rng % (uint64_t)nkeys]];
            *r = (io_req){ c->st->fds[l->shard], l->off[0], l->len[0], r->dst, NULL, IO_OTHER, NULL, NULL, 0, 0, NULL };
            io_submit(c->io, r);
            inflight++;
        }
    }
    gbps = (double)bytes / (rm_now() - t0) / 1e9;
    io_take_counters(c->io);
    if (block_bytes) *block_bytes = (int)c->slot_size;
    if (queue_depth) *queue_depth = qd;
out:
    for (int i = 0; i < qd; i++) free(bufs[i]);
    free(bufs);
    free(reqs);
    free(keys);
    return gbps;
}
