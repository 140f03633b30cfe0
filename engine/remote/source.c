/* source.c — stream mode: experts from the disk cache or the network
 * (source.h); the pool status and `remora fetch` are pool.c.
 *
 * Expert spans. Each routed expert's bytes are the spans of its tensors in
 * its shard, found by name (…layers.L.block_sparse_moe.experts.E.…) and
 * merged where they touch: one span for a K3 expert, one per tensor where a
 * checkpoint interleaves them. This is independent of how the expert cache
 * lays a slot out: a reader request names a shard span, and the hook fills
 * exactly the expert bytes inside it (the alignment padding around them is
 * zeroed).
 *
 * A miss. The hook runs on an expert reader thread. It reads the cache file
 * (checking its CRC the first time this process uses it), or downloads the
 * spans with one range request each, straight into the slot when the
 * request covers the whole expert, publishes the cache file and moves the
 * bytes into place. Downloads of one expert are never doubled: a key being
 * fetched is marked busy and a second reader waits for it, then finds the
 * file. A full disk (less than remote_disk_reserve left) only stops caching; the
 * token still gets its bytes.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "remote/source_int.h"
#include "remote/manifest.h"
#include "remote/xcache.h"
#include "base/file.h"
#include "base/jfile.h"
#include "base/caps.h"
#include "base/align.h"


int remote_expert_tensor(const char *name, int *layer, int *expert)
{
    const char *p = strstr(name, "layers.");
    int l, e, n = 0;
    if (!p || sscanf(p, "layers.%d.block_sparse_moe.experts.%d.%n", &l, &e, &n) != 2 || !n || l < 0 || e < 0)
        return 0;
    if (layer) *layer = l;
    if (expert) *expert = e;
    return 1;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* ---- source.json --------------------------------------------------------- */

int remote_read_source(const char *dir, char *url, size_t cap, int *full, json_t **etags, rm_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/.remora/source.json", dir);
    if (etags) *etags = NULL;
    if (access(path, F_OK) != 0) return 1;
    json_t *root = jfile_read(path, CAP_META, err);
    if (!root) {
        if (err && err->kind == RM_ERR_INPUT) {
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err->msg);
            rm_errf_input(err, "%s; `remora setup --dir %s --source URL` rebuilds it", why, dir);
        }
        return -1;
    }
    json_t *s = json_object_get(root, "source"), *m = json_object_get(root, "mode"), *e = json_object_get(root, "etags");
    int rc = 0;
    if (!json_is_string(s) || strlen(json_string_value(s)) >= cap)
        rc = rm_errf_input(err, "%s: \"source\" must be a URL; `remora setup --dir %s --source URL` rebuilds it", path, dir);
    else if (!json_is_string(m) || (strcmp(json_string_value(m), "stream") && strcmp(json_string_value(m), "full")))
        rc = rm_errf_input(err, "%s: \"mode\" must be \"stream\" or \"full\"; `remora setup --dir %s` rebuilds it", path, dir);
    else if (e && !json_is_object(e))
        rc = rm_errf_input(err, "%s: \"etags\" must be an object; `remora setup --dir %s` rebuilds it", path, dir);
    else {
        const char *k;
        json_t *v;
        json_object_foreach(e, k, v)
            if (!json_is_string(v) || json_string_length(v) >= 128) {
                rc = rm_errf_input(err, "%s: etags['%s'] must be a short string; `remora setup --dir %s` rebuilds it",
                                   path, k, dir);
                break;
            }
    }
    if (!rc) {
        snprintf(url, cap, "%s", json_string_value(s));
        if (full) *full = !strcmp(json_string_value(m), "full");
        if (etags) *etags = e ? json_incref(e) : json_object();
        if (etags && !*etags) rc = rm_errf_runtime(err, "out of memory");
    }
    json_decref(root);
    return rc;
}

