/* test_jfile.c — base/jfile.c: malformed JSON is bad input naming the
 * file, line and column; running out of memory while parsing (jansson's
 * allocator made to fail, as under `ulimit -v`) says so and is a runtime
 * failure, never "not valid JSON". */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "tests/unit/test.h"
#include "engine.h"
#include "base/jfile.h"

static void *no_memory(size_t n) { (void)n; return NULL; }

TEST(jfile_tells_bad_json_from_out_of_memory)
{
    rm_err err = { "" };
    json_t *j = jfile_parse("{\"a\": 1,", 8, "x.json", &err);
    CHECKF(!j && strstr(err.msg, "x.json: not valid JSON") && strstr(err.msg, "line 1") && err.kind == RM_ERR_INPUT,
           "%s", err.msg);
    err = (rm_err){ "" };
    CHECK(!jfile_parse("{\"a\": 1, \"a\": 2}", 16, "x.json", &err) && err.kind == RM_ERR_INPUT);
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    json_set_alloc_funcs(no_memory, f);
    err = (rm_err){ "" };
    j = jfile_parse("{\"weight_map\": {\"a\": \"b\"}}", 26, "index.json", &err);
    json_set_alloc_funcs(m, f);
    CHECKF(!j && strstr(err.msg, "index.json: out of memory") && err.kind == RM_ERR_RUNTIME, "%s", err.msg);
    err = (rm_err){ "" };
    CHECK(!jfile_read("/nonexistent/remora.json", 100, &err) && strstr(err.msg, "cannot open"));
}
