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
#include "tests/unit/test.h"
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
 * prints them with the distance) and the 9 that log1p answers from its list,
 * correct values from MPFR. */
static const known HARD[] = {
    { F_EXP, 0xc16912cdu, 0x34fd331bu },  /* exp(-0x1.d2259ap+3) = 0x1.fa6636p-22, 1.4e-16 from a midpoint */
    { F_EXP, 0xbbf0edf1u, 0x3f7e1fe9u },  /* exp(-0x1.e1dbe2p-8) = 0x1.fc3fd2p-1, 2.7e-16 from a midpoint */
    { F_EXP, 0xbae0e25cu, 0x3f7f8fa7u },  /* exp(-0x1.c1c4b8p-10) = 0x1.ff1f4ep-1, 4e-16 from a midpoint */
    { F_EXP, 0xb3000000u, 0x3f800000u },  /* exp(-0x1p-25) = 0x1p+0, 4.4e-16 from a midpoint */
    { F_EXP, 0x377eff81u, 0x3f800080u },  /* exp(0x1.fdff02p-17) = 0x1.0001p+0, 6.1e-16 from a midpoint */
    { F_EXP, 0x40315b33u, 0x417fa47du },  /* exp(0x1.62b666p+1) = 0x1.ff48fap+3, 6.4e-16 from a midpoint */
    { F_EXP, 0x4001b249u, 0x40f2cd14u },  /* exp(0x1.036492p+1) = 0x1.e59a28p+2, 7.4e-16 from a midpoint */
    { F_EXP, 0x39c6be5bu, 0x3f800c6du },  /* exp(0x1.8d7cb6p-12) = 0x1.0018dap+0, 9.1e-16 from a midpoint */
    { F_TANH, 0x3ac37de2u, 0x3ac37dd9u },  /* tanh(0x1.86fbc4p-10) = 0x1.86fbb2p-10, 7.3e-16 from a midpoint */
    { F_TANH, 0xbac37de2u, 0xbac37dd9u },  /* tanh(-0x1.86fbc4p-10) = -0x1.86fbb2p-10, 7.3e-16 from a midpoint */
    { F_TANH, 0x3eee0566u, 0x3ede3cbeu },  /* tanh(0x1.dc0accp-2) = 0x1.bc797cp-2, 1.2e-15 from a midpoint */
    { F_TANH, 0xbeee0566u, 0xbede3cbeu },  /* tanh(-0x1.dc0accp-2) = -0x1.bc797cp-2, 1.2e-15 from a midpoint */
    { F_TANH, 0x40acb4d0u, 0x3f7ffd50u },  /* tanh(0x1.5969ap+2) = 0x1.fffaap-1, 1.5e-15 from a midpoint */
    { F_TANH, 0xc0acb4d0u, 0xbf7ffd50u },  /* tanh(-0x1.5969ap+2) = -0x1.fffaap-1, 1.5e-15 from a midpoint */
    { F_TANH, 0x3cd41b91u, 0x3cd40f70u },  /* tanh(0x1.a83722p-6) = 0x1.a81eep-6, 1.7e-15 from a midpoint */
    { F_TANH, 0xbcd41b91u, 0xbcd40f70u },  /* tanh(-0x1.a83722p-6) = -0x1.a81eep-6, 1.7e-15 from a midpoint */
    { F_LOG1P, 0x35400003u, 0x353fffffu },  /* log1p(0x1.800006p-21) = 0x1.7ffffep-21, wrong before the exception list */
    { F_LOG1P, 0x3710001bu, 0x370ffff3u },  /* log1p(0x1.200036p-17) = 0x1.1fffe6p-17, wrong before the exception list */
    { F_LOG1P, 0x3efd81adu, 0x3ecdeee1u },  /* log1p(0x1.fb035ap-2) = 0x1.9bddc2p-2, wrong before the exception list */
    { F_LOG1P, 0x41078febu, 0x400fe5e7u },  /* log1p(0x1.0f1fd6p+3) = 0x1.1fcbcep+1, wrong before the exception list */
    { F_LOG1P, 0x65d890d3u, 0x4254d1f9u },  /* log1p(0x1.b121a6p+76) = 0x1.a9a3f2p+5, wrong before the exception list */
    { F_LOG1P, 0x6f31a8ecu, 0x42845a89u },  /* log1p(0x1.6351d8p+95) = 0x1.08b512p+6, wrong before the exception list */
    { F_LOG1P, 0xb53ffffdu, 0xb5400001u },  /* log1p(-0x1.7ffffap-21) = -0x1.800002p-21, wrong before the exception list */
    { F_LOG1P, 0xb70fffe5u, 0xb710000du },  /* log1p(-0x1.1fffcap-17) = -0x1.20001ap-17, wrong before the exception list */
    { F_LOG1P, 0xbb0ec8c4u, 0xbb0ef0a5u },  /* log1p(-0x1.1d9188p-9) = -0x1.1de14ap-9, wrong before the exception list */
    { F_LOG1P, 0x55185f82u, 0x41efd648u },  /* log1p(0x1.30bf04p+43) = 0x1.dfac9p+4, 1.7e-17 from a midpoint */
    { F_LOG1P, 0x66a8c860u, 0x42595e46u },  /* log1p(0x1.5190cp+78) = 0x1.b2bc8cp+5, 3e-17 from a midpoint */
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
