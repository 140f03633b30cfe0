/* crmath.h — correctly rounded binary32 exp, tanh and log1p, one
 * implementation for the CPU model and the CUDA backend.
 *
 * Why: glibc's expf/tanhf/log1pf and CUDA's differ in their last bits (CUDA's
 * are up to 2 ulp off; glibc 2.36's tanhf is not correctly rounded on 2.8% of
 * inputs), and the GPU must give the CPU's bits. A correctly rounded function
 * has one right answer per input, so both sides call these.
 *
 * How: each function widens its float argument to double and computes the
 * value with IEEE double +, -, *, / only, in the order written, with
 * constants that are exact doubles (hex literals) and one 64-entry table
 * (2^(j/64) as a double pair, the same literals on host and device); the
 * double result, within about 2^-52 of the true value, is rounded to float
 * once. The exhaustive check (make crmath-check: all 2^32 inputs against
 * glibc's long double functions and MPFR) finds every input whose value
 * lies closer than that to a rounding boundary and is rounded wrong: none
 * for exp and tanh (the nearest are 1.4e-16 and 7.3e-16 of the value
 * away), 9 for log1p, answered from a list.
 *
 * Every a*b+c here is meant as two roundings: a file that includes this
 * header must be compiled without contraction (gcc in GNU C mode fuses
 * them whenever FMA instructions are enabled: the Makefile passes
 * -ffp-contract=off; nvcc needs --fmad=false, and its defaults for
 * -ftz=false and -prec-div=true, which --use_fast_math would change).
 */
#ifndef REMORA_CRMATH_H
#define REMORA_CRMATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define CRM_FN static __host__ __device__ __forceinline__
#else
#define CRM_FN static inline
#endif

/* 2^(j/64) = hi + lo for j = 0..63; lo carries the bits hi rounded off,
 * which tanh's e^y - 1 needs near 0. */
