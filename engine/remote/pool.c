/* pool.c — how much of a stream-mode model's routed-expert pool is on local
 * disk (in the shards or the disk cache), and `remora fetch` (rm_pool_fetch
 * in engine.h), which completes it: every missing expert of the layers asked
 * for is downloaded into the disk cache by a few blocking workers at once
 * (tasks.h), with the same per-expert path as a miss during a run. */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "remote/source_int.h"
#include "remote/xcache.h"
#include "base/file.h"
#include "base/align.h"
#include "base/tasks.h"


static int key_local(const remote *x, int key)
{
    if (x->in_shard[key]) return 1;
    char path[4096];
    xc_path(path, sizeof path, x->dir, key / x->E, key % x->E);
    return xc_present(path, x->keys[key].raw);
}

static void layer_range(const remote *x, int *first, int *last)
{
    if (*first < 0) *first = 0;
    if (*last < 0 || *last >= x->L) *last = x->L - 1;
}

void remote_pool_status(const remote *x, int first, int last, rm_pool_status *st)
{
    memset(st, 0, sizeof *st);
    st->stream = 1;
    snprintf(st->source, sizeof st->source, "%s", x->source);
    layer_range(x, &first, &last);
    for (int key = first * x->E; key < (last + 1) * x->E; key++) {
        if (!x->keys[key].nseg) continue;
        st->experts_total++;
        st->bytes_total += x->keys[key].raw;
        if (key_local(x, key)) { st->experts_local++; st->bytes_local += x->keys[key].raw; }
    }
    st->disk_free = file_free_space(x->dir);
}

typedef struct pool_job {
    remote *x;
    int *keys;
    uint8_t **bufs;             /* one download buffer per worker */
    pthread_mutex_t mu;
    uint64_t done, total;
    unsigned since;             /* http_epoch as the fetch began */
    rm_progress_fn fn;
    void *ud;
} pool_job;

static int fetch_one(void *ud, int i, int worker, rm_err *err)
{
    pool_job *p = ud;
    int from_net;
    if (remote_obtain(p->x, p->keys[i], p->bufs[worker], 1, p->since, &from_net, err)) return -1;
    pthread_mutex_lock(&p->mu);
    p->done += p->x->keys[p->keys[i]].raw;
    if (p->fn) p->fn(p->ud, "experts", p->done, p->total);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

/* One expert failed: the downloads still running end now. */
static void cancel_fetch(void *ud, const char *why) { http_cancel(((pool_job *)ud)->x->net, why); }

int rm_pool_fetch(const char *dir, const rm_fetch_opts *o, rm_pool_status *st, rm_progress_fn fn, void *ud,
                  rm_err *err)
{
    rm_config cfg;
    st_set *set = NULL;
    remote *x = NULL;
    const int conns = o->connections > 0 ? o->connections : 8;
    if (config_load(dir, &cfg, err) || st_open(dir, &set, err)) { st_close(set); return -1; }
    if (remote_open(dir, set, &cfg, conns, &x, err)) { st_close(set); return -1; }
    int rc = 0, first = o->first_layer, last = o->last_layer;
    pool_job p = { x, NULL, NULL, PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, fn, ud };
    if (!x) { rc = rm_errf(err, "%s: not a stream-mode model (no .remora/source.json); set it up with `remora setup`", dir); goto out; }
    if (first >= cfg.num_layers || (last >= 0 && last < (first < 0 ? 0 : first)))
        { rc = rm_errf(err, "%s: layers %d-%d are outside the model's 0-%d", dir, first, last, cfg.num_layers - 1); goto out; }
    layer_range(x, &first, &last);
    rm_pool_status s;
    remote_pool_status(x, first, last, &s);
    if (st) *st = s;
    if (o->dry_run || s.experts_local == s.experts_total) goto out;
    int read_only = 0;
    file_fs_size(dir, &read_only);
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.remora", dir);
    if (read_only || access(probe, W_OK))
        { rc = rm_errf_runtime(err, "%s: cannot write the expert cache: %s", probe,
                               read_only ? strerror(EROFS) : strerror(errno)); goto out; }
    const uint64_t reserve = remote_disk_reserve(dir);
    if (s.bytes_total - s.bytes_local + reserve > s.disk_free)
        { rc = rm_errf_runtime(err, "%s: the missing experts need %.3f GB and %.3f GB is free (%.3f GB stays free)", dir,
                               (s.bytes_total - s.bytes_local) / 1e9, s.disk_free / 1e9, reserve / 1e9); goto out; }
    int n = 0;
    uint64_t maxraw = 0;
    if (!(p.keys = malloc((size_t)(s.experts_total - s.experts_local) * sizeof *p.keys)) ||
        !(p.bufs = calloc((size_t)conns, sizeof *p.bufs))) { rc = rm_errf(err, "out of memory"); goto out; }
    for (int key = first * x->E; key < (last + 1) * x->E; key++) {
        if (!x->keys[key].nseg || key_local(x, key) || n == s.experts_total - s.experts_local) continue;
        p.keys[n++] = key;
        p.total += x->keys[key].raw;
        if (x->keys[key].raw > maxraw) maxraw = x->keys[key].raw;
    }
    for (int w = 0; w < conns; w++)
        if (posix_memalign((void **)&p.bufs[w], RM_ALIGN, rm_align_up(maxraw)))
            { p.bufs[w] = NULL; rc = rm_errf(err, "out of memory for %d download buffers", conns); goto out; }
    if (fn) fn(ud, "experts", 0, p.total);
    p.since = http_epoch(x->net);
    rc = tasks_for_cancel(n, conns, fetch_one, &p, cancel_fetch, err);
out:
    if (p.bufs) for (int w = 0; w < conns; w++) free(p.bufs[w]);
    free(p.bufs);
    free(p.keys);
    pthread_mutex_destroy(&p.mu);
    remote_free(x);
    st_close(set);
    return rc;
}
