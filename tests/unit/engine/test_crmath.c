/* test_crmath.c — kernels/crmath.h, the correctly rounded expf, tanhf and
 * log1pf the CPU model and the GPU share: the special values (NaN, ±Inf,
 * ±0, subnormals, the overflow and underflow edges), the inputs whose value
 * lies nearest a rounding boundary (found by the exhaustive check, make
 * crmath-check, and decided there by MPFR), and a sample of 2^20 inputs
 * spread over every exponent and sign against glibc's long double
 * functions. The exhaustive proof over all 2^32 inputs is
 * tests/tools/crmath_check.c; it is too slow for the unit tests. */
#include <math.h>
#include <stdint.h>
#include "../test.h"
#include "kernels/crmath.h"

enum { F_EXP, F_TANH, F_LOG1P };
static const char *const NAMES[] = { "exp", "tanh", "log1p" };

static float eval(int f, float x)
{
    return f == F_EXP ? crm_expf(x) : f == F_TANH ? crm_tanhf(x) : crm_log1pf(x);
}

static long double eval_ld(int f, float x)
{
    return f == F_EXP ? expl(x) : f == F_TANH ? tanhl(x) : log1pl(x);
}

/* Same float, NaN equal to any NaN, -0 distinct from +0. */
static int same(float a, float b)
{
    if (a != a || b != b) return a != a && b != b;
    return crm_fbits(a) == crm_fbits(b);
}

typedef struct { int f; uint32_t x, want; } known;

/* Correct values from MPFR at 200 bits. */
static const known SPECIAL[] = {
    { F_EXP, 0x7fc00000u, 0x7fc00000u },    /* NaN */
    { F_EXP, 0x7f800000u, 0x7f800000u },    /* +Inf -> +Inf */
    { F_EXP, 0xff800000u, 0x00000000u },    /* -Inf -> +0 */
    { F_EXP, 0x00000000u, 0x3f800000u },    /* +0 -> 1 */
    { F_EXP, 0x80000000u, 0x3f800000u },    /* -0 -> 1 */
    { F_EXP, 0x00000001u, 0x3f800000u },    /* least subnormal -> 1 */
    { F_EXP, 0x80000001u, 0x3f800000u },
    { F_EXP, 0x3f800000u, 0x402df854u },    /* e */
    { F_EXP, 0xbf800000u, 0x3ebc5ab2u },
    { F_EXP, 0x39800000u, 0x3f800800u },    /* 2^-12 */
    { F_EXP, 0x42b17217u, 0x7f7fff84u },    /* the largest x with a finite result */
    { F_EXP, 0x42b17218u, 0x7f800000u },    /* the least that overflows */
    { F_EXP, 0x7f7fffffu, 0x7f800000u },
    { F_EXP, 0xc2aeac4fu, 0x00800026u },    /* near the least normal result */
    { F_EXP, 0xc2cff1b4u, 0x00000001u },    /* the last input giving the least subnormal */
    { F_EXP, 0xc2cff1b5u, 0x00000000u },    /* the first that underflows to 0 */
    { F_EXP, 0xc2d00000u, 0x00000000u },
    { F_EXP, 0xff7fffffu, 0x00000000u },
    { F_TANH, 0x7fc00000u, 0x7fc00000u },
    { F_TANH, 0x7f800000u, 0x3f800000u },   /* +Inf -> 1 */
    { F_TANH, 0xff800000u, 0xbf800000u },   /* -Inf -> -1 */
    { F_TANH, 0x00000000u, 0x00000000u },   /* +0 -> +0 */
    { F_TANH, 0x80000000u, 0x80000000u },   /* -0 -> -0 */
    { F_TANH, 0x00000001u, 0x00000001u },   /* subnormals are their own tanh */
    { F_TANH, 0x80000001u, 0x80000001u },
    { F_TANH, 0x00800000u, 0x00800000u },
    { F_TANH, 0x397fffffu, 0x397fffffu },
    { F_TANH, 0x3f800000u, 0x3f42f7d6u },
    { F_TANH, 0xbf7fffffu, 0xbf42f7d5u },
    { F_TANH, 0xbf000000u, 0xbeec9a9fu },
    { F_TANH, 0x41100000u, 0x3f7fffffu },   /* 9: still below 1 */
    { F_TANH, 0x411051ecu, 0x3f800000u },   /* 9.02: rounds to 1 */
    { F_TANH, 0xc2cff1b5u, 0xbf800000u },
    { F_TANH, 0x7f7fffffu, 0x3f800000u },
    { F_LOG1P, 0x7fc00000u, 0x7fc00000u },
    { F_LOG1P, 0x7f800000u, 0x7f800000u },  /* +Inf -> +Inf */
    { F_LOG1P, 0xff800000u, 0x7fc00000u },  /* -Inf -> NaN */
    { F_LOG1P, 0xc0000000u, 0x7fc00000u },  /* -2 -> NaN */
    { F_LOG1P, 0xbf800001u, 0x7fc00000u },  /* just below -1 -> NaN */
    { F_LOG1P, 0xbf800000u, 0xff800000u },  /* -1 -> -Inf */
    { F_LOG1P, 0xbf7fffffu, 0xc1851592u },  /* just above -1 */
    { F_LOG1P, 0x00000000u, 0x00000000u },  /* +0 -> +0 */
    { F_LOG1P, 0x80000000u, 0x80000000u },  /* -0 -> -0 */
    { F_LOG1P, 0x00000001u, 0x00000001u },
    { F_LOG1P, 0x80000001u, 0x80000001u },
    { F_LOG1P, 0xb0800000u, 0xb0800000u },  /* -2^-30 (the x - x^2/2 branch) */
    { F_LOG1P, 0x31000000u, 0x31000000u },  /* 2^-29 (the first of the general one) */
    { F_LOG1P, 0x39800000u, 0x397ff800u },
    { F_LOG1P, 0x397fffffu, 0x397ff7ffu },
    { F_LOG1P, 0x3f800000u, 0x3f317218u },  /* ln 2 */
    { F_LOG1P, 0xbf000000u, 0xbf317218u },
    { F_LOG1P, 0x41a00000u, 0x4042d975u },
    { F_LOG1P, 0x501502f9u, 0x41b834f1u },  /* 1e10 */
    { F_LOG1P, 0x7f7fffffu, 0x42b17218u },  /* FLT_MAX */
};

