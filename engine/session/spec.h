/* spec.h — lossless n-gram speculation: drafts from suffix matches over the
 * conversation so far, and the decision whether drafting pays.
 *
 * K3 has no draft head, so drafts must be free: when the last n tokens
 * occurred before, the tokens that followed them then are proposed. One
 * forward pass over the k+1 positions verifies them; greedy decoding keeps
 * exactly the tokens it would have produced anyway (generate.c), so output
 * never changes. Whether to draft, and how far, is decided by weighing the
 * expected tokens (from how often drafts of this match length were accepted)
 * against the predicted cost: a plain step, plus per extra position its
 * arithmetic and the storage bytes of its experts that are neither resident
 * nor in flight, predicted from where the drafted tokens occurred before
 * (route_hist.h), at the measured read bandwidth.
 */
#ifndef REMORA_SPEC_H
#define REMORA_SPEC_H
#include <stdint.h>

#define SPEC_NMAX 4         /* longest n-gram looked up */
/* Longest draft: with the current token, a verify pass of 8 positions fills
 * two of the gemm kernels' 4-token tiles; a 9th position costs a third tile
 * of which three quarters are padding. */
#define SPEC_KMAX 7

typedef struct spec_entry { uint64_t h; int32_t pos; int16_t n; } spec_entry;

typedef struct spec {
    int mode;               /* RM_SPEC_AUTO, RM_SPEC_OFF, RM_SPEC_ON */
    int32_t *ctx;           /* the token context */
    int n, cap;
    spec_entry *tab;        /* hash of n-gram -> position after its last occurrence */
    int tab_cap, tab_used;
    int last_match_n;       /* n of the match behind the last draft */
    /* running estimates (auto) */
    double t_plain;                 /* seconds of a plain step */
    int plain_steps;
    double t_pos;                   /* seconds of arithmetic per extra position */
    double bytes_plain;             /* expert bytes a plain step reads from storage */
    double bw;                      /* expert read bandwidth, bytes/s (0: unknown) */
    double miss_pos;                /* bytes per position read beyond the prediction */
    double pred_last;               /* predicted bytes of the last draft, -1: none */
    int calibrations;
    double p_accept[SPEC_NMAX + 1]; /* per match length: P(draft token accepted) */
    int since_probe;
    /* predicted storage bytes of the first j = 1..k draft positions copied
     * from context positions src, src+1, ... (cum[0] = 0); NULL: each costs
     * bytes_plain */
    void (*predict)(void *ud, int src, int k, double *cum);
    void *predict_ud;
    /* test hook (session_test_draft_oracle): a drafter that replaces the
     * n-gram lookup */
    int (*oracle)(void *ud, const int32_t *ctx, int n, int32_t *out, int kmax);
    void *oracle_ud;
    /* totals */
    uint64_t drafted, accepted, verify_passes;
    uint64_t declined;              /* matches the cost gate did not draft */
} spec;

int  spec_init(spec *s, int mode);
void spec_free(spec *s);
void spec_reset(spec *s);
/* Appends tokens to the context (and the index). */
int  spec_push(spec *s, const int32_t *ids, int n);
/* Proposes up to kmax tokens to follow the context, after the gate; 0 when
 * drafting does not pay (or nothing matches). */
int  spec_draft(spec *s, int32_t *out, int kmax);
/* What happened: a plain step took `seconds` and read `bytes` of experts
 * at `gbps` (0: nothing read); a verify pass of `drafted` tokens kept
 * `accepted` of them, took `seconds` and read `bytes` of experts. */
void spec_plain(spec *s, double seconds, double bytes, double gbps);
void spec_verified(spec *s, int drafted, int accepted, double seconds, double bytes, double gbps);
/* The running estimates and totals as numbers (a snapshot keeps them, so a
 * resumed conversation drafts as well as it did before); import takes
 * back what export wrote and refuses (-1, nothing changed) values no run
 * produces: negative times or counts, acceptances outside [0, 1]. */
#define SPEC_STATS_N 18
void spec_export(const spec *s, double out[SPEC_STATS_N]);
int  spec_import(spec *s, const double in[SPEC_STATS_N]);

#endif
