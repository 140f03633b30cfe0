/* turns.h — what a session's turn produced, for the tests that compare two
 * runs bit for bit (test_snapshot.c, test_prefix.c; not a test file): every
 * logits row the turn sampled from (session_test_logits), its tokens and
 * its prompt's figures, with an optional stop after some tokens or in some
 * pass of the prompt. Static, so a test that does not use one pays nothing. */
#ifndef REMORA_TEST_TURNS_H
#define REMORA_TEST_TURNS_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/test.h"
#include "session/session.h"

/* The model directory of a name: a fixture, or "embedded" (assets/model). */
static inline const char *test_model_dir(const char *name)
{
    return strcmp(name, "embedded") ? fixture_path(name) : fixture_path("../../assets/model");
}

/* A turn's record: zero it, set the stops wanted, run_turn, rec_free. */
typedef struct turn_rec {
    float *rows;                /* every logits row sampled from */
    int nrows, cap, V;
    int32_t ids[64];
    int nids;
    rm_prompt_figures prompt;   /* the prompt's record */
    int stop_after;             /* tokens, then *stop */
    int stop_at_pass;           /* > 0: *stop in that pass of the prompt */
    volatile int *stop;
    uint64_t drafted;
} turn_rec;

static inline void rec_rows(void *ud, const float *logits, int V)
{
    turn_rec *r = ud;
    if (r->nrows == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->rows = realloc(r->rows, (size_t)r->cap * V * sizeof *r->rows);
    }
    r->V = V;
    memcpy(r->rows + (size_t)r->nrows++ * V, logits, (size_t)V * sizeof *logits);
}

static inline void rec_stats(void *ud, const rm_token_stats *st)
{
    turn_rec *r = ud;
    if (st->kind == RM_REC_PROMPT) r->prompt = st->prompt;
    if (st->kind == RM_REC_PROGRESS && r->stop_at_pass && st->prompt.chunk == r->stop_at_pass && st->prompt.layer == 2)
        *r->stop = 1;
    if (st->kind != RM_REC_TOKEN || r->nids >= 64) return;
    r->ids[r->nids++] = st->token_id;
    r->drafted = st->spec_drafted;
    if (r->stop_after && r->nids >= r->stop_after) *r->stop = 1;
}

static inline void rec_free(turn_rec *r) { free(r->rows); memset(r, 0, sizeof *r); }

static inline int same_rows(const turn_rec *a, const turn_rec *b)
{
    return a->nrows > 0 && a->nrows == b->nrows && a->V == b->V && a->nids == b->nids &&
           !memcmp(a->rows, b->rows, (size_t)a->nrows * a->V * sizeof *a->rows) &&
           !memcmp(a->ids, b->ids, (size_t)a->nids * sizeof *a->ids);
}

static inline int run_turn(rm_session *s, const char *text, const rm_gen_opts *o, turn_rec *r)
{
    volatile int stop = 0;
    r->stop = &stop;
    rm_gen_events ev = { r, NULL, rec_stats };
    rm_err err;
    session_test_logits(s, rec_rows, r);
    int rc = rm_session_turn(s, text, o, &ev, &stop, &err);
    if (rc) fprintf(stderr, "    turn: %s\n", err.msg);
    session_test_logits(s, NULL, NULL);
    return rc;
}

#endif
