/* tokenizer.c — Kimi's tiktoken tokenizer: reading the model's files,
 * encoding text to ids and giving back the bytes of ids.
 *
 * tiktoken.model holds one line per rank, "base64(bytes) rank"; ranks run
 * 0, 1, 2, ... in file order. tokenizer_config.json names the special tokens
 * (added_tokens_decoder); as in tokenization_kimi.py the special table covers
 * the 256 reserved ids after the ranks plus two more, and ids without a name
 * are "<|reserved_token_{id}|>". The vocabulary is ranks + 256.
 *
 * Encoding is tiktoken's: with allow_special the text is first cut at special
 * strings (leftmost match, the longest one if several start at the same
 * byte); each remaining part is split into pieces by the pre-tokeniser
 * (pretok.c); a piece that is itself a rank is emitted as is, otherwise it is
 * byte-pair merged: start from single bytes and repeatedly join the adjacent
 * pair whose concatenation has the lowest rank, leftmost on ties, until no
 * adjacent concatenation is a rank. Short pieces use tiktoken's linear scan;
 * long ones (a 10 MB run of one letter is one piece) a heap, which picks the
 * same pair at every step in O(n log n).
 *
 * Ranks live in one byte arena indexed by an open-addressing hash table of
 * byte strings; special strings in a second arena and table.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "engine.h"
#include "text/pretok.h"
#include "text/tokenizer_int.h"
#include "base/file.h"

#define N_RESERVED 256          /* special ids in the vocabulary */
#define N_SPECIAL_NAMES 258     /* names built, as tokenization_kimi.py does */
#define MAX_LINE 4096           /* longest tiktoken.model line accepted */
#define MAX_SPECIAL_LEN 256
#define SHORT_PIECE 96          /* pieces up to this many bytes use the linear scan */

/* A set of byte strings stored in one arena, looked up by open addressing.
 * Slot values are index + 1 (0 = empty); tags hold hash bits to skip most
 * byte comparisons. */
typedef struct strset_ent { uint32_t off, len; } strset_ent;   /* bytes in the arena */
typedef struct strset {
    rm_buf arena;               /* max = UINT32_MAX: offsets are 32-bit */
    strset_ent *ent;
    uint32_t n;
    int cap;
    uint32_t *slot, *tag, mask;
} strset;

struct rm_tokenizer {
    strset ranks;               /* index = rank */
    strset specials;            /* index = id - n_ranks */
    int32_t byte_rank[256];
    size_t max_rank_len;
    int n_ranks;
    /* special matching: first bytes and distinct lengths, longest first */
    uint8_t special_first[256];
    uint32_t special_lens[N_SPECIAL_NAMES];
    int n_special_lens;
    size_t short_piece;         /* longest piece merged by the linear scan */
};

/* ---- byte-string sets -------------------------------------------------- */

static inline uint64_t hash_bytes(const unsigned char *p, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0x100000001B3ull);
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = (h ^ v) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
        p += 8; n -= 8;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    h = (h ^ v) * 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 29);
}

static void strset_free(strset *s)
{
    rm_buf_free(&s->arena); free(s->ent); free(s->slot); free(s->tag);
    memset(s, 0, sizeof *s);
}

/* Index of the bytes p[0..n) in s, or -1. */
static inline int64_t strset_find(const strset *s, const unsigned char *p, size_t n)
{
    if (!s->slot) return -1;
    uint64_t h = hash_bytes(p, n);
    uint32_t tag = (uint32_t)(h >> 32), i = (uint32_t)h & s->mask;
    for (;;) {
        uint32_t v = s->slot[i];
        if (!v) return -1;
        if (s->tag[i] == tag && s->ent[v - 1].len == n && !memcmp(s->arena.p + s->ent[v - 1].off, p, n))
            return v - 1;
        i = (i + 1) & s->mask;
    }
}

static int strset_rehash(strset *s, uint32_t nslots)
{
    uint32_t *slot = calloc(nslots, sizeof *slot), *tag = calloc(nslots, sizeof *tag);
    if (!slot || !tag) { free(slot); free(tag); return -1; }
    free(s->slot); free(s->tag);
    s->slot = slot; s->tag = tag; s->mask = nslots - 1;
    for (uint32_t k = 0; k < s->n; k++) {
        uint64_t h = hash_bytes((const unsigned char *)s->arena.p + s->ent[k].off, s->ent[k].len);
        uint32_t i = (uint32_t)h & s->mask;
        while (slot[i]) i = (i + 1) & s->mask;
        slot[i] = k + 1;
        tag[i] = (uint32_t)(h >> 32);
    }
    return 0;
}

