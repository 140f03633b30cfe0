/* tasks.h — run fn(i) for i in [0, n) on a few threads, stopping at the first
 * failure. Stream mode uses it to keep several downloads in flight (shard
 * headers, spine chunks, experts) with blocking calls; the model
 * fingerprint reads several shards at once with it. */
#ifndef REMORA_TASKS_H
#define REMORA_TASKS_H
#include "engine.h"

/* fn returns 0 or -1 (filling its err); `worker` is in [0, threads). The
 * first failure's message lands in err; items not yet started are skipped.
 * on_fail (may be NULL) is called once, on the failing worker, with the
 * first failure's message, so the items still running can be ended at once
 * (the downloads cancel their transfers). */
int tasks_for_cancel(int n, int threads, int (*fn)(void *ud, int i, int worker, rm_err *err), void *ud,
                     void (*on_fail)(void *ud, const char *why), rm_err *err);

#endif