#define CRM_EXP2_TABLE { \
    0x1.0000000000000p+0, 0x0.0p+0, \
    0x1.02c9a3e778061p+0, -0x1.19083535b085dp-56, \
    0x1.059b0d3158574p+0, 0x1.d73e2a475b465p-55, \
    0x1.0874518759bc8p+0, 0x1.186be4bb284ffp-57, \
    0x1.0b5586cf9890fp+0, 0x1.8a62e4adc610bp-54, \
    0x1.0e3ec32d3d1a2p+0, 0x1.03a1727c57b53p-59, \
    0x1.11301d0125b51p+0, -0x1.6c51039449b3ap-54, \
    0x1.1429aaea92de0p+0, -0x1.32fbf9af1369ep-54, \
    0x1.172b83c7d517bp+0, -0x1.19041b9d78a76p-55, \
    0x1.1a35beb6fcb75p+0, 0x1.e5b4c7b4968e4p-55, \
    0x1.1d4873168b9aap+0, 0x1.e016e00a2643cp-54, \
    0x1.2063b88628cd6p+0, 0x1.dc775814a8495p-55, \
    0x1.2387a6e756238p+0, 0x1.9b07eb6c70573p-54, \
    0x1.26b4565e27cddp+0, 0x1.2bd339940e9d9p-55, \
    0x1.29e9df51fdee1p+0, 0x1.612e8afad1255p-55, \
    0x1.2d285a6e4030bp+0, 0x1.0024754db41d5p-54, \
    0x1.306fe0a31b715p+0, 0x1.6f46ad23182e4p-55, \
    0x1.33c08b26416ffp+0, 0x1.32721843659a6p-54, \
    0x1.371a7373aa9cbp+0, -0x1.63aeabf42eae2p-54, \
    0x1.3a7db34e59ff7p+0, -0x1.5e436d661f5e3p-56, \
    0x1.3dea64c123422p+0, 0x1.ada0911f09ebcp-55, \
    0x1.4160a21f72e2ap+0, -0x1.ef3691c309278p-58, \
    0x1.44e086061892dp+0, 0x1.89b7a04ef80d0p-59, \
    0x1.486a2b5c13cd0p+0, 0x1.3c1a3b69062f0p-56, \
    0x1.4bfdad5362a27p+0, 0x1.d4397afec42e2p-56, \
    0x1.4f9b2769d2ca7p+0, -0x1.4b309d25957e3p-54, \
    0x1.5342b569d4f82p+0, -0x1.07abe1db13cadp-55, \
    0x1.56f4736b527dap+0, 0x1.9bb2c011d93adp-54, \
    0x1.5ab07dd485429p+0, 0x1.6324c054647adp-54, \
    0x1.5e76f15ad2148p+0, 0x1.ba6f93080e65ep-54, \
    0x1.6247eb03a5585p+0, -0x1.383c17e40b497p-54, \
    0x1.6623882552225p+0, -0x1.bb60987591c34p-54, \
    0x1.6a09e667f3bcdp+0, -0x1.bdd3413b26456p-54, \
    0x1.6dfb23c651a2fp+0, -0x1.bbe3a683c88abp-57, \
    0x1.71f75e8ec5f74p+0, -0x1.16e4786887a99p-55, \
    0x1.75feb564267c9p+0, -0x1.0245957316dd3p-54, \
    0x1.7a11473eb0187p+0, -0x1.41577ee04992fp-55, \
    0x1.7e2f336cf4e62p+0, 0x1.05d02ba15797ep-56, \
    0x1.82589994cce13p+0, -0x1.d4c1dd41532d8p-54, \
    0x1.868d99b4492edp+0, -0x1.fc6f89bd4f6bap-54, \
    0x1.8ace5422aa0dbp+0, 0x1.6e9f156864b27p-54, \
    0x1.8f1ae99157736p+0, 0x1.5cc13a2e3976cp-55, \
    0x1.93737b0cdc5e5p+0, -0x1.75fc781b57ebcp-57, \
    0x1.97d829fde4e50p+0, -0x1.d185b7c1b85d1p-54, \
    0x1.9c49182a3f090p+0, 0x1.c7c46b071f2bep-56, \
    0x1.a0c667b5de565p+0, -0x1.359495d1cd533p-54, \
    0x1.a5503b23e255dp+0, -0x1.d2f6edb8d41e1p-54, \
    0x1.a9e6b5579fdbfp+0, 0x1.0fac90ef7fd31p-54, \
    0x1.ae89f995ad3adp+0, 0x1.7a1cd345dcc81p-54, \
    0x1.b33a2b84f15fbp+0, -0x1.2805e3084d708p-57, \
    0x1.b7f76f2fb5e47p+0, -0x1.5584f7e54ac3bp-56, \
    0x1.bcc1e904bc1d2p+0, 0x1.23dd07a2d9e84p-55, \
    0x1.c199bdd85529cp+0, 0x1.11065895048ddp-55, \
    0x1.c67f12e57d14bp+0, 0x1.2884dff483cadp-54, \
    0x1.cb720dcef9069p+0, 0x1.503cbd1e949dbp-56, \
    0x1.d072d4a07897cp+0, -0x1.cbc3743797a9cp-54, \
    0x1.d5818dcfba487p+0, 0x1.2ed02d75b3707p-55, \
    0x1.da9e603db3285p+0, 0x1.c2300696db532p-54, \
    0x1.dfc97337b9b5fp+0, -0x1.1a5cd4f184b5cp-54, \
    0x1.e502ee78b3ff6p+0, 0x1.39e8980a9cc8fp-55, \
    0x1.ea4afa2a490dap+0, -0x1.e9c23179c2893p-54, \
    0x1.efa1bee615a27p+0, 0x1.dc7f486a4b6b0p-54, \
    0x1.f50765b6e4540p+0, 0x1.9d3e12dd8a18bp-54, \
    0x1.fa7c1819e90d8p+0, 0x1.74853f3a5931ep-55 }
static const double crm_exp2_host[128] = CRM_EXP2_TABLE;
#ifdef __CUDACC__
static __device__ const double crm_exp2_dev[128] = CRM_EXP2_TABLE;
#endif

