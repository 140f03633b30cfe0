/* text.c — grapheme clusters to screen cells (see text.h for the policy).
 *
 * The rules, in the order they apply to a cluster:
 *  - '\n' (and "\r\n") is a paragraph break, a lone '\r' is dropped, '\t' is a
 *    4-column blank and ' ' a 1-column blank: these are the break points;
 *  - other control characters and invalid bytes draw as U+FFFD;
 *  - a code point whose libc width differs from utf8proc's (libc does not know
 *    it, or the tables disagree) draws as U+FFFD, width 1;
 *  - a cluster that terminals draw at different widths, because it joins
 *    spacing code points (a ZWJ sequence 🧑‍🌾, a skin-tone modifier 👍🏽) or
 *    asks a narrow base for emoji presentation (VS16: ❤️ is 1 column to
 *    ncurses and 2 to many terminals), is drawn as one marker as wide as its
 *    first code point: the geta mark 〓 (U+3013, the typographer's sign for a
 *    character that cannot be set) for a wide one, U+FFFD for a narrow one.
 *    Never shortened to its first code point, which would change what it
 *    says (👩‍💻 "technologist" is not 👩 "woman"), and never a width the
 *    layout and the terminal disagree on; and its width is known from its
 *    first code point, so text streamed in pieces wraps as it does whole;
 *  - other variation selectors are dropped (VS16 after a wide emoji and
 *    VS15 change nothing the layout sees);
 *  - zero-width code points join the current cell as combining characters
 *    (up to ncurses' limit of 4); two regional indicators make a flag of two
 *    cells.
 */
#include <string.h>
#include <utf8proc.h>
#include "text.h"

#define REPLACEMENT 0xFFFD
#define GETA_MARK   0x3013      /* 〓, two columns */
#define MAX_CLUSTER 64      /* code points kept per cluster; the rest are consumed */

static int g_utf8 = 1;

void ui_text_set_utf8(int on) { g_utf8 = on; }
int  ui_text_utf8(void) { return g_utf8; }

/* Decodes one code point. Returns bytes used (>0), 0 if s ends inside a valid
 * prefix of a sequence, or -1 for an invalid byte (consume 1, draw U+FFFD). */
static int decode(const unsigned char *s, size_t n, int32_t *cp)
{
    unsigned char b = s[0];
    int need;
    if (b < 0x80) { *cp = b; return 1; }
    if (b >= 0xC2 && b <= 0xDF) need = 2;
    else if (b >= 0xE0 && b <= 0xEF) need = 3;
    else if (b >= 0xF0 && b <= 0xF4) need = 4;
    else return -1;
    size_t have = n < (size_t)need ? n : (size_t)need;
    for (size_t i = 1; i < have; i++)
        if ((s[i] & 0xC0) != 0x80) return -1;
    if (have < (size_t)need) return 0;
    utf8proc_int32_t c;
    if (utf8proc_iterate(s, need, &c) != need) return -1;   /* overlong, surrogate */
    *cp = c;
    return need;
}

static int is_ri(int32_t c) { return c >= 0x1F1E6 && c <= 0x1F1FF; }

/* Width the terminal will give c, or -1 when c must be replaced. */
static int cp_width(int32_t c)
{
    utf8proc_category_t cat = utf8proc_category(c);
    if (cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CS ||
        cat == UTF8PROC_CATEGORY_CO || cat == UTF8PROC_CATEGORY_CN)
        return -1;
    int wc = wcwidth((wchar_t)c);
    int wu = utf8proc_charwidth(c);
    if (wc < 0 || wc != wu) return -1;
    return wc;
}

static void set_single(ui_glyph *g, wchar_t c, int width)
{
    g->ncells = 1;
    g->cell[0][0] = c;
    g->cell[0][1] = 0;
    g->cell_width[0] = width;
    g->width = width;
}

/* The code points of the cluster that starts with cp (l bytes at s):
 * at most MAX_CLUSTER kept in cps, the rest consumed. Returns the bytes of
 * the cluster, or 0 when s ends inside it and final is 0. */
static size_t collect_cluster(const unsigned char *s, size_t n, size_t l, int32_t cp, int final, int32_t *cps,
                              int *ncp)
{
    *ncp = 0;
    cps[(*ncp)++] = cp;
    size_t pos = l;
    utf8proc_int32_t state = 0;
    int32_t prev = cp;
    while (pos < n) {
        int32_t c;
        int k = decode(s + pos, n - pos, &c);
        if (k == 0) {
            if (!final) return 0;
            break;
        }
        if (k < 0) break;
        if (utf8proc_grapheme_break_stateful(prev, c, &state)) break;
        if (*ncp < MAX_CLUSTER) cps[(*ncp)++] = c;
        pos += (size_t)k;
        prev = c;
    }
    return pos;
}

