/* jfile.h — JSON documents from files and answers, with failures told
 * apart: malformed JSON (a nesting bomb included: jansson stops at its
 * parsing depth) is bad input naming the file, line and column; running out
 * of memory is a runtime failure that says so, never "not valid JSON".
 * Duplicate keys are refused. */
#ifndef REMORA_JFILE_H
#define REMORA_JFILE_H
#include <stddef.h>
#include <jansson.h>
#include "engine.h"

/* len bytes of text; name stands for the file or URL in messages. */
json_t *jfile_parse(const char *text, size_t len, const char *name, rm_err *err);
/* A regular file of at most max bytes (base/file.h's file_read). */
json_t *jfile_read(const char *path, size_t max, rm_err *err);

#endif
