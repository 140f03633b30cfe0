/* stats.h — the UI's memory of the engine's per-token statistics.
 *
 * Every rm_token_stats record of the current turn is reduced to a small
 * sample. Token samples go to a ring (timing sparkline, medians, bandwidth
 * and router reuse over the recent window of UI_WINDOW tokens); the records
 * of the prompt (RM_REC_PROGRESS while it is processed, RM_REC_PROMPT once
 * it is in) are summed into the prompt's figures. The latest full token
 * record and the one before it are kept whole for the cache figures and the
 * router map, and a short ring of router choices feeds the zoomed router
 * view. ui_stats_summary() derives every figure the panels, the status line
 * and /stats show, so they agree with each other; the ui_fmt_* functions
 * write them the same way everywhere.
 *
 * Two kinds of token records are set apart. The end-of-message token is
 * emitted but not fed through the model (no phase time, no expert lookup):
 * it counts as a token of the turn but stays out of the timing and cache
 * windows, where it would read as a 0.0 ms token. Tokens of one speculative
 * verify pass (the same spec_pass) were computed together: a pair of them is
 * left out of the router's reuse figure, which is about what one token
 * shares with the one before it.
 */
#ifndef REMORA_UI_STATS_H
#define REMORA_UI_STATS_H

#include <stddef.h>
#include "engine.h"

#define UI_HIST 512         /* token samples kept */
#define UI_ROUTE_HIST 32    /* router records kept for the zoom view */
#define UI_WINDOW 32        /* tokens in the "recent" window */
#define UI_TURN_BUCKETS 64  /* the whole turn's rate history: buckets of equal token counts */

typedef struct ui_sample {
    uint64_t token_index;
    double   seconds;
    double   phase[RM_PHASE_COUNT];
    uint64_t spine, expert, net, from_cache;
    uint64_t hits, misses;
    uint64_t gpu_in;            /* bytes copied to the GPU */
    int      kind;              /* RM_REC_* */
    int      fed;               /* a token that went through the model */
    int      spec_pass;         /* the verify pass it came from; 0: a plain step */
    int      reuse_hit, reuse_n;    /* choices also made for the previous token, of reuse_n (0: not counted) */
    int      prompt_tokens;
    rm_prompt_figures prompt;   /* RM_REC_PROMPT and RM_REC_PROGRESS */
    int      channel;           /* RM_CHAN_* of the text that came with the token (0: none) */
} ui_sample;

/* The router choices of the previous fed token, for the reuse figure. */
typedef struct ui_reuse_tracker {
    int     have, pass, layers, k;
    int16_t ids[RM_MAX_ROUTE_LAYERS][RM_MAX_TOPK];
} ui_reuse_tracker;

enum { UI_PROMPT_NONE, UI_PROMPT_RUNNING, UI_PROMPT_DONE, UI_PROMPT_STOPPED };

#define UI_HOT 3            /* hot experts kept per layer */
#define UI_HOT_IDS 1024     /* expert ids counted for them (K3 has 896) */

/* The turn's figures per MoE layer (rows as route_ids), over every fed
 * token: reuse (choices the previous token made too, verify-pass pairs left
 * out), storage bytes of its expert misses, and its most chosen experts. */
typedef struct ui_layer_figs {
    int      layers;
    uint64_t tokens;
    uint32_t reuse_hit[RM_MAX_ROUTE_LAYERS], reuse_n[RM_MAX_ROUTE_LAYERS];
    uint64_t bytes[RM_MAX_ROUTE_LAYERS];
    int16_t  hot[RM_MAX_ROUTE_LAYERS][UI_HOT];
    uint32_t hot_n[RM_MAX_ROUTE_LAYERS][UI_HOT];
} ui_layer_figs;

/* Worker-side: the figures and the counts behind the hot experts. */
typedef struct ui_layer_acc {
    ui_layer_figs f;
    uint16_t      hist[RM_MAX_ROUTE_LAYERS][UI_HOT_IDS];
} ui_layer_acc;

