/* pyjson.h — Python-compatible text for the chat templates (template.c):
 * the renderers reproduce byte for byte what encoding_k3.py and the im
 * template produce with json.dumps() and str(), so these helpers follow
 * CPython's rules (separators, key order, string escapes with
 * ensure_ascii=False, float repr). Text goes into a py_buf: an rm_buf
 * whose failure is sticky, so a renderer can write many pieces and check
 * once: after an add fails (out of memory) every later add does nothing
 * and `oom` stays set; the text is then incomplete and must not be used. */
#ifndef REMORA_PYJSON_H
#define REMORA_PYJSON_H
#include <stddef.h>
#include <jansson.h>
#include "engine.h"

typedef struct py_buf { rm_buf b; int oom; } py_buf;

void py_add(py_buf *b, const char *s, size_t n);
void py_puts(py_buf *b, const char *s);
void py_clear(py_buf *b);          /* empties it; oom stays */
void py_free(py_buf *b);

/* json.dumps(v, ensure_ascii=False) with compact separators (",", ":") or the
 * default ones (", ", ": "), keys sorted or in their order. */
void py_json(py_buf *b, const json_t *v, int compact, int sorted);
/* str(v) for a JSON scalar; -1 for containers. */
int  py_str(py_buf *b, const json_t *v);
/* Python truthiness of an optional JSON value. */
int  py_truthy(const json_t *v);
/* Whether s holds anything but str.isspace() characters. */
int  py_nonblank(const char *s, size_t n);
/* dict.get(key) on a value that may not be an object. */
json_t *py_get(const json_t *o, const char *key);

#endif
