/* base64.c — strict standard base64 decoding (RFC 4648 section 4, with
 * padding; rm_base64_decode, engine.h): tiktoken.model's tokens and the
 * routed experts SGLang returns are written so. None of the program's
 * libraries exposes a decoder (libcurl's is internal). */
#include "engine.h"

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

long rm_base64_decode(const char *text, size_t n, unsigned char *out)
{
    const unsigned char *in = (const unsigned char *)text;
    if (n == 0 || n % 4) return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4], pad = 0;
        for (int j = 0; j < 4; j++) {
            if (in[i + j] == '=' && i + 4 == n && j >= 2) { v[j] = 0; pad++; continue; }
            if (pad) return -1;
            if ((v[j] = b64_value(in[i + j])) < 0) return -1;
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        out[o++] = (unsigned char)(w >> 16);
        if (pad < 2) out[o++] = (unsigned char)(w >> 8);
        if (pad < 1) out[o++] = (unsigned char)w;
    }
    return (long)o;
}
