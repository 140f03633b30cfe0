/* st.c — reading safetensors checkpoints, sharded or single-file.
 *
 * A shard is an 8-byte little-endian header length N, N bytes of JSON
 * ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
 * "__metadata__": {...}}) and the data section; offsets are relative to the
 * start of the data. Nothing here trusts the file: the header length must be
 * bounded and inside the file, the JSON valid, every dtype known, shape ×
 * dtype size equal to the byte span, spans inside the data section and not
 * overlapping, every tensor named by the index present in its shard, and
 * shard names from the index plain file names inside the model directory.
 * Every error names the file (and the tensor when there is one).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "format/st.h"
#include "base/file.h"
#include "base/jfile.h"
#include "base/caps.h"

/* The reference writer refuses headers over 100 MB; so do we. */
#define ST_MAX_HEADER (100u << 20)

static const struct { const char *name; int bits; } dtypes[ST_NDTYPES] = {
    [ST_BOOL] = {"BOOL", 8},   [ST_U8] = {"U8", 8},        [ST_I8] = {"I8", 8},
    [ST_F8_E4M3] = {"F8_E4M3", 8}, [ST_F8_E5M2] = {"F8_E5M2", 8},
    [ST_F8_E8M0] = {"F8_E8M0", 8}, [ST_I16] = {"I16", 16}, [ST_U16] = {"U16", 16},
    [ST_F16] = {"F16", 16},    [ST_BF16] = {"BF16", 16},   [ST_I32] = {"I32", 32},
    [ST_U32] = {"U32", 32},    [ST_F32] = {"F32", 32},     [ST_I64] = {"I64", 64},
    [ST_U64] = {"U64", 64},    [ST_F64] = {"F64", 64},     [ST_F4] = {"F4", 4},
};

const char *st_dtype_name(st_dtype d) { return d < ST_NDTYPES ? dtypes[d].name : "?"; }

int64_t st_numel(const st_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) { h ^= (unsigned char)*s++; h *= 1099511628211ull; }
    return h;
}

const st_tensor *st_find(const st_set *s, const char *name)
{
    if (!s->hash_cap) return NULL;
    for (uint64_t i = name_hash(name);; i++) {
        int v = s->hash[i & (s->hash_cap - 1)];
        if (!v) return NULL;
        if (!strcmp(s->tensors[v - 1].name, name)) {
            if (s->used) s->used[v - 1] = 1;
            return &s->tensors[v - 1];
        }
    }
}

int st_pread(const st_set *s, const st_tensor *t, void *dst, size_t len, rm_err *err)
{
    const st_shard *sh = &s->shards[t->shard];
    int r = file_pread_all(sh->fd, dst, len, t->offset);
    if (r)
        return rm_errf(err, "%s: cannot read tensor '%s': %s", sh->path, t->name,
                       r < 0 ? strerror(errno) : "unexpected end of file");
    return 0;
}

/* Rebuilds the name index; fails on a duplicate tensor name. */
static int build_hash(st_set *s, rm_err *err)
{
    int cap = 16;
    while (cap < s->ntensors * 2) cap <<= 1;
    free(s->hash);
    s->hash = calloc((size_t)cap, sizeof *s->hash);
    if (!s->hash) return rm_errf_runtime(err, "%s: out of memory", s->dir);
    s->hash_cap = cap;
    for (int t = 0; t < s->ntensors; t++) {
        uint64_t i = name_hash(s->tensors[t].name);
        for (;; i++) {
            int *slot = &s->hash[i & (cap - 1)];
            if (!*slot) { *slot = t + 1; break; }
            if (!strcmp(s->tensors[*slot - 1].name, s->tensors[t].name))
                return rm_errf_input(err, "%s: tensor '%s' appears twice (also in %s)",
                               s->shards[s->tensors[t].shard].path, s->tensors[t].name,
                               s->shards[s->tensors[*slot - 1].shard].path);
        }
    }
    return 0;
}