/* The inputs nearest a rounding boundary over all 2^32 (make crmath-check
 * prints them with the distance), correct values from MPFR. */
static const known HARD[] = {
    { F_EXP, 0xbc5b7a89u, 0x3f7c97f0u },  /* exp(-0x1.b6f512p-7) = 0x1.f92fep-1, 2.2e-13 from a midpoint */
    { F_EXP, 0xb9bafc89u, 0x3f7fe8a1u },  /* exp(-0x1.75f912p-12) = 0x1.ffd142p-1, 4e-13 from a midpoint */
    { F_EXP, 0x37b27f83u, 0x3f8000b2u },  /* exp(0x1.64ff06p-16) = 0x1.000164p+0, 9.8e-13 from a midpoint */
    { F_EXP, 0xb41fffacu, 0x3f7ffffeu },  /* exp(-0x1.3fff58p-23) = 0x1.fffffcp-1, 1.2e-12 from a midpoint */
    { F_EXP, 0xb5780020u, 0x3f7ffff0u },  /* exp(-0x1.f0004p-21) = 0x1.ffffep-1, 1.4e-12 from a midpoint */
    { F_EXP, 0xb9743f48u, 0x3f7ff0bdu },  /* exp(-0x1.e87e9p-13) = 0x1.ffe17ap-1, 1.8e-12 from a midpoint */
    { F_EXP, 0xc205da48u, 0x275341dfu },  /* exp(-0x1.0bb49p+5) = 0x1.a683bep-49, 2.2e-12 from a midpoint */
    { F_EXP, 0xbf3c5498u, 0x3ef557e9u },  /* exp(-0x1.78a93p-1) = 0x1.eaafd2p-2, 2.3e-12 from a midpoint */
    { F_TANH, 0x3d8d0848u, 0x3d8ccf52u },  /* tanh(0x1.1a109p-4) = 0x1.199ea4p-4, 2e-13 from a midpoint */
    { F_TANH, 0x3b56ee37u, 0x3b56ee05u },  /* tanh(0x1.addc6ep-9) = 0x1.addc0ap-9, 1e-12 from a midpoint */
    { F_TANH, 0xb9b89c17u, 0xb9b89c16u },  /* tanh(-0x1.71382ep-12) = -0x1.71382cp-12, 1.2e-12 from a midpoint */
    { F_TANH, 0xbae62496u, 0xbae62487u },  /* tanh(-0x1.cc492cp-10) = -0x1.cc490ep-10, 1.4e-12 from a midpoint */
    { F_TANH, 0x3e78a46du, 0x3e73de48u },  /* tanh(0x1.f148dap-3) = 0x1.e7bc9p-3, 2.4e-12 from a midpoint */
    { F_TANH, 0xbed8b1edu, 0xbecc9ef1u },  /* tanh(-0x1.b163dap-2) = -0x1.993de2p-2, 5e-12 from a midpoint */
    { F_TANH, 0xbd8812dbu, 0xbd87dfb0u },  /* tanh(-0x1.1025b6p-4) = -0x1.0fbf6p-4, 5.2e-12 from a midpoint */
    { F_TANH, 0x409c2b03u, 0x3f7ff871u },  /* tanh(0x1.385606p+2) = 0x1.fff0e2p-1, 5.5e-12 from a midpoint */
    { F_LOG1P, 0x790a2da8u, 0x429f93afu },  /* log1p(0x1.145b5p+115) = 0x1.3f275ep+6, 9e-14 from a midpoint */
    { F_LOG1P, 0x5d55dcd2u, 0x4225a2cdu },  /* log1p(0x1.abb9a4p+59) = 0x1.4b459ap+5, 1.8e-13 from a midpoint */
    { F_LOG1P, 0x48a6fcc2u, 0x414be172u },  /* log1p(0x1.4df984p+18) = 0x1.97c2e4p+3, 1.9e-13 from a midpoint */
    { F_LOG1P, 0x6d11ef88u, 0x427cd482u },  /* log1p(0x1.23df1p+91) = 0x1.f9a904p+5, 2.3e-13 from a midpoint */
    { F_LOG1P, 0x3566c164u, 0x3566c15du },  /* log1p(0x1.cd82c8p-21) = 0x1.cd82bap-21, 3.1e-13 from a midpoint */
    { F_LOG1P, 0x5640690cu, 0x41fccb36u },  /* log1p(0x1.80d218p+45) = 0x1.f9966cp+4, 5.6e-13 from a midpoint */
    { F_LOG1P, 0x4c807566u, 0x41903406u },  /* log1p(0x1.00eaccp+26) = 0x1.20680cp+4, 5.7e-13 from a midpoint */
    { F_LOG1P, 0x3754ddf8u, 0x3754dd9fu },  /* log1p(0x1.a9bbfp-17) = 0x1.a9bb3ep-17, 6e-13 from a midpoint */
};

