/* test_osc52.c — the clipboard escape (ui/osc52.c): RFC 4648 base64 with
 * padding inside ESC ] 52 ; c ; ... BEL. */
#include <string.h>
#include "tests/unit/test.h"
#include "ui/osc52.h"

TEST(ui_osc52_base64)
{
    static const struct { const char *in, *out; } cases[] = {
        { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
        { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" }, { "444", "NDQ0" }, { "\xe6\xbc\xa2", "5ryi" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rm_buf b = { 0 };
        CHECK(ui_osc52(cases[i].in, strlen(cases[i].in), &b) == 0);
        char want[64];
        snprintf(want, sizeof want, "\033]52;c;%s\a", cases[i].out);
        CHECKF(b.len == strlen(want) && !memcmp(b.p, want, b.len), "%s", cases[i].in);
        rm_buf_free(&b);
    }
}
