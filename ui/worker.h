/* worker.h — the thread that runs the source, and what it publishes.
 *
 * The UI thread submits one command at a time (a turn, /system, /clear,
 * /save, /load). The worker runs it against the source and publishes, under
 * a mutex held only for a copy: text deltas per channel (growable buffers:
 * nothing is dropped; text that cannot be kept, out of memory, stops the
 * turn, which ends with an error), a ring of per-token samples (what does
 * not fit while the UI is away is counted in lost_samples), the latest full stats
 * record with its predecessor (router reuse), and a completion event. After
 * publishing it writes one byte to a pipe, only when the UI has not been
 * woken yet, so a slow UI costs the worker nothing but a memcpy.
 */
#ifndef REMORA_UI_WORKER_H
#define REMORA_UI_WORKER_H

#include "source.h"
#include "stats.h"

enum { UI_CMD_TURN, UI_CMD_SYSTEM, UI_CMD_CLEAR, UI_CMD_SAVE, UI_CMD_LOAD };

typedef struct ui_worker ui_worker;

typedef struct ui_done {
    int  cmd;
    int  rc;                /* 0 or -1 */
    int  interrupted;       /* turn stopped by the flag */
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
    int         have_full;
    rm_token_stats full, full_prev;
    int         have_prev;
    int         have_done;
    ui_done     done;
} ui_drain;

/* Starts the thread (with every signal blocked in it). *wake_fd becomes
 * readable when something was published. */
int  ui_worker_start(ui_source *src, ui_worker **out, int *wake_fd);
/* Stops any turn, joins the thread, frees everything (not the source). */
void ui_worker_free(ui_worker *w);
/* Returns 0, or -1 when a command is still running. */
int  ui_worker_submit(ui_worker *w, int cmd, const char *arg, const rm_gen_opts *gen);
/* Asks the running turn to end at the next token. */
void ui_worker_stop(ui_worker *w);
/* Empties the wake pipe and takes everything published since the last
 * drain. The drain struct is large: keep one around. */
void ui_worker_drain(ui_worker *w, ui_drain *d);

#endif
