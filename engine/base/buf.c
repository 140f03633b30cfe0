/* buf.c — the growable buffer and array growth every module uses (engine.h:
 * rm_buf, rm_grow). A grower that drops data on out-of-memory makes a
 * transcript or a pasted message silently shorter, so both return -1 and
 * leave what they had untouched; callers check every call (the functions
 * are warn_unused_result). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"

int rm_buf_reserve(rm_buf *b, size_t n)
{
    if (n > SIZE_MAX - b->len - 1) return -1;
    size_t need = b->len + n + 1;
    if (b->max && need - 1 > b->max) return -1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    if (!b->p) p[0] = 0;
    b->p = p;
    b->cap = cap;
    return 0;
}

int rm_buf_add(rm_buf *b, const void *data, size_t n)
{
    if (rm_buf_reserve(b, n)) return -1;
    if (n) memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

int rm_buf_adds(rm_buf *b, const char *s) { return rm_buf_add(b, s, strlen(s)); }

int rm_buf_addf(rm_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || rm_buf_reserve(b, (size_t)n)) return -1;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void rm_buf_reset(rm_buf *b)
{
    b->len = 0;
    if (b->p) b->p[0] = 0;
}

void rm_buf_free(rm_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

char *rm_buf_take(rm_buf *b, size_t *len)
{
    char *p = b->p ? b->p : calloc(1, 1);
    if (len) *len = p ? b->len : 0;
    b->p = NULL;
    b->len = b->cap = 0;
    return p;
}

int rm_grow(void **p, int *cap, int need, size_t size)
{
    if (need <= *cap) return 0;
    if (need < 0 || size == 0) return -1;
    size_t c = *cap > 0 ? (size_t)*cap : 8;
    while (c < (size_t)need) c *= 2;
    if (c > INT32_MAX) c = (size_t)need;
    if (c > SIZE_MAX / size) return -1;
    void *n = realloc(*p, c * size);
    if (!n) return -1;
    *p = n;
    *cap = (int)c;
    return 0;
}
