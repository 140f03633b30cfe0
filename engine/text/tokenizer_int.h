/* tokenizer_int.h — engine-internal parts of the tokenizer that are not in
 * the public header: building one from bytes in memory (what the file opener
 * uses, and what the fuzz target of the tiktoken reader drives) and asking
 * whether an id is a special token (what the chat-stream splitter needs).
 */
#ifndef REMORA_TOKENIZER_INT_H
#define REMORA_TOKENIZER_INT_H
#include "engine.h"

/* Builds a tokenizer from the bytes of a tiktoken.model file and, if cfg is
 * non-NULL, of a tokenizer_config.json. The names are used in error messages
 * only. */
int tokenizer_load(const char *model_name, const char *model, size_t model_len,
                      const char *cfg_name, const char *cfg, size_t cfg_len,
                      rm_tokenizer **out, rm_err *err);

/* Number of BPE ranks; ids at or above it are special tokens. */
int tokenizer_ranks(const rm_tokenizer *t);

/* Merges every piece with the heap used for long pieces (on = 1) instead of
 * only those past the linear scan's limit; tests use it to check that both
 * merge paths agree. */
void tokenizer_force_heap(rm_tokenizer *t, int on);

#endif
