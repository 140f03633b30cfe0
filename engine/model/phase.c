/* phase.c — the names of the time phases the forward pass books
 * (phase.h): the keys of "phase_seconds" in the stats JSON and the trace,
 * and the labels of the benchmarks. */
#include "engine.h"

const char *rm_phase_name(int phase)
{
    static const char *const names[RM_PHASE_COUNT] = { "wait_io", "spine", "attention", "experts", "lm_head" };
    return phase >= 0 && phase < RM_PHASE_COUNT ? names[phase] : "?";
}
