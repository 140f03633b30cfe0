/* fuzz_encode.c — libFuzzer target for encoding: any bytes (invalid UTF-8
 * included) must encode without error, the ids of a plain encoding must
 * decode back to exactly the input, both merge paths (linear scan and heap)
 * must agree, allow_special must only add known special ids, and the input
 * as a user message must render in both chat formats. */
#include "fuzz_common.h"

static rm_tokenizer *tok, *tok_heap, *tok_im;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    tok = fuzz_tokenizer(0);
    tok_heap = fuzz_tokenizer(0);
    tokenizer_force_heap(tok_heap, 1);
    tok_im = fuzz_tokenizer(1);
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const char *s = (const char *)data;
    int32_t *a, *b, *c;
    int na = rm_tokenizer_encode(tok, s, size, 0, &a, NULL);
    int nb = rm_tokenizer_encode(tok_heap, s, size, 0, &b, NULL);
    int nc = rm_tokenizer_encode(tok, s, size, 1, &c, NULL);
    if (na < 0 || nb < 0 || nc < 0) abort();
    if (na != nb || memcmp(a, b, (size_t)na * sizeof *a)) abort();
    size_t o = 0;
    for (int i = 0; i < na; i++) {
        size_t l;
        const char *p = rm_tokenizer_token_bytes(tok, a[i], &l);
        if (!p || a[i] >= tokenizer_ranks(tok) || o + l > size || memcmp(p, s + o, l)) abort();
        o += l;
    }
    if (o != size) abort();
    for (int i = 0; i < nc; i++) {
        size_t l;
        if (!rm_tokenizer_token_bytes(tok, c[i], &l)) abort();
    }
    free(a); free(b); free(c);

    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    rm_chat_msg m[2] = { { "user", text, NULL, text }, { "assistant", text, text, NULL } };
    rm_chat_opts opt = { .thinking = size & 1, .add_generation_prompt = 1 };
    int32_t *ids;
    for (int f = 0; f < 2; f++) {
        int n = rm_chat_render(f ? tok_im : tok, f ? RM_CHAT_IM : RM_CHAT_XTML, m, 2, &opt, &ids, NULL);
        if (n <= 0) abort();
        free(ids);
    }
    free(text);
    return 0;
}
