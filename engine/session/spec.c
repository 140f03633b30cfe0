/* spec.c — the n-gram drafter and its cost gate (spec.h).
 *
 * Index: for every n in 1..SPEC_NMAX, a hash of the n-gram ending at
 * position i-1 maps to i, the position after it; a later occurrence
 * overwrites an earlier one, so a lookup finds the most recent. A draft
 * looks up the context's last n tokens for n from SPEC_NMAX down to 1 and
 * copies what followed.
 *
 * Gate (mode auto): with p the acceptance of a draft token for this match
 * length, a verify pass of k drafts emits 1 + p + p² + … + p^k tokens on
 * average and costs t_plain + k·t_pos + bytes(k)/bw, where bytes(k) is the
 * predicted storage bytes of the k draft positions' experts; the k that
 * maximises tokens per second is chosen, and 0 (a plain step) when none
 * beats 1 / t_plain. t_pos is what a verify pass took beyond a plain step
 * and beyond its extra expert bytes at the measured bandwidth. Routes do not
 * always repeat with their tokens (they depend on the context too), so the
 * prediction is calibrated: the bytes per position that verify passes read
 * beyond what was predicted (miss_pos, running) are added to it. A
 * one-token probe after a run of declined chances keeps the acceptance
 * estimate alive (probe_interval).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "session/spec.h"
#include "engine.h"

static uint64_t ngram_hash(const int32_t *t, int n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)(uint32_t)t[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    return h | 1;   /* 0 marks an empty slot */
}

int spec_init(spec *s, int mode)
{
    memset(s, 0, sizeof *s);
    s->mode = mode;
    s->tab_cap = 4096;
    s->tab = calloc((size_t)s->tab_cap, sizeof *s->tab);
    for (int n = 0; n <= SPEC_NMAX; n++) s->p_accept[n] = 0.5;
    s->pred_last = -1;
    return s->tab ? 0 : -1;
}

void spec_free(spec *s)
{
    free(s->ctx);
    free(s->tab);
    memset(s, 0, sizeof *s);
}

void spec_reset(spec *s)
{
    s->n = 0;
    s->tab_used = 0;
    memset(s->tab, 0, (size_t)s->tab_cap * sizeof *s->tab);
}

static spec_entry *slot(spec *s, uint64_t h, int n, const int32_t *gram)
{
    for (uint64_t i = h;; i++) {
        spec_entry *e = &s->tab[i & (uint64_t)(s->tab_cap - 1)];
        if (!e->h) return e;
        if (e->h == h && e->n == n && !memcmp(s->ctx + e->pos - n, gram, (size_t)n * sizeof *gram)) return e;
    }
}

static int grow(spec *s)
{
    spec_entry *old = s->tab;
    int oc = s->tab_cap;
    s->tab_cap *= 2;
    if (!(s->tab = calloc((size_t)s->tab_cap, sizeof *s->tab))) { s->tab = old; s->tab_cap = oc; return -1; }
    for (int i = 0; i < oc; i++)
        if (old[i].h) *slot(s, old[i].h, old[i].n, s->ctx + old[i].pos - old[i].n) = old[i];
    free(old);
    return 0;
}

int spec_push(spec *s, const int32_t *ids, int n)
{
    for (int k = 0; k < n; k++) {
        if (RM_GROW(s->ctx, s->cap, s->n + 1)) return -1;
        /* index the n-grams that end just before the new token */
        for (int g = 1; g <= SPEC_NMAX && g <= s->n; g++) {
            if (2 * (s->tab_used + 1) > s->tab_cap && grow(s)) return -1;
            const int32_t *gram = s->ctx + s->n - g;
            spec_entry *e = slot(s, ngram_hash(gram, g), g, gram);
            if (!e->h) s->tab_used++;
            *e = (spec_entry){ ngram_hash(gram, g), s->n, (int16_t)g };
        }
        s->ctx[s->n++] = ids[k];
    }
    return 0;
}

/* The longest suffix match: returns the position after the earlier
 * occurrence and sets *match_n, or -1. */
static int lookup(spec *s, int *match_n)
{
    for (int g = SPEC_NMAX < s->n ? SPEC_NMAX : s->n; g >= 1; g--) {
        const int32_t *gram = s->ctx + s->n - g;
        spec_entry *e = slot(s, ngram_hash(gram, g), g, gram);
        if (e->h && e->pos < s->n) { *match_n = g; return e->pos; }
    }
    return -1;
}

/* Read bandwidth assumed before one has been measured: 1 GB/s. */
static double bandwidth(const spec *s) { return s->bw > 0 ? s->bw : 1e9; }

/* Tokens per second of a verify pass with k drafts whose positions read
 * `bytes` more from storage. */
static double rate(const spec *s, double p, int k, double bytes)
{
    double tokens = 1, pi = 1;
    for (int i = 0; i < k; i++) { pi *= p; tokens += pi; }
    return tokens / (s->t_plain + k * s->t_pos + bytes / bandwidth(s));
}

/* Declined chances between probes: 16 at the prior acceptance (0.5),
 * growing as the square of how far the estimate p has fallen below it, at
 * most 256. A probe that finds nothing costs one verify position; where
 * that costs as much as a plain step (weights resident, the step bound by
 * arithmetic) a fixed 16 took 1/17 of the time, below the 0.97 of `off`
 * that auto must keep on text it cannot predict; each rejected probe lowers
 * p by a tenth, so the probes space out (45 after five, 256 after fourteen),
 * and an accepted one brings them back. */
