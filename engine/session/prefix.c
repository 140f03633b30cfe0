/* prefix.c — the prefix cache: snapshots (snapshot.c's format) of prompt
 * beginnings, shared by every session on the machine, so a conversation
 * that starts as an earlier one did (the same system prompt, an agent's
 * preamble, a pasted document, a client that resends the whole
 * conversation) restores that beginning and computes only the rest.
 *
 * Entries live in $XDG_CACHE_HOME/remora/prefix/ (~/.cache/remora/prefix/),
 * one file each, named FINGERPRINT-TOKENS-HASH.snap: the model's
 * fingerprint, the prefix's length and a 64-bit FNV-1a hash of its token
 * ids. A lookup hashes the prompt once, takes the names whose model, length
 * and hash fit, longest first, and reads the entry with its ids compared one
 * by one against the prompt (snap_read): only an exact token prefix is ever
 * restored, whatever the hash says. An entry that fails (damaged, or ids
 * that do not match its name) is removed.
 *
 * Entries are taken while a prompt is computed (generate.c's prefill):
 *   - at the end of the prompt's first message (usually the system
 *     prompt), in the middle of a pass, without an extra pass
 *     (rm_forward_ctl.capture): the beginning conversations share most;
 *   - at every pass boundary of a long prompt, each replacing the one
 *     before, so a prompt stopped or killed after hours of passes resumes
 *     from its last complete pass;
 *   - at the end of a prompt that did not go on from the session's own
 *     state, with its next-token logits (replacing the last pass
 *     boundary's): the same prompt again needs no computing at all, and a
 *     client that resends the conversation with its next message continues
 *     from there (a conversation that goes on in its own state has its
 *     snapshot for that).
 * Prefixes of fewer than PREFIX_MIN_TOKENS tokens are not kept.
 *
 * The cache is bounded (default 4 GB): before an entry is written, the
 * least recently used ones (by modification time, which a restore renews)
 * are removed until it fits, never the entry this session restored last
 * (nor a capture being written); when it cannot fit without those, it is
 * not written.
 * The RAM tier (default 1 GB, at most an eighth of the RAM budget; 0 off)
 * keeps the most recent entries in memory, in the files' very bytes
 * (snapshot.c writes and reads them with the same checks), in front of the
 * disk: an entry goes to RAM when it fits there, and the least recently
 * used ones go to the disk (through its bound) to make room, and all of them
 * when the session closes, so the bound loses nothing. A lookup takes the
 * longest match of either tier, RAM first at equal length, with the same
 * exact id check. Why: a server's clients interleave conversations, and
 * each request that replaces the state stored it first on the request's
 * path, with an fsync; from RAM a state is copied, not written (figures in
 * README.md, "Snapshots"), and a restore does not depend on the page cache
 * still holding the file. What the RAM tier does not take: pass-boundary
 * entries, which exist for a process killed in a long prompt and so go to
 * the disk at once (and the boundary entry a RAM entry would replace stays
 * on the disk for the same reason); entries larger than the tier.
 * Writes go through the atomic replacement, so another process sees a
 * whole entry or none; one that is removed while another reads it stays
 * readable to that reader. A failure to write an entry (a full disk) is
 * kept in prefix_cache.error and never fails the turn.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "session/session.h"
#include "session/prefix.h"
#include "session/snapshot.h"
#include "base/file.h"

#define PREFIX_DEFAULT_GB 4.0
#define PREFIX_SUFFIX ".snap"

/* A size in GB: the option's when set (negative: 0), else the environment
 * variable's, else dflt; -1 with a message naming the variable. */
static int size_gb(double opt, const char *var, const char *what, double dflt, double *gb, rm_err *err)
{
    const char *env = getenv(var);
    *gb = dflt;
    if (opt != 0) {
        *gb = opt < 0 ? 0 : opt;
    } else if (env && *env) {
        char *end;
        errno = 0;
        *gb = strtod(env, &end);
        if (errno || *end || !isfinite(*gb) || *gb < 0 || *gb > 1e6 || strspn(env, "0123456789.eE+-") != strlen(env))
            return rm_errf(err, "%s=%s: must be a size in GB in [0, 1000000] (0 turns %s off)", var, env, what);
    }
    return 0;
}

