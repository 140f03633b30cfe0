/* fingerprint.c — what a snapshot names its model by (rm_model_fingerprint).
 *
 * A snapshot is only valid for the exact model that wrote it, so it carries a
 * 128-bit fingerprint of: config.json, model.safetensors.index.json (when
 * there is one), the tokenizer's tiktoken.model and tokenizer_config.json,
 * the tensor table of every shard header (names, dtypes, shapes, offsets:
 * this covers a single model.safetensors too), and the data of every
 * tensor. Two checkpoints that differ only in weights (a fine-tune with
 * frozen norms, which an earlier fingerprint of the norms alone took for
 * the same model) differ there.
 *
 * The data: every byte of every tensor goes through zlib's CRC-32, one CRC
 * per tensor, and the CRCs into the fingerprint. A change of up to 32
 * consecutive bits of a tensor always changes its CRC; any other change
 * does except with probability 2^-32 per changed tensor (a fine-tune
 * changes thousands). A sample of each tensor would be cheaper but could
 * miss a change between its samples, so nothing is sampled. In stream mode
 * (DIR/.remora/source.json says "stream") the routed experts are not on
 * this machine: they are covered by the ETag of their shard's revision at
 * setup, which every expert download is checked against (source.h), and
 * the rest by their bytes; a stream-mode copy therefore has another
 * fingerprint than a full copy of the same checkpoint.
 *
 * Reading every byte is the cost: on Kimi K3 (1.56 TB) a full copy is read
 * once through at the storage's speed (8 shards at a time; CRC-32 runs at
 * 1.2-1.4 GB/s per core here, so 8 threads outrun a ~5 GB/s NVMe drive):
 * about 5 minutes at 5 GB/s, and a stream-mode copy its 110 GB spine, about
 * 25 s. Each shard's digest is then kept in
 * $XDG_CACHE_HOME/remora/fingerprint/ under the file's identity (device,
 * inode, size, modification time in ns), so later opens read nothing; a
 * shard replaced or rewritten in place has a new identity and is hashed
 * again. A file changed without a new mtime (a tool that restores it) is
 * not noticed: the cache trusts the file system's identity.
 *
 * The hash over the parts is FNV-1a with 128 bits (the published offset
 * basis and prime): a dozen lines with no table, and 128 bits make an
 * accidental collision between any two models anyone keeps out of the
 * question. It is not a defence against a forged file (a snapshot is the
 * user's own file, and the CRC and every size are checked anyway).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/st.h"
#include "model/model.h"
#include "remote/source.h"
#include "base/crc.h"
#include "base/file.h"
#include "base/tasks.h"

typedef unsigned __int128 u128;

static void fnv(u128 *h, const void *p, size_t n)
{
    static const u128 prime = ((u128)0x0000000001000000ull << 64) | 0x000000000000013Bull;
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= prime;
    }
}

/* Hashes the file's name and bytes; a missing optional file hashes as
 * absent (so adding one changes the fingerprint). */
static int hash_file(u128 *h, const char *dir, const char *name, int optional, rm_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fnv(h, name, strlen(name) + 1);
    size_t len = 0;
    char *b = file_read(path, (size_t)1 << 30, &len, err);
    if (!b) {
        if (!optional) return -1;
        fnv(h, "absent", 7);
        err->msg[0] = 0;
        return 0;
    }
    uint64_t n = len;
    fnv(h, &n, sizeof n);
    fnv(h, b, len);
    free(b);
    return 0;
}

#define FP_THREADS 8
#define FP_CHUNK ((size_t)8 << 20)

typedef struct fp_job {
    const st_set *st;
    json_t *etags;              /* stream mode: source.json's {shard: ETag}; NULL: every byte is read */
    u128 *digest;               /* [shard] */
    char cache[4096];           /* the digest cache folder, "" for none */
} fp_job;

static u128 fp_basis(void) { return ((u128)0x6c62272e07bb0142ull << 64) | 0x62b821756295c58dull; }

