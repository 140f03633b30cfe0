/* helpers.h — what several engine unit tests share (not a test file):
 * scratch folders under /tmp, the fixture tokenizer, also with
 * Kimi-Linear's special names for the im format, and comparing ids with a
 * golden JSON array. Static inline, so a test
 * that does not use one pays nothing. */
#ifndef REMORA_TEST_HELPERS_H
#define REMORA_TEST_HELPERS_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "tests/unit/test.h"
#include "engine.h"
#include "text/tokenizer_int.h"

/* Makes /tmp/remora-TAG-XXXXXX into buf (cap bytes); returns buf or NULL. */
static inline char *scratch_dir(char *buf, size_t cap, const char *tag)
{
    snprintf(buf, cap, "/tmp/remora-%s-XXXXXX", tag);
    return mkdtemp(buf);
}

/* Removes the folder and everything in it. */
static inline void scratch_remove(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {}
}

/* tests/fixtures/tokenizer (K3's special names), or NULL with the reason printed. */
static inline rm_tokenizer *fixture_tokenizer(void)
{
    const char *dir = fixture_path("tokenizer");
    if (!dir) return NULL;
    rm_tokenizer *t = NULL;
    rm_err err = { "" };
    if (rm_tokenizer_open(dir, &t, &err)) fprintf(stderr, "    %s\n", err.msg);
    return t;
}

/* The fixture's ranks with Kimi-Linear's special names (the im format). */
static inline rm_tokenizer *im_tokenizer(void)
{
    const char *p = fixture_path("tokenizer/tiktoken.model");
    if (!p) return NULL;
    size_t len;
    char *model = t_read_file(p, &len);
    if (!model) return NULL;
    static const char cfg[] = "{\"added_tokens_decoder\": {"
        "\"2816\": {\"content\": \"[BOS]\"}, \"2817\": {\"content\": \"[EOS]\"},"
        "\"2818\": {\"content\": \"<|im_end|>\"}, \"2819\": {\"content\": \"<|im_user|>\"},"
        "\"2820\": {\"content\": \"<|im_assistant|>\"}, \"2826\": {\"content\": \"<|im_system|>\"},"
        "\"2833\": {\"content\": \"<|im_middle|>\"}, \"2838\": {\"content\": \"<think>\"},"
        "\"2839\": {\"content\": \"</think>\"}}}";
    rm_tokenizer *t = NULL;
    rm_err err;
    if (tokenizer_load("tiktoken.model", model, len, "im-config", cfg, strlen(cfg), &t, &err))
        fprintf(stderr, "    %s\n", err.msg);
    free(model);
    return t;
}

/* Whether ids[0..n) are the integers of the JSON array want. */
static inline int ids_equal(const int32_t *ids, int n, const json_t *want)
{
    if (n != (int)json_array_size(want)) return 0;
    for (int i = 0; i < n; i++)
        if (ids[i] != json_integer_value(json_array_get(want, (size_t)i))) return 0;
    return 1;
}

#endif
