/* stats.c — the per-token figures of a session: an rm_token_stats record per
 * emitted token (and one for the prompt), filled from the model's counters
 * and the router's last choices, then traced and handed to the caller; and
 * the names of the time phases (rm_phase_name). */
#include <string.h>
#include "session/session.h"

const char *rm_phase_name(int phase)
{
    static const char *const names[RM_PHASE_COUNT] = { "wait_io", "spine", "attention", "experts", "lm_head" };
    return phase >= 0 && phase < RM_PHASE_COUNT ? names[phase] : "?";
}

/* Takes the model's figures since the last call into s->stats. */
void session_collect_stats(rm_session *s)
{
    model_take_stats(s->m, &s->stats);
    s->stats.num_experts = s->m->cfg.num_experts;
    s->stats.device_gbps = s->device_gbps;
    memcpy(s->stats.route_ids, s->route_ids, sizeof s->route_ids);
    s->stats.route_layers = s->route_layers;
    s->stats.route_k = s->route_k;
}

void session_publish_stats(rm_session *s, const rm_gen_events *ev)
{
    if (s->trace) session_trace_token(s);
    if (ev && ev->on_stats) ev->on_stats(ev->ud, &s->stats);
}

void session_emit_stats(rm_session *s, const rm_gen_events *ev)
{
    session_collect_stats(s);
    session_publish_stats(s, ev);
}

/* The speculation totals of this turn so far. */
void session_spec_totals(rm_session *s)
{
    s->stats.spec_drafted = s->spec.drafted - s->spec_d0;
    s->stats.spec_accepted = s->spec.accepted - s->spec_a0;
}

/* Starts the figures of one emitted token. */
void session_begin_stats(rm_session *s, int index, int32_t id, int np, double seconds)
{
    memset(&s->stats, 0, sizeof s->stats);
    s->stats.token_index = (uint64_t)index;
    s->stats.token_id = id;
    s->stats.prompt_tokens = np;
    s->stats.seconds = seconds;
    session_spec_totals(s);
}