typedef struct ui_stats {
    ui_sample hist[UI_HIST];        /* fed tokens, a ring */
    int       count;                /* fed token samples this turn */
    int       tokens;               /* tokens emitted this turn, end-of-message included */
    uint64_t  hits, misses;         /* this turn */
    int       chan_tokens[3];       /* tokens this turn by the channel of their text */
    double    seconds;              /* decode time this turn */
    int       prompt_state;         /* UI_PROMPT_* */
    rm_prompt_figures prompt;       /* the latest prompt figures */
    ui_sample prompt_sum;           /* the prompt's records summed (bytes, phases, seconds) */
    int       nprogress;
    rm_token_stats cur, prev;       /* latest full token records */
    int       have_cur, have_prev;
    rm_token_stats pcur;            /* latest full prompt record */
    int       have_pcur;
    uint64_t  turn_bytes;           /* storage + network bytes of the turn's fed tokens */
    double    plain_secs, spec_secs;    /* fed tokens' time: plain steps, and of verify passes */
    int       plain_n, spec_n;
    ui_layer_figs layers;           /* the turn's per-layer figures (from the worker) */
    int       have_layers;
    /* the whole turn's speed: bucket i holds tokens [i*bucket, (i+1)*bucket)
     * of the turn; when all are used, pairs merge and the bucket doubles, so
     * a reply of any length keeps UI_TURN_BUCKETS points */
    double    tb_secs[UI_TURN_BUCKETS];
    int       tb_tokens[UI_TURN_BUCKETS];
    int       tb_used, tb_size;
    int16_t   routes[UI_ROUTE_HIST][RM_MAX_ROUTE_LAYERS][RM_MAX_TOPK];
    int       route_pass[UI_ROUTE_HIST];
    int       nroutes;              /* records pushed (ring index = n % size) */
} ui_stats;

typedef struct ui_summary {
    int      tokens;                /* emitted this turn */
    int      window;                /* fed tokens in the recent window */
    double   tok_per_s;             /* this turn */
    double   last, median, p90;     /* seconds per token: the last fed token, the window */
    double   phase_frac[RM_PHASE_COUNT];    /* the window; the prompt's before the first token */
    double   spine_bps, expert_bps; /* bytes/s over the window (or the prompt so far) */
    double   gpu_in_bps;            /* bytes/s copied to the GPU, likewise (0: none) */
    uint64_t vram_resident;         /* weights in VRAM, latest record */
    double   bytes_per_token;       /* storage + network, window mean */
    double   cache_bytes_per_token;
    double   hit_rate;              /* turn; -1 when no lookups */
    double   last_hit_rate;         /* latest fed token; -1 when none */
    double   reuse;                 /* router reuse over the window, same-pass pairs out; -1 none */
    double   device_gbps, read_gbps;
    uint64_t drafted, accepted;
    uint64_t spec_passes, spec_declined;    /* verify passes; drafts the cost gate declined */
    double   spec_mean_accepted;    /* accepted drafts per verify pass; -1: none */
    double   spec_gained;           /* tokens over what plain steps would have made in the time; -1: unknown */
    int      prompt_state;          /* UI_PROMPT_* */
    rm_prompt_figures prompt;       /* ctx, reused, restored, total (prefilled), done, rate, eta */
    uint64_t prompt_bytes;          /* storage read by the prompt so far */
    int      reasoning_tokens, answer_tokens;   /* this turn, by the channel of their text */
} ui_summary;

/* One finished turn, as the per-turn summary line and /stats all give it. */
typedef struct ui_turn_rec {
    int      turn;
    int      prompt_state;      /* UI_PROMPT_* */
    rm_prompt_figures prompt;
    int      tokens;
    double   seconds, tok_per_s;
    double   bytes_per_token;   /* over the whole turn's fed tokens */
    double   hit_rate;          /* -1: no lookups */
    uint64_t drafted, accepted;
    int      interrupted;       /* 0, RM_STOPPED_REPLY or RM_STOPPED_PROMPT */
} ui_turn_rec;