CRM_FN const double *crm_exp2_row(int j)
{
#ifdef __CUDA_ARCH__
    return crm_exp2_dev + 2 * j;
#else
    return crm_exp2_host + 2 * j;
#endif
}

/* The bits of a double or a float and back: the device's bit casts, the
 * host's memcpy (which the compiler makes a register move). */
#ifdef __CUDA_ARCH__
CRM_FN uint64_t crm_bits(double d) { return (uint64_t)__double_as_longlong(d); }
CRM_FN double crm_from_bits(uint64_t u) { return __longlong_as_double((long long)u); }
CRM_FN uint32_t crm_fbits(float f) { return __float_as_uint(f); }
CRM_FN float crm_from_fbits(uint32_t u) { return __uint_as_float(u); }
#else
CRM_FN uint64_t crm_bits(double d) { uint64_t u; memcpy(&u, &d, sizeof u); return u; }
CRM_FN double crm_from_bits(uint64_t u) { double d; memcpy(&d, &u, sizeof d); return d; }
CRM_FN uint32_t crm_fbits(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }
CRM_FN float crm_from_fbits(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }
#endif

/* 2^k for -1022 <= k <= 1023 */
CRM_FN double crm_pow2(int k) { return crm_from_bits((uint64_t)(k + 1023) << 52); }

/* Splits y (|y| <= 110, y a float or twice one) as y = n ln2/64 + r with
 * |r| <= ln2/128 and returns n; *q = e^r - 1. n is y*64/ln2 rounded to the
 * nearest integer by the 1.5*2^52 shifter; n*LN2_64_HI is exact (37-bit
 * constant, |n| < 2^14) and so is y - n*LN2_64_HI (both are multiples of
 * 2^-43 and their difference is below 2^-7). e^r - 1 is its Taylor
 * polynomial to r^6 (the next term is below 2^-57 of r), written
 * r + r^2 P(r) so that the leading r is not rounded. */
CRM_FN int crm_exp_reduce(double y, double *q)
{
    const double shift = 0x1.8p52;
    const double z = y * 0x1.71547652b82fep+6;               /* 64/ln2 */
    const double nd = (z + shift) - shift;
    const double r = (y - nd * 0x1.62e42fefa0000p-7) - nd * 0x1.cf79abc9e3b3ap-46;
    const double p = 0x1p-1 + r * (0x1.5555555555555p-3 + r * (0x1.5555555555555p-5
                   + r * (0x1.1111111111111p-7 + r * 0x1.6c16c16c16c17p-10)));
    *q = r + (r * r) * p;
    return (int)nd;
}

/* e^x rounded to float. exp(x) overflows above 88.7228 and rounds to 0
 * below -103.9721 (half the least subnormal); between -104 and 89 the double
 * value 2^k (hi + lo)(1 + q) is scaled exactly and rounded once, subnormal
 * results included. */
CRM_FN float crm_expf(float x)
{
    if (!(x > -104.0f && x < 89.0f)) return x != x ? x + x : x > 0 ? INFINITY : 0.0f;
    double q;
    const int n = crm_exp_reduce((double)x, &q);
    const int j = n & 63, k = ((n + 16384) >> 6) - 256;      /* n = 64k + j, n > -16384 */
    const double *t = crm_exp2_row(j);
    const double v = t[0] + (t[1] + t[0] * q);
    return (float)(v * crm_pow2(k));
}

/* 1 / (1 + e^-x) in float arithmetic: the model's sigmoid, kept as it was
 * written with glibc's expf. */
CRM_FN float crm_sigmoidf(float x) { return 1.0f / (1.0f + crm_expf(-x)); }

/* tanh x rounded to float: with E = e^(2|x|) - 1, tanh|x| = E / (E + 2).
 * E keeps its relative accuracy near 0: when 2|x| < 63.5 ln2/64 (k = 0)
 * it is (hi - 1) + (lo + hi q), hi - 1 exact; above, e^(2|x|) >= 1.98 and
 * the subtraction of 1 loses at most one bit. tanh|x| rounds to 1 from
 * 9.011 on. */
