/* snapshot.h — a session's state on disk: the snapshot format, written
 * whole or layer by layer, read back and checked, installed (snapshot.c). */
#ifndef REMORA_SESSION_SNAPSHOT_H
#define REMORA_SESSION_SNAPSHOT_H
#include "engine.h"
#include "session/spec.h"

/* What a snapshot holds besides the state (the header's flags). */
enum { SNAP_LOGITS = 1, SNAP_ROUTES = 2, SNAP_SPEC = 4 };
/* A snapshot being written, also layer by layer while a pass runs. */
typedef struct snap_out snap_out;
/* Starts PATH (a temporary file beside it), or a snapshot in memory when
 * path is NULL: the header and ids[0..pos). */
snap_out *snap_begin(rm_session *s, const char *path, const int32_t *ids, int pos, unsigned flags, rm_err *err);
/* Layer l of st at position pos; layers must come in order. */
void snap_layer(snap_out *o, rm_state *st, int l, int pos);
/* The sections after the layers (logits from `logits` when flags say so),
 * the CRC, and the atomic commit; o is freed. Returns 0 or -1 (the file
 * left as it was; why names PATH). */
int  snap_finish(snap_out *o, rm_session *s, const float *logits, rm_err *err);
/* The same for one begun in memory: returns the snapshot's bytes (*len of
 * them, the caller's to free), or NULL (why in err); o is freed. Their CRC
 * is left out (it guards files); snap_seal_mem puts it in before the bytes
 * are written to a file. */
unsigned char *snap_finish_mem(snap_out *o, rm_session *s, const float *logits, size_t *len, rm_err *err);
void snap_seal_mem(unsigned char *buf, size_t len);
void snap_abort(snap_out *o);
/* The size of a snapshot of pos tokens with these sections. */
uint64_t snap_file_bytes(const rm_session *s, int pos, unsigned flags);
/* The whole snapshot of state st at pos with ids in one call. */
int  snap_write(rm_session *s, const char *path, rm_state *st, const int32_t *ids, int pos, unsigned flags,
                const float *logits, rm_err *err);
/* A snapshot read back and checked, not yet part of a session. */
typedef struct snap_data {
    int tokens;
    unsigned flags;
    int32_t *ids;
    rm_state *st;               /* at position `tokens` */
    float *logits;              /* [V] (SNAP_LOGITS) */
    int16_t *routes;            /* [tokens][MoE layers][topk] (SNAP_ROUTES) */
    double spec[SPEC_STATS_N];  /* SNAP_SPEC */
} snap_data;
enum { SNAP_MISMATCH = -2 };
/* Reads PATH for this session's model; every size is checked against the
 * file and the model before anything is allocated, and the CRC before it is
 * used. With expect, the snapshot's ids must be a prefix of expect[0..n)
 * (else SNAP_MISMATCH). Returns 0, SNAP_MISMATCH or -1 ("PATH: ..." why). */
int  snap_read(rm_session *s, const char *path, const int32_t *expect, int n, snap_data *d, rm_err *err);
/* The same for a snapshot's bytes in memory (buf[0..len), from
 * snap_finish_mem: the CRC is not checked); name is what messages call it. */
int  snap_read_mem(rm_session *s, const char *name, const void *buf, size_t len, const int32_t *expect, int n,
                   snap_data *d, rm_err *err);
void snap_data_free(snap_data *d);
/* Makes d the session's state (d is emptied): the state, seq = the ids,
 * and what else it holds; `restored` counts its tokens for the next
 * prompt's figures. */
int  session_install_snap(rm_session *s, snap_data *d, rm_err *err);

#endif