int remote_write_source(const char *dir, const char *url, int full, json_t *etags, rm_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/.remora/source.json", dir);
    json_t *o = json_pack("{ssss}", "source", url, "mode", full ? "full" : "stream");
    if (o && etags && json_object_set(o, "etags", etags)) { json_decref(o); o = NULL; }
    char *text = o ? json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    if (!text) return rm_errf_runtime(err, "%s: out of memory", path);
    int rc = rm_write_atomic(path, text, strlen(text), 0644, err);
    free(text);
    return rc;
}

/* Removes the temporary files of dead writers under DIR/.remora/experts. */
static void clean_stale(const char *dir)
{
    char top[4096];
    snprintf(top, sizeof top, "%s/.remora/experts", dir);
    DIR *d = opendir(top);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] != 'L') continue;
        char sub[4400];
        snprintf(sub, sizeof sub, "%s/%s", top, de->d_name);
        DIR *s = opendir(sub);
        if (!s) continue;
        struct dirent *fe;
        while ((fe = readdir(s))) {
            if (!strstr(fe->d_name, ".tmp.") || !file_tmp_stale(fe->d_name)) continue;
            char f[4700];
            snprintf(f, sizeof f, "%s/%s", sub, fe->d_name);
            unlink(f);
        }
        closedir(s);
    }
    closedir(d);
}

/* ---- opening ------------------------------------------------------------- */

typedef struct rx_part { int key, shard; uint64_t off, len; } rx_part;

static int cmp_part(const void *a, const void *b)
{
    const rx_part *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Finds every routed expert's spans from the tensor names. */
static int build_spans(remote *x, rm_err *err)
{
    const st_set *st = x->st;
    rx_part *parts = malloc((size_t)(st->ntensors ? st->ntensors : 1) * sizeof *parts);
    size_t n = (size_t)x->L * x->E;
    x->keys = calloc(n ? n : 1, sizeof *x->keys);
    x->segs = malloc((size_t)(st->ntensors ? st->ntensors : 1) * sizeof *x->segs);
    if (!parts || !x->keys || !x->segs) { free(parts); return rm_errf(err, "out of memory"); }
    int np = 0, rc = 0;
    for (int i = 0; i < st->ntensors; i++) {
        const st_tensor *t = &st->tensors[i];
        int l, e;
        if (!remote_expert_tensor(t->name, &l, &e) || !t->nbytes) continue;
        if (l >= x->L || e >= x->E) {
            free(parts);
            return rm_errf(err, "%s: tensor '%s' names an expert outside the config (%d layers, %d experts)",
                           st->shards[t->shard].path, t->name, x->L, x->E);
        }
        parts[np++] = (rx_part){ l * x->E + e, t->shard, t->offset, t->nbytes };
    }
    qsort(parts, (size_t)np, sizeof *parts, cmp_part);
    int ns = 0;
    for (int i = 0; i < np && !rc; i++) {
        rx_key *k = &x->keys[parts[i].key];
        if (k->nseg && k->shard != parts[i].shard) {
            rc = rm_errf(err, "%s: expert %d of layer %d is split over two shards", st->dir,
                         parts[i].key % x->E, parts[i].key / x->E);
            break;
        }
        if (k->nseg && x->segs[ns - 1].off + x->segs[ns - 1].len == parts[i].off) {
            x->segs[ns - 1].len += parts[i].len;
        } else {
            if (!k->nseg) { k->shard = parts[i].shard; k->first = ns; }
            x->segs[ns++] = (rx_seg){ parts[i].off, parts[i].len };
            k->nseg++;
        }
        k->raw += parts[i].len;
    }
    free(parts);
    return rc;
}

/* Checks the manifest against the shards, requires every non-expert byte to
 * be local, and marks the experts the shards hold. */
static int check_manifest(remote *x, rm_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/.remora/manifest.json", x->dir);
    manifest mf;
    if (manifest_load(&mf, path, err)) {
        if (err && err->kind == RM_ERR_INPUT) {
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err->msg);
            rm_errf_input(err, "%s; `remora setup --dir %s` rebuilds it", why, x->dir);
        }
        return -1;
    }
    const st_set *st = x->st;
    int rc = 0;
    int *idx = malloc((size_t)st->nshards * sizeof *idx);
    if (!idx) { manifest_free(&mf); return rm_errf(err, "out of memory"); }
    for (int i = 0; i < st->nshards && !rc; i++) {
        idx[i] = manifest_find(&mf, base_name(st->shards[i].path));
        if (idx[i] < 0 || mf.shards[idx[i]].size != st->shards[i].size)
            rc = rm_errf(err, "%s: %s is not recorded there with its size (%llu bytes); run `remora setup --dir %s` again",
                         path, base_name(st->shards[i].path), (unsigned long long)st->shards[i].size, x->dir);
    }
    for (int i = 0; i < st->ntensors && !rc; i++) {
        const st_tensor *t = &st->tensors[i];
        if (remote_expert_tensor(t->name, NULL, NULL) || !t->nbytes) continue;
        if (!manifest_covers(&mf, idx[t->shard], t->offset, t->offset + t->nbytes))
            rc = rm_errf(err, "%s: setup has not finished: tensor '%s' is not downloaded yet; run `remora setup --dir %s` again",
                         x->dir, t->name, x->dir);
    }
    for (int key = 0; key < x->L * x->E && !rc; key++) {
        const rx_key *k = &x->keys[key];
        int all = k->nseg > 0;
        for (int s = 0; s < k->nseg && all; s++)
            all = manifest_covers(&mf, idx[k->shard], x->segs[k->first + s].off,
                                  x->segs[k->first + s].off + x->segs[k->first + s].len);
        x->in_shard[key] = (unsigned char)all;
    }
    free(idx);
    manifest_free(&mf);
    return rc;
}

