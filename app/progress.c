/* progress.c — the progress bar of downloads (progress.h). The rate is the
 * average since the phase began, which is steadier than a sliding window
 * when experts arrive 17 MB at a time. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "engine.h"
#include "progress.h"

const char *progress_bytes(char *buf, size_t cap, double b)
{
    if (b >= 1e12) snprintf(buf, cap, "%.2f TB", b / 1e12);
    else if (b >= 1e9) snprintf(buf, cap, "%.2f GB", b / 1e9);
    else if (b >= 1e6) snprintf(buf, cap, "%.1f MB", b / 1e6);
    else if (b >= 1e3) snprintf(buf, cap, "%.1f kB", b / 1e3);
    else snprintf(buf, cap, "%.0f B", b);
    return buf;
}

void progress_init(progress_bar *b, const char *cmd)
{
    memset(b, 0, sizeof *b);
    b->cmd = cmd;
    b->tty = isatty(2);
    b->last_decile = -1;
}

void progress_end(progress_bar *b)
{
    if (b->open && b->tty) fputc('\n', stderr);
    b->open = 0;
}

void progress_cb(void *ud, const char *what, uint64_t done, uint64_t total)
{
    progress_bar *b = ud;
    double t = rm_now();
    if (strcmp(b->phase, what)) {       /* a new phase */
        progress_end(b);
        snprintf(b->phase, sizeof b->phase, "%s", what);
        b->t0 = t;
        b->last = 0;
        b->last_decile = -1;
    }
    if (!total) return;
    int decile = (int)(done * 10 / total);
    if (b->tty ? (t - b->last < 0.2 && done < total) : decile == b->last_decile) return;
    b->last = t;
    b->last_decile = decile;
    double el = t - b->t0, rate = el > 0 ? done / el : 0;
    double eta = rate > 0 ? (total - done) / rate : 0;
    char d[32], tt[32], r[32], bar[21];
    int fill = (int)(20.0 * done / total);
    for (int i = 0; i < 20; i++) bar[i] = i < fill ? '#' : '.';
    bar[20] = 0;
    fprintf(stderr, "%s%s: %-7s [%s] %3.0f%%  %s of %s  %s/s  ETA %d:%02d%s", b->tty ? "\r" : "", b->cmd, what, bar,
            100.0 * done / total, progress_bytes(d, sizeof d, (double)done), progress_bytes(tt, sizeof tt, (double)total),
            progress_bytes(r, sizeof r, rate), (int)(eta / 60), (int)eta % 60, b->tty ? "\033[K" : "\n");
    fflush(stderr);
    b->open = 1;
}
