/* template.h — what the session needs of the chat renderer beyond engine.h
 * (engine-internal): rendering a JSON conversation and learning whether its
 * generation prompt ends inside the think channel, i.e. whether the reply
 * that follows starts as reasoning. */
#ifndef REMORA_TEMPLATE_H
#define REMORA_TEMPLATE_H
#include "engine.h"

/* rm_chat_render_json; *opens_think (may be NULL) is 1 when the prompt ends
 * inside the think channel (K3 XTML with thinking on and a generation
 * prompt), else 0. */
int chat_render_json(const rm_tokenizer *t, rm_chat_format f, const char *json, size_t len, int *opens_think,
                     int32_t **ids, rm_err *err);

#endif
