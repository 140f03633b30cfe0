/* calls.c — the tool calls of a reply for `remora serve` (serve.h), and the
 * tokens of the replies that made them.
 *
 * serve_calls is built from the engine's tool-call events (rm_tool_event):
 * one entry per call with a fresh id, its name and its arguments' JSON as
 * far as it has come; a stream writer sends what it has not sent yet.
 *
 * serve_replay is why a tool loop does not compute its conversation again:
 * a reply with calls ends at the end of its tools block, and the client
 * sends it back as an assistant message with tool_calls (and the tool
 * results after it). Rendered from that JSON, the message would be the
 * canonical tokens, which need not be the ones the model sampled (BPE
 * splits text its own way; arguments come back re-serialised), and the
 * state, which holds the sampled ones, would no longer be a prefix of the
 * prompt. So the sampled tokens are kept by the calls' ids (unguessable:
 * 96 random bits), and a message whose first call id is known is rendered
 * as those tokens (template.c's "remora_ids"), as ds4 keeps its DSML
 * (antirez/ds4, "exact replay"). The most recent SERVE_REPLAY_MAX replies
 * are kept.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "serve.h"

/* ---- the calls of one reply ---------------------------------------------- */

static void call_id(char *out, size_t cap, const char *prefix)
{
    unsigned char b[12] = { 0 };
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        static unsigned long long counter;
        unsigned long long c = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
        memcpy(b, &c, sizeof c);
    }
    int n = snprintf(out, cap, "%s", prefix);
    for (size_t i = 0; i < sizeof b && n + 2 < (int)cap; i++) n += snprintf(out + n, 3, "%02x", b[i]);
}

void serve_calls_event(serve_calls *c, const rm_tool_event *e, const char *prefix)
{
    if (c->failed) return;
    serve_call *k = e->index >= 0 && e->index < c->n ? &c->v[e->index] : NULL;
    switch (e->kind) {
    case RM_TOOL_BEGIN:
        if (e->index != c->n || RM_GROW(c->v, c->cap, c->n + 1)) { c->failed = 1; return; }
        k = &c->v[c->n];
        memset(k, 0, sizeof *k);
        if (!(k->name = strndup(e->text, e->len))) { c->failed = 1; return; }
        call_id(k->id, sizeof k->id, prefix);
        c->n++;
        break;
    case RM_TOOL_ARGS:
        if (!k || rm_buf_add(&k->args, e->text, e->len)) c->failed = 1;
        break;
    case RM_TOOL_END:
        if (k) k->ended = 1;
        break;
    case RM_TOOL_BAD:
        c->bad = 1;
        if (rm_buf_add(&c->bad_text, e->text, e->len)) c->failed = 1;
        break;
    }
}

int serve_calls_whole(const serve_calls *c)
{
    int n = 0;
    for (int i = 0; i < c->n; i++) n += c->v[i].ended;
    return n;
}

void serve_calls_free(serve_calls *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->v[i].name);
        rm_buf_free(&c->v[i].args);
    }
    free(c->v);
    rm_buf_free(&c->bad_text);
    memset(c, 0, sizeof *c);
}

/* ---- the tokens of replies with calls -------------------------------------- */

typedef struct replay_entry {
    char id[48];                    /* the first call's id; "": free */
    int32_t *ids;
    int n;
} replay_entry;

struct serve_replay {
    pthread_mutex_t mu;
    replay_entry e[SERVE_REPLAY_MAX];
    int next;                       /* the slot the next reply takes (the oldest) */
};

serve_replay *serve_replay_new(void)
{
    serve_replay *rp = calloc(1, sizeof *rp);
    if (rp) pthread_mutex_init(&rp->mu, NULL);
    return rp;
}

void serve_replay_free(serve_replay *rp)
{
    if (!rp) return;
    for (int i = 0; i < SERVE_REPLAY_MAX; i++) free(rp->e[i].ids);
    pthread_mutex_destroy(&rp->mu);
    free(rp);
}

void serve_replay_put(serve_replay *rp, const serve_calls *c, const int32_t *ids, int n)
{
    if (!rp || !c->n || n <= 0) return;
    int32_t *copy = malloc((size_t)n * sizeof *copy);
    if (!copy) return;                          /* the history is then rendered as usual */
    memcpy(copy, ids, (size_t)n * sizeof *copy);
    pthread_mutex_lock(&rp->mu);
    replay_entry *e = &rp->e[rp->next];
    rp->next = (rp->next + 1) % SERVE_REPLAY_MAX;
    free(e->ids);
    snprintf(e->id, sizeof e->id, "%s", c->v[0].id);
    e->ids = copy;
    e->n = n;
    pthread_mutex_unlock(&rp->mu);
}

/* The id of a message's first tool call (OpenAI's tool_calls[0].id). */
static const char *first_call_id(const json_t *m)
{
    const json_t *calls = json_object_get(m, "tool_calls");
    return json_string_value(json_object_get(json_array_get(calls, 0), "id"));
}

void serve_replay_apply(serve_replay *rp, json_t *conv)
{
    json_t *msgs = json_object_get(conv, "messages");
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m) {
        json_object_del(m, "remora_ids");      /* only the server sets it */
        const char *role = json_string_value(json_object_get(m, "role"));
        const char *id = role && !strcmp(role, "assistant") ? first_call_id(m) : NULL;
        if (!rp || !id || !*id) continue;
        pthread_mutex_lock(&rp->mu);
        for (int k = 0; k < SERVE_REPLAY_MAX; k++) {
            const replay_entry *e = &rp->e[k];
            if (!e->n || strcmp(e->id, id)) continue;
            json_t *a = json_array();
            for (int t = 0; a && t < e->n; t++) json_array_append_new(a, json_integer(e->ids[t]));
            if (a) json_object_set_new(m, "remora_ids", a);
            break;
        }
        pthread_mutex_unlock(&rp->mu);
    }
}