int remote_open(const char *dir, const st_set *st, const rm_config *cfg, int connections, remote **out,
                rm_err *err)
{
    *out = NULL;
    char url[1024];
    int full = 0;
    json_t *etags = NULL;
    int r = remote_read_source(dir, url, sizeof url, &full, &etags, err);
    if (r) return r > 0 ? 0 : -1;
    remote *x = calloc(1, sizeof *x);
    if (!x) return rm_errf(err, "out of memory");
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->cv, NULL);
    snprintf(x->source, sizeof x->source, "%s", url);
    x->full = full;
    x->st = st;
    x->L = cfg->num_layers;
    x->E = cfg->num_experts;
    for (int i = 0; i < RX_WHY; i++) x->why[i].key = -1;
    size_t n = (size_t)x->L * x->E;
    x->dir = strdup(dir);
    x->in_shard = calloc(n ? n : 1, 1);
    x->verified = calloc(n ? n : 1, 1);
    x->etag = calloc((size_t)st->nshards, sizeof *x->etag);
    x->rev = calloc((size_t)st->nshards, sizeof *x->rev);
    if (!x->dir || !x->in_shard || !x->verified || !x->etag || !x->rev) {
        json_decref(etags);
        remote_free(x);
        return rm_errf_runtime(err, "out of memory");
    }
    x->nshards = st->nshards;
    for (int i = 0; i < st->nshards; i++) {
        const char *e = json_string_value(json_object_get(etags, base_name(st->shards[i].path)));
        if (e && *e && !(x->etag[i] = strdup(e))) { json_decref(etags); remote_free(x); return rm_errf_runtime(err, "out of memory"); }
        x->rev[i] = xc_revision(e);
    }
    json_decref(etags);
    http_opts fo = { url, getenv("HF_TOKEN"), connections, 0, 0 };
    if (build_spans(x, err) || check_manifest(x, err) || http_new(&fo, &x->net, err)) {
        remote_free(x);
        return -1;
    }
    clean_stale(dir);
    *out = x;
    return 0;
}

void remote_free(remote *x)
{
    if (!x) return;
    http_free(x->net);
    pthread_mutex_destroy(&x->mu);
    pthread_cond_destroy(&x->cv);
    free(x->dir);
    free(x->keys);
    free(x->segs);
    free(x->in_shard);
    free(x->verified);
    for (int i = 0; x->etag && i < x->nshards; i++) free(x->etag[i]);
    free(x->etag);
    free(x->rev);
    free(x->busy);
    free(x);
}

