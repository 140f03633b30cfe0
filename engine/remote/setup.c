/* setup.c — `remora setup`: a model directory made from a source URL
 * (rm_setup in engine.h).
 *
 * Steps, each resumable:
 *  1. config.json (validated as the engine would load it), the tokenizer
 *     files, generation_config.json (optional) and the index, written
 *     atomically; then DIR/.remora/source.json names the source.
 *  2. Every shard's header by two range requests (the 8-byte length, then
 *     the JSON), validated by the safetensors reader before anything is
 *     created; the answer's Content-Range gives the shard's size.
 *  3. Each local shard becomes a sparse file of its full size holding the
 *     header; the manifest (manifest.h) records every span written and
 *     synced.
 *  4. The spine — every byte that is not a routed expert's, the embedding
 *     included — is downloaded in chunks of at most 64 MiB, several at once,
 *     skipping what the manifest already has. Full mode downloads the rest
 *     of each shard the same way.
 *  5. The finished directory is opened with st_open as a last check, and
 *     source.json records the mode.
 * Revisions: source.json records each file's ETag as the headers come, and
 * every later range asks for that revision (http.h): a file that changes
 * upstream while setup runs fails it ("run setup again"), and the next run
 * finds the new ETag, forgets that shard's downloaded spans and starts it
 * over, so a shard never holds bytes of two revisions.
 * Repair: a damaged source.json or manifest.json is rebuilt (from --source
 * or the default source, and from nothing: every span is downloaded again).
 * Bad input (a source that is not http(s), a malformed config, index or
 * header, a directory set up from another URL) is RM_ERR_INPUT: exit 2.
 * With no mode asked for, full is chosen when the free disk holds what is
 * still missing (plus 1 GB); otherwise stream mode, and the result says how
 * much full mode would need.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "engine.h"
#include "format/config.h"
#include "format/st.h"
#include "remote/http.h"
#include "remote/manifest.h"
#include "base/file.h"
#include "remote/source.h"
#include "base/tasks.h"
#include "base/caps.h"

#define CHUNK (64ull << 20)
#define FULL_MARGIN (1ull << 30)

void rm_default_source(char *buf, size_t cap)
{
    const char *h = getenv("REMORA_HF_HOST"), *p = getenv("REMORA_HF_PATH");
    if (!h || !*h) h = "huggingface.co";
    if (!p || !*p) p = "moonshotai/Kimi-K3/resolve/main";
    while (*p == '/') p++;
    int hl = (int)strlen(h);
    while (hl && h[hl - 1] == '/') hl--;
    snprintf(buf, cap, "%s%.*s/%s", strstr(h, "://") ? "" : "https://", hl, h, p);
}

typedef struct su_shard {
    char *name;
    char etag[128];             /* the revision being set up ("" if the server sends none) */
    uint64_t size, hlen;
    uint8_t *head;              /* the first 8 + hlen bytes */
    st_set *set;
    int fd, mi;                 /* local file, manifest index */
} su_shard;

typedef struct su_chunk { int shard; uint64_t lo, hi; } su_chunk;

typedef struct su {
    const char *dir;
    http_client *net;
    su_shard *sh;
    int nsh, capsh;
    manifest mf;
    pthread_mutex_t mu;
    su_chunk *ch;
    int nch, capch;
    const char *phase;
    uint64_t done, total, downloaded;
    unsigned since;             /* http_epoch as the current batch of downloads began */
    json_t *etags;              /* source.json's: file -> ETag */
    int rebuilt_source;         /* source.json was damaged and is written anew */
    rm_progress_fn fn;
    void *ud;
} su;

static void progress(su *s, uint64_t add)
{
    s->done += add;
    s->downloaded += add;
    if (s->fn) s->fn(s->ud, s->phase, s->done, s->total);
}

/* ---- step 1: small files -------------------------------------------------- */

