/* resume.c — the session API that keeps a snapshot (snapshot.c) beside a
 * transcript: the snapshot's name from the transcript's (rm_snapshot_path),
 * saving the state of the conversation, and loading it back for the
 * conversation as the next turn renders it (rm_session_save_with_state,
 * rm_session_load_with_state); a snapshot that does not fit is refused with
 * the reason in rm_resume and the conversation is prefilled instead. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "session/session.h"
#include "session/snapshot.h"

int rm_snapshot_path(const char *transcript, char *out, size_t cap)
{
    size_t n = strlen(transcript);
    if (n >= 6 && !strcmp(transcript + n - 6, ".jsonl")) n -= 6;
    int w = snprintf(out, cap, "%.*s.state", (int)n, transcript);
    return w < 0 || (size_t)w >= cap ? -1 : 0;
}

/* The tokens of the state that belong to the conversation, after an open
 * speculation checkpoint is committed. A state left from another
 * conversation (after a clear or a transcript load) holds none of it, and
 * is dropped: the next turn would reset it anyway. */
static int conversation_state(rm_session *s)
{
    rm_state_rollback(s->st, INT_MAX);      /* commits a checkpoint; undoes nothing */
    if (s->nfed > s->nseq || rm_state_pos(s->st) != s->nfed) {
        rm_state_reset(s->st);
        s->nfed = 0;
        s->logits_pos = -1;
    }
    return s->nfed;
}

int rm_session_save_state(rm_session *s, const char *path, rm_err *err)
{
    const int pos = conversation_state(s);
    const unsigned flags = SNAP_ROUTES | SNAP_SPEC | (s->logits_pos == pos ? SNAP_LOGITS : 0);
    return snap_write(s, path, s->st, s->seq, pos, flags, s->logits, err);
}

static void why(rm_resume *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why(rm_resume *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
}

/* Reads the snapshot at path for the conversation msgs[0..n): 0 with *d
 * filled, -1 with r->why saying why it is not used. Its tokens must begin
 * the conversation as the next turn renders it, without the generation
 * prompt; the rendering of earlier replies depends on whether the reasoning
 * channel is open, which a turn chooses, so either rendering will do (the
 * next turn's prompt decides: what it does not extend is computed again). */
static int read_for(rm_session *s, const char *path, const rm_chat_msg *msgs, int n, snap_data *d, rm_resume *r)
{
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        why(r, "%s: no snapshot", path);
        return -1;
    }
    r->found = 1;
    struct stat st;
    if (stat(path, &st) == 0) r->bytes = (uint64_t)st.st_size;
    int rc = -1;
    for (int think = 1; think >= 0 && rc; think--) {
        rm_err e = { "" };
        int32_t *ids = NULL;
        const rm_chat_opts co = { think, NULL, 0, NULL };
        const int nids = rm_chat_render(s->tok, s->fmt, msgs, n, &co, &ids, &e);
        if (nids < 0) why(r, "%s: not used: the conversation cannot be rendered: %s", path, e.msg);
        else if ((rc = snap_read(s, path, ids, nids, d, &e)) != 0 && think) why(r, "%s", e.msg);
        if (think || !rc) r->ctx = nids > 0 ? nids : 0;
        free(ids);
        if (rc && rc != SNAP_MISMATCH) break;      /* damaged or foreign: no rendering helps */
    }
    return rc ? -1 : 0;
}

int rm_session_load_state(rm_session *s, const char *path, rm_resume *r, rm_err *err)
{
    memset(r, 0, sizeof *r);
    const double t0 = rm_now();
    const rm_chat_msg *view;
    int n = rm_conv_context(&s->conv, &view);
    if (n < 0) return rm_errf(err, "out of memory");
    snap_data d;
    if (read_for(s, path, view, n, &d, r)) return rm_errf(err, "%s", r->why);
    const int tokens = d.tokens;
    if (session_install_snap(s, &d, err)) {
        snap_data_free(&d);
        why(r, "%s", err->msg);
        return -1;
    }
    r->restored = tokens;
    r->seconds = rm_now() - t0;
    return 0;
}

int rm_session_save_with_state(rm_session *s, const char *path, rm_err *err)
{
    char sp[4200];
    if (rm_snapshot_path(path, sp, sizeof sp)) return rm_errf(err, "%s: the name is too long", path);
    if (rm_session_save(s, path, err)) return -1;
    rm_err e;
    if (rm_session_save_state(s, sp, &e)) {
        rm_errf(err, "%s (the conversation itself was saved to %s)", e.msg, path);
        return 1;
    }
    return 0;
}

int rm_session_load_with_state(rm_session *s, const char *path, rm_resume *r, rm_err *err)
{
    memset(r, 0, sizeof *r);
    const double t0 = rm_now();
    char sp[4200];
    if (rm_snapshot_path(path, sp, sizeof sp)) return rm_errf(err, "%s: the name is too long", path);
    /* the conversation as the session will hold it: the file's system
     * prompt, or the session's when the file has none */
    rm_conv c = { 0 };
    if (rm_conv_load(&c, path, err)) return -1;
    if (!c.system && s->conv.system && rm_conv_set_system(&c, s->conv.system)) {
        rm_conv_free(&c);
        return rm_errf(err, "out of memory");
    }
    const rm_chat_msg *view;
    int n = rm_conv_context(&c, &view);
    if (n < 0) {
        rm_conv_free(&c);
        return rm_errf(err, "out of memory");
    }
    snap_data d;
    int have = read_for(s, sp, view, n, &d, r) == 0;
    session_take_conv(s, &c);
    if (have) {
        const int tokens = d.tokens;
        rm_err e;
        if (session_install_snap(s, &d, &e)) {
            snap_data_free(&d);
            why(r, "%s: not used: %s", sp, e.msg);
        } else {
            r->restored = tokens;
        }
    }
    r->seconds = rm_now() - t0;
    return 0;
}
