/* worker.h — the thread that runs the source, and what it publishes.
 *
 * The UI thread submits one command at a time (a turn, /system, /clear,
 * /save, /load, the storage probe). The worker runs it against the source
 * and publishes, under a mutex held only for a copy: text deltas per channel
 * (growable buffers: nothing is dropped; text that cannot be kept, out of
 * memory, stops the turn, which ends with an error), a ring of per-record
 * samples (what does not fit while the UI is away is counted in
 * lost_samples), the latest full token record with its predecessor, the
 * latest full prompt record, and a completion event. After publishing it
 * writes one byte to a pipe, only when the UI has not been woken yet, so a
 * slow UI costs the worker nothing but a memcpy.
 *
 * Closing never waits without bound: the turn is asked to stop and the
 * thread is given a deadline; a source that does not return by then (a
 * prompt in an engine that cannot be interrupted) is left running, and the
 * caller exits without freeing it.
 */
#ifndef REMORA_UI_WORKER_H
#define REMORA_UI_WORKER_H

#include "source.h"
#include "stats.h"

enum { UI_CMD_TURN, UI_CMD_SYSTEM, UI_CMD_CLEAR, UI_CMD_SAVE, UI_CMD_LOAD, UI_CMD_PROBE };

typedef struct ui_worker ui_worker;

typedef struct ui_done {
    int  cmd;
    int  rc;                /* 0 or -1 */
    int  interrupted;       /* a turn stopped by the flag: RM_STOPPED_REPLY or RM_STOPPED_PROMPT */
    int  tokens;            /* a turn's token records */
    int  ctx;               /* a load's: the conversation's tokens (-1 not counted) */
    double gbps;            /* the probe's result, the median of its pieces (-1: none) */
    double probed;          /* seconds the probe measured */
    char msg[1024];         /* error message when rc != 0 */
} ui_done;

/* What the UI takes in one drain. Buffers are owned by the worker module and
 * valid until the next drain. */
typedef struct ui_drain {
    const char *text[3];            /* indexed by RM_CHAN_REASONING / RM_CHAN_ANSWER */
    size_t      len[3];
    ui_sample   samples[64];
    int         nsamples;
    int         lost_samples;       /* the ring overflowed (UI was away) */
    int         have_full;          /* the latest fed token's record */
    rm_token_stats full, full_prev;
    int         have_prev;
    int         have_layers;        /* the turn's per-layer figures so far */
    ui_layer_figs layers;
    int         have_pfull;         /* the latest prompt or progress record */
    rm_token_stats pfull;
    int         have_done;
    ui_done     done;
} ui_drain;

/* Starts the thread (with every signal blocked in it). *wake_fd becomes
 * readable when something was published. */
int  ui_worker_start(ui_source *src, ui_worker **out, int *wake_fd);
#define WORKER_SAVE_WAIT_S 300.0     /* the most a quit waits for a save in progress */
/* Stops any turn and waits at most `seconds` for the thread to end (a save
 * in progress, which cannot be stopped, up to WORKER_SAVE_WAIT_S). Returns
 * 0 when it ended (everything is freed, not the source), or -1 when it is
 * still inside the source: nothing is freed then, and the source must not
 * be freed either (the caller exits). */
int  ui_worker_close(ui_worker *w, double seconds);
/* UI_CMD_SAVE, UI_CMD_LOAD: arg is the path. UI_CMD_PROBE: arg is the
 * probe's length in seconds, as text: it measures in pieces of
 * UI_PROBE_PIECE_S, looks at the stop flag between them (a message waiting
 * ends it early) and gives their median. Returns 0, or -1 when a command is
 * still running. */
#define UI_PROBE_PIECE_S 0.5
int  ui_worker_submit(ui_worker *w, int cmd, const char *arg, const rm_gen_opts *gen);
/* Asks the running turn to end at the next token (or layer of a prompt). */
void ui_worker_stop(ui_worker *w);
/* Empties the wake pipe and takes everything published since the last
 * drain. The drain struct is large: keep one around. */
void ui_worker_drain(ui_worker *w, ui_drain *d);

#endif
