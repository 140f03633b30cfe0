/* osc52.c — the OSC 52 clipboard escape (see osc52.h). Standard base64
 * with padding (RFC 4648), which is what terminals decode. */
#include "osc52.h"

int ui_osc52(const char *text, size_t len, rm_buf *out)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = (const unsigned char *)text;
    if (rm_buf_adds(out, "\033]52;c;")) return -1;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < len ? (unsigned)s[i + 1] << 8 : 0) |
                     (i + 2 < len ? s[i + 2] : 0);
        char q[4] = { b64[v >> 18 & 63], b64[v >> 12 & 63], i + 1 < len ? b64[v >> 6 & 63] : '=',
                      i + 2 < len ? b64[v & 63] : '=' };
        if (rm_buf_add(out, q, 4)) return -1;
    }
    return rm_buf_adds(out, "\a");
}