uint64_t remote_disk_reserve(const char *dir)
{
    uint64_t size = file_fs_size(dir, NULL);
    return size && size / 20 < DISK_RESERVE_MAX ? size / 20 : DISK_RESERVE_MAX;
}

/* ---- getting one expert's bytes ------------------------------------------ */

static int lock_key(remote *x, int key)
{
    pthread_mutex_lock(&x->mu);
    for (;;) {
        int busy = 0;
        for (int i = 0; i < x->nbusy; i++) busy |= x->busy[i] == key;
        if (!busy) break;
        pthread_cond_wait(&x->cv, &x->mu);
    }
    if (RM_GROW(x->busy, x->busy_cap, x->nbusy + 1)) { pthread_mutex_unlock(&x->mu); return -1; }
    x->busy[x->nbusy++] = key;
    pthread_mutex_unlock(&x->mu);
    return 0;
}

static void unlock_key(remote *x, int key)
{
    pthread_mutex_lock(&x->mu);
    for (int i = 0; i < x->nbusy; i++)
        if (x->busy[i] == key) { x->busy[i] = x->busy[--x->nbusy]; break; }
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
}

/* Fills img (k->raw bytes) with expert `key`: from the cache file, else
 * downloaded and then cached. must_cache: a cache file that cannot be
 * written is an error (remora fetch) rather than a skipped copy (a run).
 * since: the http_epoch the caller's work began at (after a cancel, no
 * download of it starts). */
int remote_obtain(remote *x, int key, uint8_t *img, int must_cache, unsigned since, int *from_net, rm_err *err)
{
    const rx_key *k = &x->keys[key];
    char path[4096];
    xc_path(path, sizeof path, x->dir, key / x->E, key % x->E);
    const xc_id id = { key / x->E, key % x->E, x->segs[k->first].off, x->rev[k->shard] };
    *from_net = 0;
    if (lock_key(x, key)) return rm_errf(err, "out of memory");
    int damaged = 0;
    int rc = xc_load(path, img, k->raw, &id, !x->verified[key], &damaged, err);
    if (damaged) __atomic_fetch_add(&x->damaged, 1, __ATOMIC_RELAXED);
    if (rc == 1) {
        const char *shard = base_name(x->st->shards[k->shard].path);
        uint64_t pos = 0;
        rc = 0;
        for (int s = 0; s < k->nseg && !rc; s++) {
            const rx_seg *sg = &x->segs[k->first + s];
            http_meta meta;
            rc = http_range(x->net, since, shard, x->etag[k->shard], sg->off, sg->len, img + pos, &meta, err);
            if (rc && meta.changed) {
                char why[sizeof err->msg];
                snprintf(why, sizeof why, "%s", err->msg);
                rm_errf_runtime(err, "%s; %s was set up from another revision: run `remora setup --dir %s` again",
                                why, x->dir, x->dir);
            }
            pos += sg->len;
        }
        if (!rc) {
            *from_net = 1;
            uint64_t avail = file_free_space(x->dir), reserve = remote_disk_reserve(x->dir);
            if (avail < k->raw + reserve) {
                if (must_cache)
                    rc = rm_errf_runtime(err, "%s: the disk is full (%.3f GB free; the cache leaves %.3f GB)", x->dir,
                                         avail / 1e9, reserve / 1e9);
                __atomic_fetch_add(&x->uncached, 1, __ATOMIC_RELAXED);
            } else {
                rm_err e2 = { "" };
                if (xc_store(path, img, k->raw, &id, &e2)) {
                    if (must_cache) rc = rm_errf(err, "%s", e2.msg);
                    __atomic_fetch_add(&x->uncached, 1, __ATOMIC_RELAXED);
                }
            }
        }
    }
    if (!rc) x->verified[key] = 1;
    unlock_key(x, key);
    return rc;
}

