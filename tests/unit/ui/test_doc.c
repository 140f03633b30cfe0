/* test_doc.c — the streaming document behind a pane (ui/doc.c): appending
 * random text in arbitrary byte chunks (cutting UTF-8 and clusters) keeps
 * every byte and ends with exactly the lines of wrapping the whole text at
 * once; height caps, gaps, finding a line across a rewrap. */
#include <string.h>
#include "tests/unit/test.h"
#include "ui/doc.h"
#include "ui/text.h"
#include "stress_text.h"

TEST(ui_doc_streamed_equals_whole)
{
    stress_setup();
    static char buf[8192];
    for (int iter = 0; iter < 100; iter++) {
        size_t n = stress_text(buf, sizeof buf, 80);
        int width = 4 + (int)stress_rnd(30);
        ui_doc whole, streamed;
        ui_doc_init(&whole, width);
        ui_doc_init(&streamed, width);
        CHECK(ui_doc_add(&whole, 0, "header", 6, 0, 0) == 0);
        CHECK(ui_doc_add(&whole, 1, buf, n, 1, 0) == 1);
        CHECK(ui_doc_finish(&whole) == 0);
        CHECK(ui_doc_add(&streamed, 0, "header", 6, 0, 0) == 0);
        CHECK(ui_doc_add(&streamed, 1, "", 0, 1, 0) == 1);
        for (size_t pos = 0; pos < n;) {
            size_t k = 1 + stress_rnd(7);          /* cuts UTF-8 sequences and clusters */
            if (k > n - pos) k = n - pos;
            CHECK(ui_doc_append(&streamed, buf + pos, k) == 0);
            pos += k;
            /* while streaming, no line may end inside a cut character */
            const ui_line *last = &streamed.lines[streamed.nlines - 1];
            CHECK(ui_utf8_complete(buf, last->end) == last->end);
        }
        CHECK(ui_doc_finish(&streamed) == 0);
        CHECK(streamed.blocks[1].text.len == n && !memcmp(streamed.blocks[1].text.p, buf, n));
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
    stress_setup();
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
    CHECK(ui_doc_set_width(&d, 4) == 0);
    at = ui_doc_find(&d, 2, 10);
    CHECK(d.lines[at].block == 2 && d.lines[at].start == 10);
    ui_doc_clear(&d);
    CHECK(d.nlines == 0 && d.nblocks == 0);
    ui_doc_free(&d);
}
