/* fuzz_tiktoken.c — libFuzzer target for the tokenizer file reader. The
 * input is a tiktoken.model, optionally followed by a NUL byte and a
 * tokenizer_config.json. Loading must either fail with a message or give a
 * tokenizer that encodes and decodes a sample text (and the model text
 * itself) consistently. */
#include "fuzz_common.h"

static void round_trip(const rm_tokenizer *t, const char *s, size_t n)
{
    int32_t *ids;
    rm_err err;
    int k = rm_tokenizer_encode(t, s, n, 0, &ids, &err);
    if (k < 0) abort();
    size_t o = 0;
    for (int i = 0; i < k; i++) {
        size_t l;
        const char *p = rm_tokenizer_token_bytes(t, ids[i], &l);
        if (!p || o + l > n || memcmp(p, s + o, l)) abort();
        o += l;
    }
    if (o != n) abort();
    free(ids);
    if ((k = rm_tokenizer_encode(t, s, n, 1, &ids, &err)) < 0) abort();
    free(ids);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const char *s = (const char *)data;
    const char *nul = memchr(s, 0, size);
    size_t mlen = nul ? (size_t)(nul - s) : size;
    rm_tokenizer *t;
    rm_err err = { "" };
    if (tokenizer_load("tiktoken.model", s, mlen, "tokenizer_config.json",
                          nul ? nul + 1 : NULL, nul ? size - mlen - 1 : 0, &t, &err)) {
        if (!err.msg[0]) abort();                 /* a failure always says why */
        return 0;
    }
    static const char sample[] = "Hello, world! It's 2025: 你好 <|open|> [EOS] \xff\n\n  x";
    round_trip(t, sample, sizeof sample - 1);
    round_trip(t, s, mlen);
    rm_tokenizer_special_id(t, "[EOS]");
    rm_tokenizer_free(t);
    return 0;
}
