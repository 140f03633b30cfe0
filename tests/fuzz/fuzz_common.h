/* fuzz_common.h — shared by the libFuzzer targets in tests/fuzz: opening the
 * fixture tokenizer (from $REMORA_FIXTURES or tests/fixtures) and a
 * tokenizer with the same ranks and Kimi-Linear's special names, and
 * checking that bytes are valid UTF-8. A failed check aborts, which
 * libFuzzer reports as a crash with the input that caused it. */
#ifndef REMORA_FUZZ_COMMON_H
#define REMORA_FUZZ_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include "engine.h"
#include "text/tokenizer_int.h"

static char *fuzz_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "fuzz: cannot open %s (set REMORA_FIXTURES)\n", path); abort(); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) abort();
    fclose(f);
    *len = (size_t)n;
    return p;
}

/* im = 0: the fixture tokenizer (K3 names); im = 1: Kimi-Linear names. */
static rm_tokenizer *fuzz_tokenizer(int im)
{
    const char *root = getenv("REMORA_FIXTURES");
    char mpath[4096], cpath[4096];
    snprintf(mpath, sizeof mpath, "%s/tokenizer/tiktoken.model", root ? root : "tests/fixtures");
    snprintf(cpath, sizeof cpath, "%s/tokenizer/tokenizer_config.json", root ? root : "tests/fixtures");
    static const char im_cfg[] = "{\"added_tokens_decoder\": {"
        "\"2817\": {\"content\": \"[EOS]\"}, \"2818\": {\"content\": \"<|im_end|>\"},"
        "\"2819\": {\"content\": \"<|im_user|>\"}, \"2820\": {\"content\": \"<|im_assistant|>\"},"
        "\"2826\": {\"content\": \"<|im_system|>\"}, \"2833\": {\"content\": \"<|im_middle|>\"},"
        "\"2838\": {\"content\": \"<think>\"}, \"2839\": {\"content\": \"</think>\"}}}";
    size_t mlen, clen;
    char *m = fuzz_read(mpath, &mlen), *c = im ? NULL : fuzz_read(cpath, &clen);
    rm_tokenizer *t;
    rm_err err;
    if (tokenizer_load(mpath, m, mlen, cpath, im ? im_cfg : c, im ? strlen(im_cfg) : clen, &t, &err)) {
        fprintf(stderr, "fuzz: %s\n", err.msg);
        abort();
    }
    free(m);
    free(c);
    return t;
}

static void check_utf8(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        utf8proc_int32_t c;
        utf8proc_ssize_t l = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &c);
        if (l <= 0) { fprintf(stderr, "fuzz: invalid UTF-8 in output\n"); abort(); }
        i += (size_t)l;
    }
}
#endif
