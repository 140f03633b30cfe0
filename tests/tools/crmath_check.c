/* crmath_check.c — the exhaustive proof that engine/kernels/crmath.h is
 * correctly rounded: every one of the 2^32 float inputs of crm_expf,
 * crm_tanhf and crm_log1pf is compared with the true value rounded to
 * float, and the mismatches are counted and the first ones printed.
 *
 * The reference is glibc's double function (within 2 units of 2^-53) when
 * the value's interval of +-2^-49 rounds to one float, else its long double
 * one (x87, within a few units of 2^-64) with an interval of +-2^-60;
 * where that too straddles a rounding boundary, and for every input with
 * --mpfr, MPFR at 200 bits decides (mpfr_get_flt rounds correctly,
 * subnormals included). With --glibc the same pass counts the inputs where
 * glibc's float function differs from the correct value.
 *
 *   make crmath-check                  (all three functions, 2 threads)
 *   build/rel/crmath-check [-t THREADS] [--mpfr | --sum] [--glibc] [--step N] [exp|tanh|log1p|sigmoid ...]
 *
 * --step N checks every Nth input only (with --mpfr: a sample that proves
 * the long double filter against MPFR). Each function's line ends with the
 * checksum of its results (crmath_sum.h), which tests/gpu/crmath_gpu.cu
 * prints for the GPU's; --sum computes only that, in seconds. It also lists
 * the inputs nearest a rounding boundary (the unit test's hard cases).
 * --sum also covers crm_sigmoidf, float arithmetic on crm_expf.
 * Exit status 0 when no input mismatches, 1 otherwise, 2 for bad
 * arguments.
 */
#include <inttypes.h>
#include <math.h>
#include <mpfr.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/crmath.h"
#include "crmath_sum.h"

typedef struct {
    const char *name;
    float (*ours)(float);
    float (*glibc)(float);
    double (*ref_d)(double);
    long double (*ref_ld)(long double);
    int (*ref_mp)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
} fn_desc;

static float our_exp(float x) { return crm_expf(x); }
static float our_tanh(float x) { return crm_tanhf(x); }
static float our_log1p(float x) { return crm_log1pf(x); }
static float our_sigmoid(float x) { return crm_sigmoidf(x); }
static float glibc_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

static const fn_desc FNS[] = {
    { "exp",   our_exp,   expf,   exp,   expl,   mpfr_exp },
    { "tanh",  our_tanh,  tanhf,  tanh,  tanhl,  mpfr_tanh },
    { "log1p", our_log1p, log1pf, log1p, log1pl, mpfr_log1p },
    /* float arithmetic on crm_expf, not a correctly rounded function:
     * only its checksum (--sum), for the GPU's */
    { "sigmoid", our_sigmoid, glibc_sigmoid, NULL, NULL, NULL },
};
#define NFNS (int)(sizeof FNS / sizeof FNS[0])

#define CHUNK (1u << 20)
#define NCHUNKS (1u << 12)          /* 2^32 / CHUNK */
#define KEEP 32                     /* mismatches kept for printing */
#define HARD 8                      /* hardest inputs kept for printing */

/* An input whose value lies close to a rounding boundary: dist is its
 * distance from the nearest midpoint of two floats, relative to the value
 * (0 when long double could not decide it). */
typedef struct { long double dist; uint32_t u, want; } hard_case;

typedef struct {
    const fn_desc *f;
    int use_mpfr, sum_only, glibc;
    uint32_t step;
    atomic_uint next;
    pthread_mutex_t mu;
    uint64_t checked, bad, glibc_bad, mpfr_calls, sum;
    uint32_t kept[KEEP][3];         /* input, ours, correct */
    int nkept;
    hard_case hard[HARD];           /* the hardest inputs, nearest first */
} job;

/* Keeps h among the HARD nearest of list (sorted by dist). */
static void keep_hard(hard_case *list, hard_case h)
{
    if (h.dist >= list[HARD - 1].dist) return;
    int i = HARD - 1;
    for (; i > 0 && list[i - 1].dist > h.dist; i--) list[i] = list[i - 1];
    list[i] = h;
}

