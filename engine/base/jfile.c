/* jfile.c — JSON documents with their failures told apart (jfile.h). */
#include <stdlib.h>
#include "base/jfile.h"
#include "base/file.h"

json_t *jfile_parse(const char *text, size_t len, const char *name, rm_err *err)
{
    json_error_t je;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (j) return j;
    /* jansson reports an allocation that fails before parsing starts with
     * no text at line -1 rather than json_error_out_of_memory */
    if (json_error_code(&je) == json_error_out_of_memory || !je.text[0])
        rm_errf_runtime(err, "%s: out of memory reading %zu bytes of JSON", name, len);
    else
        rm_errf_input(err, "%s: not valid JSON: %s (line %d, column %d)", name, je.text, je.line, je.column);
    return NULL;
}

json_t *jfile_read(const char *path, size_t max, rm_err *err)
{
    size_t len = 0;
    char *text = file_read(path, max, &len, err);
    if (!text) return NULL;
    json_t *j = jfile_parse(text, len, path, err);
    free(text);
    return j;
}