/* Appends p[0..n) as index s->n. Returns the index, -2 if the bytes are
 * already present (*dup = their index), -1 when out of memory. */
static int64_t strset_add(strset *s, const unsigned char *p, size_t n, int64_t *dup)
{
    int64_t old = strset_find(s, p, n);
    if (old >= 0) { *dup = old; return -2; }
    if (s->n >= INT32_MAX || RM_GROW(s->ent, s->cap, (int)s->n + 1)) return -1;
    const size_t at = s->arena.len;
    s->arena.max = UINT32_MAX;
    if (rm_buf_add(&s->arena, p, n)) return -1;
    s->ent[s->n] = (strset_ent){ (uint32_t)at, (uint32_t)n };
    s->n++;
    /* keep the load factor at or below one half */
    if (!s->slot || (uint64_t)s->n * 2 > (uint64_t)s->mask + 1) {
        if (strset_rehash(s, s->slot ? (s->mask + 1) * 2 : 1024)) return -1;
    } else {
        uint64_t h = hash_bytes(p, n);
        uint32_t i = (uint32_t)h & s->mask;
        while (s->slot[i]) i = (i + 1) & s->mask;
        s->slot[i] = s->n;
        s->tag[i] = (uint32_t)(h >> 32);
    }
    return s->n - 1;
}

/* ---- reading tiktoken.model -------------------------------------------- */

static int read_ranks(rm_tokenizer *t, const char *name, const unsigned char *p, size_t n, rm_err *err)
{
    unsigned char tok[MAX_LINE];
    size_t pos = 0, lineno = 0;
    while (pos < n) {
        lineno++;
        const unsigned char *nl = memchr(p + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - p) : n, next = nl ? end + 1 : n;
        if (end > pos && p[end - 1] == '\r') end--;
        if (end - pos > MAX_LINE)
            return rm_errf(err, "%s line %zu: line is longer than %d bytes", name, lineno, MAX_LINE);
        if (end == pos) { pos = next; continue; }       /* blank line, as splitlines() skips */
        const unsigned char *l = p + pos;
        size_t ln = end - pos, sp = 0;
        while (sp < ln && l[sp] != ' ' && l[sp] != '\t') sp++;
        size_t rs = sp;
        while (rs < ln && (l[rs] == ' ' || l[rs] == '\t')) rs++;
        if (sp == 0 || rs == ln)
            return rm_errf(err, "%s line %zu: expected \"base64 rank\", found no rank", name, lineno);
        long tn = rm_base64_decode((const char *)l, sp, tok);
        if (tn <= 0)
            return rm_errf(err, "%s line %zu: bad base64 token \"%.*s\"", name, lineno,
                           (int)(sp > 60 ? 60 : sp), (const char *)l);
        uint64_t rank = 0;
        for (size_t i = rs; i < ln; i++) {
            if (l[i] < '0' || l[i] > '9' || rank > INT32_MAX / 10)
                return rm_errf(err, "%s line %zu: bad rank \"%.*s\"", name, lineno,
                               (int)(ln - rs > 30 ? 30 : ln - rs), (const char *)l + rs);
            rank = rank * 10 + (l[i] - '0');
        }
        if (rank != t->ranks.n)
            return rm_errf(err, "%s line %zu: rank %llu where %u was expected (ranks must be "
                           "0, 1, 2, ... without gaps or repeats)", name, lineno,
                           (unsigned long long)rank, t->ranks.n);
        if (rank >= INT32_MAX - N_SPECIAL_NAMES)
            return rm_errf(err, "%s line %zu: too many ranks", name, lineno);
        int64_t dup = -1, r = strset_add(&t->ranks, tok, (size_t)tn, &dup);
        if (r == -2)
            return rm_errf(err, "%s line %zu: rank %llu has the same bytes as rank %lld", name,
                           lineno, (unsigned long long)rank, (long long)dup);
        if (r < 0) return rm_errf(err, "%s: out of memory", name);
        if ((size_t)tn > t->max_rank_len) t->max_rank_len = (size_t)tn;
        if (tn == 1) t->byte_rank[tok[0]] = (int32_t)rank;
        pos = next;
    }
    if (t->ranks.n == 0) return rm_errf(err, "%s: no ranks", name);
    for (int b = 0; b < 256; b++)
        if (t->byte_rank[b] < 0)
            return rm_errf(err, "%s: no rank for the single byte 0x%02x (byte-level BPE needs all 256)",
                           name, b);
    t->n_ranks = (int)t->ranks.n;
    return 0;
}

