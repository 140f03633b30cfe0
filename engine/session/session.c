/* session.c — a conversation over one model: opening the model, tokenizer
 * and state together, the messages so far and the rm_chat_msg view of them
 * that the chat format renders, and that conversation saved to and loaded
 * from a transcript (transcript.c). Running a turn is generate.c; the other
 * pieces of a session are listed in session.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "session/session.h"

/* spec's cost prediction: positions the state has consumed have recorded
 * routes; others are assumed to read what a plain step reads. */
static void predict_draft_bytes(void *ud, int src, int k, double *cum)
{
    rm_session *s = ud;
    route_hist_predict(&s->routes, &s->m->experts, src, k, s->nfed, s->spec.bytes_plain, cum);
}

int rm_session_open(const char *model_dir, const rm_open_opts *o, rm_session **out, rm_err *err)
{
    *out = NULL;
    rm_session *s = calloc(1, sizeof *s);
    if (!s) return rm_errf(err, "out of memory");
    if (rm_model_open(model_dir, o, &s->m, err) || rm_tokenizer_open(model_dir, &s->tok, err) ||
        !(s->st = rm_state_new(s->m, err))) {
        rm_session_free(s);
        return -1;
    }
    s->fmt = rm_chat_detect(s->tok);
    /* the tokenizer's ids must all be rows of the model's embedding */
    if (rm_tokenizer_vocab(s->tok) > s->m->cfg.vocab_size) {
        rm_errf_input(err, "%s: the tokenizer has %d ids but the model's vocab_size is %d (config.json); they do not "
                      "belong together", model_dir, rm_tokenizer_vocab(s->tok), s->m->cfg.vocab_size);
        rm_session_free(s);
        return -1;
    }
    const int model_max = s->m->cfg.max_pos;
    s->max_ctx = o && o->max_ctx > 0 && (!model_max || o->max_ctx < model_max) ? o->max_ctx : model_max;
    s->eom_id = rm_tokenizer_special_id(s->tok, s->fmt == RM_CHAT_XTML ? "<|end_of_msg|>" : "<|im_end|>");
    s->logits_pos = -1;
    if (!(s->logits = malloc((size_t)s->m->cfg.vocab_size * sizeof *s->logits))) {
        rm_session_free(s);
        return rm_errf(err, "out of memory");
    }
    if (prefix_open(&s->prefix, o, err) || session_forced_open(s, err)) { rm_session_free(s); return -1; }
    s->keep_states = o && o->keep_states;
    if (spec_init(&s->spec, RM_SPEC_AUTO)) { rm_session_free(s); return rm_errf(err, "out of memory"); }
    const rm_config *c = &s->m->cfg;
    if (!(s->moe_index = malloc((size_t)c->num_layers * sizeof *s->moe_index))) {
        rm_session_free(s);
        return rm_errf(err, "out of memory");
    }
    for (int l = 0, k = 0; l < c->num_layers; l++) s->moe_index[l] = c->is_moe[l] ? k++ : -1;
    if (route_hist_init(&s->routes, c->is_moe, c->num_layers, c->num_experts, c->topk)) {
        rm_session_free(s);
        return rm_errf(err, "out of memory");
    }
    s->spec.predict = predict_draft_bytes;
    s->spec.predict_ud = s;
    if (o && o->trace_path && (!(s->trace_path = strdup(o->trace_path)) || !(s->trace = fopen(o->trace_path, "w")))) {
        rm_errf_input(err, "%s: cannot create the trace: %s", o->trace_path, strerror(errno));
        rm_session_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

static void free_msgs(rm_session *s)
{
    for (int i = 0; i < s->nmsgs; i++) {
        free(s->msgs[i].role);
        free(s->msgs[i].content);
        free(s->msgs[i].reasoning);
    }
    s->nmsgs = 0;
}

void rm_session_free(rm_session *s)
{
    if (!s) return;
    free_msgs(s);
    free(s->msgs);
    free(s->view);
    free(s->seq);
    free(s->logits);
    prefix_capture_end(s, 0);
    free(s->system);
    free(s->moe_index);
    session_forced_free(s);
    if (s->trace) fclose(s->trace);
    free(s->trace_path);
    spec_free(&s->spec);
    route_hist_free(&s->routes);
    rm_state_free(s->st);
    rm_tokenizer_free(s->tok);
    rm_model_free(s->m);
    free(s);
}

rm_model *rm_session_model(rm_session *s) { return s->m; }
const rm_tokenizer *rm_session_tokenizer(rm_session *s) { return s->tok; }

int rm_session_set_system(rm_session *s, const char *text)
{
    char *n = text && *text ? strdup(text) : NULL;
    if (text && *text && !n) return -1;
    free(s->system);
    s->system = n;
    return 0;
}

void rm_session_clear(rm_session *s)
{
    free_msgs(s);
    s->nseq = 0;
    s->restored_pending = 0;
    s->stale = 0;
}

int rm_session_add_message(rm_session *s, const char *role, const char *content, const char *reasoning,
                           rm_err *err)
{
    if (!role || (strcmp(role, "user") && strcmp(role, "assistant") && strcmp(role, "tool")))
        return rm_errf(err, "a message's role must be user, assistant or tool");
    if (!content) return rm_errf(err, "a message needs its content");
    if (session_push_msg(s, role, content, strcmp(role, "assistant") ? NULL : reasoning)) return rm_errf(err, "out of memory");
    return 0;
}

/* Appends a message; strings are copied. */
int session_push_msg(rm_session *s, const char *role, const char *content, const char *reasoning)
{
    if (RM_GROW(s->msgs, s->cap, s->nmsgs + 1)) return -1;
    session_msg *m = &s->msgs[s->nmsgs];
    memset(m, 0, sizeof *m);
    m->role = strdup(role);
    m->content = strdup(content ? content : "");
    m->reasoning = reasoning ? strdup(reasoning) : NULL;
    if (!m->role || !m->content || (reasoning && !m->reasoning)) {
        free(m->role); free(m->content); free(m->reasoning);
        return -1;
    }
    s->nmsgs++;
    return 0;
}

int session_check_ctx(const rm_session *s, int n, rm_err *err)
{
    if (!s->max_ctx || n <= s->max_ctx) return 0;
    return rm_errf_input(err, "the context is %d tokens, past the limit of %d (%s); nothing was computed", n,
                         s->max_ctx, s->max_ctx == s->m->cfg.max_pos ? "the model's max_position_embeddings" : "--max-ctx");
}

int rm_chat_left_out(const char *role, int interrupted, const char *next_role, int next_interrupted)
{
    if (!strcmp(role, "assistant")) return interrupted == RM_STOPPED_PROMPT;
    return !strcmp(role, "user") && next_role && !strcmp(next_role, "assistant") && next_interrupted == RM_STOPPED_PROMPT;
}

/* Rebuilds the rm_chat_msg view: the system prompt first, then messages;
 * with `context`, only those the model is given (rm_chat_left_out). */
static int build_view(rm_session *s, int context, int *n)
{
    free(s->view);
    s->view = calloc((size_t)s->nmsgs + 1, sizeof *s->view);
    if (!s->view) return -1;
    int k = 0;
    if (s->system) s->view[k++] = (rm_chat_msg){ "system", s->system, NULL, NULL };
    for (int i = 0; i < s->nmsgs; i++) {
        const session_msg *m = &s->msgs[i], *nx = i + 1 < s->nmsgs ? &s->msgs[i + 1] : NULL;
        if (!context || !rm_chat_left_out(m->role, m->interrupted, nx ? nx->role : NULL, nx ? nx->interrupted : 0))
            s->view[k++] = (rm_chat_msg){ m->role, m->content, m->reasoning, NULL };
    }
    *n = k;
    return 0;
}

int session_build_view(rm_session *s, int *n) { return build_view(s, 0, n); }
int session_build_context(rm_session *s, int *n) { return build_view(s, 1, n); }

int rm_session_messages(const rm_session *s, const rm_chat_msg **msgs)
{
    int n = 0;
    if (session_build_view((rm_session *)s, &n)) { *msgs = NULL; return 0; }
    *msgs = s->view;
    return n;
}

int rm_session_last_interrupted(const rm_session *s)
{
    return s->nmsgs ? s->msgs[s->nmsgs - 1].interrupted : 0;
}

double rm_session_probe_device(rm_session *s, double seconds)
{
    rm_err err;
    double g = rm_bench_device(s->m, seconds, NULL, NULL, &err);
    if (g > 0) s->device_gbps = g;
    return g;
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

int session_take_transcript(rm_session *s, const rm_transcript *t)
{
    /* everything is copied first; the conversation changes only then */
    char *sys = t->system ? strdup(t->system) : NULL;
    session_msg *old = s->msgs;
    const int nold = s->nmsgs, oldcap = s->cap;
    s->msgs = NULL;
    s->nmsgs = s->cap = 0;
    int rc = t->system && !sys ? -1 : 0;
    for (int i = 0; i < t->n && !rc; i++) {
        if (session_push_msg(s, t->msgs[i].role, t->msgs[i].content, t->msgs[i].reasoning_content)) rc = -1;
        else s->msgs[s->nmsgs - 1].interrupted = t->interrupted[i];
    }
    session_msg *drop = rc ? s->msgs : old;     /* keep the old conversation if the new one failed */
    const int ndrop = rc ? s->nmsgs : nold;
    if (rc) {
        s->msgs = old;
        s->nmsgs = nold;
        s->cap = oldcap;
        free(sys);
    } else {
        if (sys) { free(s->system); s->system = sys; }
        /* the state holds none of it: the next turn feeds it again */
        s->nseq = 0;
        s->restored_pending = 0;
        s->stale = t->n > 0;
    }
    for (int i = 0; i < ndrop; i++) { free(drop[i].role); free(drop[i].content); free(drop[i].reasoning); }
    free(drop);
    return rc;
}

int rm_session_load(rm_session *s, const char *path, rm_err *err)
{
    rm_transcript t;
    if (rm_transcript_load(path, &t, err)) return -1;
    int rc = session_take_transcript(s, &t) ? rm_errf(err, "out of memory") : 0;
    rm_transcript_free(&t);
    return rc;
}

void session_test_draft_oracle(rm_session *s, int (*fn)(void *, const int32_t *, int, int32_t *, int), void *ud)
{
    s->spec.oracle = fn;
    s->spec.oracle_ud = ud;
}

void session_test_text_max(rm_session *s, size_t max) { s->text_max = max; }

void session_test_logits(rm_session *s, void (*fn)(void *, const float *, int), void *ud)
{
    s->test_logits = fn;
    s->test_logits_ud = ud;
}