static void set_why(remote *x, int key, const char *msg)
{
    pthread_mutex_lock(&x->mu);
    int i = 0;
    while (i < RX_WHY && x->why[i].key != key) i++;
    if (i == RX_WHY) { i = x->why_next; x->why_next = (x->why_next + 1) % RX_WHY; }
    x->why[i].key = key;
    snprintf(x->why[i].msg, sizeof x->why[i].msg, "%s", msg);
    pthread_mutex_unlock(&x->mu);
}

static void rx_why(void *ctx, int key, char *buf, size_t cap)
{
    remote *x = ctx;
    pthread_mutex_lock(&x->mu);
    int i = 0;
    while (i < RX_WHY && x->why[i].key != key) i++;
    snprintf(buf, cap, "%s", i < RX_WHY ? x->why[i].msg : "");
    pthread_mutex_unlock(&x->mu);
}

static int rx_is_local(void *ctx, int key) { return ((remote *)ctx)->in_shard[key]; }

/* The reader hook: fills the shard span [r->off, r->off + r->len) with the
 * expert's bytes at their shard positions, zeros elsewhere. */
static void rx_read(io_req *r, void *ctx)
{
    remote *x = ctx;
    const int key = ((expert_slot *)r->tag)->key;
    const rx_key *k = &x->keys[key];
    uint8_t *dst = r->dst;
    r->got = 0;
    r->err = 0;
    if (!k->nseg) { set_why(x, key, "not a routed expert of the checkpoint"); r->err = EIO; return; }
    const rx_seg *sg = &x->segs[k->first];
    /* one span inside the request: download or read it into the slot itself */
    const int inplace = k->nseg == 1 && sg->off >= r->off && sg->off + sg->len <= r->off + r->len;
    uint8_t *img = inplace ? dst : NULL;
    if (!inplace && posix_memalign((void **)&img, RM_ALIGN, rm_align_up(k->raw)))
        img = NULL;
    rm_err err = { "" };
    int from_net = 0;
    /* the epoch as the read begins: a read waiting on the key's lock behind
     * a cancelled one (an expert in two parts is two reads of one key)
     * starts no download after the cancel */
    const unsigned since = http_epoch(x->net);
    int rc = img ? remote_obtain(x, key, img, 0, since, &from_net, &err) : rm_errf(&err, "out of memory");
    if (rc) {
        set_why(x, key, err.msg);
        r->err = EIO;
    } else if (inplace) {
        uint64_t d = sg->off - r->off;
        memmove(dst + d, dst, k->raw);
        memset(dst, 0, d);
        memset(dst + d + k->raw, 0, r->len - d - k->raw);
    } else {
        memset(dst, 0, r->len);
        uint64_t pos = 0;
        for (int s = 0; s < k->nseg; s++) {
            uint64_t lo = sg[s].off > r->off ? sg[s].off : r->off;
            uint64_t hi = sg[s].off + sg[s].len < r->off + r->len ? sg[s].off + sg[s].len : r->off + r->len;
            if (hi > lo) memcpy(dst + (lo - r->off), img + pos + (lo - sg[s].off), hi - lo);
            pos += sg[s].len;
        }
    }
    if (!inplace) free(img);
    if (rc) return;
    r->got = r->len;
    if (from_net) __atomic_fetch_add(&x->served, (uint64_t)r->len, __ATOMIC_RELAXED);
}

static void rx_cancel(void *ctx, const char *why) { http_cancel(((remote *)ctx)->net, why); }

expert_remote remote_hooks(remote *x) { return (expert_remote){ rx_read, rx_is_local, rx_why, x, rx_cancel }; }

void remote_take_counters(remote *x, uint64_t *net_bytes, uint64_t *served_net, double *busy_s)
{
    http_counters c = http_take_counters(x->net);
    *net_bytes = c.bytes;
    *busy_s = c.busy_s;
    *served_net = __atomic_exchange_n(&x->served, 0, __ATOMIC_RELAXED);
}

