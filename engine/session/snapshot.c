/* snapshot.c — a session's state on disk: the snapshot format (README.md,
 * "Snapshots", is its description for users), writing it whole or layer by
 * layer while a pass runs (the prefix cache's captures), reading it back
 * with everything checked, and installing what was read as a session's
 * state. Keeping a snapshot beside a transcript is resume.c's.
 *
 * A file is a 128-byte header, the payload and a CRC-32 of both (base/crc.h):
 *
 *   0  magic "\x89RMSNAP\n"          40  tokens (the position)
 *   8  format version (1)             44  layers
 *  12  byte-order mark 0x01020304     48  bytes of a KDA layer's state
 *  16  header bytes (128)             52  bytes of an MLA cache row
 *  20  flags: 1 logits, 2 routes,     56  vocabulary
 *      4 speculation                  60  MoE layers   64  experts per token
 *  24  model fingerprint (16 bytes)   68  KDA layers   72  payload bytes (u64)
 *  80..127 zero
 *
 * then the token ids (int32), each layer's state in layer order (a KDA
 * layer: its recurrent state and convolution history, float32; an MLA
 * layer: its latent cache rows up to the position), and the sections the
 * flags name: the next-token logits (float32 [vocab]), the router choices
 * of every position (int16 [tokens][MoE layers][k], -1 unrecorded), the
 * speculation estimates (SPEC_STATS_N float64). Integers are little-endian;
 * floats are the host's IEEE bits, which the byte-order mark makes safe.
 * The magic's high byte and newline catch a file mangled as text (as PNG's
 * do). The sampler needs nothing: each turn's generator is derived from
 * the seed and the turn's number (sampler_turn_seed), which the transcript
 * gives, so sampling resumes exactly even when a snapshot is refused.
 *
 * The same bytes may live in memory instead of a file (snap_begin with no
 * path, snap_finish_mem, snap_read_mem): the prefix cache's RAM tier keeps
 * its entries so, written and read through the very code and checks of the
 * files, so an entry moves between RAM and disk as it is, but without the
 * CRC, which guards bytes that went through a file: computed, it was three
 * quarters of a restore from RAM (the embedded model, 10 MB, best of 7:
 * 3.4 ms, against 0.8 ms for a plain copy of the bytes; without it 0.7 ms
 * against 0.5 ms, so the format costs about what copying the state's
 * buffers would). snap_seal_mem adds it to bytes that are to become a file.
 *
 * Reading trusts nothing before it is checked: the header's sizes must be
 * the model's and give exactly the file's size before a byte is allocated;
 * ids and routes must be in range; and the state is read into a new
 * rm_state that becomes the session's only once the CRC matches. So a
 * damaged, truncated or foreign snapshot is refused with the reason, and
 * the session goes on with its own state (or prefills the conversation).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "session/session.h"
#include "session/snapshot.h"
#include "base/crc.h"
#include "base/file.h"

#define SNAP_VERSION 1
#define SNAP_HEADER 128
#define SNAP_ORDER 0x01020304u
#define SNAP_MAX_TOKENS (1 << 28)
#define SNAP_FLAGS (SNAP_LOGITS | SNAP_ROUTES | SNAP_SPEC)

static const unsigned char snap_magic[8] = { 0x89, 'R', 'M', 'S', 'N', 'A', 'P', '\n' };

/* Offsets of the header's fields. */
enum { H_VERSION = 8, H_ORDER = 12, H_HEADER = 16, H_FLAGS = 20, H_FP = 24, H_TOKENS = 40, H_LAYERS = 44,
       H_KDA_BYTES = 48, H_MLA_ROW = 52, H_VOCAB = 56, H_MOE = 60, H_TOPK = 64, H_KDA_LAYERS = 68, H_PAYLOAD = 72,
       H_END = 80 };