static int probe_interval(double p)
{
    if (p >= 0.5) return 16;
    double r = 0.5 / (p > 0.03125 ? p : 0.03125);
    double n = 16 * r * r;
    return n < 256 ? (int)n : 256;
}

int spec_draft(spec *s, int32_t *out, int kmax)
{
    if (s->mode == RM_SPEC_OFF || kmax <= 0) return 0;
    if (s->oracle) {
        s->last_match_n = SPEC_NMAX;
        s->pred_last = -1;
        return s->oracle(s->oracle_ud, s->ctx, s->n, out, kmax);
    }
    int g = 0, at = lookup(s, &g);
    if (at < 0) return 0;
    int avail = s->n - at;
    if (avail > kmax) avail = kmax;
    if (avail <= 0) return 0;
    int k = avail;
    if (s->mode == RM_SPEC_AUTO && s->t_plain > 0) {
        double cum[SPEC_KMAX + 1];
        if (s->predict) s->predict(s->predict_ud, at, avail, cum);
        else for (int j = 0; j <= avail; j++) cum[j] = j * s->bytes_plain;
        double best = 1.0 / s->t_plain;
        k = 0;
        for (int j = 1; j <= avail; j++) {
            double r = rate(s, s->p_accept[g], j, cum[j] + j * s->miss_pos);
            if (r > best * 1.02) { best = r; k = j; }
        }
        if (!k && ++s->since_probe >= probe_interval(s->p_accept[g])) { k = 1; s->since_probe = 0; }
        if (!k) s->declined++;
        s->pred_last = k ? cum[k] : -1;
    } else {
        s->pred_last = -1;
    }
    memcpy(out, s->ctx + at, (size_t)k * sizeof *out);
    s->last_match_n = g;
    return k;
}

static double ema(double old, double x, int first) { return first ? x : 0.8 * old + 0.2 * x; }

void spec_plain(spec *s, double seconds, double bytes, double gbps)
{
    const int first = s->plain_steps++ == 0;
    s->t_plain = ema(s->t_plain, seconds, first);
    s->bytes_plain = ema(s->bytes_plain, bytes, first);
    if (gbps > 0) s->bw = ema(s->bw, gbps * 1e9, s->bw <= 0);
}

void spec_verified(spec *s, int drafted, int accepted, double seconds, double bytes, double gbps)
{
    s->drafted += (uint64_t)drafted;
    s->accepted += (uint64_t)accepted;
    s->verify_passes++;
    if (gbps > 0) s->bw = ema(s->bw, gbps * 1e9, s->bw <= 0);
    if (drafted > 0) {
        /* what the extra positions cost beyond their extra reads */
        double extra_reads = (bytes - s->bytes_plain) / bandwidth(s);
        double per = s->t_plain > 0 ? (seconds - s->t_plain - (extra_reads > 0 ? extra_reads : 0)) / drafted
                                    : seconds / (drafted + 1);
        if (per < 0) per = 0;
        s->t_pos = ema(s->t_pos, per, s->verify_passes == 1);
        if (s->pred_last >= 0) {
            double miss = (bytes - s->bytes_plain - s->pred_last) / drafted;
            s->miss_pos = ema(s->miss_pos, miss > 0 ? miss : 0, s->calibrations++ == 0);
        }
        /* acceptance per draft token: accepted counts a prefix, so weight the
         * first rejection as one failure */
        double *p = &s->p_accept[s->last_match_n];
        int trials = accepted + (accepted < drafted);
        for (int i = 0; i < trials; i++) *p = 0.9 * *p + 0.1 * (i < accepted ? 1.0 : 0.0);
    }
}

void spec_export(const spec *s, double out[SPEC_STATS_N])
{
    const double v[SPEC_STATS_N] = { s->t_plain, s->plain_steps, s->t_pos, s->bytes_plain, s->bw, s->miss_pos,
                                     s->calibrations, s->since_probe, (double)s->drafted, (double)s->accepted,
                                     (double)s->verify_passes, s->p_accept[0], s->p_accept[1], s->p_accept[2],
                                     s->p_accept[3], s->p_accept[4], s->last_match_n, s->pred_last };
    memcpy(out, v, sizeof v);
}

int spec_import(spec *s, const double in[SPEC_STATS_N])
{
    _Static_assert(SPEC_NMAX == 4, "spec_export lists p_accept[0..4]");
    for (int i = 0; i < SPEC_STATS_N - 1; i++)      /* pred_last may be -1 */
        if (!(in[i] >= 0 && in[i] < 1e18)) return -1;
    for (int i = 11; i <= 15; i++)
        if (in[i] > 1) return -1;
    if (in[1] > INT_MAX || in[6] > INT_MAX || in[7] > INT_MAX) return -1;
    if (in[16] > SPEC_NMAX || !(in[17] >= -1 && in[17] < 1e18)) return -1;
    s->t_plain = in[0];
    s->plain_steps = (int)in[1];
    s->t_pos = in[2];
    s->bytes_plain = in[3];
    s->bw = in[4];
    s->miss_pos = in[5];
    s->calibrations = (int)in[6];
    s->since_probe = (int)in[7];
    s->drafted = (uint64_t)in[8];
    s->accepted = (uint64_t)in[9];
    s->verify_passes = (uint64_t)in[10];
    for (int n = 0; n <= SPEC_NMAX; n++) s->p_accept[n] = in[11 + n];
    s->last_match_n = (int)in[16];
    s->pred_last = in[17];
    return 0;
}
