/* sampler.c — next-token choice. Greedy is the default and the one the
 * reference tests use; sampling divides logits by the temperature, keeps the
 * smallest set of most likely tokens whose mass reaches top_p, and draws
 * from it with splitmix64, so runs are reproducible from the seed. */
#include <math.h>
#include <stdlib.h>
#include "session/sampler.h"

int sampler_argmax(const float *x, int n)
{
    int b = 0;
    for (int i = 1; i < n; i++) if (x[i] > x[b]) b = i;
    return b;
}

int sampler_init(sampler *s, int vocab, float temperature, float top_p, uint64_t seed)
{
    s->temperature = temperature;
    s->top_p = top_p;
    s->rng = seed;
    s->vocab = vocab;
    s->order = malloc((size_t)vocab * sizeof *s->order);
    s->probs = malloc((size_t)vocab * sizeof *s->probs);
    return s->order && s->probs ? 0 : -1;
}

void sampler_free(sampler *s)
{
    free(s->order);
    free(s->probs);
    s->order = NULL;
    s->probs = NULL;
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t sampler_turn_seed(uint64_t seed, int turn)
{
    uint64_t x = seed ^ ((uint64_t)turn << 32);
    return turn > 0 ? splitmix64(&x) : seed;
}

static int cmp_desc(const void *a, const void *b, void *probs)
{
    const float *p = probs;
    float x = p[*(const int *)a], y = p[*(const int *)b];
    if (x != y) return x > y ? -1 : 1;
    return *(const int *)a - *(const int *)b;
}

int sampler_pick(sampler *s, const float *logits)
{
    const int n = s->vocab;
    if (s->temperature <= 0) return sampler_argmax(logits, n);
    float mx = logits[sampler_argmax(logits, n)];
    double tot = 0;
    for (int i = 0; i < n; i++) {
        s->probs[i] = expf((logits[i] - mx) / s->temperature);
        tot += s->probs[i];
    }
    int keep = n;
    for (int i = 0; i < n; i++) { s->probs[i] = (float)(s->probs[i] / tot); s->order[i] = i; }
    if (s->top_p < 1) {
        qsort_r(s->order, (size_t)n, sizeof *s->order, cmp_desc, s->probs);
        double cum = 0;
        for (keep = 0; keep < n;) {
            cum += s->probs[s->order[keep++]];
            if (cum >= s->top_p) break;
        }
    }
    double mass = 0;
    for (int i = 0; i < keep; i++) mass += s->probs[s->order[i]];
    double r = (double)(splitmix64(&s->rng) >> 11) / 9007199254740992.0 * mass;
    for (int i = 0; i < keep; i++) {
        r -= s->probs[s->order[i]];
        if (r < 0) return s->order[i];
    }
    return s->order[keep - 1];
}