/* ---- special tokens ----------------------------------------------------- */

static int read_specials(rm_tokenizer *t, const char *name, const char *cfg, size_t cfg_len,
                         rm_err *err)
{
    const char *names[N_SPECIAL_NAMES] = { 0 };
    json_t *root = NULL;
    int rc = -1;
    if (cfg) {
        json_error_t je;
        root = json_loadb(cfg, cfg_len, JSON_DECODE_INT_AS_REAL, &je);
        if (!root)
            return rm_errf(err, "%s line %d column %d: %s", name, je.line, je.column, je.text);
        if (!json_is_object(root)) { rm_errf(err, "%s: not a JSON object", name); goto out; }
        json_t *dec = json_object_get(root, "added_tokens_decoder");
        if (dec && !json_is_object(dec)) {
            rm_errf(err, "%s: added_tokens_decoder is not an object", name);
            goto out;
        }
        const char *key;
        json_t *v;
        json_object_foreach(dec, key, v) {
            char *endp;
            errno = 0;
            long id = strtol(key, &endp, 10);
            if (!*key || *endp || errno || id < t->n_ranks || id >= (long)t->n_ranks + N_SPECIAL_NAMES) {
                rm_errf(err, "%s: added_tokens_decoder id \"%s\" is not a special id (%d..%d)",
                        name, key, t->n_ranks, t->n_ranks + N_SPECIAL_NAMES - 1);
                goto out;
            }
            json_t *c = json_is_object(v) ? json_object_get(v, "content") : NULL;
            if (!json_is_string(c) || json_string_length(c) == 0 ||
                json_string_length(c) > MAX_SPECIAL_LEN ||
                strlen(json_string_value(c)) != json_string_length(c)) {
                rm_errf(err, "%s: added_tokens_decoder \"%s\" has no usable \"content\" string",
                        name, key);
                goto out;
            }
            names[id - t->n_ranks] = json_string_value(c);
        }
    }
    for (int i = 0; i < N_SPECIAL_NAMES; i++) {
        char buf[64];
        const char *s = names[i];
        if (!s) {
            snprintf(buf, sizeof buf, "<|reserved_token_%d|>", t->n_ranks + i);
            s = buf;
        }
        int64_t dup = -1, r = strset_add(&t->specials, (const unsigned char *)s, strlen(s), &dup);
        if (r == -2) {
            rm_errf(err, "%s: special token \"%s\" is named twice (ids %lld and %d)", name, s,
                    (long long)dup + t->n_ranks, t->n_ranks + i);
            goto out;
        }
        if (r < 0) { rm_errf(err, "%s: out of memory", name); goto out; }
        t->special_first[(unsigned char)s[0]] = 1;
        uint32_t len = (uint32_t)strlen(s);
        int k = 0;
        while (k < t->n_special_lens && t->special_lens[k] > len) k++;
        if (k == t->n_special_lens || t->special_lens[k] != len) {
            memmove(t->special_lens + k + 1, t->special_lens + k,
                    (t->n_special_lens - k) * sizeof t->special_lens[0]);
            t->special_lens[k] = len;
            t->n_special_lens++;
        }
    }
    rc = 0;
out:
    json_decref(root);
    return rc;
}