static int same(float a, float b)
{
    if (a != a || b != b) return a != a && b != b;
    return crm_fbits(a) == crm_fbits(b);
}

/* Whether v, within rel of the true value, decides the rounding: then *r
 * is the float and *dist the value's relative distance from the nearest
 * midpoint between floats (1 for 0, Inf and NaN, which are exact). */
static int decide(long double v, long double rel, float *r, long double *dist)
{
    *r = (float)v;
    if (v != v || isinf(v) || v == 0) { *dist = 1; return 1; }
    long double e = fabsl(v) * rel;
    float lo = (float)(v - e), hi = (float)(v + e);
    if (lo != hi) return 0;
    long double up = (lo + (long double)nextafterf(lo, INFINITY)) / 2;
    long double dn = (lo + (long double)nextafterf(lo, -INFINITY)) / 2;
    long double d = fminl(fabsl(v - up), fabsl(v - dn)) / fabsl(v);
    *dist = d == d ? d : 1;
    return 1;
}

/* The correctly rounded value of f at x (x not NaN); *dist as decide's
 * (0 when MPFR decided). A distance the double value gives below 2^-40 is
 * measured again in long double, so that the hard cases are ranked right. */
static float correct(const fn_desc *f, float x, int use_mpfr, mpfr_t m, uint64_t *mpfr_calls,
                     long double *dist)
{
    float r;
    if (!use_mpfr) {
        if (decide(f->ref_d(x), 0x1p-49L, &r, dist) && *dist > 0x1p-40L) return r;
        if (decide(f->ref_ld(x), 0x1p-60L, &r, dist)) return r;
    }
    *dist = 0;
    (*mpfr_calls)++;
    mpfr_set_flt(m, x, MPFR_RNDN);
    f->ref_mp(m, m, MPFR_RNDN);
    return mpfr_get_flt(m, MPFR_RNDN);
}

static void *worker(void *ud)
{
    job *j = ud;
    mpfr_t m;
    mpfr_init2(m, 200);
    hard_case hard[HARD];
    for (int i = 0; i < HARD; i++) hard[i] = (hard_case){ 2, 0, 0 };
    unsigned c;
    while ((c = atomic_fetch_add(&j->next, 1)) < NCHUNKS) {
        uint64_t checked = 0, bad = 0, gbad = 0, calls = 0, sum = 0;
        uint32_t u0 = c * CHUNK;
        uint32_t first = (j->step - u0 % j->step) % j->step;
        for (uint64_t i = first; i < CHUNK; i += j->step) {
            uint32_t u = u0 + (uint32_t)i;
            float x = crm_from_fbits(u);
            float ours = j->f->ours(x);
            sum += crm_sum_term(u, crm_sum_canon(ours));
            if (j->sum_only) { checked++; continue; }
            long double dist = 1;
            float want = x != x ? x : correct(j->f, x, j->use_mpfr, m, &calls, &dist);
            checked++;
            if (dist < hard[HARD - 1].dist) keep_hard(hard, (hard_case){ dist, u, crm_fbits(want) });
            if (j->glibc && !same(j->f->glibc(x), want)) gbad++;
            if (same(ours, want)) continue;
            bad++;
            pthread_mutex_lock(&j->mu);
            if (j->nkept < KEEP) {
                j->kept[j->nkept][0] = u;
                j->kept[j->nkept][1] = crm_fbits(ours);
                j->kept[j->nkept][2] = crm_fbits(want);
                j->nkept++;
            }
            pthread_mutex_unlock(&j->mu);
        }
        pthread_mutex_lock(&j->mu);
        j->checked += checked; j->bad += bad; j->glibc_bad += gbad; j->mpfr_calls += calls; j->sum += sum;
        for (int i = 0; i < HARD; i++) {
            keep_hard(j->hard, hard[i]);
            hard[i] = (hard_case){ 2, 0, 0 };
        }
        pthread_mutex_unlock(&j->mu);
    }
    mpfr_clear(m);
    mpfr_free_cache();
    return NULL;
}

