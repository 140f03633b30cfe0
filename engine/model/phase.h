/* phase.h — the clock of the phase figures (rm_token_stats.phase_seconds).
 *
 * A forward pass starts one timer and marks the end of each stretch of work
 * with the phase it belongs to; every mark books the time since the
 * previous one, so the math itself holds no clock reads and the phases of a
 * pass add up to its whole time. The layer loop (forward.c) and the MoE
 * block (moe.c) share the timer of the pass.
 */
#ifndef REMORA_PHASE_H
#define REMORA_PHASE_H
#include "engine.h"

typedef struct phase_timer {
    double *acc;                /* [RM_PHASE_COUNT] seconds, added to */
    double t;                   /* the last mark */
} phase_timer;

static inline void phase_start(phase_timer *p, double *acc)
{
    p->acc = acc;
    p->t = rm_now();
}

/* Books the time since the last mark to phase ph (RM_PHASE_*). */
static inline void phase_mark(phase_timer *p, int ph)
{
    double t = rm_now();
    p->acc[ph] += t - p->t;
    p->t = t;
}

#endif
