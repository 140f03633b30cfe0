/* stats.c — the per-token figures of a session: an rm_token_stats record per
 * emitted token (and one for the prompt), filled from the model's counters
 * and the router's last choices, then traced and handed to the caller. */
#include <string.h>
#include "session/session.h"
#include "session/stats.h"
#include "session/trace.h"

/* Takes the model's figures since the last call into s->stats. */
void session_collect_stats(rm_session *s)
{
    model_take_stats(s->m, &s->stats, s->stats.kind != RM_REC_PROGRESS);
    s->stats.num_experts = s->m->cfg.num_experts;
    s->stats.device_gbps = s->device_gbps;
    memcpy(s->stats.route_ids, s->route_ids, sizeof s->route_ids);
    s->stats.route_layers = s->route_layers;
    s->stats.route_k = s->route_k;
    model_route_states(s->m, &s->stats);
}

void session_publish_stats(rm_session *s, const rm_gen_events *ev)
{
    if (s->trace.f) session_trace_token(s);
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
    s->stats.spec_passes = s->spec.verify_passes - s->spec_p0;
    s->stats.spec_declined = s->spec.declined - s->spec_x0;
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

void session_stats_routes(rm_session *s, int pos)
{
    const route_hist *h = &s->routes;
    if (!h->nmoe || pos < 0 || pos >= h->cap) return;
    const int16_t *r = route_hist_get(h, pos);
    const int nl = h->nmoe < RM_MAX_ROUTE_LAYERS ? h->nmoe : RM_MAX_ROUTE_LAYERS;
    const int k = h->topk < RM_MAX_TOPK ? h->topk : RM_MAX_TOPK;
    if (r[0] < 0) return;       /* not recorded: keep the last position's */
    for (int li = 0; li < nl; li++)
        for (int i = 0; i < k; i++) s->stats.route_ids[li][i] = r[(size_t)li * h->topk + i];
    model_route_states(s->m, &s->stats);
}

void session_stats_add(rm_token_stats *t, const rm_token_stats *p)
{
    t->seconds += p->seconds;
    for (int i = 0; i < RM_PHASE_COUNT; i++) t->phase_seconds[i] += p->phase_seconds[i];
    t->bytes_spine_read += p->bytes_spine_read;
    t->bytes_expert_read += p->bytes_expert_read;
    t->bytes_net += p->bytes_net;
    t->bytes_expert_from_cache += p->bytes_expert_from_cache;
    t->expert_hits += p->expert_hits;
    t->expert_misses += p->expert_misses;
    t->prefetch_issued += p->prefetch_issued;
    t->prefetch_used += p->prefetch_used;
    t->flops += p->flops;
    for (int l = 0; l < RM_MAX_ROUTE_LAYERS; l++) t->layer_bytes_read[l] += p->layer_bytes_read[l];
    if (p->queue_depth > t->queue_depth) t->queue_depth = p->queue_depth;
}