static int parse_dtype(const char *name, st_dtype *out)
{
    for (int i = 0; i < ST_NDTYPES; i++)
        if (!strcmp(name, dtypes[i].name)) { *out = (st_dtype)i; return 0; }
    return -1;
}

static int cmp_offset(const void *a, const void *b)
{
    const st_tensor *x = *(st_tensor *const *)a, *y = *(st_tensor *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Parses one tensor entry of a header into t (name owned by caller). */
static int parse_entry(const char *path, const char *name, json_t *v, uint64_t data_size,
                       uint64_t data_start, st_tensor *t, rm_err *err)
{
    if (!json_is_object(v))
        return rm_errf_input(err, "%s: tensor '%s': entry is not a JSON object", path, name);
    json_t *jd = json_object_get(v, "dtype"), *js = json_object_get(v, "shape"),
           *jo = json_object_get(v, "data_offsets");
    if (!json_is_string(jd))
        return rm_errf_input(err, "%s: tensor '%s': missing or non-string dtype", path, name);
    if (parse_dtype(json_string_value(jd), &t->dtype))
        return rm_errf_input(err, "%s: tensor '%s': unknown dtype '%s'", path, name, json_string_value(jd));
    if (!json_is_array(js) || json_array_size(js) > ST_MAX_DIMS)
        return rm_errf_input(err, "%s: tensor '%s': shape must be an array of at most %d integers",
                       path, name, ST_MAX_DIMS);
    t->ndim = (int)json_array_size(js);
    /* Count bits with overflow checks: hostile shapes must not wrap. */
    uint64_t numel = 1;
    for (int i = 0; i < t->ndim; i++) {
        json_t *d = json_array_get(js, (size_t)i);
        if (!json_is_integer(d) || json_integer_value(d) < 0)
            return rm_errf_input(err, "%s: tensor '%s': shape entry %d is not a non-negative integer",
                           path, name, i);
        uint64_t dim = (uint64_t)json_integer_value(d);
        if (dim && numel > (UINT64_MAX / 8) / dim)
            return rm_errf_input(err, "%s: tensor '%s': shape is too large", path, name);
        numel *= dim;
        t->shape[i] = (int64_t)dim;
    }
    if (!json_is_array(jo) || json_array_size(jo) != 2 ||
        !json_is_integer(json_array_get(jo, 0)) || !json_is_integer(json_array_get(jo, 1)))
        return rm_errf_input(err, "%s: tensor '%s': data_offsets must be [begin, end]", path, name);
    json_int_t b = json_integer_value(json_array_get(jo, 0)), e = json_integer_value(json_array_get(jo, 1));
    if (b < 0 || e < b)
        return rm_errf_input(err, "%s: tensor '%s': data_offsets [%lld, %lld] are not ordered",
                       path, name, (long long)b, (long long)e);
    if ((uint64_t)e > data_size)
        return rm_errf_input(err, "%s: tensor '%s': data_offsets end %lld is past the data section "
                       "(%llu bytes; file truncated?)", path, name, (long long)e,
                       (unsigned long long)data_size);
    uint64_t bits = numel * (uint64_t)dtypes[t->dtype].bits;
    if (bits % 8 || bits / 8 != (uint64_t)(e - b))
        return rm_errf_input(err, "%s: tensor '%s': shape × dtype is %llu bits but the span holds %lld bytes",
                       path, name, (unsigned long long)bits, (long long)(e - b));
    t->offset = data_start + (uint64_t)b;
    t->nbytes = (uint64_t)(e - b);
    return 0;
}

/* Validates the hlen-byte JSON header of shard `si` of s (whose size is
 * already known) and appends its tensors. */
static int parse_header(st_set *s, int si, const char *hdr, uint64_t hlen, rm_err *err)
{
    st_shard *sh = &s->shards[si];
    const char *path = sh->path;
    json_error_t je;
    json_t *root = json_loadb(hdr, hlen, JSON_REJECT_DUPLICATES, &je);
    if (!root) return rm_errf_input(err, "%s: header is not valid JSON: %s (byte %d)", path, je.text, je.position);
    int rc = 0;
    if (!json_is_object(root)) { rc = rm_errf_input(err, "%s: header is not a JSON object", path); goto out; }
    sh->data_start = 8 + hlen;
    uint64_t data_size = sh->size - sh->data_start;
    size_t n = json_object_size(root);
    if (n > (size_t)(INT_MAX - s->ntensors) || RM_GROW(s->tensors, s->tensors_cap, s->ntensors + (int)n)) {
        rc = rm_errf_runtime(err, "%s: out of memory", path);
        goto out;
    }
    int first = s->ntensors;
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        if (!strcmp(key, "__metadata__")) {
            if (!json_is_object(v)) { rc = rm_errf_input(err, "%s: __metadata__ is not an object", path); goto out; }
            continue;
        }
        st_tensor *t = &s->tensors[s->ntensors];
        memset(t, 0, sizeof *t);
        if ((rc = parse_entry(path, key, v, data_size, sh->data_start, t, err))) goto out;
        t->shard = si;
        if (!(t->name = strdup(key))) { rc = rm_errf_runtime(err, "%s: out of memory", path); goto out; }
        s->ntensors++;
    }
    /* Overlap check: sort this shard's spans by start. */
    int cnt = s->ntensors - first;
    st_tensor **order = malloc((size_t)(cnt ? cnt : 1) * sizeof *order);
    if (!order) { rc = rm_errf_runtime(err, "%s: out of memory", path); goto out; }
    for (int i = 0; i < cnt; i++) order[i] = &s->tensors[first + i];
    qsort(order, (size_t)cnt, sizeof *order, cmp_offset);
    for (int i = 1; i < cnt; i++) {
        if (order[i]->offset < order[i - 1]->offset + order[i - 1]->nbytes && order[i]->nbytes &&
            order[i - 1]->nbytes) {
            rc = rm_errf_input(err, "%s: tensors '%s' and '%s' overlap", path, order[i - 1]->name, order[i]->name);
            break;
        }
    }
    free(order);
out:
    json_decref(root);
    return rc;
}

/* The header length field must be bounded and leave the header inside the file. */
static int check_hlen(const char *path, uint64_t hlen, uint64_t size, rm_err *err)
{
    if (hlen > ST_MAX_HEADER)
        return rm_errf_input(err, "%s: header length %llu exceeds the %u-byte limit", path,
                       (unsigned long long)hlen, ST_MAX_HEADER);
    if (hlen > size - 8)
        return rm_errf_input(err, "%s: header length %llu is beyond the end of the file (%llu bytes)",
                       path, (unsigned long long)hlen, (unsigned long long)size);
    return 0;
}

uint64_t st_header_len(const uint8_t lenb[8])
{
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | lenb[i];
    return hlen;
}

/* Reads and validates the header of shard `si` of s, appending its tensors. */
static int load_shard(st_set *s, int si, rm_err *err)
{
    st_shard *sh = &s->shards[si];
    const char *path = sh->path;
    sh->fd = file_open_regular(path, O_RDONLY, err);
    if (sh->fd < 0) return -1;
    struct stat st;
    if (fstat(sh->fd, &st) != 0) return rm_errf(err, "%s: cannot stat: %s", path, strerror(errno));
    sh->size = (uint64_t)st.st_size;
    if (sh->size < 8) return rm_errf_input(err, "%s: file is %llu bytes, too short for a safetensors header",
                                     path, (unsigned long long)sh->size);
    uint8_t lenb[8];
    if (pread(sh->fd, lenb, 8, 0) != 8) return rm_errf_input(err, "%s: cannot read header length", path);
    uint64_t hlen = st_header_len(lenb);
    if (check_hlen(path, hlen, sh->size, err)) return -1;
    char *hdr = malloc(hlen + 1);
    if (!hdr) return rm_errf_runtime(err, "%s: out of memory for header", path);
    if (pread(sh->fd, hdr, hlen, 8) != (ssize_t)hlen) {
        free(hdr);
        return rm_errf_input(err, "%s: cannot read the %llu-byte header", path, (unsigned long long)hlen);
    }
    int rc = parse_header(s, si, hdr, hlen, err);
    free(hdr);
    return rc;
}

static st_set *set_new(const char *dir)
{
    st_set *s = calloc(1, sizeof *s);
    if (s && !(s->dir = strdup(dir))) { free(s); s = NULL; }
    return s;
}

static int add_shard(st_set *s, const char *path)
{
    if (RM_GROW(s->shards, s->shards_cap, s->nshards + 1)) return -1;
    st_shard *ns = s->shards;
    memset(&ns[s->nshards], 0, sizeof *ns);
    ns[s->nshards].fd = -1;
    if (!(ns[s->nshards].path = strdup(path))) return -1;
    s->nshards++;
    return 0;
}

int st_open_file(const char *path, st_set **out, rm_err *err)
{
    *out = NULL;
    st_set *s = set_new(path);
    if (!s || add_shard(s, path)) { st_close(s); return rm_errf_runtime(err, "%s: out of memory", path); }
    if (load_shard(s, 0, err) || build_hash(s, err)) { st_close(s); return -1; }
    *out = s;
    return 0;
}

int st_parse_header(const char *name, const void *hdr, uint64_t hlen, uint64_t file_size, st_set **out,
                    rm_err *err)
{
    *out = NULL;
    if (file_size < 8)
        return rm_errf_input(err, "%s: file is %llu bytes, too short for a safetensors header", name,
                       (unsigned long long)file_size);
    if (check_hlen(name, hlen, file_size, err)) return -1;
    st_set *s = set_new(name);
    if (!s || add_shard(s, name)) { st_close(s); return rm_errf_runtime(err, "%s: out of memory", name); }
    s->shards[0].size = file_size;
    if (parse_header(s, 0, hdr, hlen, err) || build_hash(s, err)) { st_close(s); return -1; }
    *out = s;
    return 0;
}

/* A shard name from the index must be a plain file name: no directory part,
 * nothing that could leave the model directory. */
int st_safe_shard_name(const char *n)
{
    return n[0] && !strchr(n, '/') && !strchr(n, '\\') && strcmp(n, ".") && strcmp(n, "..") &&
           strlen(n) < 256;
}

void st_index_free(st_index *ix)
{
    for (int i = 0; i < ix->nshards; i++) free(ix->shards[i]);
    free(ix->shards);
    json_decref(ix->root);
    memset(ix, 0, sizeof *ix);
}

/* The distinct shard names of a weight map, in order of first appearance,
 * found through a hash set of the names seen (a hostile index with 60,000
 * names once took 30 s with a linear scan per name). */
static int index_collect(st_index *ix, const char *name, rm_err *err)
{
    size_t nent = json_object_size(ix->wm);
    int cap = 16, scap = 0;
    while ((size_t)cap < 2 * nent && cap < (1 << 30)) cap <<= 1;
    int *set = calloc((size_t)cap, sizeof *set);      /* shard index + 1, 0 = empty */
    if (!set) return rm_errf_runtime(err, "%s: out of memory", name);
    int rc = 0;
    const char *key;
    json_t *v;
    json_object_foreach(ix->wm, key, v) {
        const char *sn = json_string_value(v);
        if (!sn) { rc = rm_errf_input(err, "%s: weight_map['%s'] is not a string", name, key); break; }
        if (!st_safe_shard_name(sn)) {
            rc = rm_errf_input(err, "%s: weight_map['%s'] names shard '%s', which is not a plain file name "
                               "inside the model directory", name, key, sn);
            break;
        }
        uint64_t h = name_hash(sn);
        int *slot;
        for (;; h++) {
            slot = &set[h & (uint64_t)(cap - 1)];
            if (!*slot || !strcmp(ix->shards[*slot - 1], sn)) break;
        }
        if (*slot) continue;
        if (ix->nshards == CAP_SHARDS) {
            rc = rm_errf_input(err, "%s: the index names more than %d shards", name, CAP_SHARDS);
            break;
        }
        if (RM_GROW(ix->shards, scap, ix->nshards + 1) || !(ix->shards[ix->nshards] = strdup(sn))) {
            rc = rm_errf_runtime(err, "%s: out of memory", name);
            break;
        }
        *slot = ++ix->nshards;
    }
    free(set);
    return rc;
}

int st_index_parse(const char *text, size_t len, const char *name, st_index *ix, rm_err *err)
{
    memset(ix, 0, sizeof *ix);
    if (!(ix->root = jfile_parse(text, len, name, err))) return -1;
    ix->wm = json_object_get(ix->root, "weight_map");
    int rc = 0;
    if (!json_is_object(ix->wm) || json_object_size(ix->wm) == 0)
        rc = rm_errf_input(err, "%s: missing or empty \"weight_map\" object", name);
    else rc = index_collect(ix, name, err);
    if (rc) st_index_free(ix);
    return rc;
}

int st_open(const char *dir, st_set **out, rm_err *err)
{
    *out = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    if (access(path, F_OK) != 0) {
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        if (access(path, F_OK) != 0)
            return rm_errf_input(err, "%s: no model.safetensors.index.json or model.safetensors", dir);
        int rc = st_open_file(path, out, err);
        if (!rc) { free((*out)->dir); (*out)->dir = strdup(dir); }
        return rc;
    }
    size_t len = 0;
    char *text = file_read(path, CAP_INDEX, &len, err);
    if (!text) return -1;
    st_index ix;
    int rc = st_index_parse(text, len, path, &ix, err);
    free(text);
    if (rc) return -1;
    st_set *s = set_new(dir);
    if (!s) { rc = rm_errf_runtime(err, "%s: out of memory", path); goto out; }
    for (int i = 0; i < ix.nshards && !rc; i++) {
        char sp[4096];
        snprintf(sp, sizeof sp, "%s/%s", dir, ix.shards[i]);
        if (add_shard(s, sp)) rc = rm_errf_runtime(err, "%s: out of memory", path);
    }
    for (int i = 0; i < s->nshards && !rc; i++) rc = load_shard(s, i, err);
    if (!rc) rc = build_hash(s, err);
    /* Every index entry must be present in the shard the index names. */
    const char *key;
    json_t *v;
    json_object_foreach(ix.wm, key, v) {
        if (rc) break;
        const st_tensor *t = st_find(s, key);
        char sp[4096];
        snprintf(sp, sizeof sp, "%s/%s", dir, json_string_value(v));
        if (!t) rc = rm_errf_input(err, "%s: tensor '%s' is listed in the index but missing from %s", path, key, sp);
        else if (strcmp(s->shards[t->shard].path, sp))
            rc = rm_errf_input(err, "%s: tensor '%s' is in %s, not in %s as the index says", path, key,
                               s->shards[t->shard].path, sp);
    }
out:
    st_index_free(&ix);
    if (rc) st_close(s);
    else *out = s;
    return rc;
}

void st_close(st_set *s)
{
    if (!s) return;
    for (int i = 0; i < s->nshards; i++) {
        if (s->shards[i].fd >= 0) close(s->shards[i].fd);
        free(s->shards[i].path);
    }
    for (int i = 0; i < s->ntensors; i++) free(s->tensors[i].name);
    free(s->shards);
    free(s->tensors);
    free(s->hash);
    free(s->used);
    free(s->dir);
    free(s);
}