int prefix_open(prefix_cache *pc, const rm_open_opts *o, uint64_t ram_budget, rm_err *err)
{
    memset(pc, 0, sizeof *pc);
    double gb, ram_gb, dflt = PREFIX_RAM_DEFAULT_GB;
    if (ram_budget && dflt > ram_budget / 8e9) dflt = ram_budget / 8e9;
    if (dflt > model_default_budget() / 8e9) dflt = model_default_budget() / 8e9;
    if (size_gb(o ? o->prefix_cache_gb : 0, "REMORA_PREFIX_CACHE_GB", "the prefix cache", PREFIX_DEFAULT_GB, &gb, err) ||
        size_gb(o ? o->prefix_ram_gb : 0, "REMORA_PREFIX_RAM_GB", "its RAM tier", dflt, &ram_gb, err))
        return -1;
    if (gb <= 0) return 0;
    pc->limit = (uint64_t)(gb * 1e9);
    pc->ram_limit = (uint64_t)(ram_gb * 1e9);
    if (o && o->prefix_cache_dir && *o->prefix_cache_dir) {
        if (snprintf(pc->dir, sizeof pc->dir, "%s", o->prefix_cache_dir) >= (int)sizeof pc->dir) pc->dir[0] = 0;
    } else {
        file_cache_home(pc->dir, sizeof pc->dir, "prefix");     /* "": nowhere to keep it, off */
    }
    return 0;
}

