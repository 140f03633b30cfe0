/* pretok.c — Kimi's pre-tokeniser, written out by hand.
 *
 * tiktoken runs Kimi's pat_str (eight alternatives, leftmost-first, with
 * backtracking) over the text; each match is one BPE piece. The alternatives,
 * in order, and how each is decided here with at most one character of
 * look-ahead (U = [Lu Lt Lm Lo M] minus Han, W = [Ll Lm Lo M] minus Han):
 *
 *   1 [\p{Han}]+                       a run of Han-script characters
 *   2 [^\r\n\p{L}\p{N}]? U* W+ 's?     letters ending lower-case-ish
 *   3 [^\r\n\p{L}\p{N}]? U+ W* 's?     letters starting upper-case-ish
 *   4 \p{N}{1,3}                       one to three numerals
 *   5  ?[^\s\p{L}\p{N}]+[\r\n]*        punctuation, optional space before,
 *                                      line breaks after
 *   6 \s*[\r\n]+                       white space up to its last line break
 *   7 \s+(?!\S)                        white space, leaving the last one
 *                                      to the next piece if a non-space follows
 *   8 \s+                              white space
 *
 * ('s stands for the case-insensitive contractions 's 't 're 've 'm 'll 'd,
 * where case folding also lets U+017F LATIN SMALL LETTER LONG S match s.)
 *
 * Alternative 2 needs backtracking in a regex engine: U* first takes the whole
 * U run, and when no W follows it gives characters back until one of them is
 * a W (U and W share Lm, Lo and M). The same result comes from one forward
 * scan that remembers the last W inside the U run. Alternative 7 gives back
 * one white-space character when a non-space follows the run.
 *
 * Character classes come from utf8proc's general categories, the Han script
 * table generated from Unicode's Scripts.txt at build time (build/gen), and
 * the White_Space property (a fixed list, below). Classes of the Basic
 * Multilingual Plane are computed once into a 64 KiB table.
 */
#include <pthread.h>
#include <stdint.h>
#include <utf8proc.h>
#include "text/pretok.h"
#include "han_ranges.h"

enum {
    C_L   = 1 << 0,     /* \p{L} */
    C_N   = 1 << 1,     /* \p{N} */
    C_S   = 1 << 2,     /* \s: Unicode White_Space */
    C_NL  = 1 << 3,     /* \r or \n */
    C_HAN = 1 << 4,     /* \p{Han} */
    C_U   = 1 << 5,     /* [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]] */
    C_W   = 1 << 6,     /* [\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]] */
};

/* White_Space (PropList.txt); the set has been stable since Unicode 6.3. */
static int is_white_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

static int is_han(uint32_t c)
{
    int lo = 0, hi = (int)(sizeof han_ranges / sizeof han_ranges[0]) - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (c < han_ranges[mid].lo) hi = mid - 1;
        else if (c > han_ranges[mid].hi) lo = mid + 1;
        else return 1;
    }
    return 0;
}

static unsigned compute_class(uint32_t c)
{
    unsigned k = 0;
    int han = is_han(c);
    if (han) k |= C_HAN;
    if (is_white_space(c)) k |= C_S;
    if (c == '\r' || c == '\n') k |= C_NL;
    switch (utf8proc_category((utf8proc_int32_t)c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LT:
        k |= C_L | (han ? 0 : C_U); break;
    case UTF8PROC_CATEGORY_LL:
        k |= C_L | (han ? 0 : C_W); break;
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
        k |= C_L | (han ? 0 : C_U | C_W); break;
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
        k |= han ? 0 : C_U | C_W; break;
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
        k |= C_N; break;
    default: break;
    }
    return k;
}

static uint8_t bmp_class[0x10000];
static pthread_once_t bmp_once = PTHREAD_ONCE_INIT;

static void bmp_init(void)
{
    for (uint32_t c = 0; c < 0x10000; c++)
        bmp_class[c] = (uint8_t)compute_class(c);
}

/* Decodes the character at s[pos] (pos < n): returns its class and sets *len
 * to its byte length. Invalid UTF-8 (overlong forms, surrogates, values past
 * U+10FFFF, truncated sequences, stray continuation bytes) yields one byte of
 * class 0: not a letter, number or space. */
static inline unsigned char_at(const unsigned char *s, size_t n, size_t pos, size_t *len)
{
    unsigned b0 = s[pos];
    if (b0 < 0x80) { *len = 1; return bmp_class[b0]; }
    size_t left = n - pos;
    uint32_t c;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        if (left < 2 || (s[pos + 1] & 0xC0) != 0x80) goto bad;
        c = ((b0 & 0x1Fu) << 6) | (s[pos + 1] & 0x3Fu);
        *len = 2;
        return bmp_class[c];
    }
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (left < 3) goto bad;
        unsigned b1 = s[pos + 1], b2 = s[pos + 2];
        unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
        if (b1 < lo || b1 > hi || (b2 & 0xC0) != 0x80) goto bad;
        c = ((b0 & 0x0Fu) << 12) | ((b1 & 0x3Fu) << 6) | (b2 & 0x3Fu);
        *len = 3;
        return bmp_class[c];
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        if (left < 4) goto bad;
        unsigned b1 = s[pos + 1], b2 = s[pos + 2], b3 = s[pos + 3];
        unsigned lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
        if (b1 < lo || b1 > hi || (b2 & 0xC0) != 0x80 || (b3 & 0xC0) != 0x80) goto bad;
        c = ((b0 & 0x07u) << 18) | ((b1 & 0x3Fu) << 12) | ((b2 & 0x3Fu) << 6) | (b3 & 0x3Fu);
        *len = 4;
        return compute_class(c);
    }
