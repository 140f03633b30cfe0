/* mx_tables.c — the tables every SIMD level decodes MXFP4 with
 * (kernels_impl.h): the E2M1 values of a nibble, the E8M0 scales, and their
 * products as fp32 (the AVX-512 lookup) and bf16 bytes (the AVX2 shuffles).
 * Apart from kernels.c, which picks the level, because the levels read
 * them: the dispatcher calls the levels, the levels call nothing back. */
#include <math.h>
#include <string.h>
#include "kernels_impl.h"

const float kern_e2m1[16] = {
    0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
    -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f,
};

float kern_e8m0_tab[256];
_Alignas(64) float kern_mx_f32[256][16];
_Alignas(64) uint8_t kern_mx_bf16[256][64];

float kern_e8m0(uint8_t e)
{
    if (e == 255) return INFINITY;
    if (e == 0) return 0x1p-127f;       /* the one subnormal scale */
    union { uint32_t u; float f; } v = { .u = (uint32_t)e << 23 };
    return v.f;
}

void kern_tables_init(void)
{
    for (int s = 0; s < 256; s++) {
        kern_e8m0_tab[s] = kern_e8m0((uint8_t)s);
        for (int c = 0; c < 16; c++) {
            /* computed at run time like the scalar level's products, so even
             * 0 * Inf gives the same NaN */
            float w = kern_e2m1[c] * kern_e8m0_tab[s];
            uint32_t bits;
            memcpy(&bits, &w, sizeof bits);
            kern_mx_f32[s][c] = w;
            kern_mx_bf16[s][c] = kern_mx_bf16[s][16 + c] = (uint8_t)(bits >> 16);
            kern_mx_bf16[s][32 + c] = kern_mx_bf16[s][48 + c] = (uint8_t)(bits >> 24);
        }
    }
}