void ui_layer_acc_reset(ui_layer_acc *a);
/* Adds a fed token's record; r is the tracker as it was before the record
 * (the previous fed token's routes), so call it before ui_stats_sample. */
void ui_layer_acc_add(ui_layer_acc *a, const rm_token_stats *st, const ui_reuse_tracker *r);

/* Reduces a record to a sample; for a fed token, r (may be NULL) gives the
 * previous fed token's routes and takes this one's. */
void ui_stats_sample(ui_sample *s, const rm_token_stats *st, ui_reuse_tracker *r);
void ui_stats_reset(ui_stats *st);
void ui_stats_add(ui_stats *st, const ui_sample *s);
/* Installs the latest full token record (and its predecessor when known),
 * or the latest full prompt record. */
void ui_stats_set_full(ui_stats *st, const rm_token_stats *cur, const rm_token_stats *prev);
/* The prompt was stopped before it was in. */
void ui_stats_prompt_stopped(ui_stats *st);
/* Copies the last n fed token times (oldest first) into out, and their
 * verify passes into pass (may be NULL); returns how many. */
int  ui_stats_times(const ui_stats *st, double *out, int *pass, int n);
void ui_stats_summary(const ui_stats *st, ui_summary *out);
/* The turn so far as a record. */
void ui_stats_turn(const ui_stats *st, int turn, int interrupted, ui_turn_rec *r);
/* The whole turn's tokens per second, oldest first, into out (at most n);
 * returns how many points. */
int  ui_stats_turn_rates(const ui_stats *st, double *out, int n);
/* Router record `age` steps back (0 = latest), or NULL; *pass (may be
 * NULL) gets its verify pass. */
const int16_t (*ui_stats_route(const ui_stats *st, int age, int *pass))[RM_MAX_TOPK];

/* Human-readable figures (bytes: rm_fmt_bytes): "12.3 ms", "155 ms", "1.50 s";
 * durations to come "45 s", "2m25s", "1h02m". */
/* Three digits and a unit letter, for narrow panels: "693M", "1.48G", "12K". */
void ui_fmt_bytes_short(char *buf, size_t n, double bytes);
/* A byte figure in the two widths a panel line falls back between:
 * rm_fmt_bytes's "1.60 GB" (full) and ui_fmt_bytes_short's "1.60G". */
typedef struct ui_bytes_text { char full[32], brief[16]; } ui_bytes_text;
ui_bytes_text ui_fmt_bytes_both(double bytes);
void ui_fmt_secs(char *buf, size_t n, double secs);
void ui_fmt_eta(char *buf, size_t n, double secs);
/* The prompt's accounting: "ctx 377, 349 reused, 28 prefilled in 155 ms"
 * ("stopped at 3120 of 14588 prefilled after 33 s" for a stopped one). */
void ui_fmt_prompt(char *buf, size_t n, const ui_summary *s);
/* The prompt's progress, in its work (not its tokens: a pass's tokens go
 * through the layers together): "42% of the work (5128 tok), pass 2/3
 * layer 40/93, ETA 2m25s" ("layer 4/9" for a prompt of one pass). */
void ui_fmt_progress(char *buf, size_t n, const rm_prompt_figures *p);
/* A turn in one line, as llama-cli ends a run: "prompt 28 tok (349 reused)
 * 155 ms · 220 tok 42.8 tok/s · 5 kB/tok · hit 98.4% · spec 69/200" (sep is
 * the separator, " · " or " | "). */
void ui_fmt_turn(char *buf, size_t n, const ui_turn_rec *r, const char *sep);
/* /stats all: the header and one row per turn, aligned. */
void ui_fmt_turn_header(char *buf, size_t n);
void ui_fmt_turn_row(char *buf, size_t n, const ui_turn_rec *r);
/* The share of the prompt's work done (0..1): the engine's count
 * (rm_prompt_figures.work), else the pass in progress's layers. */
double ui_prompt_fraction(const rm_prompt_figures *p);

#endif
