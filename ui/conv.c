/* conv.c — a chat source's own conversation (see conv.h). */
#include <stdlib.h>
#include <string.h>
#include "conv.h"

/* The view has room for the system prompt and every message, grown with
 * them, so ui_conv_view never has to allocate. */
static int grow(ui_conv *c, int n)
{
    return RM_GROW(c->msgs, c->cap, n) || RM_GROW(c->view, c->vcap, n + 1);
}

int ui_conv_push(ui_conv *c, const char *role, const char *content, const char *reasoning, int interrupted)
{
    if (grow(c, c->n + 1)) return -1;
    ui_conv_msg m = { strdup(role), strdup(content ? content : ""), reasoning ? strdup(reasoning) : NULL,
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

void ui_conv_pop(ui_conv *c)
{
    if (!c->n) return;
    ui_conv_msg *m = &c->msgs[--c->n];
    free(m->role);
    free(m->content);
    free(m->reasoning);
}

void ui_conv_clear(ui_conv *c)
{
    while (c->n) ui_conv_pop(c);
}

int ui_conv_set_system(ui_conv *c, const char *text)
{
    char *s = text && *text ? strdup(text) : NULL;
    if ((text && *text && !s) || grow(c, c->n)) { free(s); return -1; }
    free(c->system);
    c->system = s;
    return 0;
}

int ui_conv_view(ui_conv *c, const rm_chat_msg **out)
{
    if (grow(c, c->n)) { *out = NULL; return 0; }
    int k = 0;
    if (c->system) c->view[k++] = (rm_chat_msg){ "system", c->system, NULL, NULL };
    for (int i = 0; i < c->n; i++)
        c->view[k++] = (rm_chat_msg){ c->msgs[i].role, c->msgs[i].content, c->msgs[i].reasoning, NULL };
    *out = c->view;
    return k;
}

int ui_conv_last_interrupted(const ui_conv *c)
{
    return c->n && !strcmp(c->msgs[c->n - 1].role, "assistant") ? c->msgs[c->n - 1].interrupted : 0;
}

int ui_conv_save(const ui_conv *c, const char *path, rm_err *err)
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

int ui_conv_load(ui_conv *c, const char *path, rm_err *err)
{
    rm_transcript t;
    if (rm_transcript_load(path, &t, err)) return -1;
    ui_conv fresh = { 0 };
    int rc = grow(&fresh, t.n);
    for (int i = 0; i < t.n && !rc; i++)
        rc = ui_conv_push(&fresh, t.msgs[i].role, t.msgs[i].content, t.msgs[i].reasoning_content, t.interrupted[i]);
    if (rc) {
        ui_conv_free(&fresh);
        rm_transcript_free(&t);
        return rm_errf(err, "%s: out of memory loading the transcript", path);
    }
    fresh.system = t.system;                    /* taken over */
    t.system = NULL;
    rm_transcript_free(&t);
    ui_conv_free(c);
    *c = fresh;
    return 0;
}

void ui_conv_free(ui_conv *c)
{
    ui_conv_clear(c);
    free(c->msgs);
    free(c->view);
    free(c->system);
    memset(c, 0, sizeof *c);
}
