/* sampler.h — turning logits into the next token: greedy (argmax, ties to
 * the lower id), or temperature with nucleus (top-p) filtering driven by a
 * seeded generator, so a run with the same seed is reproducible. */
#ifndef REMORA_SAMPLER_H
#define REMORA_SAMPLER_H
#include <stdint.h>

typedef struct sampler {
    float temperature;      /* <= 0: greedy */
    float top_p;            /* >= 1: off */
    uint64_t rng;           /* splitmix64 state */
    int  *order;            /* scratch [vocab] */
    float *probs;           /* scratch [vocab] */
    int   vocab;
} sampler;

int  sampler_init(sampler *s, int vocab, float temperature, float top_p, uint64_t seed);
void sampler_free(sampler *s);
int  sampler_pick(sampler *s, const float *logits);
/* The seed of a conversation's turn `turn` (0-based): the first turn's is
 * the seed itself, so a one-turn run samples as it always did; later turns
 * get theirs mixed from it (splitmix64), so they do not all draw the same
 * numbers, and a conversation resumed from its transcript draws what it
 * would have drawn without a restart. */
uint64_t sampler_turn_seed(uint64_t seed, int turn);
int  sampler_argmax(const float *logits, int n);

#endif
