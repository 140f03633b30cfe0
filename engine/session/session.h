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
 *   snapshot.c    the state on disk: the snapshot format, saving and
 *                 restoring a session's state (with its transcript)
 *   prefix.c      the prefix cache: snapshots of prompt beginnings shared
 *                 by every session of the machine
 */
#ifndef REMORA_SESSION_H
#define REMORA_SESSION_H
#include <stdio.h>
#include "model/model.h"
#include "session/spec.h"
#include "session/route_hist.h"

/* The prefix cache as a session uses it (prefix.c). */
typedef struct prefix_cache {
    char dir[4096];             /* "" when the cache is off */
    uint64_t limit;             /* bytes the entries may take */
    char in_use[256];           /* the entry restored last: never evicted by this session */
    char pass_entry[256];       /* written at the last pass boundary of the prompt in progress */
    int cap;                    /* a capture in progress: its position, 0 none */
    struct snap_out *capw;      /* its writer */
    char cap_name[256];
    int stores, restores;       /* entries written and used by this session */
    rm_err error;               /* the last failure to write an entry, "" none */
} prefix_cache;

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
    /* what a snapshot holds besides the state */
    float *logits;              /* [V] the logits after the first nfed tokens */
    int logits_pos;             /* nfed when they were kept; -1: none */
    int restored_pending;       /* state tokens from a snapshot, reported at the next prompt */
    int stale;                  /* a conversation was loaded without its state */
    int32_t eom_id;             /* the chat format's end-of-message token, -1 none */
    prefix_cache prefix;
    int keep_states;            /* rm_open_opts.keep_states */
    /* test hook (session_test_logits): every logits row a turn samples from */
    void (*test_logits)(void *ud, const float *logits, int n);
    void *test_logits_ud;
    /* test hook ($REMORA_TEST_REPLIES, forced.c): replies of given tokens */
    int32_t **forced;
    int *nforced, nforced_seqs;
    int forced_replies, forced_cur, forced_pos;
};

/* forced.c */
/* Reads $REMORA_TEST_REPLIES when it is set. */
int  session_forced_open(rm_session *s, rm_err *err);
void session_forced_free(rm_session *s);
/* A reply begins: 1 when it is forced (its tokens chosen in turn). */
int  session_forced_begin(rm_session *s);
/* The next forced token of the reply; 0 when there is none left. */
int  session_forced_next(rm_session *s, int32_t *id);

/* session.c */
/* Makes c the session's conversation (c is emptied); when c has no system
 * prompt, the session keeps its own. The state holds none of it: the next
 * turn feeds it again. */
void session_take_conv(rm_session *s, rm_conv *c);
/* 0 when a context of n tokens fits the session's limit; else -1 with the
 * count and the limit in err (bad input). */
int  session_check_ctx(const rm_session *s, int n, rm_err *err);

/* generate.c */
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

/* snapshot.c */
/* What a snapshot holds besides the state (the header's flags). */
enum { SNAP_LOGITS = 1, SNAP_ROUTES = 2, SNAP_SPEC = 4 };
/* A snapshot being written, also layer by layer while a pass runs. */
typedef struct snap_out snap_out;
/* Starts PATH (a temporary file beside it): the header and ids[0..pos). */
snap_out *snap_begin(rm_session *s, const char *path, const int32_t *ids, int pos, unsigned flags, rm_err *err);
/* Layer l of st at position pos; layers must come in order. */
void snap_layer(snap_out *o, rm_state *st, int l, int pos);
/* The sections after the layers (logits from `logits` when flags say so),
 * the CRC, and the atomic commit; o is freed. Returns 0 or -1 (the file
 * left as it was; why names PATH). */
int  snap_finish(snap_out *o, rm_session *s, const float *logits, rm_err *err);
void snap_abort(snap_out *o);
/* The size of a snapshot of pos tokens with these sections. */
uint64_t snap_file_bytes(const rm_session *s, int pos, unsigned flags);
/* The whole snapshot of state st at pos with ids in one call. */
int  snap_write(rm_session *s, const char *path, rm_state *st, const int32_t *ids, int pos, unsigned flags,
                const float *logits, rm_err *err);
/* A snapshot read back and checked, not yet part of a session. */
typedef struct snap_data {
    int tokens;
    unsigned flags;
    int32_t *ids;
    rm_state *st;               /* at position `tokens` */
    float *logits;              /* [V] (SNAP_LOGITS) */
    int16_t *routes;            /* [tokens][MoE layers][topk] (SNAP_ROUTES) */
    double spec[SPEC_STATS_N];  /* SNAP_SPEC */
} snap_data;
enum { SNAP_MISMATCH = -2 };
/* Reads PATH for this session's model; every size is checked against the
 * file and the model before anything is allocated, and the CRC before it is
 * used. With expect, the snapshot's ids must be a prefix of expect[0..n)
 * (else SNAP_MISMATCH). Returns 0, SNAP_MISMATCH or -1 ("PATH: ..." why). */
int  snap_read(rm_session *s, const char *path, const int32_t *expect, int n, snap_data *d, rm_err *err);
void snap_data_free(snap_data *d);
/* Makes d the session's state (d is emptied): the state, seq = the ids,
 * and what else it holds; `restored` counts its tokens for the next
 * prompt's figures. */
int  session_install_snap(rm_session *s, snap_data *d, rm_err *err);

/* prefix.c */
/* Shorter prefixes are not kept: on the embedded model 32 tokens are
 * computed in about as long as an entry takes to write and read back. */
#define PREFIX_MIN_TOKENS 32
/* Where the cache is and how large it may grow, from o and the
 * environment; -1 with a message for a bad REMORA_PREFIX_CACHE_GB. */
int  prefix_open(prefix_cache *pc, const rm_open_opts *o, rm_err *err);
/* Restores the longest cached prefix of prompt[0..np) (an entry of exactly
 * np tokens only with its logits); returns its tokens, 0 for none. */
int  prefix_restore(rm_session *s, const int32_t *prompt, int np);
/* Stores the state (at pos = s->st's position, ids s->seq) as an entry,
 * with logits when not NULL; `pass` marks one taken at a pass boundary,
 * which replaces the one the prompt's previous pass boundary left. */
void prefix_store(rm_session *s, int pos, const float *logits, int pass);
/* A capture inside a pass (rm_forward_ctl.capture): begin writes the
 * header and ids, layer writes each layer as the pass reaches the
 * position, end commits it (ok) or drops it. */
int  prefix_capture_begin(rm_session *s, int pos);
void prefix_capture_layer(rm_session *s, int layer);
void prefix_capture_end(rm_session *s, int ok);
/* The end of a prompt's feed: forgets its pass-boundary entry. */
void prefix_prompt_done(rm_session *s);

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
