/* clock.c — the one monotonic clock (engine.h: rm_now). Every duration in
 * the program (phase times, rates, time-outs, frame pacing) is a difference
 * of two rm_now() readings, so they can be compared with one another;
 * rm_time_median (base/clock.h) times a probe with it. */
#include <stdlib.h>
#include <time.h>
#include "engine.h"
#include "base/clock.h"

double rm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_seconds(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median rather than the best run: the forecast predicts a long run on
 * cores shared as they are now (rm_machine_probe's kernel figures are
 * median windows too). */
double rm_time_median(void (*fn)(void *ctx), void *ctx, double seconds)
{
    double t[15];
    int n = 0;
    const double end = rm_now() + seconds;
    do {
        const double t0 = rm_now();
        fn(ctx);
        t[n++] = rm_now() - t0;
    } while (n < 15 && rm_now() < end);
    qsort(t, (size_t)n, sizeof *t, cmp_seconds);
    return t[n / 2];
}
