/* forced.h — a test hook: replies of given tokens ($REMORA_TEST_REPLIES)
 * instead of sampled ones (forced.c). */
#ifndef REMORA_SESSION_FORCED_H
#define REMORA_SESSION_FORCED_H
#include "engine.h"

/* The replies as token ids, taken in turn (a member of rm_session). */
typedef struct session_forced {
    int32_t **seqs;             /* [n] each reply's tokens */
    int *lens, n;
    int replies, cur, pos;      /* replies begun; the one in progress and its next token */
} session_forced;

/* Reads $REMORA_TEST_REPLIES when it is set. */
int  session_forced_open(rm_session *s, rm_err *err);
void session_forced_free(rm_session *s);
/* A reply begins: 1 when it is forced (its tokens chosen in turn). */
int  session_forced_begin(rm_session *s);
/* The next forced token of the reply; 0 when there is none left. */
int  session_forced_next(rm_session *s, int32_t *id);

#endif
