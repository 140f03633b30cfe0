/* toolcall.h — the tool-call parser of chat_stream.c (toolcall.c), reached
 * also by its unit tests and fuzz target. */
#ifndef REMORA_TOOLCALL_H
#define REMORA_TOOLCALL_H
#include "engine.h"

typedef struct tool_parser tool_parser;

/* A parser for the inside of one tools block in format f (the opening
 * marker already consumed); events go to fn (may be NULL). */
tool_parser *tool_parser_new(rm_chat_format f, rm_tool_fn fn, void *ud);
void tool_parser_free(tool_parser *p);
/* Text of the block: a token's bytes, special tokens as their strings.
 * Returns 1 once the block has ended (closed, or malformed: an
 * RM_TOOL_BAD event said so), else 0. */
int  tool_parser_feed(tool_parser *p, const char *text, size_t n);
/* A special token of the reply (its string s): one of the format's markers
 * goes in as text; any other makes the open call malformed, as no
 * argument can hold one. Returns as tool_parser_feed. */
int  tool_parser_special(tool_parser *p, const char *s, size_t n);
/* The reply ended: a block still open is malformed (RM_TOOL_BAD). */
void tool_parser_finish(tool_parser *p);

#endif