static void put32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> 8 * i); }
static void put64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> 8 * i); }
static uint32_t get32(const unsigned char *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/* The model's side of the header: what a snapshot's sizes must be. */
typedef struct snap_shape {
    uint32_t layers, kda_layers, kda_bytes, mla_row, vocab, moe, topk;
} snap_shape;

static snap_shape model_shape(const rm_session *s)
{
    const rm_config *c = &s->m->cfg;
    snap_shape sh = { (uint32_t)c->num_layers, 0, 0,
                      (uint32_t)(((uint64_t)c->kv_lora_rank + c->qk_rope) * sizeof(float)),
                      (uint32_t)c->vocab_size, (uint32_t)s->routes.nmoe, (uint32_t)s->routes.topk };
    for (int l = 0; l < c->num_layers; l++)
        if (c->is_kda[l]) {
            sh.kda_layers++;
            sh.kda_bytes = (uint32_t)state_layer_bytes(c, l, 0);
        }
    return sh;
}

static uint64_t payload_bytes(const snap_shape *sh, uint64_t tokens, unsigned flags)
{
    uint64_t n = tokens * sizeof(int32_t) + (uint64_t)sh->kda_layers * sh->kda_bytes +
                 (uint64_t)(sh->layers - sh->kda_layers) * tokens * sh->mla_row;
    if (flags & SNAP_LOGITS) n += (uint64_t)sh->vocab * sizeof(float);
    if (flags & SNAP_ROUTES) n += tokens * sh->moe * sh->topk * sizeof(int16_t);
    if (flags & SNAP_SPEC) n += SPEC_STATS_N * sizeof(double);
    return n;
}

uint64_t snap_file_bytes(const rm_session *s, int pos, unsigned flags)
{
    const snap_shape sh = model_shape(s);
    return SNAP_HEADER + payload_bytes(&sh, (uint64_t)pos, flags) + 4;
}

static void hex(char out[33], const uint8_t fp[16])
{
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", fp[i]);
}

/* ---- writing -------------------------------------------------------------- */

struct snap_out {
    int fd;                     /* -1: in memory */
    unsigned char *mem;         /* in memory: the whole snapshot, memcap bytes */
    size_t memcap;
    char path[4096], tmp[4200];
    uint32_t crc;
    uint64_t bytes;
    int err_no;                 /* the first write error */
    unsigned flags;
    int pos, layers, next_layer;
    size_t nbuf;
    unsigned char buf[1 << 16];
};

static void out_flush(snap_out *o)
{
    if (o->nbuf && !o->err_no && file_write_all(o->fd, o->buf, o->nbuf)) o->err_no = errno ? errno : EIO;
    o->nbuf = 0;
}

static int out_put(void *ud, void *p, size_t n)
{
    snap_out *o = ud;
    if (o->mem) {           /* no CRC: snap_seal_mem computes it if the bytes go to a file */
        if (o->bytes + n > o->memcap) o->err_no = EINVAL;
        else memcpy(o->mem + o->bytes, p, n);
        o->bytes += n;
        return 0;
    }
    o->crc = crc_update(o->crc, p, n);
    o->bytes += n;
    if (o->nbuf + n > sizeof o->buf) out_flush(o);
    if (n >= sizeof o->buf) {
        if (!o->err_no && file_write_all(o->fd, p, n)) o->err_no = errno ? errno : EIO;
    } else {
        memcpy(o->buf + o->nbuf, p, n);
        o->nbuf += n;
    }
    return 0;
}

void snap_abort(snap_out *o)
{
    if (!o) return;
    if (o->mem) {
        free(o->mem);
    } else {
        close(o->fd);
        unlink(o->tmp);
    }
    free(o);
}

snap_out *snap_begin(rm_session *s, const char *path, const int32_t *ids, int pos, unsigned flags, rm_err *err)
{
    uint8_t fp[16];
    if (rm_model_fingerprint(s->m, fp, err)) return NULL;
    struct stat st;
    if (path && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { rm_errf(err, "%s: is a directory", path); return NULL; }
    snap_out *o = calloc(1, sizeof *o);
    if (!o) { rm_errf(err, "%s: out of memory writing the snapshot", path ? path : "memory"); return NULL; }
    o->fd = -1;
    if (!path) {
        o->memcap = (size_t)snap_file_bytes(s, pos, flags);
        if (!(o->mem = malloc(o->memcap))) {
            rm_errf(err, "out of memory for a snapshot of %d tokens in RAM", pos);
            free(o);
            return NULL;
        }
    } else if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path) {
        free(o);
        rm_errf(err, "%s: the name is too long", path);
        return NULL;
    } else {
        /* a save killed midway (SIGKILL, a power cut) left its temporary
         * file: a K3 snapshot's is gigabytes, so the next save of the name
         * removes it */
        file_sweep_stale_tmps(path);
        file_tmp_name(o->tmp, sizeof o->tmp, path);
        o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (o->fd < 0) {
            rm_errf(err, "%s: cannot write: %s", path, strerror(errno));
            free(o);
            return NULL;
        }
    }
    const snap_shape sh = model_shape(s);
    unsigned char h[SNAP_HEADER] = { 0 };
    memcpy(h, snap_magic, sizeof snap_magic);
    put32(h + H_VERSION, SNAP_VERSION);
    put32(h + H_ORDER, SNAP_ORDER);
    put32(h + H_HEADER, SNAP_HEADER);
    put32(h + H_FLAGS, flags);
    memcpy(h + H_FP, fp, 16);
    put32(h + H_TOKENS, (uint32_t)pos);
    put32(h + H_LAYERS, sh.layers);
    put32(h + H_KDA_BYTES, sh.kda_bytes);
    put32(h + H_MLA_ROW, sh.mla_row);
    put32(h + H_VOCAB, sh.vocab);
    put32(h + H_MOE, sh.moe);
    put32(h + H_TOPK, sh.topk);
    put32(h + H_KDA_LAYERS, sh.kda_layers);
    put64(h + H_PAYLOAD, payload_bytes(&sh, (uint64_t)pos, flags));
    /* the order mark is written in the host's order: that is the check */
    uint32_t order = SNAP_ORDER;
    memcpy(h + H_ORDER, &order, 4);
    o->flags = flags;
    o->pos = pos;
    o->layers = (int)sh.layers;
    out_put(o, h, sizeof h);
    if (pos) out_put(o, (void *)ids, (size_t)pos * sizeof *ids);
    return o;
}

void snap_layer(snap_out *o, rm_state *st, int l, int pos)
{
    if (l != o->next_layer || pos != o->pos || state_layer_io(st, l, pos, out_put, o)) {
        if (!o->err_no) o->err_no = EINVAL;
        return;
    }
    o->next_layer++;
}

/* The sections after the layers and the CRC. */
static void finish_sections(snap_out *o, rm_session *s, const float *logits)
{
    if (o->next_layer != o->layers && !o->err_no) o->err_no = EINVAL;
    if (o->flags & SNAP_LOGITS) out_put(o, (void *)logits, (size_t)s->m->cfg.vocab_size * sizeof *logits);
    if (o->flags & SNAP_ROUTES) {
        const route_hist *h = &s->routes;
        const size_t row = (size_t)h->nmoe * h->topk;
        const int have = o->pos < h->cap ? o->pos : h->cap;
        if (have > 0 && row) out_put(o, (void *)route_hist_get(h, 0), (size_t)have * row * sizeof(int16_t));
        int16_t none[RM_MAX_ROUTE_LAYERS * RM_MAX_TOPK];
        memset(none, 0xff, sizeof none);
        for (int p = have; p < o->pos && row; p++)
            for (size_t i = 0; i < row; i += RM_MAX_ROUTE_LAYERS * RM_MAX_TOPK) {
                size_t n = row - i < RM_MAX_ROUTE_LAYERS * RM_MAX_TOPK ? row - i : RM_MAX_ROUTE_LAYERS * RM_MAX_TOPK;
                out_put(o, none, n * sizeof *none);
            }
    }
    if (o->flags & SNAP_SPEC) {
        double v[SPEC_STATS_N];
        spec_export(&s->spec, v);
        out_put(o, v, sizeof v);
    }
    unsigned char crc[4];
    put32(crc, o->crc);
    const uint32_t keep = o->crc;
    out_put(o, crc, sizeof crc);
    o->crc = keep;
}

int snap_finish(snap_out *o, rm_session *s, const float *logits, rm_err *err)
{
    finish_sections(o, s, logits);
    out_flush(o);
    int rc;
    if (o->err_no) {
        rc = o->err_no == EINVAL ? rm_errf(err, "%s: the snapshot was not written: a layer is missing", o->path)
                                 : rm_errf(err, "%s: cannot write: %s", o->path, strerror(o->err_no));
        close(o->fd);
        unlink(o->tmp);
    } else {
        rc = file_commit(o->fd, o->tmp, o->path, o->bytes, err);
    }
    free(o);
    return rc;
}

void snap_seal_mem(unsigned char *buf, size_t len) { put32(buf + len - 4, crc_update(0, buf, len - 4)); }

unsigned char *snap_finish_mem(snap_out *o, rm_session *s, const float *logits, size_t *len, rm_err *err)
{
    finish_sections(o, s, logits);
    unsigned char *m = o->mem;
    if (o->err_no || o->bytes != o->memcap) {
        rm_errf(err, "the snapshot was not kept in RAM: a layer is missing");
        free(m);
        m = NULL;
    } else {
        *len = o->memcap;
    }
    free(o);
    return m;
}

int snap_write(rm_session *s, const char *path, rm_state *st, const int32_t *ids, int pos, unsigned flags,
               const float *logits, rm_err *err)
{
    snap_out *o = snap_begin(s, path, ids, pos, flags, err);
    if (!o) return -1;
    for (int l = 0; l < s->m->cfg.num_layers; l++) snap_layer(o, st, l, pos);
    return snap_finish(o, s, logits, err);
}

/* ---- reading -------------------------------------------------------------- */

typedef struct snap_in {
    int fd;                     /* -1: from memory */
    const unsigned char *mem;   /* in memory: len bytes, `at` read */
    size_t len, at;
    uint32_t crc;
    int failed;                 /* errno, or -1 for a file that ended early */
} snap_in;

static int in_get(void *ud, void *p, size_t n)
{
    snap_in *in = ud;
    if (in->mem) {
        if (in->len - in->at < n) in->failed = -1;
        if (in->failed) return -1;
        memcpy(p, in->mem + in->at, n);
        in->at += n;
        return 0;
    }
    size_t got = 0;
    while (got < n && !in->failed) {
        ssize_t r = read(in->fd, (char *)p + got, n - got > (1u << 30) ? (1u << 30) : n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) in->failed = r < 0 ? errno : -1;
        else got += (size_t)r;
    }
    if (in->failed) return -1;
    in->crc = crc_update(in->crc, p, n);
    return 0;
}

void snap_data_free(snap_data *d)
{
    free(d->ids);
    rm_state_free(d->st);
    free(d->logits);
    free(d->routes);
    memset(d, 0, sizeof *d);
}

/* The header's fields against the model and the file's size. */
static int check_header(rm_session *s, const char *path, const unsigned char *h, uint64_t size, rm_err *err)
{
    if (memcmp(h, snap_magic, sizeof snap_magic)) return rm_errf(err, "%s: not a Remora snapshot", path);
    uint32_t order;
    memcpy(&order, h + H_ORDER, 4);
    if (order == __builtin_bswap32(SNAP_ORDER))
        return rm_errf(err, "%s: written on a machine of the other byte order", path);
    if (order != SNAP_ORDER) return rm_errf(err, "%s: damaged header (byte-order mark %08x)", path, order);
    const uint32_t version = get32(h + H_VERSION);
    if (version != SNAP_VERSION)
        return rm_errf(err, "%s: snapshot format version %u; this remora reads version %d", path, version,
                       SNAP_VERSION);
    if (get32(h + H_HEADER) != SNAP_HEADER)
        return rm_errf(err, "%s: damaged header (header size %u, not %d)", path, get32(h + H_HEADER), SNAP_HEADER);
    for (int i = H_END; i < SNAP_HEADER; i++)
        if (h[i]) return rm_errf(err, "%s: damaged header (reserved byte %d is set)", path, i);
    const unsigned flags = get32(h + H_FLAGS);
    if (flags & ~(unsigned)SNAP_FLAGS) return rm_errf(err, "%s: damaged header (unknown sections 0x%x)", path, flags);
    uint8_t fp[16];
    if (rm_model_fingerprint(s->m, fp, err)) return -1;
    if (memcmp(fp, h + H_FP, 16)) {
        char a[33], b[33];
        hex(a, h + H_FP);
        hex(b, fp);
        return rm_errf(err, "%s: made by another model (fingerprint %s; this model's is %s)", path, a, b);
    }
    const snap_shape sh = model_shape(s);
    const struct { const char *what; int off; uint32_t want; } fields[] = {
        { "layers", H_LAYERS, sh.layers }, { "KDA layers", H_KDA_LAYERS, sh.kda_layers },
        { "bytes of a KDA state", H_KDA_BYTES, sh.kda_bytes }, { "bytes of an MLA row", H_MLA_ROW, sh.mla_row },
        { "vocabulary", H_VOCAB, sh.vocab }, { "MoE layers", H_MOE, sh.moe }, { "experts per token", H_TOPK, sh.topk },
    };
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        if (get32(h + fields[i].off) != fields[i].want)
            return rm_errf(err, "%s: damaged header (%s %u; the model has %u)", path, fields[i].what,
                           get32(h + fields[i].off), fields[i].want);
    const uint32_t tokens = get32(h + H_TOKENS);
    if (tokens > SNAP_MAX_TOKENS) return rm_errf(err, "%s: damaged header (%u tokens)", path, tokens);
    const uint64_t payload = payload_bytes(&sh, tokens, flags), said = get64(h + H_PAYLOAD);
    if (said != payload)
        return rm_errf(err, "%s: damaged header (a payload of %llu bytes where its fields give %llu)", path,
                       (unsigned long long)said, (unsigned long long)payload);
    const uint64_t total = SNAP_HEADER + payload + 4;
    if (size < total)
        return rm_errf(err, "%s: truncated: %llu bytes of the %llu its header gives", path, (unsigned long long)size,
                       (unsigned long long)total);
    if (size > total)
        return rm_errf(err, "%s: damaged: %llu bytes after its end", path, (unsigned long long)(size - total));
    return 0;
}

static int read_failed(const snap_in *in, const char *path, rm_err *err)
{
    if (in->failed > 0) return rm_errf(err, "%s: cannot read: %s", path, strerror(in->failed));
    return rm_errf(err, "%s: truncated while reading", path);
}

/* The sections after the layers, each checked. */
static int read_sections(rm_session *s, const char *path, snap_in *in, snap_data *d, rm_err *err)
{
    const rm_config *c = &s->m->cfg;
    if (d->flags & SNAP_LOGITS) {
        if (!(d->logits = malloc((size_t)c->vocab_size * sizeof *d->logits))) return rm_errf(err, "%s: out of memory", path);
        if (in_get(in, d->logits, (size_t)c->vocab_size * sizeof *d->logits)) return read_failed(in, path, err);
    }
    const size_t row = (size_t)s->routes.nmoe * s->routes.topk;
    if ((d->flags & SNAP_ROUTES) && row && d->tokens) {
        const size_t n = (size_t)d->tokens * row;
        if (!(d->routes = malloc(n * sizeof *d->routes))) return rm_errf(err, "%s: out of memory", path);
        if (in_get(in, d->routes, n * sizeof *d->routes)) return read_failed(in, path, err);
        for (size_t i = 0; i < n; i++)
            if (d->routes[i] < -1 || d->routes[i] >= c->num_experts)
                return rm_errf(err, "%s: damaged: expert %d in the router choices", path, d->routes[i]);
    }
    if (d->flags & SNAP_SPEC) {
        if (in_get(in, d->spec, sizeof d->spec)) return read_failed(in, path, err);
        spec probe;
        memset(&probe, 0, sizeof probe);
        if (spec_import(&probe, d->spec)) return rm_errf(err, "%s: damaged: the speculation figures", path);
    }
    return 0;
}

/* The payload after a checked header h, from in. Returns 0, SNAP_MISMATCH
 * or -1 (d is not freed). */
static int read_payload(rm_session *s, const char *path, snap_in *in, const unsigned char *h, const int32_t *expect,
                        int n, snap_data *d, rm_err *err)
{
    d->tokens = (int)get32(h + H_TOKENS);
    d->flags = get32(h + H_FLAGS);
    if (expect && d->tokens > n) {
        rm_errf(err, "%s: holds %d tokens, more than the conversation's %d", path, d->tokens, n);
        return SNAP_MISMATCH;
    }
    const rm_config *c = &s->m->cfg;
    if (!(d->ids = malloc(((size_t)d->tokens + 1) * sizeof *d->ids))) { rm_errf(err, "%s: out of memory", path); return -1; }
    if (in_get(in, d->ids, (size_t)d->tokens * sizeof *d->ids)) { read_failed(in, path, err); return -1; }
    for (int i = 0; i < d->tokens; i++) {
        if (d->ids[i] < 0 || d->ids[i] >= c->vocab_size) {
            rm_errf(err, "%s: damaged: token id %d at position %d", path, d->ids[i], i);
            return -1;
        }
        if (expect && d->ids[i] != expect[i]) {
            rm_errf(err, "%s: its tokens are not the conversation's (they differ at token %d of %d)", path, i,
                    d->tokens);
            return SNAP_MISMATCH;
        }
    }
    rm_err e2;
    if (!(d->st = rm_state_new(s->m, &e2)) || state_reserve(d->st, d->tokens, &e2)) {
        rm_errf(err, "%s: out of memory for a state of %d tokens", path, d->tokens);
        return -1;
    }
    for (int l = 0; l < c->num_layers; l++)
        if (state_layer_io(d->st, l, d->tokens, in_get, in)) { read_failed(in, path, err); return -1; }
    if (read_sections(s, path, in, d, err)) return -1;
    const uint32_t crc = in->crc;
    unsigned char t[4];
    if (in_get(in, t, 4)) { read_failed(in, path, err); return -1; }
    if (!in->mem && get32(t) != crc) { rm_errf(err, "%s: bad CRC: the file is damaged", path); return -1; }
    state_set_pos(d->st, d->tokens);
    return 0;
}

int snap_read(rm_session *s, const char *path, const int32_t *expect, int n, snap_data *d, rm_err *err)
{
    memset(d, 0, sizeof *d);
    /* the model loader's rule: a FIFO or a device in place of the file is
     * refused, never waited on */
    snap_in in = { .fd = file_open_regular(path, O_RDONLY, err) };
    if (in.fd < 0) return -1;
    struct stat st;
    unsigned char h[SNAP_HEADER];
    int rc = -1;
    if (fstat(in.fd, &st) || !S_ISREG(st.st_mode)) rm_errf(err, "%s: not a regular file", path);
    else if ((uint64_t)st.st_size < SNAP_HEADER + 4)
        rm_errf(err, "%s: truncated: %llu bytes, less than a snapshot's header", path, (unsigned long long)st.st_size);
    else if (in_get(&in, h, sizeof h)) read_failed(&in, path, err);
    else if (!check_header(s, path, h, (uint64_t)st.st_size, err)) rc = read_payload(s, path, &in, h, expect, n, d, err);
    close(in.fd);
    if (rc) snap_data_free(d);
    return rc;
}

int snap_read_mem(rm_session *s, const char *name, const void *buf, size_t len, const int32_t *expect, int n,
                  snap_data *d, rm_err *err)
{
    memset(d, 0, sizeof *d);
    snap_in in = { .fd = -1, .mem = buf, .len = len };
    unsigned char h[SNAP_HEADER];
    int rc = -1;
    if (len < SNAP_HEADER + 4) rm_errf(err, "%s: truncated: %zu bytes, less than a snapshot's header", name, len);
    else if (in_get(&in, h, sizeof h)) read_failed(&in, name, err);
    else if (!check_header(s, name, h, len, err)) rc = read_payload(s, name, &in, h, expect, n, d, err);
    if (rc) snap_data_free(d);
    return rc;
}

int session_install_snap(rm_session *s, snap_data *d, rm_err *err)
{
    if (RM_GROW(s->seq, s->seqcap, d->tokens + 1) || route_hist_reserve(&s->routes, d->tokens + 1))
        return rm_errf(err, "out of memory restoring a state of %d tokens", d->tokens);
    rm_state_free(s->st);
    s->st = d->st;
    d->st = NULL;
    memcpy(s->seq, d->ids, (size_t)d->tokens * sizeof *s->seq);
    s->nseq = s->nfed = d->tokens;
    if (d->logits) memcpy(s->logits, d->logits, (size_t)s->m->cfg.vocab_size * sizeof *s->logits);
    s->logits_pos = d->logits ? d->tokens : -1;
    route_hist *h = &s->routes;
    const size_t row = (size_t)h->nmoe * h->topk;
    if (row && d->tokens) {
        if (d->routes) memcpy(h->ids, d->routes, (size_t)d->tokens * row * sizeof *h->ids);
        else memset(h->ids, 0xff, (size_t)d->tokens * row * sizeof *h->ids);
    }
    if (d->flags & SNAP_SPEC) spec_import(&s->spec, d->spec);
    s->restored_pending = d->tokens;
    s->stale = 0;
    snap_data_free(d);
    return 0;
}
