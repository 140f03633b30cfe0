/* stats.c — per-token statistics history and derived figures (see stats.h). */
#include <stdlib.h>
#include <string.h>
#include "stats.h"

void ui_stats_sample(ui_sample *s, const rm_token_stats *st)
{
    s->token_index = st->token_index;
    s->seconds = st->seconds;
    memcpy(s->phase, st->phase_seconds, sizeof s->phase);
    s->spine = st->bytes_spine_read;
    s->expert = st->bytes_expert_read;
    s->net = st->bytes_net;
    s->from_cache = st->bytes_expert_from_cache;
    s->hits = st->expert_hits;
    s->misses = st->expert_misses;
    s->prefill = st->prefill;
    s->prompt_tokens = st->prompt_tokens;
}

void ui_stats_reset(ui_stats *st)
{
    st->count = 0;
    st->have_prefill = 0;
    st->hits = st->misses = 0;
    st->seconds = 0;
    st->have_cur = st->have_prev = 0;
    st->nroutes = 0;
}

void ui_stats_add(ui_stats *st, const ui_sample *s)
{
    if (s->prefill) { st->prefill = *s; st->have_prefill = 1; return; }
    st->hist[st->count % UI_HIST] = *s;
    st->count++;
    st->hits += s->hits;
    st->misses += s->misses;
    st->seconds += s->seconds;
}

void ui_stats_set_full(ui_stats *st, const rm_token_stats *cur, const rm_token_stats *prev)
{
    if (cur->prefill) return;
    int layers = cur->route_layers < RM_MAX_ROUTE_LAYERS ? cur->route_layers : RM_MAX_ROUTE_LAYERS;
    if (layers <= 0 && st->have_cur && st->cur.route_layers > 0) {
        /* A record without routes (the end-of-message token is not fed
         * through the model) keeps showing the last routing. */
        rm_token_stats keep = st->cur;
        st->cur = *cur;
        st->cur.route_layers = keep.route_layers;
        st->cur.route_k = keep.route_k;
        st->cur.num_experts = keep.num_experts;
        memcpy(st->cur.route_ids, keep.route_ids, sizeof keep.route_ids);
        return;
    }
    st->cur = *cur;
    st->have_cur = 1;
    if (prev) { st->prev = *prev; st->have_prev = 1; }
    if (layers > 0)
        memcpy(st->routes[st->nroutes % UI_ROUTE_HIST], cur->route_ids,
               (size_t)layers * sizeof cur->route_ids[0]);
    st->nroutes++;
}

const int16_t (*ui_stats_route(const ui_stats *st, int age))[RM_MAX_TOPK]
{
    if (age < 0 || age >= st->nroutes || age >= UI_ROUTE_HIST) return NULL;
    return st->routes[(st->nroutes - 1 - age) % UI_ROUTE_HIST];
}

int ui_stats_times(const ui_stats *st, double *out, int n)
{
    int have = st->count < UI_HIST ? st->count : UI_HIST;
    if (n > have) n = have;
    for (int i = 0; i < n; i++)
        out[i] = st->hist[(st->count - n + i) % UI_HIST].seconds;
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void ui_stats_summary(const ui_stats *st, ui_summary *o)
{
    memset(o, 0, sizeof *o);
    o->tokens = st->count;
    o->hit_rate = st->hits + st->misses ? (double)st->hits / (double)(st->hits + st->misses) : -1;
    o->last_hit_rate = -1;
    if (st->have_prefill) {
        o->prompt_tokens = st->prefill.prompt_tokens;
        o->prefill_seconds = st->prefill.seconds;
    }
    if (st->have_cur) {
        const rm_token_stats *c = &st->cur;
        o->drafted = c->spec_drafted;
        o->accepted = c->spec_accepted;
        o->device_gbps = c->device_gbps;
        o->read_gbps = c->read_gbps;
        if (c->expert_hits + c->expert_misses)
            o->last_hit_rate = (double)c->expert_hits / (double)(c->expert_hits + c->expert_misses);
    }
    if (st->count == 0) return;
    o->tok_per_s = st->seconds > 0 ? st->count / st->seconds : 0;

    double w[UI_WINDOW] = { 0 };
    int n = ui_stats_times(st, w, UI_WINDOW);
    o->last = w[n - 1];
    qsort(w, (size_t)n, sizeof w[0], cmp_double);
    o->median = w[n / 2];
    o->p90 = w[(int)(0.9 * (n - 1) + 0.5)];

    double secs = 0, phase_total = 0, spine = 0, expert = 0, net = 0, cache = 0;
    for (int i = 0; i < n; i++) {
        const ui_sample *s = &st->hist[(st->count - n + i) % UI_HIST];
        secs += s->seconds;
        for (int p = 0; p < RM_PHASE_COUNT; p++) {
            o->phase_frac[p] += s->phase[p];
            phase_total += s->phase[p];
        }
        spine += (double)s->spine;
        expert += (double)s->expert;
        net += (double)s->net;
        cache += (double)s->from_cache;
    }
    if (phase_total > 0)
        for (int p = 0; p < RM_PHASE_COUNT; p++) o->phase_frac[p] /= phase_total;
    if (secs > 0) {
        o->spine_bps = spine / secs;
        o->expert_bps = expert / secs;
    }
    o->bytes_per_token = (spine + expert + net) / n;
    o->cache_bytes_per_token = cache / n;
}
