/* progress.c — the progress bar of downloads (progress.h). The rate is the
 * average since the phase began, which is steadier than a sliding window
 * when experts arrive 17 MB at a time. Also the note on how much of a
 * stream-mode model's pool is local. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "engine.h"
#include "progress.h"
#include "ui/stats.h"

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
            100.0 * done / total, rm_fmt_bytes(d, sizeof d, (double)done), rm_fmt_bytes(tt, sizeof tt, (double)total),
            rm_fmt_bytes(r, sizeof r, rate), (int)(eta / 60), (int)eta % 60, b->tty ? "\033[K" : "\n");
    fflush(stderr);
    b->open = 1;
}

void progress_prompt(progress_bar *b, const rm_prompt_figures *f)
{
    const double t = rm_now();
    if (!b->tty || !f->total || (b->open && t - b->last < 0.2)) return;
    b->last = t;
    /* the work done, as the chat says it */
    char bar[21], prog[160];
    int fill = (int)(20.0 * ui_prompt_fraction(f));
    for (int i = 0; i < 20; i++) bar[i] = i < fill ? '#' : '.';
    bar[20] = 0;
    ui_fmt_progress(prog, sizeof prog, f);
    fprintf(stderr, "\r%s: prompt [%s] %s\033[K", b->cmd, bar, prog);
    fflush(stderr);
    b->open = 1;
}

int progress_stream_note(rm_model *m, char *buf, size_t cap)
{
    rm_pool_status ps;
    rm_err err;
    char pl[32], pt[32], pf[32];
    if (rm_model_pool_status(m, &ps, &err) || !ps.stream) return 0;
    snprintf(buf, cap, "stream mode from %s: %d of %d experts local (%s of %s); the rest is fetched on first use, "
             "%s more to finish (remora fetch)", ps.source, ps.experts_local, ps.experts_total,
             rm_fmt_bytes(pl, sizeof pl, (double)ps.bytes_local), rm_fmt_bytes(pt, sizeof pt, (double)ps.bytes_total),
             rm_fmt_bytes(pf, sizeof pf, (double)(ps.bytes_total - ps.bytes_local)));
    return 1;
}