static int is_modifier(int32_t c) { return c >= 0x1F3FB && c <= 0x1F3FF; }

/* Whether terminals disagree on the cluster's width (the first rule above). */
static int ambiguous_cluster(const int32_t *cps, int ncp)
{
    for (int i = 1; i < ncp; i++) {
        if ((cps[i] == 0x200D && i + 1 < ncp) || is_modifier(cps[i])) return 1;
        if (cps[i] == 0xFE0F && cp_width(cps[i - 1]) == 1) return 1;
    }
    return 0;
}

/* The cells a cluster draws, by the rules at the top of this file. */
static void cluster_cells(ui_glyph *g, const int32_t *cps, int ncp)
{
    if (ambiguous_cluster(cps, ncp)) {
        if (cp_width(cps[0]) == 2) set_single(g, GETA_MARK, 2);
        else set_single(g, REPLACEMENT, 1);
        return;
    }
    int nch = 0;    /* chars in the current cell */
    for (int i = 0; i < ncp; i++) {
        int32_t c = cps[i];
        if (c == 0x200D) break;                          /* a trailing ZWJ joins nothing */
        if (c == 0xFE0E || c == 0xFE0F) continue;        /* variation selectors */
        int w = cp_width(c);
        if (w < 0) {
            if (g->ncells == 0) { set_single(g, REPLACEMENT, 1); nch = 1; }
            continue;
        }
        if (w == 0) {
            if (g->ncells > 0 && nch < UI_CELL_CHARS) {
                g->cell[g->ncells - 1][nch++] = (wchar_t)c;
                g->cell[g->ncells - 1][nch] = 0;
            }
            continue;
        }
        if (g->ncells == 0) {
            set_single(g, (wchar_t)c, w);
            nch = 1;
        } else if (g->ncells == 1 && is_ri(c) && is_ri((int32_t)g->cell[0][0])) {
            g->cell[1][0] = (wchar_t)c;
            g->cell[1][1] = 0;
            g->cell_width[1] = w;
            g->width += w;
            g->ncells = 2;
            nch = 1;
        }
    }
}

int ui_glyph_next(const char *str, size_t n, int final, ui_glyph *g)
{
    const unsigned char *s = (const unsigned char *)str;
    memset(g, 0, sizeof *g);
    if (n == 0) return 0;

    int32_t cp;
    int l = decode(s, n, &cp);
    if (l == 0) {                       /* truncated at the end */
        if (!final) return 0;
        g->len = n;
        g->kind = UI_GLYPH_TEXT;
        set_single(g, g_utf8 ? REPLACEMENT : '?', 1);
        return 1;
    }
    if (l < 0) {
        g->len = 1;
        g->kind = UI_GLYPH_TEXT;
        set_single(g, g_utf8 ? REPLACEMENT : '?', 1);
        return 1;
    }
    if (cp == '\n') { g->len = 1; g->kind = UI_GLYPH_NEWLINE; return 1; }
    if (cp == '\r') {
        if (n > 1 && s[1] == '\n') { g->len = 2; g->kind = UI_GLYPH_NEWLINE; }
        else if (n == 1 && !final) return 0;       /* an LF may follow */
        else { g->len = 1; g->kind = UI_GLYPH_EMPTY; }
        return 1;
    }
    if (cp == '\t') {
        g->len = 1; g->kind = UI_GLYPH_SPACE;
        set_single(g, ' ', 4);
        return 1;
    }

    int32_t cps[MAX_CLUSTER];
    int ncp;
    size_t pos = collect_cluster(s, n, (size_t)l, cp, final, cps, &ncp);
    if (!pos) return 0;             /* the cluster may go on in the next bytes */
    g->len = pos;

    if (cp == ' ' && ncp == 1) {
        g->kind = UI_GLYPH_SPACE;
        set_single(g, ' ', 1);
        return 1;
    }
    g->kind = UI_GLYPH_TEXT;
    if (!g_utf8) {
        set_single(g, (cp >= 0x20 && cp < 0x7F) ? (wchar_t)cp : '?', 1);
        return 1;
    }
    cluster_cells(g, cps, ncp);
    if (g->ncells == 0) g->kind = UI_GLYPH_EMPTY;
    return 1;
}

int ui_text_width(const char *s, size_t n)
{
    int w = 0;
    ui_glyph g;
    size_t pos = 0;
    while (ui_glyph_next(s + pos, n - pos, 1, &g)) {
        if (g.kind == UI_GLYPH_TEXT || g.kind == UI_GLYPH_SPACE) w += g.width;
        pos += g.len;
    }
    return w;
}

size_t ui_utf8_complete(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    /* Look back at most 3 bytes for a lead byte whose sequence is cut. */
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        unsigned char b = s[n - back];
        if ((b & 0xC0) == 0x80) continue;          /* continuation */
        int need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
        return (size_t)need > back ? n - back : n;
    }
    return n;
}
