/* softmax.h — attention's softmax of one row of scores (MLA, model/mla.c),
 * written once for the CPU and the GPU (engine/gpu/gpu_kernels.cu), as
 * crmath.h's functions are, so both sides give the same bits:
 *   p[s] = (p[s] + p2[s]) * scale          (the two halves of the score)
 *   p[s] = crm_expf(p[s] - max)            (the sum in double, in s order)
 *   p[s] = p[s] / sum                      (in double, rounded once)
 * for s < n. Compiled without contraction on both sides (-ffp-contract=off,
 * --fmad=false), so (a + b) * c is two roundings everywhere.
 */
#ifndef REMORA_SOFTMAX_H
#define REMORA_SOFTMAX_H
#include "kernels/crmath.h"

CRM_FN void kern_attn_softmax(float *p, const float *p2, int n, float scale)
{
    float mx = -INFINITY;
    for (int s = 0; s < n; s++) {
        p[s] = (p[s] + p2[s]) * scale;
        if (p[s] > mx) mx = p[s];
    }
    double tot = 0;
    for (int s = 0; s < n; s++) {
        p[s] = crm_expf(p[s] - mx);
        tot += p[s];
    }
    for (int s = 0; s < n; s++) p[s] = (float)(p[s] / tot);
}

#endif
