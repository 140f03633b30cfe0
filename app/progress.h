/* progress.h — the progress bars on stderr: downloads of `remora setup` and
 * `remora fetch` (bytes, rate and time left, redrawn in place on a terminal
 * and printed every 10% otherwise) and the prompt of `remora run`; and the
 * note of run and serve on a stream-mode model's pool. */
#ifndef REMORA_PROGRESS_H
#define REMORA_PROGRESS_H
#include <stddef.h>
#include <stdint.h>
#include "engine.h"

typedef struct progress_bar {
    const char *cmd;            /* "remora fetch" */
    char phase[32];
    double t0, last;
    int tty, last_decile, open;
} progress_bar;

void progress_init(progress_bar *b, const char *cmd);
/* An rm_progress_fn: ud is the progress_bar. */
void progress_cb(void *ud, const char *what, uint64_t done, uint64_t total);
/* Ends the current line, if one is open. */
void progress_end(progress_bar *b);
/* The prompt's progress bar of `remora run` on a terminal: tokens done of
 * the prompt, rate, ETA, pass and layer, redrawn in place at most five times
 * a second; nothing when stderr is not a terminal. */
void progress_prompt(progress_bar *b, const rm_prompt_figures *f);
/* For a stream-mode model, a sentence saying where the experts come from
 * and how much of the pool is local, into buf; 0 when the model is local. */
int progress_stream_note(rm_model *m, char *buf, size_t cap);

#endif