static int cmp_kept(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int run(const fn_desc *f, int threads, int use_mpfr, int sum_only, int glibc, uint32_t step)
{
    job j = { .f = f, .use_mpfr = use_mpfr, .sum_only = sum_only, .glibc = glibc, .step = step };
    for (int i = 0; i < HARD; i++) j.hard[i] = (hard_case){ 2, 0, 0 };
    atomic_init(&j.next, 0);
    pthread_mutex_init(&j.mu, NULL);
    pthread_t t[64];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, worker, &j) != 0) {
            fprintf(stderr, "crmath-check: cannot start a thread\n");
            exit(1);
        }
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    qsort(j.kept, j.nkept, sizeof j.kept[0], cmp_kept);
    if (sum_only)
        printf("%-5s: %" PRIu64 " inputs, checksum 0x%016" PRIx64 "\n", f->name, j.checked, j.sum);
    else
        printf("%-5s: %" PRIu64 " inputs, %" PRIu64 " mismatches, %" PRIu64 " decided by MPFR; "
               "checksum 0x%016" PRIx64 "\n", f->name, j.checked, j.bad, j.mpfr_calls, j.sum);
    if (glibc)
        printf("  glibc's %sf differs from the correct value on %" PRIu64 " of them\n", f->name, j.glibc_bad);
    for (int i = 0; i < j.nkept; i++)
        printf("  %s(%a) [0x%08" PRIx32 "] = %a [0x%08" PRIx32 "], correct %a [0x%08" PRIx32 "]\n",
               f->name, crm_from_fbits(j.kept[i][0]), j.kept[i][0],
               crm_from_fbits(j.kept[i][1]), j.kept[i][1], crm_from_fbits(j.kept[i][2]), j.kept[i][2]);
    if (!use_mpfr && !sum_only)
        for (int i = 0; i < HARD && j.hard[i].dist <= 1; i++)
            printf("  hard: { 0x%08" PRIx32 "u, 0x%08" PRIx32 "u },  /* %s(%a) = %a, %.2Lg from a midpoint */\n",
                   j.hard[i].u, j.hard[i].want, f->name, crm_from_fbits(j.hard[i].u),
                   crm_from_fbits(j.hard[i].want), j.hard[i].dist);
    fflush(stdout);
    pthread_mutex_destroy(&j.mu);
    return j.bad != 0;
}

int main(int argc, char **argv)
{
    int threads = 2, use_mpfr = 0, sum_only = 0, glibc = 0, want[NFNS] = { 0 }, any = 0;
    uint32_t step = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-t") && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--step") && i + 1 < argc) {
            step = (uint32_t)strtoul(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--mpfr")) {
            use_mpfr = 1;
        } else if (!strcmp(argv[i], "--sum")) {
            sum_only = 1;
        } else if (!strcmp(argv[i], "--glibc")) {
            glibc = 1;
        } else {
            int k = -1;
            for (int f = 0; f < NFNS; f++) if (!strcmp(argv[i], FNS[f].name)) k = f;
            if (k < 0) {
                fprintf(stderr, "usage: crmath-check [-t THREADS] [--mpfr | --sum] [--glibc] [--step N] [exp|tanh|log1p|sigmoid ...]\n");
                return 2;
            }
            want[k] = any = 1;
        }
    }
    for (int f = 0; f < NFNS; f++)
        if (want[f] && !FNS[f].ref_ld && !sum_only) {
            fprintf(stderr, "crmath-check: %s has no reference; it takes --sum\n", FNS[f].name);
            return 2;
        }
    if (threads < 1 || threads > 64 || step < 1) {
        fprintf(stderr, "crmath-check: -t takes 1 to 64 threads and --step a positive count\n");
        return 2;
    }
    int bad = 0;
    for (int f = 0; f < NFNS; f++)
        if ((!any && (FNS[f].ref_ld || sum_only)) || want[f]) bad |= run(&FNS[f], threads, use_mpfr, sum_only, glibc, step);
    return bad;
}
