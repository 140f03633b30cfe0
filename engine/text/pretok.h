/* pretok.h — Kimi's pre-tokeniser (internal to the engine).
 *
 * Splits text into the pieces that byte-level BPE then encodes, exactly as
 * the eight-alternative pattern of Kimi's tokenization_kimi.py does under
 * Rust fancy-regex semantics (see pretok.c). Bytes that are not valid UTF-8
 * are each taken as one character of their own that is neither letter,
 * number nor white space (so they group with punctuation).
 */
#ifndef REMORA_PRETOK_H
#define REMORA_PRETOK_H
#include <stddef.h>

/* Byte length of the piece that starts at text[pos] (pos < len; the result
 * is at least 1). Pieces never look past len: call it on the text between
 * special tokens, as tiktoken runs its pattern on each such part. */
size_t pretok_piece(const char *text, size_t len, size_t pos);

#endif
