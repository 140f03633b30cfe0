/* trace.h — `--trace FILE`: a JSON line per rm_token_stats record and per
 * prefill pass (trace.c). */
#ifndef REMORA_SESSION_TRACE_H
#define REMORA_SESSION_TRACE_H
#include <stdio.h>
#include "engine.h"

/* The trace as a session holds it (a member of rm_session). */
typedef struct session_trace {
    FILE *f;                    /* JSONL per token, or NULL (also after a failed write) */
    char *path;
    int failed_errno;           /* the failed write's errno, 0 while the trace is fine */
} session_trace;

/* One JSONL record per token: the figures of rm_token_stats and the router's
 * choices per MoE layer for the token's (last) position. */
void session_trace_token(rm_session *s);
/* One JSONL record for a complete prefill pass: its tokens, bytes and
 * seconds (the trace's "pass" records). */
void session_trace_pass(rm_session *s, const rm_token_stats *pass);
/* -1 with a message naming the trace when a write to it failed, else 0. */
int  session_trace_failed(rm_session *s, rm_err *err);

#endif
