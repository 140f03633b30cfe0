/* pyjson.c — text exactly as Python writes it, for the chat templates
 * (pyjson.h): json.dumps with Python's separators, key order and escapes
 * (ensure_ascii=False), float repr, str() of scalars, truthiness and
 * str.isspace(), written into a growing buffer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include "text/pyjson.h"

/* ---- the buffer ---------------------------------------------------------- */

void py_add(py_buf *b, const char *s, size_t n)
{
    if (!b->oom && rm_buf_add(&b->b, s, n)) b->oom = 1;
}
void py_puts(py_buf *b, const char *s) { py_add(b, s, strlen(s)); }
void py_clear(py_buf *b) { rm_buf_reset(&b->b); }
void py_free(py_buf *b) { rm_buf_free(&b->b); }

/* ---- Python-compatible JSON text ----------------------------------------- */

/* repr() of a float: the shortest digits that read back to x, in fixed
 * notation when the decimal exponent is in [-4, 16), else d.ddde±XX. */
static void py_float(py_buf *b, double x)
{
    if (isnan(x)) { py_puts(b, "NaN"); return; }
    if (isinf(x)) { py_puts(b, x < 0 ? "-Infinity" : "Infinity"); return; }
    if (x == 0) { py_puts(b, signbit(x) ? "-0.0" : "0.0"); return; }
    char e[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, x);
        if (strtod(e, NULL) == x) break;
    }
    const char *p = e;
    if (*p == '-') { py_puts(b, "-"); p++; }
    char dig[24];
    int nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.') dig[nd++] = *p;
    while (nd > 1 && dig[nd - 1] == '0') nd--;
    int decpt = atoi(p + 1) + 1;
    char out[64];
    int o = 0;
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            out[o++] = '0'; out[o++] = '.';
            for (int i = 0; i < -decpt; i++) out[o++] = '0';
            for (int i = 0; i < nd; i++) out[o++] = dig[i];
        } else if (decpt >= nd) {
            for (int i = 0; i < nd; i++) out[o++] = dig[i];
            for (int i = nd; i < decpt; i++) out[o++] = '0';
            out[o++] = '.'; out[o++] = '0';
        } else {
            for (int i = 0; i < nd; i++) {
                if (i == decpt) out[o++] = '.';
                out[o++] = dig[i];
            }
        }
        out[o] = 0;
    } else {
        out[o++] = dig[0];
        if (nd > 1) {
            out[o++] = '.';
            for (int i = 1; i < nd; i++) out[o++] = dig[i];
        }
        snprintf(out + o, sizeof out - (size_t)o, "e%c%02d", decpt - 1 < 0 ? '-' : '+', abs(decpt - 1));
    }
    py_puts(b, out);
}

/* A JSON string as json.dumps(ensure_ascii=False) writes it. */
static void py_json_string(py_buf *b, const char *s, size_t n)
{
    py_add(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char u[8];
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c < 0x20) { snprintf(u, sizeof u, "\\u%04x", c); esc = u; }
        }
        if (!esc) continue;
        py_add(b, s + run, i - run);
        py_puts(b, esc);
        run = i + 1;
    }
    py_add(b, s + run, n - run);
    py_add(b, "\"", 1);
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* json.dumps(v, ensure_ascii=False) with compact separators (",", ":") or the
 * default ones (", ", ": "), keys sorted (deep_sort_dict) or in their order. */
void py_json(py_buf *b, const json_t *v, int compact, int sorted)
{
    switch (json_typeof(v)) {
    case JSON_NULL: py_puts(b, "null"); break;
    case JSON_TRUE: py_puts(b, "true"); break;
    case JSON_FALSE: py_puts(b, "false"); break;
    case JSON_INTEGER: {
        char n[32];
        snprintf(n, sizeof n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        py_puts(b, n);
        break;
    }
    case JSON_REAL: py_float(b, json_real_value(v)); break;
    case JSON_STRING: py_json_string(b, json_string_value(v), json_string_length(v)); break;
    case JSON_ARRAY: {
        py_add(b, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i) py_puts(b, compact ? "," : ", ");
            py_json(b, json_array_get(v, i), compact, sorted);
        }
        py_add(b, "]", 1);
        break;
    }
    case JSON_OBJECT: {
        size_t n = json_object_size(v), k = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        if (!keys) { b->oom = 1; return; }
        const char *key;
        json_t *item;
        json_object_foreach((json_t *)v, key, item) keys[k++] = key;
        if (sorted) qsort(keys, n, sizeof *keys, key_cmp);
        py_add(b, "{", 1);
        for (size_t i = 0; i < n; i++) {
            if (i) py_puts(b, compact ? "," : ", ");
            py_json_string(b, keys[i], strlen(keys[i]));
            py_puts(b, compact ? ":" : ": ");
            py_json(b, json_object_get(v, keys[i]), compact, sorted);
        }
        py_add(b, "}", 1);
        free(keys);
        break;
    }
    }
}

/* str(v) for a JSON scalar, as Python prints the decoded value. Containers
 * return -1 (Python would print their repr, which no chat format uses). */
int py_str(py_buf *b, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING: py_add(b, json_string_value(v), json_string_length(v)); return 0;
    case JSON_NULL: py_puts(b, "None"); return 0;
    case JSON_TRUE: py_puts(b, "True"); return 0;
    case JSON_FALSE: py_puts(b, "False"); return 0;
    case JSON_INTEGER: case JSON_REAL: py_json(b, v, 1, 0); return 0;
    default: return -1;
    }
}

/* Python truthiness of an optional JSON value. */
int py_truthy(const json_t *v)
{
    if (!v) return 0;
    switch (json_typeof(v)) {
    case JSON_NULL: case JSON_FALSE: return 0;
    case JSON_TRUE: return 1;
    case JSON_INTEGER: return json_integer_value(v) != 0;
    case JSON_REAL: return json_real_value(v) != 0;
    case JSON_STRING: return json_string_length(v) != 0;
    case JSON_ARRAY: return json_array_size(v) != 0;
    case JSON_OBJECT: return json_object_size(v) != 0;
    }
    return 0;
}

/* Whether s holds anything but Python str.isspace() characters (White_Space
 * plus the separators U+001C..U+001F): str(x).strip() is non-empty. */
int py_nonblank(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        utf8proc_int32_t c;
        utf8proc_ssize_t l = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &c);
        if (l <= 0) return 1;
        const utf8proc_property_t *pr = utf8proc_get_property(c);
        int space = pr->category == UTF8PROC_CATEGORY_ZS || pr->bidi_class == UTF8PROC_BIDI_CLASS_WS ||
                    pr->bidi_class == UTF8PROC_BIDI_CLASS_B || pr->bidi_class == UTF8PROC_BIDI_CLASS_S;
        if (!space) return 1;
        i += (size_t)l;
    }
    return 0;
}

/* Python's dict.get(key, default) on a value that may not be an object. */
json_t *py_get(const json_t *o, const char *key)
{
    return json_is_object(o) ? json_object_get(o, key) : NULL;
}
