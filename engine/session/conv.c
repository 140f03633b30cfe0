/* conv.c — the one conversation type (rm_conv, engine.h): the session's,
 * the chat's synthetic and endpoint sources', and the snapshot reader's;
 * its two views (everything, and the context the model is given) and the
 * transcript format it is saved in and loaded from. */
#include <stdlib.h>
#include <string.h>
#include "engine.h"

/* The view has room for the system prompt and every message, grown with
 * them, so rm_conv_view never has to allocate. */
static int grow(rm_conv *c, int n)
{
    return RM_GROW(c->msgs, c->cap, n) || RM_GROW(c->view, c->vcap, n + 1);
}

int rm_conv_push(rm_conv *c, const char *role, const char *content, const char *reasoning, int interrupted)
{
    if (grow(c, c->n + 1)) return -1;
    rm_conv_msg m = { strdup(role), strdup(content ? content : ""), reasoning ? strdup(reasoning) : NULL,
                      interrupted };
    if (!m.role || !m.content || (reasoning && !m.reasoning)) {
        free(m.role);
        free(m.content);
        free(m.reasoning);
        return -1;
    }
    c->msgs[c->n++] = m;
    return 0;
}

void rm_conv_pop(rm_conv *c)
{
    if (!c->n) return;
    rm_conv_msg *m = &c->msgs[--c->n];
    free(m->role);
    free(m->content);
    free(m->reasoning);
}

void rm_conv_clear(rm_conv *c)
{
    while (c->n) rm_conv_pop(c);
}

int rm_conv_set_system(rm_conv *c, const char *text)
{
    char *s = text && *text ? strdup(text) : NULL;
    if ((text && *text && !s) || grow(c, c->n)) { free(s); return -1; }
    free(c->system);
    c->system = s;
    return 0;
}

/* Whether a message stays out of the context, from its role and how it
 * ended and the next message's (next_role NULL for the last): see
 * rm_conv_context. */
static int left_out(const char *role, int interrupted, const char *next_role, int next_interrupted)
{
    if (!strcmp(role, "assistant")) return interrupted == RM_STOPPED_PROMPT;
    return !strcmp(role, "user") && next_role && !strcmp(next_role, "assistant") && next_interrupted == RM_STOPPED_PROMPT;
}

/* The system prompt first, then the messages; with `context`, only those
 * the model is given (left_out). */
static int view(rm_conv *c, int context, const rm_chat_msg **out)
{
    if (grow(c, c->n)) { *out = NULL; return -1; }
    int k = 0;
    if (c->system) c->view[k++] = (rm_chat_msg){ "system", c->system, NULL, NULL };
    for (int i = 0; i < c->n; i++) {
        const rm_conv_msg *m = &c->msgs[i], *nx = i + 1 < c->n ? &c->msgs[i + 1] : NULL;
        if (!context || !left_out(m->role, m->interrupted, nx ? nx->role : NULL, nx ? nx->interrupted : 0))
            c->view[k++] = (rm_chat_msg){ m->role, m->content, m->reasoning, NULL };
    }
    *out = c->view;
    return k;
}

int rm_conv_view(rm_conv *c, const rm_chat_msg **out)
{
    int n = view(c, 0, out);
    return n < 0 ? 0 : n;
}

int rm_conv_context(rm_conv *c, const rm_chat_msg **out) { return view(c, 1, out); }

int rm_conv_last_interrupted(const rm_conv *c)
{
    return c->n && !strcmp(c->msgs[c->n - 1].role, "assistant") ? c->msgs[c->n - 1].interrupted : 0;
}

int rm_conv_interrupted(const rm_conv *c, int i)
{
    i -= c->system != NULL;
    return i >= 0 && i < c->n && !strcmp(c->msgs[i].role, "assistant") ? c->msgs[i].interrupted : 0;
}

int rm_conv_save(const rm_conv *c, const char *path, rm_err *err)
{
    rm_chat_msg *m = calloc((size_t)c->n + 1, sizeof *m);
    int *intr = calloc((size_t)c->n + 1, sizeof *intr);
    int rc;
    if (!m || !intr) {
        rc = rm_errf(err, "%s: out of memory writing the transcript", path);
    } else {
        for (int i = 0; i < c->n; i++) {
            m[i] = (rm_chat_msg){ c->msgs[i].role, c->msgs[i].content, c->msgs[i].reasoning, NULL };
            intr[i] = c->msgs[i].interrupted;   /* RM_STOPPED_PROMPT is saved as "stopped_in": "prompt" */
        }
        rc = rm_transcript_save(path, m, intr, c->n, c->system, err);
    }
    free(m);
    free(intr);
    return rc;
}

/* Makes t (read whole) the conversation, taking over its system prompt;
 * -1 out of memory, nothing changed. */
static int take_transcript(rm_conv *c, rm_transcript *t)
{
    rm_conv fresh = { 0 };
    int rc = grow(&fresh, t->n);
    for (int i = 0; i < t->n && !rc; i++)
        rc = rm_conv_push(&fresh, t->msgs[i].role, t->msgs[i].content, t->msgs[i].reasoning_content,
                          t->interrupted[i]);
    if (rc) {
        rm_conv_free(&fresh);
        return -1;
    }
    fresh.system = t->system;                   /* taken over */
    t->system = NULL;
    rm_conv_free(c);
    *c = fresh;
    return 0;
}

int rm_conv_load(rm_conv *c, const char *path, rm_err *err)
{
    rm_transcript t;
    if (rm_transcript_load(path, &t, err)) return -1;
    int rc = take_transcript(c, &t);
    rm_transcript_free(&t);
    return rc ? rm_errf(err, "%s: out of memory loading the transcript", path) : 0;
}

void rm_conv_free(rm_conv *c)
{
    rm_conv_clear(c);
    free(c->msgs);
    free(c->view);
    free(c->system);
    memset(c, 0, sizeof *c);
}
