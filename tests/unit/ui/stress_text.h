/* stress_text.h — random text for the wrapping and document tests: pieces
 * that stress line breaking and decoding (CJK, emoji with ZWJ and flags,
 * combining marks, variation selectors, zero-width spaces, tabs, newlines,
 * a word longer than any line), drawn by a fixed xorshift sequence; and the
 * locale they are measured in. */
#ifndef REMORA_TEST_STRESS_TEXT_H
#define REMORA_TEST_STRESS_TEXT_H
#include <locale.h>
#include <stdint.h>
#include <string.h>
#include "ui/text.h"

/* A UTF-8 locale and UTF-8 drawing, which the widths in these tests assume. */
static inline void stress_setup(void)
{
    setlocale(LC_ALL, "C.UTF-8");
    ui_text_set_utf8(1);
}

static const char *const stress_pieces[] = {
    "word ", "longerword ", "中文", "日本語 ", "😀", "🧑‍🌾 ", "🇬🇧", "e\xcc\x81", "❤️ ", "\n", "  ",
    "supercalifragilisticexpialidocious ", "a", "\xe2\x80\x8b", "\t", "한국어 ",
};

static uint64_t stress_rng = 88172645463325252ull;

static inline unsigned stress_rnd(unsigned n)
{
    stress_rng ^= stress_rng << 13;
    stress_rng ^= stress_rng >> 7;
    stress_rng ^= stress_rng << 17;
    return (unsigned)(stress_rng % n);
}

/* Fills buf with up to npieces random pieces (NUL-terminated); returns the
 * length. */
static inline size_t stress_text(char *buf, size_t cap, int npieces)
{
    size_t n = 0;
    for (int i = 0; i < npieces; i++) {
        const char *p = stress_pieces[stress_rnd(sizeof stress_pieces / sizeof *stress_pieces)];
        size_t k = strlen(p);
        if (n + k + 1 > cap) break;
        memcpy(buf + n, p, k);
        n += k;
    }
    buf[n] = 0;
    return n;
}

#endif
