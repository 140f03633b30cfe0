/* stats.h — the UI's memory of the engine's per-token statistics.
 *
 * Every rm_token_stats record of the current turn is reduced to a small
 * sample kept in a ring (timing sparkline, medians, bandwidth over a recent
 * window); the latest full record and the one before it are kept whole for
 * the cache figures and the router map, and a short ring of router choices
 * feeds the zoomed router view. ui_stats_summary() derives every figure the
 * panels and /stats show, so they agree with each other.
 */
#ifndef REMORA_UI_STATS_H
#define REMORA_UI_STATS_H

#include "engine.h"

#define UI_HIST 512         /* token samples kept */
#define UI_ROUTE_HIST 32    /* router records kept for the zoom view */
#define UI_WINDOW 32        /* tokens in the "recent" window */

typedef struct ui_sample {
    uint64_t token_index;
    double   seconds;
    double   phase[RM_PHASE_COUNT];
    uint64_t spine, expert, net, from_cache;
    uint64_t hits, misses;
    int      prefill, prompt_tokens;
} ui_sample;

typedef struct ui_stats {
    ui_sample hist[UI_HIST];
    int       count;                /* decode samples this turn */
    ui_sample prefill;
    int       have_prefill;
    uint64_t  hits, misses;         /* this turn */
    double    seconds;              /* decode time this turn */
    rm_token_stats cur, prev;       /* latest full records */
    int       have_cur, have_prev;
    int16_t   routes[UI_ROUTE_HIST][RM_MAX_ROUTE_LAYERS][RM_MAX_TOPK];
    int       nroutes;              /* records pushed (ring index = n % size) */
} ui_stats;

typedef struct ui_summary {
    int      tokens;
    double   tok_per_s;
    double   last, median, p90;     /* seconds per token, recent window */
    double   phase_frac[RM_PHASE_COUNT];
    double   spine_bps, expert_bps; /* bytes/s over the window */
    double   bytes_per_token;       /* storage + network, window mean */
    double   cache_bytes_per_token;
    double   hit_rate;              /* turn; -1 when no lookups */
    double   last_hit_rate;         /* latest token; -1 when none */
    double   device_gbps, read_gbps;
    uint64_t drafted, accepted;
    int      prompt_tokens;
    double   prefill_seconds;
} ui_summary;

void ui_stats_sample(ui_sample *s, const rm_token_stats *st);
void ui_stats_reset(ui_stats *st);
void ui_stats_add(ui_stats *st, const ui_sample *s);
/* Installs the latest full record (and its predecessor when known). */
void ui_stats_set_full(ui_stats *st, const rm_token_stats *cur, const rm_token_stats *prev);
/* Copies the last n token times (oldest first) into out; returns how many. */
int  ui_stats_times(const ui_stats *st, double *out, int n);
void ui_stats_summary(const ui_stats *st, ui_summary *out);
/* Router record `age` steps back (0 = latest), or NULL. */
const int16_t (*ui_stats_route(const ui_stats *st, int age))[RM_MAX_TOPK];

#endif