static int get_small(su *s, const char *name, size_t cap, int required, char **text, size_t *len, rm_err *err)
{
    char *b = NULL;
    size_t n = 0;
    http_meta meta;
    int r = http_file(s->net, name, cap, &b, &n, &meta, err);
    if (r < 0) return -1;
    if (r > 0) {
        if (required) return rm_errf_input(err, "%s: the source has no %s (HTTP 404)", s->dir, name);
        return 0;
    }
    if (meta.etag[0] && json_object_set_new(s->etags, name, json_string(meta.etag))) {
        free(b);
        return rm_errf_runtime(err, "out of memory");
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    if (rm_write_atomic(path, b, n, 0644, err)) { free(b); return -1; }
    s->downloaded += n;
    if (text) { *text = b; *len = n; }
    else free(b);
    return 0;
}

/* Shard names of the index (st_index_parse), in order of first appearance. */
static int index_shards(su *s, const char *text, size_t len, const char *url, rm_err *err)
{
    st_index ix;
    if (st_index_parse(text, len, url, &ix, err)) return -1;
    int rc = 0;
    if (!(s->sh = calloc((size_t)ix.nshards, sizeof *s->sh))) rc = rm_errf_runtime(err, "out of memory");
    for (int i = 0; i < ix.nshards && !rc; i++) {
        s->sh[i].fd = -1;
        s->sh[i].name = ix.shards[i];
        ix.shards[i] = NULL;
        s->nsh++;
    }
    s->capsh = s->nsh;
    st_index_free(&ix);
    return rc;
}

/* ---- step 2: headers ------------------------------------------------------ */

/* A range refused because the file changed upstream while setup ran: the
 * next setup finds its new ETag and starts that shard over. */
static int changed_note(su *s, const su_shard *h, const http_meta *meta, rm_err *err)
{
    if (!meta->changed) return -1;
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    return rm_errf_runtime(err, "%s; it changed while setup ran: run `remora setup --dir %s` again to start %s over",
                           why, s->dir, h->name);
}

static int get_header(void *ud, int i, int worker, rm_err *err)
{
    su *s = ud;
    su_shard *h = &s->sh[i];
    uint8_t lenb[8];
    http_meta meta;
    if (http_range(s->net, s->since, h->name, NULL, 0, 8, lenb, &meta, err)) return -1;
    uint64_t total = meta.total;
    if (total < 8 || total == UINT64_MAX)
        return rm_errf_runtime(err, "%s: the server's fault: it did not give the file size in Content-Range", h->name);
    snprintf(h->etag, sizeof h->etag, "%s", meta.etag);
    h->size = total;
    h->hlen = st_header_len(lenb);
    if (h->hlen > total - 8 || h->hlen > CAP_INDEX)
        return rm_errf_input(err, "%s: header length %llu does not fit the %llu-byte file", h->name,
                             (unsigned long long)h->hlen, (unsigned long long)total);
    if (!(h->head = malloc(8 + h->hlen))) return rm_errf_runtime(err, "out of memory");
    memcpy(h->head, lenb, 8);
    if (h->hlen && http_range(s->net, s->since, h->name, h->etag[0] ? h->etag : NULL, 8, h->hlen, h->head + 8, &meta, err))
        return changed_note(s, h, &meta, err);
    if (st_parse_header(h->name, h->head + 8, h->hlen, h->size, &h->set, err)) return -1;
    pthread_mutex_lock(&s->mu);
    progress(s, 8 + h->hlen);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* ---- steps 3 and 4: local shards and downloads ----------------------------- */

static int open_shard(su *s, su_shard *h, rm_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", s->dir, h->name);
    if ((h->mi = manifest_shard(&s->mf, h->name, h->size)) < 0) return rm_errf_runtime(err, "out of memory");
    /* another revision upstream: what was downloaded of the old one goes */
    const char *had = json_string_value(json_object_get(s->etags, h->name));
    if (had && !(h->etag[0] && http_etag_same(had, h->etag))) s->mf.shards[h->mi].n = 0;
    if (h->etag[0] && json_object_set_new(s->etags, h->name, json_string(h->etag)))
        return rm_errf_runtime(err, "out of memory");
    if (!h->etag[0] && had) json_object_del(s->etags, h->name);
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return rm_errf_input(err, "%s: not a regular file; remove it and run setup again", path);
    h->fd = open(path, O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
    if (h->fd < 0 || fstat(h->fd, &st)) return file_open_error(path, errno, err);
    if ((uint64_t)st.st_size != h->size) {     /* new, or not the file the manifest describes */
        s->mf.shards[h->mi].n = 0;
        if (ftruncate(h->fd, (off_t)h->size)) return rm_errf(err, "%s: cannot size to %llu bytes: %s", path,
                                                             (unsigned long long)h->size, strerror(errno));
    }
    uint64_t hb = 8 + h->hlen;
    if (manifest_covers(&s->mf, h->mi, 0, hb)) return 0;
    if (file_pwrite_all(h->fd, h->head, hb, 0) || fdatasync(h->fd))
        return rm_errf(err, "%s: cannot write the header: %s", path, strerror(errno));
    return manifest_add(&s->mf, h->mi, 0, hb, err);
}

static int add_chunk(su *s, int shard, uint64_t lo, uint64_t hi)
{
    for (uint64_t a = lo; a < hi; a += CHUNK) {
        if (RM_GROW(s->ch, s->capch, s->nch + 1)) return -1;
        s->ch[s->nch++] = (su_chunk){ shard, a, hi - a > CHUNK ? a + CHUNK : hi };
    }
    return 0;
}

static int cmp_span(const void *a, const void *b)
{
    const mf_span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Chunks of the missing spine bytes of every shard; *spine gets the spine's size. */
static int plan_spine(su *s, uint64_t *spine, rm_err *err)
{
    *spine = 0;
    for (int i = 0; i < s->nsh; i++) {
        su_shard *h = &s->sh[i];
        const st_set *set = h->set;
        mf_span *sp = malloc((size_t)(set->ntensors + 1) * sizeof *sp), *gaps = NULL;
        if (!sp) return rm_errf(err, "out of memory");
        int n = 0, ng = 0, capg = 0;
        for (int t = 0; t < set->ntensors; t++)
            if (!remote_expert_tensor(set->tensors[t].name, NULL, NULL) && set->tensors[t].nbytes)
                sp[n++] = (mf_span){ set->tensors[t].offset, set->tensors[t].offset + set->tensors[t].nbytes };
        qsort(sp, (size_t)n, sizeof *sp, cmp_span);
        int k = 0;
        for (int j = 0; j < n; j++) {
            if (k && sp[j].lo <= sp[k - 1].hi) { if (sp[j].hi > sp[k - 1].hi) sp[k - 1].hi = sp[j].hi; }
            else sp[k++] = sp[j];
        }
        int rc = 0;
        *spine += 8 + h->hlen;
        for (int j = 0; j < k && !rc; j++) {
            *spine += sp[j].hi - sp[j].lo;
            rc = manifest_gaps(&s->mf, h->mi, sp[j].lo, sp[j].hi, &gaps, &ng, &capg);
        }
        for (int j = 0; j < ng && !rc; j++) rc = add_chunk(s, i, gaps[j].lo, gaps[j].hi);
        free(sp);
        free(gaps);
        if (rc) return rm_errf(err, "out of memory");
    }
    return 0;
}

/* Chunks of every missing byte. */
static int plan_full(su *s, rm_err *err)
{
    for (int i = 0; i < s->nsh; i++) {
        mf_span *gaps = NULL;
        int ng = 0, capg = 0, rc = manifest_gaps(&s->mf, s->sh[i].mi, 0, s->sh[i].size, &gaps, &ng, &capg);
        for (int j = 0; j < ng && !rc; j++) rc = add_chunk(s, i, gaps[j].lo, gaps[j].hi);
        free(gaps);
        if (rc) return rm_errf(err, "out of memory");
    }
    return 0;
}

static int get_chunk(void *ud, int i, int worker, rm_err *err)
{
    su *s = ud;
    const su_chunk *c = &s->ch[i];
    su_shard *h = &s->sh[c->shard];
    http_meta meta;
    if (http_range_fd(s->net, s->since, h->name, h->etag[0] ? h->etag : NULL, c->lo, c->hi - c->lo, h->fd, c->lo, &meta, err))
        return changed_note(s, h, &meta, err);
    if (fdatasync(h->fd)) return rm_errf(err, "%s/%s: cannot sync: %s", s->dir, h->name, strerror(errno));
    pthread_mutex_lock(&s->mu);
    int rc = manifest_add(&s->mf, h->mi, c->lo, c->hi, err);
    if (!rc) rc = manifest_save(&s->mf, err);
    if (!rc) progress(s, c->hi - c->lo);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* One download failed: the others end now instead of running to their end. */
static void cancel_downloads(void *ud, const char *why) { http_cancel(((su *)ud)->net, why); }

static int download(su *s, const char *phase, int conns, rm_err *err)
{
    s->phase = phase;
    s->done = 0;
    s->total = 0;
    for (int i = 0; i < s->nch; i++) s->total += s->ch[i].hi - s->ch[i].lo;
    if (s->fn) s->fn(s->ud, phase, 0, s->total);
    s->since = http_epoch(s->net);
    int rc = tasks_for_cancel(s->nch, conns, get_chunk, s, cancel_downloads, err);
    s->nch = 0;
    return rc;
}

/* ---- the whole -------------------------------------------------------------- */

static int choose_source(su *s, const char *dir, const char *want, char *url, size_t cap, rm_err *err)
{
    char had[1024];
    int r = remote_read_source(dir, had, sizeof had, NULL, &s->etags, err);
    if (r < 0 && err->kind == RM_ERR_INPUT) {
        r = 1;                      /* damaged: rebuilt from the source asked for (or the default) */
        s->rebuilt_source = 1;
    } else if (r < 0) return -1;
    if (!s->etags && !(s->etags = json_object())) return rm_errf_runtime(err, "out of memory");
    if (!want) {
        if (r == 0) snprintf(url, cap, "%s", had);
        else rm_default_source(url, cap);
        return 0;
    }
    size_t n = strlen(want);
    while (n && want[n - 1] == '/') n--;
    snprintf(url, cap, "%.*s", (int)n, want);
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
        return rm_errf_input(err, "%s: not an http:// or https:// URL", url);
    if (r == 0 && strcmp(had, url))
        return rm_errf_input(err, "%s was set up from %s, not %s; remove %s/.remora to start over", dir, had, url, dir);
    return 0;
}

int rm_setup(const char *dir, const rm_setup_opts *o, rm_progress_fn fn, void *ud, rm_setup_result *res,
             rm_err *err)
{
    memset(res, 0, sizeof *res);
    const int conns = o->connections > 0 ? o->connections : 8;
    su s = { .dir = dir, .mu = PTHREAD_MUTEX_INITIALIZER, .fn = fn, .ud = ud };
    char meta[4096], url[1024], *cfg_text = NULL, *idx_text = NULL;
    size_t cfg_len = 0, idx_len = 0;
    int rc = -1;
    snprintf(meta, sizeof meta, "%s/.remora", dir);
    if (file_mkdirs(dir, err) || choose_source(&s, dir, o->source, url, sizeof url, err)) {
        json_decref(s.etags);
        return -1;
    }
    snprintf(res->source, sizeof res->source, "%s", url);
    http_opts fo = { url, getenv("HF_TOKEN"), conns, 0, 0 };
    if (http_new(&fo, &s.net, err)) { json_decref(s.etags); return -1; }
    rm_config cfg;
    s.phase = "files";
    if (fn) fn(ud, "files", 0, 0);
    if (get_small(&s, "config.json", CAP_CONFIG, 1, &cfg_text, &cfg_len, err)) goto out;
    char name[1200];
    snprintf(name, sizeof name, "%s/config.json", url);
    if (config_parse(cfg_text, cfg_len, name, &cfg, err) ||
        get_small(&s, "generation_config.json", CAP_CONFIG, 0, NULL, NULL, err) ||
        get_small(&s, "tiktoken.model", CAP_TOKENIZER, 1, NULL, NULL, err) ||
        get_small(&s, "tokenizer_config.json", CAP_TOKENIZER, 1, NULL, NULL, err) ||
        get_small(&s, "model.safetensors.index.json", CAP_INDEX, 1, &idx_text, &idx_len, err))
        goto out;
    snprintf(name, sizeof name, "%s/model.safetensors.index.json", url);
    char mpath[4200];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", meta);
    if (index_shards(&s, idx_text, idx_len, name, err) || file_mkdirs(meta, err)) goto out;
    if (manifest_load(&s.mf, mpath, err)) {
        if (err->kind != RM_ERR_INPUT) goto out;
        /* damaged: rebuilt from nothing, every span is downloaded again */
        if (!(s.mf.path = strdup(mpath))) { rm_errf_runtime(err, "out of memory"); goto out; }
        res->rebuilt |= 2;
    }
    if (s.rebuilt_source) res->rebuilt |= 1;
    /* headers */
    s.phase = "headers";
    s.total = 0;
    s.since = http_epoch(s.net);
    if (tasks_for_cancel(s.nsh, conns, get_header, &s, cancel_downloads, err)) goto out;
    for (int i = 0; i < s.nsh; i++) {
        res->model_bytes += s.sh[i].size;
        if (open_shard(&s, &s.sh[i], err)) goto out;
    }
    /* the revisions being set up are recorded before any span of them is */
    int was_full = 0;
    if (remote_read_source(dir, name, sizeof name, &was_full, NULL, &(rm_err){ "" }) != 0) was_full = 0;
    if (manifest_save(&s.mf, err) || remote_write_source(dir, url, was_full, s.etags, err)) goto out;
    /* the decision */
    uint64_t have = 0;
    for (int i = 0; i < s.nsh; i++) have += manifest_bytes(&s.mf, s.sh[i].mi);
    if (plan_spine(&s, &res->spine_bytes, err)) goto out;
    res->full_needs = res->model_bytes - have;
    res->disk_free = file_free_space(dir);
    uint64_t spine_needs = 0;
    for (int i = 0; i < s.nch; i++) spine_needs += s.ch[i].hi - s.ch[i].lo;
    int full = o->mode == RM_SETUP_FULL ||
               (o->mode == RM_SETUP_AUTO && res->full_needs + FULL_MARGIN <= res->disk_free);
    if (full && res->full_needs > res->disk_free) {
        rm_errf(err, "%s: full mode needs %.2f GB more and %.2f GB is free; use --stream", dir,
                res->full_needs / 1e9, res->disk_free / 1e9);
        goto out;
    }
    if (!full && spine_needs > res->disk_free) {
        rm_errf(err, "%s: the spine needs %.2f GB more and %.2f GB is free", dir, spine_needs / 1e9,
                res->disk_free / 1e9);
        goto out;
    }
    if (download(&s, "spine", conns, err)) goto out;
    if (full && (plan_full(&s, err) || download(&s, "shards", conns, err))) goto out;
    /* last check: the directory opens as a checkpoint */
    st_set *set = NULL;
    if (st_open(dir, &set, err)) goto out;
    st_close(set);
    if (remote_write_source(dir, url, full, s.etags, err)) goto out;
    res->full = full;
    res->full_needs = res->model_bytes;     /* now: what full mode would still fetch */
    for (int i = 0; i < s.nsh; i++) res->full_needs -= manifest_bytes(&s.mf, s.sh[i].mi);
    rc = 0;
out:
    res->downloaded = s.downloaded;
    http_free(s.net);
    for (int i = 0; i < s.nsh; i++) {
        if (s.sh[i].fd >= 0) close(s.sh[i].fd);
        free(s.sh[i].name);
        free(s.sh[i].head);
        st_close(s.sh[i].set);
    }
    free(s.sh);
    free(s.ch);
    if (s.mf.path) manifest_free(&s.mf);
    free(cfg_text);
    free(idx_text);
    json_decref(s.etags);
    pthread_mutex_destroy(&s.mu);
    return rc;
}
