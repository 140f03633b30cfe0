/* test_ui_wrap.c — line breaking (ui/wrap.c) and the streaming document
 * (ui/doc.c): widths never exceed the line, text is covered in order, and
 * appending in arbitrary byte chunks (cutting UTF-8 and clusters) ends with
 * exactly the lines of wrapping the whole text at once. */
#include <locale.h>
#include <string.h>
#include "tests/unit/test.h"
#include "ui/doc.h"
#include "ui/text.h"
#include "ui/wrap.h"

typedef struct lines { size_t a[4096], b[4096]; int w[4096]; int n; } lines;

static void collect(void *ud, size_t a, size_t b, int w)
{
    lines *l = ud;
    if (l->n < 4096) { l->a[l->n] = a; l->b[l->n] = b; l->w[l->n] = w; l->n++; }
}

static lines wrap(const char *s, int width, int mode)
{
    static lines l;
    memset(&l, 0, sizeof l);
    ui_wrap(s, 0, strlen(s), width, mode, 1, collect, &l);
    return l;
}

static int line_is(const char *s, const lines *l, int i, const char *want)
{
    return i < l->n && l->b[i] - l->a[i] == strlen(want) && !memcmp(s + l->a[i], want, strlen(want));
}

static void setup(void)
{
    setlocale(LC_ALL, "C.UTF-8");
    ui_text_set_utf8(1);
}

TEST(ui_wrap_words)
{
    setup();
    const char *s = "hello world foo";
    lines l = wrap(s, 11, UI_WRAP_WORD);
    CHECK(l.n == 2 && line_is(s, &l, 0, "hello world") && line_is(s, &l, 1, "foo"));
    l = wrap(s, 8, UI_WRAP_WORD);
    CHECK(l.n == 3 && line_is(s, &l, 0, "hello ") && line_is(s, &l, 1, "world ") && line_is(s, &l, 2, "foo"));
    s = "abcdefghij";
    l = wrap(s, 4, UI_WRAP_WORD);
    CHECK(l.n == 3 && line_is(s, &l, 0, "abcd") && line_is(s, &l, 2, "ij"));
    s = "a\n\nb\n";
    l = wrap(s, 10, UI_WRAP_WORD);
    CHECK(l.n == 3 && line_is(s, &l, 0, "a") && line_is(s, &l, 1, "") && line_is(s, &l, 2, "b"));
    s = "ab cd";
    l = wrap(s, 3, UI_WRAP_CHAR);
    CHECK(l.n == 2 && line_is(s, &l, 0, "ab ") && line_is(s, &l, 1, "cd"));
}

TEST(ui_wrap_wide_glyphs_never_split)
{
    setup();
    const char *s = "中文中文中";
    lines l = wrap(s, 5, UI_WRAP_WORD);
    CHECK(l.n == 3);
    for (int i = 0; i < l.n; i++) CHECK(l.w[i] <= 5 && l.w[i] % 2 == 0);
    CHECK(line_is(s, &l, 0, "中文") && line_is(s, &l, 2, "中"));
    s = "x😀😀";
    l = wrap(s, 2, UI_WRAP_WORD);
    CHECK(l.n == 3 && line_is(s, &l, 0, "x") && l.w[1] == 2);
}

/* Text made of pieces that stress wrapping and decoding. */
static const char *pieces[] = {
    "word ", "longerword ", "中文", "日本語 ", "😀", "🧑‍🌾 ", "🇬🇧", "e\xcc\x81", "❤️ ", "\n", "  ",
    "supercalifragilisticexpialidocious ", "a", "\xe2\x80\x8b", "\t", "한국어 ",
};

static uint64_t rng = 88172645463325252ull;
static unsigned rnd(unsigned n) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (unsigned)(rng % n); }

static size_t make_text(char *buf, size_t cap, int npieces)
{
    size_t n = 0;
    for (int i = 0; i < npieces; i++) {
        const char *p = pieces[rnd(sizeof pieces / sizeof *pieces)];
        size_t k = strlen(p);
        if (n + k + 1 > cap) break;
        memcpy(buf + n, p, k);
        n += k;
    }
    buf[n] = 0;
    return n;
}

