/* busy.h — the wall time during which at least one operation was in flight
 * (the reader pool's reads, the HTTP client's transfers): the union of
 * their intervals, measured where the count goes from 0 to 1 and back, so
 * bytes / busy time is the bandwidth the device or the network gave while
 * it was being asked. The caller holds its own lock around every call. */
#ifndef REMORA_BUSY_H
#define REMORA_BUSY_H
#include "engine.h"

typedef struct busy_timer {
    int n;                      /* operations in flight */
    double since;               /* when the current busy interval (or its split) began */
    double total;               /* busy seconds of the intervals closed since busy_take */
} busy_timer;

static inline void busy_start(busy_timer *b)
{
    if (b->n++ == 0) b->since = rm_now();
}

static inline void busy_stop(busy_timer *b)
{
    if (--b->n == 0) b->total += rm_now() - b->since;
}

/* The busy seconds since the last call, an interval still open split at
 * now; the count restarts from zero. */
static inline double busy_take(busy_timer *b)
{
    double t = b->total;
    if (b->n) {
        double now = rm_now();
        t += now - b->since;
        b->since = now;
    }
    b->total = 0;
    return t;
}

#endif
