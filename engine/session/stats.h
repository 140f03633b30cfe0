/* stats.h — a session's per-token rm_token_stats records (stats.c). */
#ifndef REMORA_SESSION_STATS_H
#define REMORA_SESSION_STATS_H
#include "engine.h"

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

#endif