int tokenizer_load(const char *model_name, const char *model, size_t model_len,
                      const char *cfg_name, const char *cfg, size_t cfg_len,
                      rm_tokenizer **out, rm_err *err)
{
    *out = NULL;
    rm_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return rm_errf(err, "%s: out of memory", model_name);
    for (int b = 0; b < 256; b++) t->byte_rank[b] = -1;
    t->short_piece = SHORT_PIECE;
    if (read_ranks(t, model_name, (const unsigned char *)model, model_len, err) ||
        read_specials(t, cfg_name, cfg, cfg_len, err)) {
        rm_tokenizer_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

int rm_tokenizer_open(const char *dir, rm_tokenizer **out, rm_err *err)
{
    char mpath[4096], cpath[4096];
    snprintf(mpath, sizeof mpath, "%s/tiktoken.model", dir);
    snprintf(cpath, sizeof cpath, "%s/tokenizer_config.json", dir);
    size_t mlen = 0, clen = 0;
    *out = NULL;
    char *m = file_read(mpath, SIZE_MAX, &mlen, err);
    if (!m) return -1;
    char *c = file_read(cpath, SIZE_MAX, &clen, err);
    if (!c) { free(m); return -1; }
    int rc = tokenizer_load(mpath, m, mlen, cpath, c, clen, out, err);
    free(m);
    free(c);
    return rc;
}

void rm_tokenizer_free(rm_tokenizer *t)
{
    if (!t) return;
    strset_free(&t->ranks);
    strset_free(&t->specials);
    free(t);
}

void tokenizer_force_heap(rm_tokenizer *t, int on) { t->short_piece = on ? 0 : SHORT_PIECE; }

int rm_tokenizer_vocab(const rm_tokenizer *t) { return t->n_ranks + N_RESERVED; }
int tokenizer_ranks(const rm_tokenizer *t) { return t->n_ranks; }

int rm_tokenizer_special_id(const rm_tokenizer *t, const char *text)
{
    int64_t i = strset_find(&t->specials, (const unsigned char *)text, strlen(text));
    return i < 0 ? -1 : t->n_ranks + (int)i;
}

const char *rm_tokenizer_token_bytes(const rm_tokenizer *t, int32_t id, size_t *len)
{
    const strset *s = &t->ranks;
    if (id >= t->n_ranks) { s = &t->specials; id -= t->n_ranks; }
    if (id < 0 || (uint32_t)id >= s->n) return NULL;
    *len = s->ent[id].len;
    return s->arena.p + s->ent[id].off;
}

/* ---- encoding ----------------------------------------------------------- */

typedef struct ivec { int32_t *v; int n, cap; } ivec;

static int ivec_push(ivec *a, int32_t x)
{
    if (a->n == a->cap && RM_GROW(a->v, a->cap, a->n + 1)) return -1;
    a->v[a->n++] = x;
    return 0;
}

static inline int32_t rank_of(const rm_tokenizer *t, const unsigned char *p, size_t n)
{
    if (n > t->max_rank_len) return INT32_MAX;
    int64_t r = strset_find(&t->ranks, p, n);
    return r < 0 ? INT32_MAX : (int32_t)r;
}

/* tiktoken's merge loop for a short piece (n <= SHORT_PIECE). */
static int bpe_short(const rm_tokenizer *t, const unsigned char *p, size_t n, ivec *out)
{
    uint32_t start[SHORT_PIECE + 1];
    int32_t pair[SHORT_PIECE], tok[SHORT_PIECE];
    size_t m = n;
    for (size_t i = 0; i <= n; i++) start[i] = (uint32_t)i;
    for (size_t i = 0; i < n; i++) tok[i] = t->byte_rank[p[i]];
    for (size_t i = 0; i + 1 < n; i++) pair[i] = rank_of(t, p + i, 2);
    while (m > 1) {
        size_t best = 0;
        for (size_t i = 1; i + 1 < m; i++)
            if (pair[i] < pair[best]) best = i;
        if (pair[best] == INT32_MAX) break;
        tok[best] = pair[best];
        memmove(start + best + 1, start + best + 2, (m - best - 1) * sizeof start[0]);
        memmove(tok + best + 1, tok + best + 2, (m - best - 2) * sizeof tok[0]);
        if (m > best + 3) memmove(pair + best + 1, pair + best + 2, (m - best - 3) * sizeof pair[0]);
        m--;
        if (best + 1 < m) pair[best] = rank_of(t, p + start[best], start[best + 2] - start[best]);
        else pair[best] = INT32_MAX;
        if (best > 0) pair[best - 1] = rank_of(t, p + start[best - 1], start[best + 1] - start[best - 1]);
    }
    for (size_t i = 0; i < m; i++)
        if (ivec_push(out, tok[i])) return -1;
    return 0;
}

/* A candidate merge in the heap: the part starting at byte pos with its
 * right neighbour q, which ends at r. Stale once either part has changed. */
typedef struct cand { int32_t rank; uint32_t pos, q, r; } cand;

static inline int cand_less(const cand *a, const cand *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static void heap_push(cand *h, size_t *n, cand c)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!cand_less(&c, &h[up])) break;
        h[i] = h[up];
        i = up;
    }
    h[i] = c;
}