/* FNV-1a, 64 bits, over the ids' bytes, continued from h. */
static uint64_t ids_hash(uint64_t h, const int32_t *ids, int n)
{
    for (int i = 0; i < n; i++) {
        const uint32_t v = (uint32_t)ids[i];
        for (int b = 0; b < 4; b++) {
            h ^= (v >> (8 * b)) & 0xff;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}
#define HASH0 0xcbf29ce484222325ull

static int fp_hex(rm_session *s, char out[33])
{
    uint8_t fp[16];
    rm_err e;
    if (rm_model_fingerprint(s->m, fp, &e)) return -1;
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", fp[i]);
    return 0;
}

static void entry_name(char *buf, size_t cap, const char *fp, int tokens, uint64_t h)
{
    snprintf(buf, cap, "%s-%d-%016llx" PREFIX_SUFFIX, fp, tokens, (unsigned long long)h);
}

static void entry_path(const prefix_cache *pc, const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", pc->dir, name);
}

/* ---- restoring ------------------------------------------------------------ */

typedef struct candidate {
    int tokens;
    uint64_t h, at;             /* the name's hash, the prompt's at that length */
    char name[256];
    int ram;                    /* its index in the RAM tier, -1: on the disk */
} candidate;

/* By length, and at equal length the RAM tier's after the disk's: the
 * lookup goes from the end. */
static int by_tokens(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->tokens != y->tokens) return (x->tokens > y->tokens) - (x->tokens < y->tokens);
    return (x->ram > y->ram) - (x->ram < y->ram);
}

/* The entries of this model named for at most np tokens: the RAM tier's,
 * then the disk's. */
static int list_candidates(const prefix_cache *pc, const char *fp, int np, candidate **out)
{
    *out = NULL;
    int n = 0, cap = 0;
    for (int i = 0; i < pc->nram; i++) {
        if (pc->ram[i].tokens > np || RM_GROW(*out, cap, n + 1)) continue;
        candidate *c = &(*out)[n++];
        c->tokens = pc->ram[i].tokens;
        c->h = pc->ram[i].hash;
        c->ram = i;
        snprintf(c->name, sizeof c->name, "%s", pc->ram[i].name);
    }
    DIR *d = opendir(pc->dir);
    if (!d) return n;
    struct dirent *e;
    const size_t fl = strlen(fp);
    while ((e = readdir(d))) {
        int tokens, used = 0;
        unsigned long long h;
        if (strncmp(e->d_name, fp, fl) || e->d_name[fl] != '-') continue;
        if (sscanf(e->d_name + fl, "-%d-%16llx" PREFIX_SUFFIX "%n", &tokens, &h, &used) != 2 ||
            e->d_name[fl + used] || tokens <= 0 || tokens > np || strlen(e->d_name) >= sizeof (*out)->name)
            continue;
        if (RM_GROW(*out, cap, n + 1)) break;
        candidate *c = &(*out)[n++];
        c->tokens = tokens;
        c->h = h;
        c->ram = -1;
        snprintf(c->name, sizeof c->name, "%s", e->d_name);
    }
    closedir(d);
    return n;
}

int prefix_restore(rm_session *s, const int32_t *prompt, int np)
{
    prefix_cache *pc = &s->prefix;
    char fp[33];
    pc->restored_ram = 0;
    if (!pc->dir[0] || np <= 0 || fp_hex(s, fp)) return 0;
    candidate *c;
    int n = list_candidates(pc, fp, np, &c);
    if (!n) { free(c); return 0; }
    /* the prompt's hash at each candidate length, in one sweep */
    qsort(c, (size_t)n, sizeof *c, by_tokens);
    uint64_t h = HASH0;
    for (int i = 0, at = 0; i < n; i++) {
        h = ids_hash(h, prompt + at, c[i].tokens - at);
        at = c[i].tokens;
        c[i].at = h;
    }
    int restored = 0;
    for (int i = n - 1; i >= 0 && !restored; i--) {
        if (c[i].h != c[i].at) continue;            /* another prompt's beginning */
        char path[4400];
        entry_path(pc, c[i].name, path, sizeof path);
        prefix_ram *r = c[i].ram >= 0 ? &pc->ram[c[i].ram] : NULL;
        snap_data d;
        rm_err e;
        int rc = r ? snap_read_mem(s, c[i].name, r->buf, r->bytes, prompt, np, &d, &e)
                   : snap_read(s, path, prompt, np, &d, &e);
        if (rc == 0 && d.tokens == np && !d.logits) {   /* the whole prompt, but no logits to go on from */
            snap_data_free(&d);
            continue;
        }
        /* a file damaged, or not what its name says, cannot serve anyone;
         * a RAM entry, made from the state here, only had another prompt's
         * ids under the same hash */
        if (rc) {
            if (!r) unlink(path);
            continue;
        }
        const int tokens = d.tokens;
        if (session_install_snap(s, &d, &e)) { snap_data_free(&d); break; }
        if (r) r->used = ++pc->clock;               /* used now: last out */
        else utimensat(AT_FDCWD, path, NULL, 0);
        snprintf(pc->in_use, sizeof pc->in_use, "%s", c[i].name);
        pc->restores++;
        if (r) {
            pc->ram_restores++;
            pc->restored_ram = tokens;
        }
        restored = tokens;
    }
    free(c);
    return restored;
}

/* ---- storing -------------------------------------------------------------- */

typedef struct entry { char name[256]; uint64_t bytes; struct timespec mtime; } entry;

static int older(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int protected_entry(const prefix_cache *pc, const char *name)
{
    return !strcmp(name, pc->in_use) || (pc->capw && !strcmp(name, pc->cap_name));
}

/* Removes the least recently used entries until they take at most
 * `budget` bytes (not the protected ones), and the leftovers of writers
 * that died; returns the bytes the entries take then. */
static uint64_t evict(prefix_cache *pc, uint64_t budget)
{
    DIR *d = opendir(pc->dir);
    if (!d) return 0;
    entry *v = NULL;
    int n = 0, cap = 0;
    uint64_t total = 0;
    struct dirent *e;
    char path[4400];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        entry_path(pc, e->d_name, path, sizeof path);
        if (strstr(e->d_name, PREFIX_SUFFIX ".tmp.")) {
            if (file_tmp_stale(e->d_name)) unlink(path);
            continue;
        }
        size_t len = strlen(e->d_name), sl = strlen(PREFIX_SUFFIX);
        struct stat st;
        if (len < sl || len >= sizeof v->name || strcmp(e->d_name + len - sl, PREFIX_SUFFIX) || stat(path, &st) ||
            !S_ISREG(st.st_mode))
            continue;
        if (RM_GROW(v, cap, n + 1)) break;
        snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
        v[n].bytes = (uint64_t)st.st_size;
        v[n].mtime = st.st_mtim;
        total += v[n].bytes;
        n++;
    }
    closedir(d);
    if (total > budget) qsort(v, (size_t)n, sizeof *v, older);
    for (int i = 0; i < n && total > budget; i++) {
        if (protected_entry(pc, v[i].name)) continue;
        entry_path(pc, v[i].name, path, sizeof path);
        if (unlink(path) == 0 || errno == ENOENT) total -= v[i].bytes;
    }
    free(v);
    return total;
}

/* Makes room for an entry of `bytes` and the folder for it. Returns 0 when
 * it may be written. */
static int make_room(rm_session *s, uint64_t bytes)
{
    prefix_cache *pc = &s->prefix;
    if (bytes > pc->limit) return -1;          /* it alone would not fit */
    rm_err e;
    if (file_mkdirs(pc->dir, &e)) {
        pc->error = e;
        return -1;
    }
    /* the cache holds conversations: the folder is made 0700, but never
     * through a symbolic link (the linked folder's mode is the user's) */
    int dfd = open(pc->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd >= 0) {
        fchmod(dfd, 0700);
        close(dfd);
    }
    /* when only the entries in use are left and it still does not fit, it
     * is not written: the bound holds */
    return evict(pc, pc->limit - bytes) + bytes > pc->limit ? -1 : 0;
}

/* ---- the RAM tier --------------------------------------------------------- */

static int ram_find(const prefix_cache *pc, const char *name)
{
    for (int i = 0; i < pc->nram; i++)
        if (!strcmp(pc->ram[i].name, name)) return i;
    return -1;
}

/* Entry i out of the RAM tier, to the disk (through its bound): the disk
 * keeps what RAM cannot. */
static void ram_spill(rm_session *s, int i)
{
    prefix_cache *pc = &s->prefix;
    prefix_ram *r = &pc->ram[i];
    char path[4400];
    entry_path(pc, r->name, path, sizeof path);
    rm_err e;
    if (access(path, F_OK) != 0 && make_room(s, r->bytes) == 0) {
        snap_seal_mem(r->buf, r->bytes);
        if (rm_write_atomic(path, r->buf, r->bytes, 0600, &e)) pc->error = e;
        else pc->ram_spills++;
    }
    free(r->buf);
    pc->ram_bytes -= r->bytes;
    *r = pc->ram[--pc->nram];
}

static int ram_oldest(const prefix_cache *pc)
{
    int old = 0;
    for (int i = 1; i < pc->nram; i++)
        if (pc->ram[i].used < pc->ram[old].used) old = i;
    return old;
}

/* Room for `bytes` in the RAM tier, the least recently used entries
 * going to the disk; 0 when they fit now. */
static int ram_room(rm_session *s, uint64_t bytes)
{
    prefix_cache *pc = &s->prefix;
    if (bytes > pc->ram_limit) return -1;
    while (pc->ram_bytes + bytes > pc->ram_limit && pc->nram) ram_spill(s, ram_oldest(pc));
    return RM_GROW(pc->ram, pc->ramcap, pc->nram + 1) ? -1 : 0;
}

/* The bytes of a snapshot made in memory, as the RAM tier's entry `name`. */
static void ram_add(prefix_cache *pc, const char *name, int tokens, uint64_t hash, unsigned char *buf, size_t bytes)
{
    prefix_ram *r = &pc->ram[pc->nram++];      /* ram_room made the room */
    snprintf(r->name, sizeof r->name, "%s", name);
    r->tokens = tokens;
    r->hash = hash;
    r->buf = buf;
    r->bytes = bytes;
    r->used = ++pc->clock;
    pc->ram_bytes += bytes;
    pc->stores++;
}

void prefix_close(rm_session *s)
{
    prefix_cache *pc = &s->prefix;
    /* the oldest first, so the disk's order of use stays the tier's */
    while (pc->nram) ram_spill(s, ram_oldest(pc));
    free(pc->ram);
    pc->ram = NULL;
    pc->ramcap = 0;
}

/* The entry's name for seq[0..pos); 0 when it is to be written (*ram: to
 * the RAM tier, whose room is made, when it may go there), 1 when it is
 * there already (now renewed), -1 when it cannot be written. */
static int new_entry(rm_session *s, int pos, unsigned flags, int *ram, char *name, size_t cap, char *path, size_t pcap)
{
    prefix_cache *pc = &s->prefix;
    char fp[33];
    if (!pc->dir[0] || pos < PREFIX_MIN_TOKENS || pos > s->nseq || fp_hex(s, fp)) return -1;
    entry_name(name, cap, fp, pos, ids_hash(HASH0, s->seq, pos));
    entry_path(pc, name, path, pcap);
    int i = ram_find(pc, name);
    if (i >= 0) {
        pc->ram[i].used = ++pc->clock;
        return 1;
    }
    if (access(path, F_OK) == 0) {
        utimensat(AT_FDCWD, path, NULL, 0);
        return 1;
    }
    const uint64_t bytes = snap_file_bytes(s, pos, flags);
    if (*ram && ram_room(s, bytes) == 0) return 0;
    *ram = 0;
    return make_room(s, bytes) ? -1 : 0;
}

int prefix_store(rm_session *s, int pos, const float *logits, int pass)
{
    prefix_cache *pc = &s->prefix;
    const unsigned flags = SNAP_ROUTES | (logits ? SNAP_LOGITS : 0);
    char name[256], path[4400];
    int ram = !pass;
    int rc = rm_state_pos(s->st) == pos ? new_entry(s, pos, flags, &ram, name, sizeof name, path, sizeof path) : -1;
    rm_err e;
    if (rc == 0 && ram) {
        snap_out *o = snap_begin(s, NULL, s->seq, pos, flags, &e);
        size_t bytes = 0;
        unsigned char *buf = NULL;
        if (o) {
            for (int l = 0; l < s->m->cfg.num_layers; l++) snap_layer(o, s->st, l, pos);
            buf = snap_finish_mem(o, s, logits, &bytes, &e);
        }
        if (buf) ram_add(pc, name, pos, ids_hash(HASH0, s->seq, pos), buf, bytes);
        else pc->error = e;
        rc = buf ? 0 : -1;
    } else if (rc == 0) {
        if (snap_write(s, path, s->st, s->seq, pos, flags, logits, &e)) {
            pc->error = e;
            rc = -1;
        } else {
            pc->stores++;
        }
    }
    if (rc < 0) return 0;
    /* a later boundary of the same prompt replaces the one before, on the
     * disk: one that went to RAM leaves it there for a process killed */
    if (pc->pass_entry[0] && strcmp(pc->pass_entry, name) && strcmp(pc->pass_entry, pc->in_use) && !(rc == 0 && ram)) {
        char old[4400];
        entry_path(pc, pc->pass_entry, old, sizeof old);
        unlink(old);
    }
    if (pass) snprintf(pc->pass_entry, sizeof pc->pass_entry, "%s", name);
    else pc->pass_entry[0] = 0;
    return rc ? 0 : ram ? PREFIX_IN_RAM : PREFIX_ON_DISK;
}

void prefix_prompt_done(rm_session *s) { s->prefix.pass_entry[0] = 0; }

int prefix_capture_begin(rm_session *s, int pos)
{
    prefix_cache *pc = &s->prefix;
    char name[256], path[4400];
    int ram = 1;
    if (pc->capw || new_entry(s, pos, SNAP_ROUTES, &ram, name, sizeof name, path, sizeof path)) return 0;
    rm_err e;
    if (!(pc->capw = snap_begin(s, ram ? NULL : path, s->seq, pos, SNAP_ROUTES, &e))) {
        pc->error = e;
        return 0;
    }
    pc->capram = ram;
    pc->cap = pos;
    snprintf(pc->cap_name, sizeof pc->cap_name, "%s", name);
    return 1;
}

void prefix_capture_layer(rm_session *s, int layer)
{
    prefix_cache *pc = &s->prefix;
    if (pc->capw) snap_layer(pc->capw, s->st, layer, pc->cap);
}

void prefix_capture_end(rm_session *s, int ok)
{
    prefix_cache *pc = &s->prefix;
    if (!pc->capw) return;
    rm_err e;
    if (ok && pc->capram) {
        size_t bytes = 0;
        unsigned char *buf = snap_finish_mem(pc->capw, s, NULL, &bytes, &e);
        /* nothing else goes to RAM while a pass runs (pass boundaries go
         * to the disk), so the room made at the beginning is there */
        if (buf && ram_room(s, bytes) == 0) ram_add(pc, pc->cap_name, pc->cap, ids_hash(HASH0, s->seq, pc->cap), buf, bytes);
        else if (buf) free(buf);
        else pc->error = e;
    } else if (ok) {
        if (snap_finish(pc->capw, s, NULL, &e)) pc->error = e;
        else pc->stores++;
    } else {
        snap_abort(pc->capw);
    }
    pc->capw = NULL;
    pc->cap = 0;
    pc->cap_name[0] = 0;
}
