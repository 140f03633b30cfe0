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
#include "session/forced.h"
#include "session/prefix.h"
#include "session/trace.h"

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
    if (prefix_open(&s->prefix, o, s->m->info.ram_budget, err) || session_forced_open(s, err)) { rm_session_free(s); return -1; }
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
    if (o && o->trace_path && (!(s->trace.path = strdup(o->trace_path)) || !(s->trace.f = fopen(o->trace_path, "w")))) {
        rm_errf_input(err, "%s: cannot create the trace: %s", o->trace_path, strerror(errno));
        rm_session_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

void rm_session_free(rm_session *s)
{
    if (!s) return;
    rm_conv_free(&s->conv);
    free(s->seq);
    free(s->logits);
    prefix_capture_end(s, 0);
    prefix_close(s);
    free(s->moe_index);
    session_forced_free(s);
    if (s->trace.f) fclose(s->trace.f);
    free(s->trace.path);
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
    return rm_conv_set_system(&s->conv, text);
}

void rm_session_clear(rm_session *s)
{
    rm_conv_clear(&s->conv);
    /* the state belonged to the conversation cleared: the next one starts
     * fresh, and is not reported as one computed again */
    rm_state_reset(s->st);
    s->nfed = s->nseq = 0;
    s->logits_pos = -1;
    s->restored_pending = 0;
    s->stale = 0;
}

int rm_session_add_message(rm_session *s, const char *role, const char *content, const char *reasoning,
                           rm_err *err)
{
    if (!role || (strcmp(role, "user") && strcmp(role, "assistant") && strcmp(role, "tool")))
        return rm_errf(err, "a message's role must be user, assistant or tool");
    if (!content) return rm_errf(err, "a message needs its content");
    if (rm_conv_push(&s->conv, role, content, strcmp(role, "assistant") ? NULL : reasoning, 0))
        return rm_errf(err, "out of memory");
    return 0;
}

int session_check_ctx(const rm_session *s, int n, rm_err *err)
{
    if (!s->max_ctx || n <= s->max_ctx) return 0;
    return rm_errf_input(err, "the context is %d tokens, past the limit of %d (%s); nothing was computed", n,
                         s->max_ctx, s->max_ctx == s->m->cfg.max_pos ? "the model's max_position_embeddings" : "--max-ctx");
}

int rm_session_messages(const rm_session *s, const rm_chat_msg **msgs)
{
    return rm_conv_view((rm_conv *)&s->conv, msgs);
}

int rm_session_last_interrupted(const rm_session *s) { return rm_conv_last_interrupted(&s->conv); }
int rm_session_interrupted(const rm_session *s, int i) { return rm_conv_interrupted(&s->conv, i); }

double rm_session_probe_device(rm_session *s, double seconds)
{
    rm_err err;
    double g = rm_bench_device(s->m, seconds, NULL, NULL, &err);
    if (g > 0) s->device_gbps = g;
    return g;
}

int rm_session_save(const rm_session *s, const char *path, rm_err *err) { return rm_conv_save(&s->conv, path, err); }

void session_take_conv(rm_session *s, rm_conv *c)
{
    if (!c->system) {                   /* a file without one keeps the session's */
        c->system = s->conv.system;
        s->conv.system = NULL;
    }
    rm_conv_free(&s->conv);
    s->conv = *c;
    memset(c, 0, sizeof *c);
    s->nseq = 0;
    s->restored_pending = 0;
    s->stale = s->conv.n > 0;
}

int rm_session_load(rm_session *s, const char *path, rm_err *err)
{
    rm_conv c = { 0 };
    if (rm_conv_load(&c, path, err)) return -1;
    session_take_conv(s, &c);
    return 0;
}

void session_test_draft_oracle(rm_session *s, int (*fn)(void *, const int32_t *, int, int32_t *, int), void *ud)
{
    s->spec.oracle = fn;
    s->spec.oracle_ud = ud;
}

void session_test_text_max(rm_session *s, size_t max) { s->test.text_max = max; }

void session_test_logits(rm_session *s, void (*fn)(void *, const float *, int), void *ud)
{
    s->test.logits = fn;
    s->test.logits_ud = ud;
}