static cand heap_pop(cand *h, size_t *n)
{
    cand top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && cand_less(&h[c + 1], &h[c])) c++;
        if (!cand_less(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = last;
    return top;
}

/* The same merges for long pieces, with a heap keyed by (rank, position). */
static int bpe_long(const rm_tokenizer *t, const unsigned char *p, size_t n, ivec *out)
{
    /* next[i]: start of the part after the part starting at i (n at the end);
     * prev[i]: start of the part before; tok[i]: the part's rank; dead parts
     * have next[i] == 0. */
    uint32_t *next = malloc(n * sizeof *next), *prev = malloc(n * sizeof *prev);
    int32_t *tok = malloc(n * sizeof *tok);
    cand *heap = malloc(3 * n * sizeof *heap);
    size_t hn = 0;
    int rc = -1;
    if (!next || !prev || !tok || !heap) goto out;
    for (size_t i = 0; i < n; i++) {
        next[i] = (uint32_t)(i + 1);
        prev[i] = (uint32_t)(i ? i - 1 : 0);
        tok[i] = t->byte_rank[p[i]];
    }
    for (size_t i = 0; i + 1 < n; i++) {
        int32_t r = rank_of(t, p + i, 2);
        if (r != INT32_MAX) heap_push(heap, &hn, (cand){ r, (uint32_t)i, (uint32_t)i + 1, (uint32_t)i + 2 });
    }
    while (hn) {
        cand c = heap_pop(heap, &hn);
        if (next[c.pos] != c.q || c.q >= n || next[c.q] != c.r) continue;    /* stale */
        tok[c.pos] = c.rank;
        next[c.pos] = c.r;
        next[c.q] = 0;
        if (c.r < n) prev[c.r] = c.pos;
        if (c.r < n) {
            uint32_t r2 = next[c.r];
            int32_t r = rank_of(t, p + c.pos, r2 - c.pos);
            if (r != INT32_MAX) heap_push(heap, &hn, (cand){ r, c.pos, c.r, r2 });
        }
        if (c.pos > 0) {
            uint32_t l = prev[c.pos];
            int32_t r = rank_of(t, p + l, c.r - l);
            if (r != INT32_MAX) heap_push(heap, &hn, (cand){ r, l, c.pos, c.r });
        }
    }
    for (size_t i = 0; i < n; i = next[i])
        if (ivec_push(out, tok[i])) goto out;
    rc = 0;
out:
    free(next); free(prev); free(tok); free(heap);
    return rc;
}

static int encode_ordinary(const rm_tokenizer *t, const char *s, size_t n, ivec *out)
{
    size_t pos = 0;
    while (pos < n) {
        size_t len = pretok_piece(s, n, pos);
        const unsigned char *p = (const unsigned char *)s + pos;
        int32_t r = rank_of(t, p, len);
        int rc;
        if (r != INT32_MAX) rc = ivec_push(out, r);
        else if (len <= t->short_piece) rc = bpe_short(t, p, len, out);
        else rc = bpe_long(t, p, len, out);
        if (rc) return -1;
        pos += len;
    }
    return 0;
}

/* Length of the special string starting at s[pos] (the longest if several),
 * and its id in *id; 0 if none starts there. */
static size_t special_at(const rm_tokenizer *t, const char *s, size_t n, size_t pos, int32_t *id)
{
    if (!t->special_first[(unsigned char)s[pos]]) return 0;
    for (int k = 0; k < t->n_special_lens; k++) {
        size_t l = t->special_lens[k];
        if (l > n - pos) continue;
        int64_t i = strset_find(&t->specials, (const unsigned char *)s + pos, l);
        if (i >= 0) { *id = t->n_ranks + (int32_t)i; return l; }
    }
    return 0;
}

int rm_tokenizer_encode(const rm_tokenizer *t, const char *text, size_t len,
                        int allow_special, int32_t **ids, rm_err *err)
{
    *ids = NULL;
    if (len > (size_t)INT_MAX / 2) return rm_errf(err, "text of %zu bytes is too long to encode", len);
    ivec out = { 0 };
    size_t seg = 0;
    if (allow_special) {
        for (size_t pos = 0; pos < len;) {
            int32_t id;
            size_t l = special_at(t, text, len, pos, &id);
            if (!l) { pos++; continue; }
            if (encode_ordinary(t, text + seg, pos - seg, &out) || ivec_push(&out, id)) goto oom;
            pos += l;
            seg = pos;
        }
    }
    if (encode_ordinary(t, text + seg, len - seg, &out)) goto oom;
    if (!out.v && !(out.v = malloc(sizeof *out.v))) goto oom;   /* an empty text gives a valid pointer */
    *ids = out.v;
    return out.n;
oom:
    free(out.v);
    return rm_errf(err, "out of memory encoding %zu bytes", len);
}
