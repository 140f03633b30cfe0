/* crmath_bench.c — what kernels/crmath.h costs against glibc: nanoseconds
 * per element of the model's element-wise loops (the SiTU GLU of norm.c,
 * two tanh and a sigmoid per element; the SiLU GLU; the KDA softplus) and
 * of each function alone, glibc and crmath rounds interleaved, the median
 * of ROUNDS (default 7). A benchmark: it prints figures and judges nothing.
 *
 *   make crmath-bench    or    build/rel/crmath-bench [ROUNDS]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "kernels/crmath.h"

#define N (1 << 20)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static float g_sig(float x) { return 1.0f / (1.0f + expf(-x)); }

/* The loops, as norm.c and kda.c write them (SiTU with K3's betas 4 and 25). */
#define SITU(TANH, SIG) for (int i = 0; i < N; i++) \
    o[i] = 4.0f * TANH(g[i] / 4.0f) * SIG(g[i]) * (25.0f * TANH(u[i] / 25.0f))
#define SILU(SIG) for (int i = 0; i < N; i++) o[i] = g[i] * SIG(g[i]) * u[i]
#define MAP(FN) for (int i = 0; i < N; i++) o[i] = FN(g[i])
#define SOFTPLUS(LOG1P, EXP) for (int i = 0; i < N; i++) o[i] = g[i] > 20.0f ? g[i] : LOG1P(EXP(g[i]))

static void run(int c, int lib, const float *g, const float *u, float *o)
{
    switch (c * 2 + lib) {
    case 0: SITU(tanhf, g_sig); break;
    case 1: SITU(crm_tanhf, crm_sigmoidf); break;
    case 2: SILU(g_sig); break;
    case 3: SILU(crm_sigmoidf); break;
    case 4: SOFTPLUS(log1pf, expf); break;
    case 5: SOFTPLUS(crm_log1pf, crm_expf); break;
    case 6: MAP(expf); break;
    case 7: MAP(crm_expf); break;
    case 8: MAP(tanhf); break;
    case 9: MAP(crm_tanhf); break;
    case 10: MAP(log1pf); break;
    case 11: MAP(crm_log1pf); break;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    if (rounds < 1 || rounds > 99) { fprintf(stderr, "usage: crmath-bench [ROUNDS 1..99]\n"); return 2; }
    static const char *const cases[] = { "SiTU GLU (2 tanh + sigmoid)", "SiLU GLU (sigmoid)",
                                         "softplus (log1p of exp)", "exp", "tanh", "log1p" };
    float *g = malloc(N * sizeof *g), *u = malloc(N * sizeof *u), *o = malloc(N * sizeof *o);
    if (!g || !u || !o) return 1;
    uint64_t s = 88172645463325252ull;
    for (int i = 0; i < N; i++) {          /* activations of the model's size: about +-6 */
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        g[i] = (float)((int64_t)(s >> 11) - (1ll << 52)) * 0x1p-50f;
        u[i] = (float)((int64_t)(s & 0xfffff) - (1 << 19)) * 0x1p-17f;
    }
    printf("ns per element over %d elements, median of %d interleaved rounds\n", N, rounds);
    printf("%-30s %8s %8s %7s\n", "", "glibc", "crmath", "ratio");
    double volatile sink = 0;
    for (int c = 0; c < 6; c++) {
        double t[2][99];
        for (int r = 0; r < rounds; r++)
            for (int lib = 0; lib < 2; lib++) {
                double t0 = now();
                run(c, lib, g, u, o);
                t[lib][r] = (now() - t0) * 1e9 / N;
                sink += o[r];
            }
        qsort(t[0], rounds, sizeof(double), cmp_double);
        qsort(t[1], rounds, sizeof(double), cmp_double);
        double a = t[0][rounds / 2], b = t[1][rounds / 2];
        printf("%-30s %8.2f %8.2f %7.2f\n", cases[c], a, b, b / a);
    }
    free(g); free(u); free(o);
    return 0;
}
