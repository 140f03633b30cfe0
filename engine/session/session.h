/* session.h — the inside of an rm_session, shared by the files that make
 * up a session (engine-internal). Each file's own functions are declared in
 * its own header; this one holds the record and session.c's:
 *
 *   session.c     opening, the conversation list and its rm_chat_msg view
 *   generate.c/h  one turn: prefill, decode, speculative verify, the sinks
 *                 that collect streamed text; rm_session_turn/complete
 *   reply.c       replies to a conversation or prompt the caller gives whole
 *                 (rm_session_render, rm_session_reply): the server's path
 *   stats_json.c  rm_token_stats as JSON and back
 *   stats.c/h     the per-token rm_token_stats records
 *   trace.c/h     the JSONL trace line of each record
 *   transcript.c  saving and loading a conversation
 *   snapshot.c/h  the state on disk: the snapshot format, saving and
 *                 restoring a session's state (with its transcript)
 *   resume.c      a saved conversation's state restored from its snapshot
 *   prefix.c/h    the prefix cache: snapshots of prompt beginnings shared
 *                 by every session of the machine
 *   forced.c/h    a test hook: replies of given tokens
 */
#ifndef REMORA_SESSION_H
#define REMORA_SESSION_H
#include <stdio.h>
#include "model/model.h"
#include "session/spec.h"
#include "session/route_hist.h"
#include "session/forced.h"
#include "session/prefix.h"
#include "session/trace.h"

struct rm_session {
    rm_model *m;
    rm_tokenizer *tok;
    rm_chat_format fmt;
    rm_state *st;
    rm_conv conv;               /* the system prompt and the messages (conv.c) */
    int32_t *seq;               /* tokens of the conversation so far */
    int nseq, seqcap;
    int nfed;                   /* of seq, how many the state has consumed */
    int *moe_index;             /* layer -> MoE layer ordinal, or -1 */
    session_trace trace;        /* --trace (trace.h) */
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
    /* what a snapshot holds besides the state */
    float *logits;              /* [V] the logits after the first nfed tokens */
    int logits_pos;             /* nfed when they were kept; -1: none */
    int restored_pending;       /* state tokens from a snapshot, reported at the next prompt */
    int stale;                  /* a conversation was loaded without its state */
    int32_t eom_id;             /* the chat format's end-of-message token, -1 none */
    prefix_cache prefix;
    int keep_states;            /* rm_open_opts.keep_states */
    /* the test hooks (session_test_*) */
    struct {
        size_t text_max;        /* cap of a turn's kept text, 0 = memory only */
        /* every logits row a turn samples from */
        void (*logits)(void *ud, const float *logits, int n);
        void *logits_ud;
    } test;
    session_forced forced;      /* $REMORA_TEST_REPLIES (forced.h) */
};

/* session.c */
/* Makes c the session's conversation (c is emptied); when c has no system
 * prompt, the session keeps its own. The state holds none of it: the next
 * turn feeds it again. */
void session_take_conv(rm_session *s, rm_conv *c);
/* 0 when a context of n tokens fits the session's limit; else -1 with the
 * count and the limit in err (bad input). */
int  session_check_ctx(const rm_session *s, int n, rm_err *err);

#ifdef REMORA_TEST
/* Test hook, declared only for the unit tests (compiled with -DREMORA_TEST):
 * fn (NULL: none) proposes the drafts instead of the n-gram lookup, so a
 * test can make verify passes accept some tokens and reject others. */
void session_test_draft_oracle(rm_session *s, int (*fn)(void *ud, const int32_t *ctx, int n, int32_t *out, int kmax),
                               void *ud);
/* Test hook: a turn's kept reply may hold at most max bytes (0: no cap), so
 * a test can make keeping it fail the way running out of memory does. */
void session_test_text_max(rm_session *s, size_t max);
/* Test hook: fn (NULL: none) sees every logits row a turn samples from, so
 * a test can compare two runs bit for bit. */
void session_test_logits(rm_session *s, void (*fn)(void *ud, const float *logits, int n), void *ud);
#endif

/* ---- engine-internal parts of the session API (the front ends save and
 * load through rm_session_save_with_state and rm_session_load_with_state) */
/* The conversation as a transcript (rm_transcript_save below). A load
 * replaces the conversation (and the system prompt when the file has one)
 * only when the whole file is valid; on any error nothing changes. */
int  rm_session_save(const rm_session *s, const char *path, rm_err *err);
int  rm_session_load(rm_session *s, const char *path, rm_err *err);
/* Writes the session's state to PATH (atomically, mode 0600), after an
 * open speculation checkpoint is committed. A state that does not belong to
 * the conversation (after rm_session_clear or rm_session_load) is dropped
 * first, and the snapshot holds no tokens. */
int rm_session_save_state(rm_session *s, const char *path, rm_err *err);
/* Restores the state from the snapshot PATH for the session's
 * conversation. Returns 0 (r->restored tokens), or -1 with the reason in
 * err and r->why; the session is then as it was. */
int rm_session_load_state(rm_session *s, const char *path, rm_resume *r, rm_err *err);

#endif
