/* test_wrap.c — line breaking (ui/wrap.c): words and wide glyphs, and on
 * random text widths never exceed the line and text is covered in order. */
#include <string.h>
#include "tests/unit/test.h"
#include "ui/text.h"
#include "ui/wrap.h"
#include "stress_text.h"

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

TEST(ui_wrap_words)
{
    stress_setup();
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
    stress_setup();
    const char *s = "中文中文中";
    lines l = wrap(s, 5, UI_WRAP_WORD);
    CHECK(l.n == 3);
    for (int i = 0; i < l.n; i++) CHECK(l.w[i] <= 5 && l.w[i] % 2 == 0);
    CHECK(line_is(s, &l, 0, "中文") && line_is(s, &l, 2, "中"));
    s = "x😀😀";
    l = wrap(s, 2, UI_WRAP_WORD);
    CHECK(l.n == 3 && line_is(s, &l, 0, "x") && l.w[1] == 2);
}

TEST(ui_wrap_property_random_text)
{
    stress_setup();
    static char buf[8192];
    for (int iter = 0; iter < 200; iter++) {
        size_t n = stress_text(buf, sizeof buf, 60);
        int width = 1 + (int)stress_rnd(40);
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
