/* bench_prefill.h — the prompt benchmark of `remora bench --prompt-tokens N`
 * (bench_prefill.c). */
#ifndef REMORA_BENCH_PREFILL_H
#define REMORA_BENCH_PREFILL_H
#include <stdint.h>
#include "engine.h"

/* Feeds n seeded ids through m in passes of `chunk` tokens (0: the
 * planner's) and prints the prefill figures (with json, one JSON line at
 * the end); dev_s is the device probe's length. Returns 0, or 1 with err. */
int bench_prefill(rm_model *m, const char *model, int n, int chunk, double dev_s, int json, rm_err *err);

/* Peak resident set of this process (VmHWM), bytes; 0 when unknown. Both
 * benchmarks report it. */
uint64_t bench_peak_rss(void);
/* qsort's comparison of doubles, ascending (both benchmarks take medians). */
int bench_cmp_double(const void *a, const void *b);

#endif
