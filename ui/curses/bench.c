/* bench.c — `remora bench-ui`: the UI's own cost while it streams.
 *
 * The chat runs on a pseudo-terminal of a fixed size (a thread reads and
 * discards what curses writes, as a fast terminal would) against the
 * synthetic source for one turn, with no keyboard. The figure that matters is
 * the UI thread's CPU time (CLOCK_THREAD_CPUTIME_ID) per generated token and
 * as a share of one core, with the frames drawn per second.
 */
#include <langinfo.h>
#include <locale.h>
#include <pthread.h>
#include <pty.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tui.h"
#include "loop.h"
#include "turn.h"
#include "ui/text.h"

typedef struct sink { int fd; uint64_t bytes; } sink;

/* Reads what curses writes, counting it (read once the turn is over). */
static void *discard(void *arg)
{
    sink *k = arg;
    char buf[65536];
    ssize_t n;
    while ((n = read(k->fd, buf, sizeof buf)) > 0) k->bytes += (uint64_t)n;
    return NULL;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int ui_bench_run(const ui_bench_opts *o, FILE *rep)
{
    setlocale(LC_ALL, "");
    if (strcmp(nl_langinfo(CODESET), "UTF-8")) setlocale(LC_ALL, "C.UTF-8");
    ui_text_set_utf8(!strcmp(nl_langinfo(CODESET), "UTF-8"));
    const char *term = getenv("TERM");
    if (!term || !*term || !strcmp(term, "dumb")) setenv("TERM", "xterm-256color", 1);

    struct winsize ws = { (unsigned short)o->rows, (unsigned short)o->cols, 0, 0 };
    int master, slave;
    if (openpty(&master, &slave, NULL, NULL, &ws)) { perror("remora bench-ui: openpty"); return 1; }
    pthread_t reader;
    static sink k;
    k.fd = master;
    k.bytes = 0;
    if (pthread_create(&reader, NULL, discard, &k)) { close(master); close(slave); return 1; }
    FILE *out = fdopen(slave, "w"), *in = fdopen(dup(slave), "r");

    ui_synth_opts so = { o->rate, o->tokens / 4, o->tokens - o->tokens / 4, 0 };
    rm_err err = { "" };
    ui_source *src = NULL;
    ui_tui *a = calloc(1, sizeof *a);
    char msg[512];
    int rc = 1;
    if (!out || !in || !a || ui_source_synth_open(&so, &src, &err)) {
        fprintf(stderr, "remora bench-ui: cannot set up%s%s\n", err.msg[0] ? ": " : "", err.msg);
        goto done;
    }
    if (ui_main_open(a, src, out, in, -1, 0, NULL, NULL, msg, sizeof msg)) {
        fprintf(stderr, "remora bench-ui: %s\n", msg);
        src->vt->free(src);
        goto done;
    }
    a->bench = 1;
    if (o->panel_hz > 0) a->panel_hz = o->panel_hz;
    ui_turn_submit(a, "Benchmark the UI: stream a long answer.");
    double w0 = rm_now(), c0 = thread_cpu();
    uint64_t b0 = __atomic_load_n(&k.bytes, __ATOMIC_RELAXED);
    rc = ui_loop_run(a) ? 1 : 0;
    double wall = rm_now() - w0, cpu = thread_cpu() - c0;
    int tokens = a->stats->tokens;
    uint64_t frames = a->frames;
    double panel_hz = a->panel_hz;
    uint64_t bytes = __atomic_load_n(&k.bytes, __ATOMIC_RELAXED) - b0;
    ui_main_close(a, NULL);     /* no history in the benchmark */
    fprintf(rep, "bench-ui: %dx%d terminal, synthetic source at %.0f tok/s\n", o->cols, o->rows, o->rate);
    fprintf(rep, "tokens        %d in %.2f s (%.1f tok/s)\n", tokens, wall, tokens / wall);
    fprintf(rep, "frames        %llu (%.1f frames/s; panels at most %.0f/s)\n", (unsigned long long)frames,
            frames / wall, panel_hz);
    fprintf(rep, "terminal      %.1f KiB/s written\n", bytes / wall / 1024);
    fprintf(rep, "ui cpu        %.3f s = %.2f%% of one core\n", cpu, 100 * cpu / wall);
    fprintf(rep, "ui cpu/token  %.1f us\n", tokens ? cpu / tokens * 1e6 : 0);
done:
    free(a);
    if (out) fclose(out); else close(slave);
    if (in) fclose(in);
    pthread_join(reader, NULL);     /* reads fail once the slave side is closed */
    close(master);
    return rc;
}
