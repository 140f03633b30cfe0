/* manifest.c — downloaded spans of local shards (manifest.h). Spans are kept
 * merged, so even a fully downloaded 1.5 TB model is a handful of numbers per
 * shard and the file is rewritten whole after every chunk. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "remote/manifest.h"
#include "base/jfile.h"
#include "base/caps.h"
#include "base/file.h"

void manifest_free(manifest *m)
{
    for (int i = 0; i < m->nshards; i++) { free(m->shards[i].name); free(m->shards[i].spans); }
    free(m->shards);
    free(m->path);
    memset(m, 0, sizeof *m);
}

int manifest_find(const manifest *m, const char *name)
{
    for (int i = 0; i < m->nshards; i++)
        if (!strcmp(m->shards[i].name, name)) return i;
    return -1;
}

int manifest_shard(manifest *m, const char *name, uint64_t size)
{
    int i = manifest_find(m, name);
    if (i >= 0) {
        if (m->shards[i].size != size) { m->shards[i].size = size; m->shards[i].n = 0; }
        return i;
    }
    if (RM_GROW(m->shards, m->cap, m->nshards + 1)) return -1;
    mf_shard *ns = m->shards;
    memset(&ns[m->nshards], 0, sizeof *ns);
    if (!(ns[m->nshards].name = strdup(name))) return -1;
    ns[m->nshards].size = size;
    return m->nshards++;
}

int manifest_add(manifest *m, int shard, uint64_t lo, uint64_t hi, rm_err *err)
{
    mf_shard *s = &m->shards[shard];
    if (hi <= lo) return 0;
    if (hi > s->size)
        return rm_errf(err, "%s: span %llu-%llu is past the end of shard %s (%llu bytes)", m->path,
                       (unsigned long long)lo, (unsigned long long)hi, s->name, (unsigned long long)s->size);
    /* spans [a, b) touching or overlapping [lo, hi) are absorbed */
    int a = 0;
    while (a < s->n && s->spans[a].hi < lo) a++;
    int b = a;
    while (b < s->n && s->spans[b].lo <= hi) {
        if (s->spans[b].lo < lo) lo = s->spans[b].lo;
        if (s->spans[b].hi > hi) hi = s->spans[b].hi;
        b++;
    }
    if (a == b) {   /* a new span at a */
        if (RM_GROW(s->spans, s->cap, s->n + 1)) return rm_errf(err, "out of memory");
        memmove(&s->spans[a + 1], &s->spans[a], (size_t)(s->n - a) * sizeof *s->spans);
        s->n++;
    } else {
        memmove(&s->spans[a + 1], &s->spans[b], (size_t)(s->n - b) * sizeof *s->spans);
        s->n -= b - a - 1;
    }
    s->spans[a] = (mf_span){ lo, hi };
    return 0;
}

int manifest_covers(const manifest *m, int shard, uint64_t lo, uint64_t hi)
{
    if (shard < 0 || shard >= m->nshards) return 0;
    const mf_shard *s = &m->shards[shard];
    int l = 0, r = s->n;        /* the last span starting at or before lo */
    while (l < r) {
        int mid = (l + r) / 2;
        if (s->spans[mid].lo <= lo) l = mid + 1; else r = mid;
    }
    return l > 0 && s->spans[l - 1].hi >= hi;
}

uint64_t manifest_bytes(const manifest *m, int shard)
{
    uint64_t n = 0;
    for (int i = 0; i < m->shards[shard].n; i++) n += m->shards[shard].spans[i].hi - m->shards[shard].spans[i].lo;
    return n;
}

int manifest_gaps(const manifest *m, int shard, uint64_t lo, uint64_t hi, mf_span **out, int *n, int *cap)
{
    const mf_shard *s = &m->shards[shard];
    uint64_t pos = lo;
    for (int i = 0; i <= s->n && pos < hi; i++) {
        uint64_t end = i < s->n ? s->spans[i].lo : hi;
        if (end > hi) end = hi;
        if (end > pos) {
            if (RM_GROW(*out, *cap, *n + 1)) return -1;
            (*out)[(*n)++] = (mf_span){ pos, end };
        }
        if (i < s->n && s->spans[i].hi > pos) pos = s->spans[i].hi;
    }
    return 0;
}

int manifest_load(manifest *m, const char *path, rm_err *err)
{
    memset(m, 0, sizeof *m);
    if (!(m->path = strdup(path))) return rm_errf(err, "out of memory");
    if (access(path, F_OK) != 0) return 0;
    json_t *root = jfile_read(path, CAP_META, err);
    if (!root) { manifest_free(m); return -1; }
    json_t *sh = json_object_get(root, "shards");
    const char *name;
    json_t *v;
    int rc = 0;
    if (!json_is_object(sh)) { rc = rm_errf_input(err, "%s: no \"shards\" object", path); goto out; }
    json_object_foreach(sh, name, v) {
        json_t *size = json_object_get(v, "size"), *spans = json_object_get(v, "spans");
        if (!json_is_integer(size) || json_integer_value(size) < 0 || !json_is_array(spans)) {
            rc = rm_errf_input(err, "%s: shard %s: needs \"size\" and \"spans\"", path, name);
            goto out;
        }
        int i = manifest_shard(m, name, (uint64_t)json_integer_value(size));
        if (i < 0) { rc = rm_errf(err, "out of memory"); goto out; }
        size_t k;
        json_t *sp;
        json_array_foreach(spans, k, sp) {
            json_t *a = json_array_get(sp, 0), *b = json_array_get(sp, 1);
            if (json_array_size(sp) != 2 || !json_is_integer(a) || !json_is_integer(b) ||
                json_integer_value(a) < 0 || json_integer_value(b) < json_integer_value(a)) {
                rc = rm_errf_input(err, "%s: shard %s: span %zu is not [lo, hi]", path, name, k);
                goto out;
            }
            if ((rc = manifest_add(m, i, (uint64_t)json_integer_value(a), (uint64_t)json_integer_value(b), err)))
                goto out;
        }
    }
out:
    json_decref(root);
    if (rc) manifest_free(m);
    return rc;
}

int manifest_save(const manifest *m, rm_err *err)
{
    json_t *root = json_object(), *sh = json_object();
    int bad = !root || !sh || json_object_set_new(root, "shards", sh);
    for (int i = 0; i < m->nshards && !bad; i++) {
        json_t *o = json_object(), *spans = json_array();
        bad = !o || !spans || json_object_set_new(o, "size", json_integer((json_int_t)m->shards[i].size)) ||
              json_object_set_new(o, "spans", spans) || json_object_set_new(sh, m->shards[i].name, o);
        for (int k = 0; k < m->shards[i].n && !bad; k++)
            bad = json_array_append_new(spans, json_pack("[II]", (json_int_t)m->shards[i].spans[k].lo,
                                                         (json_int_t)m->shards[i].spans[k].hi));
    }
    char *text = bad ? NULL : json_dumps(root, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(root);
    if (!text) return rm_errf(err, "%s: out of memory", m->path);
    int rc = rm_write_atomic(m->path, text, strlen(text), 0644, err);
    free(text);
    return rc;
}
