/* crmath_sum.h — the checksum of a crmath function's results over a range
 * of inputs, the same in the CPU check (crmath_check.c) and the GPU one
 * (tests/gpu/crmath_gpu.cu), so that the figures printed on the two
 * machines can be compared: the sum, modulo 2^64, of a 64-bit mix of each
 * input with its result. A sum, so any order of evaluation gives it. NaN
 * results count as the one quiet NaN 0x7fc00000: CUDA and x86 give NaNs
 * other payloads, and the model never reads a NaN's bits. */
#ifndef REMORA_CRMATH_SUM_H
#define REMORA_CRMATH_SUM_H
#include "kernels/crmath.h"

CRM_FN uint32_t crm_sum_canon(float r) { return r != r ? 0x7fc00000u : crm_fbits(r); }

/* splitmix64's finaliser of input u and result bits r */
CRM_FN uint64_t crm_sum_term(uint32_t u, uint32_t r)
{
    uint64_t z = ((uint64_t)u << 32 | r) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
#endif
