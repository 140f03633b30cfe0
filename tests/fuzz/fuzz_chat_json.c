/* fuzz_chat_json.c — libFuzzer target for a JSON conversation rendered to
 * ids (text/template.c, rm_chat_render_json, the input of `remora tokenize
 * --chat`). The first byte picks the format (XTML or im). A conversation
 * fails with a message, or gives ids that are all inside the tokenizer's
 * range. */
#include "fuzz_common.h"

static rm_tokenizer *tok, *tok_im;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    tok = fuzz_tokenizer(0);
    tok_im = fuzz_tokenizer(1);
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1) return 0;
    int im = data[0] & 1;
    const rm_tokenizer *t = im ? tok_im : tok;
    int32_t *ids = NULL;
    rm_err err = { "" };
    int n = rm_chat_render_json(t, im ? RM_CHAT_IM : RM_CHAT_XTML, (const char *)data + 1, size - 1, &ids, &err);
    if (n < 0) {
        if (!err.msg[0] || ids) abort();
        return 0;
    }
    for (int i = 0; i < n; i++) {
        size_t l;
        if (!rm_tokenizer_token_bytes(t, ids[i], &l)) abort();
    }
    free(ids);
    return 0;
}