CRM_FN float crm_tanhf(float x)
{
    const uint32_t sign = crm_fbits(x) & 0x80000000u;
    const double a = crm_from_fbits(crm_fbits(x) ^ sign);
    if (!(a < 10.0)) return x != x ? x + x : (x > 0 ? 1.0f : -1.0f);
    double q;
    const int n = crm_exp_reduce(a + a, &q);
    const int j = n & 63, k = n >> 6;                         /* n >= 0 */
    const double *t = crm_exp2_row(j);
    const double e = k == 0 ? (t[0] - 1.0) + (t[1] + t[0] * q)
                            : (t[0] + (t[1] + t[0] * q)) * crm_pow2(k) - 1.0;
    return crm_from_fbits(crm_fbits((float)(e / (e + 2.0))) | sign);
}

/* log(1 + x) rounded to float. For |x| < 2^-29, x - x^2/2 (the next term is
 * below 2^-59 of x). Otherwise u = 1 + x is exact in double (x has 24
 * bits; above 2^52 the rounding of u costs under 2^-58 of the result),
 * u = 2^e m with m in [sqrt(1/2), sqrt(2)), f = m - 1 exact, and
 * log u = e ln2 + log(1 + f) with log(1 + f) = f - (f^2/2 - s (f^2/2 + R)),
 * s = f / (2 + f), R = 2s^2/3 + 2s^4/5 + ... (s^2 <= 0.0295: the terms to
 * s^20 leave under 2^-60). ln2 is split so that e * LN2_HI is exact. */
CRM_FN float crm_log1pf(float x)
{
    if (!(x > -1.0f)) return x == -1.0f ? -INFINITY : x != x ? x + x : NAN;
    if (x == INFINITY) return x;
    const double xd = x;
    if ((crm_fbits(x) & 0x7fffffffu) < 0x31000000u)           /* |x| < 2^-29 */
        return (float)(xd - (xd * xd) * 0.5);
    /* The 9 inputs of 2^32 whose log1p lies nearer a rounding boundary than
     * the error of the double evaluation below (make crmath-check; two of
     * them within 2^-60 of it): their correct floats, from MPFR. */
    switch (crm_fbits(x)) {
    case 0x35400003u: return crm_from_fbits(0x353fffffu);
    case 0x3710001bu: return crm_from_fbits(0x370ffff3u);
    case 0x3efd81adu: return crm_from_fbits(0x3ecdeee1u);
    case 0x41078febu: return crm_from_fbits(0x400fe5e7u);
    case 0x65d890d3u: return crm_from_fbits(0x4254d1f9u);
    case 0x6f31a8ecu: return crm_from_fbits(0x42845a89u);
    case 0xb53ffffdu: return crm_from_fbits(0xb5400001u);
    case 0xb70fffe5u: return crm_from_fbits(0xb710000du);
    case 0xbb0ec8c4u: return crm_from_fbits(0xbb0ef0a5u);
    }
    uint64_t hu = crm_bits(1.0 + xd) + (0x3ff0000000000000ull - 0x3fe6a09e667f3bcdull);
    const int e = (int)(hu >> 52) - 1023;
    hu = (hu & 0x000fffffffffffffull) + 0x3fe6a09e667f3bcdull;
    const double f = crm_from_bits(hu) - 1.0;
    const double s = f / (2.0 + f), z = s * s;
    const double R = z * (0x1.5555555555555p-1 + z * (0x1.999999999999ap-2 + z * (0x1.2492492492492p-2
                   + z * (0x1.c71c71c71c71cp-3 + z * (0x1.745d1745d1746p-3 + z * (0x1.3b13b13b13b14p-3
                   + z * (0x1.1111111111111p-3 + z * (0x1.e1e1e1e1e1e1ep-4 + z * (0x1.af286bca1af28p-4
                   + z * 0x1.8618618618618p-4)))))))));
    const double hfsq = 0.5 * f * f, de = e;
    return (float)(de * 0x1.62e42fefa3800p-1
                   - ((hfsq - (s * (hfsq + R) + de * 0x1.ef35793c76730p-45)) - f));
}

#endif
