/* progress.h — the download progress bar of `remora setup` and `remora
 * fetch` on stderr: bytes, rate and time left, redrawn in place on a
 * terminal and printed every 10% otherwise. */
#ifndef REMORA_PROGRESS_H
#define REMORA_PROGRESS_H
#include <stdint.h>

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
/* "1.23 GB" etc. into buf. */
const char *progress_bytes(char *buf, size_t cap, double bytes);

#endif
