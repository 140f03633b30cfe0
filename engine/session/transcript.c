/* transcript.c — conversations as JSONL (rm_transcript_save/load in
 * engine.h), and a session's conversation through them (rm_session_save,
 * rm_session_load).
 *
 * One JSON object per line: {"role", "content"} plus "reasoning_content"
 * when the message has one and "interrupted": true for a reply stopped
 * before its end; the system prompt is the first line, role "system".
 * Lines are written with JSON_ENSURE_ASCII, so a transcript is plain ASCII
 * whatever the text, and the file is replaced atomically (rm_write_atomic).
 * Reading checks every line and names the file and line of the first bad
 * one; a load that fails changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "session/session.h"

/* One JSONL line for a message; j is consumed. */
static int append_line(rm_buf *b, json_t *j)
{
    char *line = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(j);
    int rc = !line || rm_buf_adds(b, line) || rm_buf_add(b, "\n", 1) ? -1 : 0;
    free(line);
    return rc;
}

int rm_transcript_save(const char *path, const rm_chat_msg *msgs, const int *interrupted, int n,
                       const char *system, rm_err *err)
{
    rm_buf b = { 0 };
    int bad = system && append_line(&b, json_pack("{s:s,s:s}", "role", "system", "content", system));
    for (int i = 0; i < n && !bad; i++) {
        const rm_chat_msg *m = &msgs[i];
        json_t *j = json_pack("{s:s,s:s}", "role", m->role ? m->role : "", "content", m->content ? m->content : "");
        if (j && m->reasoning_content) json_object_set_new(j, "reasoning_content", json_string(m->reasoning_content));
        if (j && interrupted && interrupted[i]) json_object_set_new(j, "interrupted", json_true());
        if (j && interrupted && interrupted[i] == RM_STOPPED_PROMPT)
            json_object_set_new(j, "stopped_in", json_string("prompt"));
        bad = append_line(&b, j);
    }
    int rc = bad ? rm_errf(err, "%s: out of memory writing the transcript", path)
                 : rm_write_atomic(path, b.p ? b.p : "", b.len, 0644, err);
    rm_buf_free(&b);
    return rc;
}

void rm_transcript_free(rm_transcript *t)
{
    for (int i = 0; i < t->n; i++) {
        free((char *)t->msgs[i].role);
        free((char *)t->msgs[i].content);
        free((char *)t->msgs[i].reasoning_content);
    }
    free(t->msgs);
    free(t->interrupted);
    free(t->system);
    memset(t, 0, sizeof *t);
}

/* Appends one message (strings copied). */
static int add_msg(rm_transcript *t, int *cap, int *icap, const char *role, const char *content,
                   const char *reasoning, int interrupted)
{
    if (RM_GROW(t->msgs, *cap, t->n + 1) || RM_GROW(t->interrupted, *icap, t->n + 1)) return -1;
    rm_chat_msg *m = &t->msgs[t->n];
    *m = (rm_chat_msg){ strdup(role), strdup(content), reasoning ? strdup(reasoning) : NULL, NULL };
    if (!m->role || !m->content || (reasoning && !m->reasoning_content)) {
        free((char *)m->role); free((char *)m->content); free((char *)m->reasoning_content);
        return -1;
    }
    t->interrupted[t->n++] = interrupted;
    return 0;
}

int rm_transcript_load(const char *path, rm_transcript *t, rm_err *err)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f) return rm_errf(err, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    int lineno = 0, rc = 0, cap = 0, icap = 0;
    while ((len = getline(&line, &lcap, f)) > 0) {
        lineno++;
        if (len == 1 && line[0] == '\n') continue;
        json_error_t je;
        json_t *j = json_loadb(line, (size_t)len, 0, &je);
        const char *role = j ? json_string_value(json_object_get(j, "role")) : NULL;
        const char *content = j ? json_string_value(json_object_get(j, "content")) : NULL;
        json_t *rj = j ? json_object_get(j, "reasoning_content") : NULL;
        if (!j) rc = rm_errf(err, "%s:%d: not valid JSON: %s", path, lineno, je.text);
        else if (!role || (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant") &&
                           strcmp(role, "tool")))
            rc = rm_errf(err, "%s:%d: \"role\" must be system, user, assistant or tool", path, lineno);
        else if (!content) rc = rm_errf(err, "%s:%d: \"content\" must be a string", path, lineno);
        else if (rj && !json_is_null(rj) && !json_is_string(rj))
            rc = rm_errf(err, "%s:%d: \"reasoning_content\" must be a string", path, lineno);
        else if (!strcmp(role, "system") && t->n == 0) {    /* the system prompt */
            char *sys = strdup(content);
            if (!sys) rc = rm_errf(err, "out of memory");
            else { free(t->system); t->system = sys; }
        } else if (add_msg(t, &cap, &icap, role, content, json_string_value(rj),
                           !json_is_true(json_object_get(j, "interrupted")) ? 0
                           : json_string_value(json_object_get(j, "stopped_in")) &&
                                     !strcmp(json_string_value(json_object_get(j, "stopped_in")), "prompt")
                               ? RM_STOPPED_PROMPT : RM_STOPPED_REPLY))
            rc = rm_errf(err, "out of memory");
        json_decref(j);
        if (rc) break;
    }
    free(line);
    fclose(f);
    if (rc) rm_transcript_free(t);
    return rc;
}

int rm_session_save(const rm_session *s, const char *path, rm_err *err)
{
    rm_chat_msg *msgs = calloc((size_t)s->nmsgs + 1, sizeof *msgs);
    int *interrupted = calloc((size_t)s->nmsgs + 1, sizeof *interrupted);
    int rc;
    if (!msgs || !interrupted) rc = rm_errf(err, "%s: out of memory writing the transcript", path);
    else {
        for (int i = 0; i < s->nmsgs; i++) {
            msgs[i] = (rm_chat_msg){ s->msgs[i].role, s->msgs[i].content, s->msgs[i].reasoning, NULL };
            interrupted[i] = s->msgs[i].interrupted;
        }
        rc = rm_transcript_save(path, msgs, interrupted, s->nmsgs, s->system, err);
    }
    free(msgs);
    free(interrupted);
    return rc;
}

int rm_session_load(rm_session *s, const char *path, rm_err *err)
{
    rm_transcript t;
    if (rm_transcript_load(path, &t, err)) return -1;
    /* the conversation is replaced only once the whole file has been read */
    session_msg *old = s->msgs;
    int nold = s->nmsgs, oldcap = s->cap;
    s->msgs = NULL;
    s->nmsgs = s->cap = 0;
    int rc = t.system && rm_session_set_system(s, t.system) ? rm_errf(err, "out of memory") : 0;
    for (int i = 0; i < t.n && !rc; i++) {
        if (session_push_msg(s, t.msgs[i].role, t.msgs[i].content, t.msgs[i].reasoning_content))
            rc = rm_errf(err, "out of memory");
        else s->msgs[s->nmsgs - 1].interrupted = t.interrupted[i];
    }
    rm_transcript_free(&t);
    session_msg *drop = rc ? s->msgs : old;     /* keep the old conversation if the new one failed */
    int ndrop = rc ? s->nmsgs : nold;
    if (rc) { s->msgs = old; s->nmsgs = nold; s->cap = oldcap; }
    else s->nseq = 0;                           /* as rm_session_clear: the state is fed again */
    for (int i = 0; i < ndrop; i++) { free(drop[i].role); free(drop[i].content); free(drop[i].reasoning); }
    free(drop);
    return rc;
}