bad:
    *len = 1;
    return 0;
}

/* Case-insensitive 's 't 're 've 'm 'll 'd at pos; returns its byte length or 0. */
static size_t contraction(const unsigned char *s, size_t n, size_t pos)
{
    if (pos + 1 >= n || s[pos] != '\'') return 0;
    unsigned a = s[pos + 1], b = pos + 2 < n ? s[pos + 2] : 0;
    if (a == 0xC5 && b == 0xBF) return 3;                       /* 'ſ (U+017F) */
    switch (a | 0x20) {
    case 's': case 't': case 'm': case 'd': return 2;
    case 'r': case 'v': return (b | 0x20) == 'e' ? 3 : 0;
    case 'l': return (b | 0x20) == 'l' ? 3 : 0;
    default: return 0;
    }
}

/* Extends pos over characters whose class has any bit of mask. */
static size_t run_of(const unsigned char *s, size_t n, size_t pos, unsigned mask)
{
    size_t len;
    while (pos < n && (char_at(s, n, pos, &len) & mask)) pos += len;
    return pos;
}

/* The letters of alternative 2 from st: U* W+ then a contraction; 0 if none. */
static size_t letters_lower(const unsigned char *s, size_t n, size_t st)
{
    size_t p = st, len, last_w_end = 0;
    unsigned k = 0;
    while (p < n && ((k = char_at(s, n, p, &len)) & C_U)) {
        if (k & C_W) last_w_end = p + len;
        p += len;
    }
    size_t e;
    if (p < n && (k & C_W)) e = run_of(s, n, p, C_W);
    else if (last_w_end) e = last_w_end;
    else return 0;
    return e + contraction(s, n, e);
}

/* The letters of alternative 3 from st: U+ W* then a contraction; 0 if none. */
static size_t letters_upper(const unsigned char *s, size_t n, size_t st)
{
    size_t p = run_of(s, n, st, C_U);
    if (p == st) return 0;
    p = run_of(s, n, p, C_W);
    return p + contraction(s, n, p);
}

size_t pretok_piece(const char *text, size_t n, size_t pos)
{
    pthread_once(&bmp_once, bmp_init);
    const unsigned char *s = (const unsigned char *)text;
    size_t len, e;
    unsigned k = char_at(s, n, pos, &len);

    if (k & C_HAN)                                              /* 1 */
        return run_of(s, n, pos, C_HAN) - pos;

    int pre = !(k & (C_NL | C_L | C_N));                        /* 2, 3 */
    if (pre && (e = letters_lower(s, n, pos + len))) return e - pos;
    if ((k & (C_U | C_W)) && (e = letters_lower(s, n, pos))) return e - pos;
    if (pre && (e = letters_upper(s, n, pos + len))) return e - pos;
    if ((k & C_U) && (e = letters_upper(s, n, pos))) return e - pos;

    if (k & C_N) {                                              /* 4 */
        e = pos + len;
        for (int i = 1; i < 3 && e < n; i++) {
            size_t l2;
            if (!(char_at(s, n, e, &l2) & C_N)) break;
            e += l2;
        }
        return e - pos;
    }

    size_t st = pos;                                            /* 5 */
    if (s[pos] == ' ' && pos + 1 < n) {
        size_t l2;
        if (!(char_at(s, n, pos + 1, &l2) & (C_S | C_L | C_N))) st = pos + 1;
    }
    if (st > pos || !(k & (C_S | C_L | C_N))) {
        size_t p = st;
        while (p < n) {
            size_t l2;
            if (char_at(s, n, p, &l2) & (C_S | C_L | C_N)) break;
            p += l2;
        }
        while (p < n && (s[p] == '\r' || s[p] == '\n')) p++;
        return p - pos;
    }

    /* 6, 7, 8: k is white space here (every other class matched above). */
    size_t p = pos, last_nl_end = 0, last_start = pos;
    while (p < n) {
        unsigned k2 = char_at(s, n, p, &len);
        if (!(k2 & C_S)) break;
        if (k2 & C_NL) last_nl_end = p + len;
        last_start = p;
        p += len;
    }
    if (last_nl_end) return last_nl_end - pos;                  /* 6 */
    if (p == n || last_start == pos) return p - pos;            /* 7 at the end, 8 */
    return last_start - pos;                                    /* 7 */
}
