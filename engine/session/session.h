/* session.h — the inside of an rm_session, shared by the files that make
 * up a session (engine-internal):
 *
 *   session.c     opening, the conversation list and its rm_chat_msg view
 *   generate.c    one turn: prefill, decode, speculative verify, the sinks
 *                 that collect streamed text; rm_session_turn/complete
 *   reply.c       replies to a conversation or prompt the caller gives whole
 *                 (rm_session_render, rm_session_reply): the server's path
 *   stats_json.c  rm_token_stats as JSON and back
 *   stats.c       the per-token rm_token_stats records
 *   trace.c       the JSONL trace line of each record
 *   transcript.c  saving and loading a conversation
 */
#ifndef REMORA_SESSION_H
#define REMORA_SESSION_H
#include <stdio.h>
#include "model/model.h"
#include "session/spec.h"
#include "session/route_hist.h"

typedef struct session_msg {
    char *role, *content, *reasoning;
    int interrupted;
} session_msg;

struct rm_session {
    rm_model *m;
    rm_tokenizer *tok;
    rm_chat_format fmt;
    rm_state *st;
    char *system;
    session_msg *msgs;
    int nmsgs, cap;
    rm_chat_msg *view;          /* rm_chat_msg array mirroring msgs */
    int32_t *seq;               /* tokens of the conversation so far */
    int nseq, seqcap;
    int nfed;                   /* of seq, how many the state has consumed */
    int *moe_index;             /* layer -> MoE layer ordinal, or -1 */
    FILE *trace;                /* JSONL per token, or NULL (also after a failed write) */
    char *trace_path;
    int trace_errno;            /* the failed write's errno, 0 while the trace is fine */
    spec spec;                  /* drafter and its cost estimates */
    route_hist routes;          /* experts each fed position chose: draft costs */
    uint64_t spec_d0, spec_a0;  /* its totals when the turn began */
    uint64_t spec_p0, spec_x0;  /* verify passes and declined drafts, likewise */
    /* router choices of the last position fed, copied into each record */
    int16_t route_ids[RM_MAX_ROUTE_LAYERS][RM_MAX_TOPK];
    int route_layers, route_k;
    double device_gbps;         /* rm_session_probe_device, 0 if not measured */
    rm_token_stats stats;
    int spec_pass;              /* verify passes in this turn (stats.spec_pass) */
    int max_ctx;                /* the most tokens a context may hold; 0 = no limit */
    size_t text_max;            /* test hook (session_test_text_max): cap of a
                                 * turn's kept text, 0 = memory only */
};

/* session.c */
/* Appends a message; strings are copied. */
int  session_push_msg(rm_session *s, const char *role, const char *content, const char *reasoning);
/* 0 when a context of n tokens fits the session's limit; else -1 with the
 * count and the limit in err (bad input). */
int  session_check_ctx(const rm_session *s, int n, rm_err *err);
/* Rebuilds s->view: the system prompt first, then the messages; *n gets the count. */
int  session_build_view(rm_session *s, int *n);

/* generate.c */
/* How a reply ended: interrupted is 0 or RM_STOPPED_REPLY/PROMPT (the
 * stop flag); message is 1 when the model ended its message; tokens were
 * generated, the one that ended the message included. */
typedef struct gen_end { int interrupted, message, tokens; } gen_end;
/* Generates a reply after the prompt ids np: through the chat splitter
 * (chat = 1; the reply starts in the think channel when think) or raw
 * (chat = 0: token bytes as answer text, ending at end-of-message or
 * [EOS]). The state is reused when the prompt extends what it consumed.
 * kept (may be NULL) receives the reasoning [0] and answer [1] text. */
int session_generate(rm_session *s, const int32_t *ids, int np, int chat, int think, const rm_gen_opts *o,
                     const rm_gen_events *ev, volatile int *stop, rm_buf kept[2], gen_end *end, rm_err *err);

/* stats.c */
/* Starts the figures of one emitted token. */
void session_begin_stats(rm_session *s, int index, int32_t id, int np, double seconds);
/* Takes the model's figures since the last call into s->stats. */
void session_collect_stats(rm_session *s);
/* The speculation totals of this turn so far. */
void session_spec_totals(rm_session *s);
/* Hands s->stats to the trace and to the caller. */
void session_publish_stats(rm_session *s, const rm_gen_events *ev);
void session_emit_stats(rm_session *s, const rm_gen_events *ev);
/* The record's routes: those position `pos` chose (each token of a verify
 * pass has its own), when recorded. */
void session_stats_routes(rm_session *s, int pos);
/* Adds the figures of a record (bytes, hits, phases, seconds) into a total. */
void session_stats_add(rm_token_stats *total, const rm_token_stats *part);

/* trace.c */
/* One JSONL record per token: the figures of rm_token_stats and the router's
 * choices per MoE layer for the token's (last) position. */
void session_trace_token(rm_session *s);
/* One JSONL record for a complete prefill pass: its tokens, bytes and
 * seconds (the trace's "pass" records). */
void session_trace_pass(rm_session *s, const rm_token_stats *pass);
/* -1 with a message naming the trace when a write to it failed, else 0. */
int  session_trace_failed(rm_session *s, rm_err *err);

#ifdef REMORA_TEST
/* Test hook, declared only for the unit tests (compiled with -DREMORA_TEST):
 * fn (NULL: none) proposes the drafts instead of the n-gram lookup, so a
 * test can make verify passes accept some tokens and reject others. */
void session_test_draft_oracle(rm_session *s, int (*fn)(void *ud, const int32_t *ctx, int n, int32_t *out, int kmax),
                               void *ud);
/* Test hook: a turn's kept reply may hold at most max bytes (0: no cap), so
 * a test can make keeping it fail the way running out of memory does. */
void session_test_text_max(rm_session *s, size_t max);
#endif

#endif