/* The cache file of a shard's digest: named by the file's identity. */
static int cache_path(const fp_job *j, const struct stat *st, char *out, size_t cap)
{
    if (!j->cache[0]) return -1;
    u128 h = fp_basis();
    const uint64_t id[6] = { (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
                             (uint64_t)st->st_mtim.tv_sec, (uint64_t)st->st_mtim.tv_nsec, j->etags != NULL };
    fnv(&h, id, sizeof id);
    snprintf(out, cap, "%s/%016llx%016llx", j->cache, (unsigned long long)(h >> 64), (unsigned long long)h);
    return 0;
}

static const char CACHE_MAGIC[] = "remora shard digest 1 ";

static int cache_get(const char *path, u128 *d)
{
    rm_err e;
    size_t n;
    char *b = file_read(path, 256, &n, &e);
    unsigned long long hi, lo;
    int ok = b && n == sizeof CACHE_MAGIC - 1 + 33 && !strncmp(b, CACHE_MAGIC, sizeof CACHE_MAGIC - 1) &&
             sscanf(b + sizeof CACHE_MAGIC - 1, "%16llx%16llx", &hi, &lo) == 2;
    free(b);
    if (ok) *d = ((u128)hi << 64) | lo;
    return ok ? 0 : -1;
}

static void cache_put(const char *dir, const char *path, u128 d)
{
    char text[128];
    int n = snprintf(text, sizeof text, "%s%016llx%016llx\n", CACHE_MAGIC, (unsigned long long)(d >> 64),
                     (unsigned long long)d);
    rm_err e;
    /* a cache that cannot be written costs the next open a read, nothing else */
    if (!file_mkdirs(dir, &e)) (void)rm_write_atomic(path, text, (size_t)n, 0644, &e);
}

/* The digest of shard i: its tensors' names and CRCs (or, for a routed
 * expert in stream mode, the shard's ETag once). */
static int hash_shard(void *ud, int i, int worker, rm_err *err)
{
    fp_job *j = ud;
    const st_shard *sh = &j->st->shards[i];
    struct stat fst;
    char cpath[4200];
    if (fstat(sh->fd, &fst)) return rm_errf(err, "%s: cannot stat: %s", sh->path, strerror(errno));
    int cached = !cache_path(j, &fst, cpath, sizeof cpath);
    if (cached && !cache_get(cpath, &j->digest[i])) return 0;
    u128 h = fp_basis();
    unsigned char *buf = NULL;
    int rc = 0, etag_done = 0;
    for (int k = 0; k < j->st->ntensors && !rc; k++) {
        const st_tensor *t = &j->st->tensors[k];
        if (t->shard != i) continue;
        int layer, expert;
        fnv(&h, t->name, strlen(t->name) + 1);
        if (j->etags && remote_expert_tensor(t->name, &layer, &expert)) {
            if (!etag_done) {
                const char *base = strrchr(sh->path, '/');
                const char *tag = json_string_value(json_object_get(j->etags, base ? base + 1 : sh->path));
                fnv(&h, "etag", 5);
                fnv(&h, tag ? tag : "", strlen(tag ? tag : "") + 1);
                etag_done = 1;
            }
            continue;
        }
        if (!buf && !(buf = malloc(FP_CHUNK))) { rc = rm_errf_runtime(err, "out of memory"); break; }
        uint32_t crc = 0;
        for (uint64_t off = 0; off < t->nbytes && !rc;) {
            size_t n = t->nbytes - off < FP_CHUNK ? (size_t)(t->nbytes - off) : FP_CHUNK;
            int r = file_pread_all(sh->fd, buf, n, t->offset + off);
            if (r) rc = rm_errf(err, "%s: %s", sh->path, r < 0 ? strerror(errno) : "shorter than its header says");
            else crc = crc_update(crc, buf, n);
            off += n;
        }
        fnv(&h, &crc, sizeof crc);
    }
    /* what was read once need not stay in the page cache */
    if (buf) posix_fadvise(sh->fd, 0, 0, POSIX_FADV_DONTNEED);
    free(buf);
    if (rc) return rc;
    j->digest[i] = h;
    if (cached) cache_put(j->cache, cpath, h);
    return 0;
}

/* The tensors' data, shard by shard (the file's comment). */
static int hash_data(rm_model *m, u128 *h, rm_err *err)
{
    fp_job j = { .st = m->st };
    char url[2048];
    int full = 1;
    json_t *etags = NULL;
    int r = remote_read_source(m->st->dir, url, sizeof url, &full, &etags, err);
    if (r < 0) return -1;
    if (r == 0 && !full) j.etags = etags;
    file_cache_home(j.cache, sizeof j.cache, "fingerprint");
    int rc = 0;
    if (!(j.digest = calloc((size_t)m->st->nshards + 1, sizeof *j.digest))) rc = rm_errf_runtime(err, "out of memory");
    if (!rc) rc = tasks_for_cancel(m->st->nshards, FP_THREADS, hash_shard, &j, NULL, err);
    fnv(h, j.etags ? "data, experts by revision" : "data", j.etags ? 26 : 5);
    for (int i = 0; i < m->st->nshards && !rc; i++) fnv(h, &j.digest[i], sizeof j.digest[i]);
    free(j.digest);
    json_decref(etags);
    return rc;
}

int rm_model_fingerprint(rm_model *m, uint8_t out[16], rm_err *err)
{
    if (!m->fingerprint_done) {
        rm_err local;
        if (!err) err = &local;
        u128 h = fp_basis();
        const char *dir = m->st->dir;
        fnv(&h, "remora model fingerprint 2", 27);
        if (hash_file(&h, dir, "config.json", 0, err) || hash_file(&h, dir, "model.safetensors.index.json", 1, err) ||
            hash_file(&h, dir, "tiktoken.model", 0, err) || hash_file(&h, dir, "tokenizer_config.json", 0, err))
            return -1;
        for (int i = 0; i < m->st->ntensors; i++) {
            const st_tensor *t = &m->st->tensors[i];
            int64_t row[4 + ST_MAX_DIMS] = { t->dtype, t->ndim, (int64_t)t->offset, (int64_t)t->nbytes };
            for (int d = 0; d < t->ndim && d < ST_MAX_DIMS; d++) row[4 + d] = t->shape[d];
            fnv(&h, t->name, strlen(t->name) + 1);
            fnv(&h, row, sizeof row);
        }
        if (hash_data(m, &h, err)) return -1;
        for (int i = 0; i < 16; i++) m->fingerprint[i] = (uint8_t)(h >> (8 * (15 - i)));
        m->fingerprint_done = 1;
    }
    memcpy(out, m->fingerprint, 16);
    return 0;
}
