/* clock.h — timing with the one monotonic clock (rm_now, engine.h) inside
 * the engine: the probes of the forecast's measuring phase. */
#ifndef REMORA_BASE_CLOCK_H
#define REMORA_BASE_CLOCK_H

/* The median seconds of runs of fn(ctx): one, more while `seconds` last,
 * at most 15 (make test's forecasts give a probe 0.05 s, about one run). */
double rm_time_median(void (*fn)(void *ctx), void *ctx, double seconds);

#endif
