/* clock.c — the one monotonic clock (engine.h: rm_now). Every duration in
 * the program (phase times, rates, time-outs, frame pacing) is a difference
 * of two rm_now() readings, so they can be compared with one another. */
#include <time.h>
#include "engine.h"

double rm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
