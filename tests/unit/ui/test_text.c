/* test_text.c — the glyph decoder of ui/text.c: widths and what is drawn
 * for CJK, emoji (new, ZWJ, flags, VS16), combining marks, controls, invalid
 * and truncated UTF-8, and the ASCII fallback. */
#include <locale.h>
#include <string.h>
#include <utf8proc.h>
#include "tests/unit/test.h"
#include "ui/text.h"

static int utf8_locale(void)
{
    ui_text_set_utf8(1);
    return setlocale(LC_ALL, "C.UTF-8") != NULL;
}

static ui_glyph one(const char *s, int final)
{
    ui_glyph g;
    memset(&g, 0, sizeof g);
    g.kind = -1;
    if (!ui_glyph_next(s, strlen(s), final, &g)) g.kind = -2;
    return g;
}

TEST(ui_text_basic_widths)
{
    REQUIRE(utf8_locale());
    ui_glyph g = one("a", 1);
    CHECK(g.kind == UI_GLYPH_TEXT && g.width == 1 && g.len == 1 && g.cell[0][0] == 'a');
    g = one("中文", 1);
    CHECK(g.kind == UI_GLYPH_TEXT && g.width == 2 && g.len == 3);
    g = one("😀", 1);
    CHECK(g.width == 2 && g.len == 4 && g.cell[0][0] == 0x1F600);
    CHECK(ui_text_width("a中😀", strlen("a中😀")) == 5);
    CHECK(ui_text_width("한국어", strlen("한국어")) == 6);
    g = one(" ", 1);
    CHECK(g.kind == UI_GLYPH_SPACE && g.width == 1);
    g = one("\t", 1);
    CHECK(g.kind == UI_GLYPH_SPACE && g.width == 4);
    g = one("\n", 1);
    CHECK(g.kind == UI_GLYPH_NEWLINE && g.len == 1);
    g = one("\r\n", 1);
    CHECK(g.kind == UI_GLYPH_NEWLINE && g.len == 2);
}

TEST(ui_text_combining_and_emoji_sequences)
{
    REQUIRE(utf8_locale());
    ui_glyph g = one("e\xcc\x81x", 1);             /* e + U+0301 */
    CHECK(g.width == 1 && g.len == 3 && g.ncells == 1);
    CHECK(g.cell[0][0] == 'e' && g.cell[0][1] == 0x301 && g.cell[0][2] == 0);
    /* clusters terminals draw at different widths are one visible marker as
     * wide as their first code point (so streamed text wraps as whole text),
     * never that code point alone (which changes what they say) */
    const char *whole[] = { "🧑‍🌾", "👩‍💻", "👨‍👩‍👧", "👍🏽", "❤️" };
    for (int i = 0; i < 5; i++) {
        g = one(whole[i], 1);
        int w = i < 4 ? 2 : 1;
        CHECKF(g.kind == UI_GLYPH_TEXT && g.len == strlen(whole[i]) && g.width == w && g.ncells == 1 &&
               g.cell[0][0] == (w == 2 ? 0x3013 : 0xFFFD) && g.cell[0][1] == 0, "%s", whole[i]);
        CHECK(ui_text_width(whole[i], strlen(whole[i])) == w);
    }
    g = one("🇬🇧", 1);                             /* flag: two regional indicators */
    CHECK(g.len == 8 && g.width == 2 && g.ncells == 2);
    g = one("🚀\xef\xb8\x8f", 1);                  /* VS16 after a wide emoji changes nothing */
    CHECK(g.len == 7 && g.width == 2 && g.cell[0][0] == 0x1F680 && g.cell[0][1] == 0);
    g = one("🧑\xe2\x80\x8d", 1);                  /* a trailing ZWJ joins nothing */
    CHECK(g.width == 2 && g.cell[0][0] == 0x1F9D1);
    g = one("\xe2\x80\x8b", 1);                    /* zero-width space draws nothing */
    CHECK(g.kind == UI_GLYPH_EMPTY && g.width == 0);
}

TEST(ui_text_disagreeing_widths_become_replacement)
{
    REQUIRE(utf8_locale());
    /* U+1FAE8 (Unicode 15): glibc 2.36 does not know it, utf8proc 2.8 says 2. */
    ui_glyph g = one("\xf0\x9f\xab\xa8", 1);
    int wc = wcwidth(0x1FAE8), wu = utf8proc_charwidth(0x1FAE8);
    if (wc == wu) CHECK(g.width == wc && g.cell[0][0] == 0x1FAE8);
    else CHECK(g.width == 1 && g.cell[0][0] == 0xFFFD);
    g = one("\x01", 1);                            /* control */
    CHECK(g.width == 1 && g.cell[0][0] == 0xFFFD);
    g = one("\x1b[31m", 1);                        /* ESC never reaches the terminal */
    CHECK(g.len == 1 && g.cell[0][0] == 0xFFFD);
}

TEST(ui_text_invalid_and_truncated_utf8)
{
    REQUIRE(utf8_locale());
    ui_glyph g = one("\xff" "a", 1);
    CHECK(g.len == 1 && g.width == 1 && g.cell[0][0] == 0xFFFD);
    g = one("\xc0\xaf", 1);                        /* overlong */
    CHECK(g.len == 1 && g.cell[0][0] == 0xFFFD);
    g = one("\xe4\xb8", 0);                        /* cut 中, more to come */
    CHECK(g.kind == -2);
    g = one("\xe4\xb8", 1);                        /* cut at the end of the stream */
    CHECK(g.len == 2 && g.cell[0][0] == 0xFFFD);
    g = one("e\xcc", 0);                           /* a combining mark may follow */
    CHECK(g.kind == -2);
    g = one("e", 0);
    CHECK(g.kind == UI_GLYPH_TEXT && g.len == 1);
    CHECK(ui_utf8_complete("ab\xe4\xb8", 4) == 2);
    CHECK(ui_utf8_complete("ab\xe4\xb8\xad", 5) == 5);
    CHECK(ui_utf8_complete("\xf0\x9f", 2) == 0);
    CHECK(ui_utf8_complete("\xf0\x9f\x98\x80", 4) == 4);
    CHECK(ui_utf8_complete("abc", 3) == 3);
}

TEST(ui_text_ascii_fallback)
{
    REQUIRE(utf8_locale());
    ui_text_set_utf8(0);
    ui_glyph g = one("中", 1);
    CHECK(g.width == 1 && g.cell[0][0] == '?');
    g = one("e\xcc\x81", 1);
    CHECK(g.width == 1 && g.cell[0][0] == 'e' && g.cell[0][1] == 0);
    ui_text_set_utf8(1);
}
