/* generate.h — one reply of a session: prefill, decode, speculative verify
 * (generate.c). */
#ifndef REMORA_SESSION_GENERATE_H
#define REMORA_SESSION_GENERATE_H
#include "engine.h"

/* How a reply ended: interrupted is 0 or RM_STOPPED_REPLY/PROMPT (the
 * stop flag); message is 1 when the model ended its message; tokens were
 * generated, the one that ended the message included. */
typedef struct gen_end { int interrupted, message, tokens; } gen_end;
/* Generates a reply after the prompt ids np: through the chat splitter
 * (chat = 1; the reply starts in the think channel when think) or raw
 * (chat = 0: token bytes as answer text, ending at end-of-message or
 * [EOS]). The state is reused when the prompt extends what it consumed.
 * turn numbers the reply in its conversation for the sampler's seed
 * (sampler_turn_seed: 0 is the seed itself). tools_prime (not NULL): the
 * prompt opened a tools block holding that text (rm_chat_stream_open_tools). kept (may be NULL) receives the reasoning [0] and answer [1] text. */
int session_generate(rm_session *s, const int32_t *ids, int np, int chat, int think, const char *tools_prime, int turn,
                     const rm_gen_opts *o, const rm_gen_events *ev, volatile int *stop, rm_buf kept[2], gen_end *end,
                     rm_err *err);

#endif
