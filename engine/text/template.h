/* template.h — what the session needs of the chat renderer beyond engine.h
 * (engine-internal): rendering a JSON conversation and learning whether its
 * generation prompt ends inside the think channel, i.e. whether the reply
 * that follows starts as reasoning. */
#ifndef REMORA_TEMPLATE_H
#define REMORA_TEMPLATE_H
#include "engine.h"

/* What the session learns of a rendered prompt. */
typedef struct chat_render_info {
    int opens_think;        /* the prompt ends inside the think channel (K3 XTML
                             * with thinking on and a generation prompt) */
    int opens_tools;        /* it ends inside a tools block: a forced tool choice
                             * ("required", or a named function) */
    int gen_start;          /* where the generation prompt begins (the count: none) */
    char prime[512];        /* opens_tools: the block's text after its opening
                             * marker (a named call's opening), NUL-terminated */
} chat_render_info;

/* rm_chat_render_json, with info (may be NULL). An assistant message may
 * carry "remora_ids", the tokens it was sampled as after its generation
 * prompt began (the server's replay of its own replies): they stand for
 * the message's opening, channels and tool calls, each checked against
 * the vocabulary. */
int chat_render_json(const rm_tokenizer *t, rm_chat_format f, const char *json, size_t len, chat_render_info *info,
                     int32_t **ids, rm_err *err);

#endif