static void check_known(const known *k, int n)
{
    for (int i = 0; i < n; i++) {
        float x = crm_from_fbits(k[i].x), got = eval(k[i].f, x), want = crm_from_fbits(k[i].want);
        CHECKF(same(got, want), "%s(%a) [0x%08x] = %a [0x%08x], want %a", NAMES[k[i].f], x,
               (unsigned)k[i].x, got, (unsigned)crm_fbits(got), want);
    }
}

TEST(crmath_special_values) { check_known(SPECIAL, sizeof SPECIAL / sizeof SPECIAL[0]); }
TEST(crmath_hard_cases) { check_known(HARD, sizeof HARD / sizeof HARD[0]); }

TEST(crmath_sigmoid)
{
    CHECK(crm_sigmoidf(0.0f) == 0.5f);
    CHECK(crm_sigmoidf(INFINITY) == 1.0f);
    CHECK(crm_sigmoidf(-INFINITY) == 0.0f);
    CHECK(crm_sigmoidf(NAN) != crm_sigmoidf(NAN));
    CHECK(crm_sigmoidf(-200.0f) == 0.0f);
    for (float x = -30; x <= 30; x += 0.37f) CHECK(crm_sigmoidf(x) == 1.0f / (1.0f + crm_expf(-x)));
}

/* 2^20 inputs: the top 20 bits of the pattern run through every value, so
 * every sign and exponent is sampled 2^12 times; the low 12 bits are
 * scrambled. Where the long double value +-2^-60 does not round to one
 * float the input is skipped (none are expected: long double has 64 bits). */
TEST(crmath_sampled_inputs)
{
    for (int f = 0; f < 3; f++) {
        int bad = 0, undecided = 0;
        for (uint32_t i = 0; i < (1u << 20); i++) {
            uint32_t u = i << 12 | ((i * 2654435761u) >> 20);
            float x = crm_from_fbits(u), want;
            if (x != x) continue;
            long double v = eval_ld(f, x);
            if (v != v || isinf(v) || v == 0) {
                want = (float)v;
            } else {
                long double e = fabsl(v) * 0x1p-60L;
                want = (float)(v - e);
                if (want != (float)(v + e)) { undecided++; continue; }
            }
            float got = eval(f, x);
            if (!same(got, want) && bad++ < 5)
                fprintf(stderr, "    %s(%a) [0x%08x] = %a, want %a\n", NAMES[f], x, (unsigned)u, got, want);
        }
        CHECKF(bad == 0, "%s: %d of 2^20 sampled inputs wrong", NAMES[f], bad);
        CHECKF(undecided < 4, "%s: %d inputs undecided by long double", NAMES[f], undecided);
    }
}