TEST(ui_wrap_property_random_text)
{
    setup();
    static char buf[8192];
    for (int iter = 0; iter < 200; iter++) {
        size_t n = make_text(buf, sizeof buf, 60);
        int width = 1 + (int)rnd(40);
        lines l = wrap(buf, width, iter % 2 ? UI_WRAP_CHAR : UI_WRAP_WORD);
        size_t prev = 0;
        for (int i = 0; i < l.n; i++) {
            /* never wider than the line, unless one glyph alone is wider */
            int w = ui_text_width(buf + l.a[i], l.b[i] - l.a[i]);
            CHECKF(w == l.w[i], "measured %d, wrap said %d", w, l.w[i]);
            int visible = 0;
            ui_glyph g;
            for (size_t k = l.a[i]; k < l.b[i] && ui_glyph_next(buf + k, l.b[i] - k, 1, &g); k += g.len)
                visible += g.width > 0;
            CHECKF(l.w[i] <= width || visible == 1, "line %d width %d > %d", i, l.w[i], width);
            /* in order; what lies between lines is blanks or one newline */
            CHECK(l.a[i] >= prev && l.b[i] >= l.a[i]);
            for (size_t k = prev; k < l.a[i]; k++) CHECK(buf[k] == ' ' || buf[k] == '\n' || buf[k] == '\t');
            prev = l.b[i];
        }
        for (size_t k = prev; k < n; k++) CHECK(buf[k] == ' ' || buf[k] == '\n' || buf[k] == '\t');
    }
}

TEST(ui_doc_streamed_equals_whole)
{
    setup();
    static char buf[8192];
    for (int iter = 0; iter < 100; iter++) {
        size_t n = make_text(buf, sizeof buf, 80);
        int width = 4 + (int)rnd(30);
        ui_doc whole, streamed;
        ui_doc_init(&whole, width);
        ui_doc_init(&streamed, width);
        ui_doc_add(&whole, 0, "header", 6, 0, 0);
        ui_doc_add(&whole, 1, buf, n, 1, 0);
        ui_doc_finish(&whole);
        ui_doc_add(&streamed, 0, "header", 6, 0, 0);
        ui_doc_add(&streamed, 1, "", 0, 1, 0);
        for (size_t pos = 0; pos < n;) {
            size_t k = 1 + rnd(7);          /* cuts UTF-8 sequences and clusters */
            if (k > n - pos) k = n - pos;
            ui_doc_append(&streamed, buf + pos, k);
            pos += k;
            /* while streaming, no line may end inside a cut character */
            const ui_line *last = &streamed.lines[streamed.nlines - 1];
            CHECK(ui_utf8_complete(buf, last->end) == last->end);
        }
        ui_doc_finish(&streamed);
        REQUIRE(whole.nlines == streamed.nlines);
        for (int i = 0; i < whole.nlines; i++) {
            CHECK(whole.lines[i].start == streamed.lines[i].start);
            CHECK(whole.lines[i].end == streamed.lines[i].end);
            CHECK(whole.lines[i].width == streamed.lines[i].width);
        }
        ui_doc_free(&whole);
        ui_doc_free(&streamed);
    }
}

TEST(ui_doc_cap_gap_and_find)
{
    setup();
    ui_doc d;
    ui_doc_init(&d, 10);
    ui_doc_add(&d, 0, "first", 5, 1, 0);           /* no gap before the first block */
    CHECK(d.nlines == 1);
    ui_doc_add(&d, 0, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10", 20, 1, 4);
    CHECK(d.nlines == 1 + 1 + 4);                  /* gap + 3 lines + "more" */
    CHECK(d.lines[1].kind == UI_LINE_GAP);
    CHECK(d.lines[5].kind == UI_LINE_MORE && d.lines[5].end == 7);
    ui_doc_add(&d, 0, "aaaa bbbb cccc dddd", 19, 0, 0);
    int at = ui_doc_find(&d, 2, 10);               /* the line showing "cccc" */
    CHECK(d.lines[at].block == 2 && d.lines[at].start == 10);
    ui_doc_set_width(&d, 4);
    at = ui_doc_find(&d, 2, 10);
    CHECK(d.lines[at].block == 2 && d.lines[at].start == 10);
    ui_doc_clear(&d);
    CHECK(d.nlines == 0 && d.nblocks == 0);
    ui_doc_free(&d);
}
