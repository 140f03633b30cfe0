/* utf8.c — assembling streamed token bytes into UTF-8 text
 * (rm_utf8_stream_feed in engine.h). A token may end inside a character, so
 * an incomplete tail is held until its continuation bytes arrive; invalid
 * sequences become U+FFFD, one per maximal invalid subpart, which is what
 * Python's bytes.decode(errors="replace") gives for the same bytes.
 * rm_text_safe makes text from the network or a file safe for a terminal. */
#include <stdio.h>
#include <string.h>
#include "engine.h"

/* Length of the valid UTF-8 prefix of a character starting with p[0]
 * (n bytes available): returns the full length when the character is
 * complete and valid, 0 when the bytes so far are a valid but incomplete
 * start, or -k when the first k bytes form a maximal invalid subpart. */
static int utf8_check(const unsigned char *p, size_t n)
{
    unsigned b0 = p[0];
    int need;
    unsigned lo = 0x80, hi = 0xBF;
    if (b0 < 0x80) return 1;
    if (b0 >= 0xC2 && b0 <= 0xDF) need = 2;
    else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 3;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 4;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;
    } else return -1;
    for (int i = 1; i < need; i++) {
        if ((size_t)i >= n) return 0;
        unsigned b = p[i];
        if (i == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) return -i;
    }
    return need;
}

size_t rm_utf8_stream_feed(rm_utf8_stream *s, const char *in, size_t len,
                           char *out, size_t cap, int flush)
{
    static const char repl[3] = { (char)0xEF, (char)0xBF, (char)0xBD };
    size_t o = 0, i = 0;
    /* finish a pending character first, one input byte at a time */
    while (s->npend > 0) {
        int r = utf8_check(s->pend, (size_t)s->npend);
        if (r == 0 && i < len && s->npend < 4) { s->pend[s->npend++] = (unsigned char)in[i++]; continue; }
        if (r == 0 && !flush) return o;             /* still incomplete: wait */
        if (r > 0) {
            if (o + (size_t)r > cap) return o;
            memcpy(out + o, s->pend, (size_t)r);
            o += (size_t)r;
        } else {
            if (r == 0) r = -s->npend;              /* flushing an incomplete tail */
            if (o + 3 > cap) return o;
            memcpy(out + o, repl, 3);
            o += 3;
        }
        /* bytes after the consumed part go back to the input side */
        int used = r > 0 ? r : -r, rest = s->npend - used;
        memmove(s->pend, s->pend + used, (size_t)rest);
        s->npend = rest;
        if (rest) {
            /* re-examine leftovers as a fresh start; they are at most 3 bytes */
            continue;
        }
    }
    while (i < len) {
        const unsigned char *p = (const unsigned char *)in + i;
        int r = utf8_check(p, len - i);
        if (r == 0) {
            if (flush) {
                if (o + 3 > cap) break;
                memcpy(out + o, repl, 3);
                o += 3;
                i = len;
                break;
            }
            s->npend = (int)(len - i);
            memcpy(s->pend, p, (size_t)s->npend);
            i = len;
            break;
        }
        if (r > 0) {
            if (o + (size_t)r > cap) break;
            memcpy(out + o, p, (size_t)r);
            o += (size_t)r;
            i += (size_t)r;
        } else {
            if (o + 3 > cap) break;
            memcpy(out + o, repl, 3);
            o += 3;
            i += (size_t)-r;
        }
    }
    return o;
}

/* Terminal-safe text (rm_text_safe in engine.h). Escapes are ASCII, so the
 * result can never form a control sequence, whatever the text around it. */
int rm_text_safe(rm_buf *out, const char *in, size_t len, unsigned flags)
{
    static const char repl[3] = { (char)0xEF, (char)0xBF, (char)0xBD };
    const unsigned char *p = (const unsigned char *)in;
    for (size_t i = 0; i < len;) {
        unsigned b = p[i];
        int r = utf8_check(p + i, len - i);
        char esc[8];
        if (r == 1 && b >= 0x20 && b != 0x7f) { if (rm_buf_add(out, p + i, 1)) return -1; i++; continue; }
        if (r == 1) {
            int keep = (flags & RM_SAFE_LINES) && (b == '\n' || b == '\t');
            if (b == '\r' && i + 1 < len && p[i + 1] == '\n' && (flags & RM_SAFE_LINES)) { i++; continue; }
            if (keep) { if (rm_buf_add(out, p + i, 1)) return -1; }
            else {
                if (b == '\n') snprintf(esc, sizeof esc, "\\n");
                else if (b == '\r') snprintf(esc, sizeof esc, "\\r");
                else if (b == '\t') snprintf(esc, sizeof esc, "\\t");
                else snprintf(esc, sizeof esc, "\\x%02x", b);
                if (rm_buf_adds(out, esc)) return -1;
            }
            i++;
            continue;
        }
        if (r == 2 && b == 0xC2 && p[i + 1] < 0xA0) {       /* a C1 control, U+0080..U+009F */
            snprintf(esc, sizeof esc, "\\u%04x", p[i + 1]);
            if (rm_buf_adds(out, esc)) return -1;
            i += 2;
            continue;
        }
        if (r > 1) { if (rm_buf_add(out, p + i, (size_t)r)) return -1; i += (size_t)r; continue; }
        if (rm_buf_add(out, repl, 3)) return -1;            /* invalid, or cut at the end */
        i += r < 0 ? (size_t)-r : len - i;
    }
    return 0;
}
