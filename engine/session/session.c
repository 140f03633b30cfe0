/* session.c — a conversation over one model: the messages so far, the model
 * state that has consumed them, and the generation loop of one turn.
 *
 * A turn renders the whole conversation with the chat format (plus the
 * generation prompt), compares it with the tokens the state has already
 * consumed, and feeds only the new suffix; when the rendering no longer
 * extends what was fed (an edited history, or generated text that
 * re-tokenises differently), the state is reset and the conversation is
 * prefilled again, so the result is always that of a fresh run. Generated
 * ids go through the chat stream splitter, which hands reasoning and answer
 * text to the caller; per-token figures go out as rm_token_stats.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "model/model.h"
#include "session/sampler.h"
#include "session/spec.h"
#include "session/route_hist.h"
#include "base/file.h"

typedef struct msg {
    char *role, *content, *reasoning;
    int interrupted;
} msg;

struct rm_session {
    rm_model *m;
    rm_tokenizer *tok;
    rm_chat_format fmt;
    rm_state *st;
    char *system;
    msg *msgs;
    int nmsgs, cap;
    rm_chat_msg *view;          /* rm_chat_msg array mirroring msgs */
    int32_t *seq;               /* tokens of the conversation so far */
    int nseq, seqcap;
    int nfed;                   /* of seq, how many the state has consumed */
    int *moe_index;             /* layer -> MoE layer ordinal, or -1 */
    FILE *trace;                /* JSONL per token, or NULL */
    spec spec;                  /* drafter and its cost estimates */
    route_hist routes;          /* experts each fed position chose: draft costs */
    uint64_t spec_d0, spec_a0;  /* its totals when the turn began */
    /* router choices of the last position fed, copied into each record */
    int16_t route_ids[RM_MAX_ROUTE_LAYERS][RM_MAX_TOPK];
    int route_layers, route_k;
    double device_gbps;         /* rm_session_probe_device, 0 if not measured */
    rm_token_stats stats;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

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
    if (o && o->trace_path && !(s->trace = fopen(o->trace_path, "w"))) {
        rm_errf(err, "%s: cannot create the trace: %s", o->trace_path, strerror(errno));
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
    free(s->system);
    free(s->moe_index);
    if (s->trace) fclose(s->trace);
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
}

/* Appends a message; strings are copied. */
static int push_msg(rm_session *s, const char *role, const char *content, const char *reasoning)
{
    if (s->nmsgs == s->cap) {
        int cap = s->cap ? s->cap * 2 : 8;
        msg *nm = realloc(s->msgs, (size_t)cap * sizeof *nm);
        if (!nm) return -1;
        s->msgs = nm;
        s->cap = cap;
    }
    msg *m = &s->msgs[s->nmsgs];
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

/* Rebuilds the rm_chat_msg view: the system prompt first, then messages. */
static int build_view(rm_session *s, int *n)
{
    free(s->view);
    s->view = calloc((size_t)s->nmsgs + 1, sizeof *s->view);
    if (!s->view) return -1;
    int k = 0;
    if (s->system) s->view[k++] = (rm_chat_msg){ "system", s->system, NULL, NULL };
    for (int i = 0; i < s->nmsgs; i++)
        s->view[k++] = (rm_chat_msg){ s->msgs[i].role, s->msgs[i].content, s->msgs[i].reasoning, NULL };
    *n = k;
    return 0;
}

int rm_session_messages(const rm_session *s, const rm_chat_msg **msgs)
{
    int n = 0;
    if (build_view((rm_session *)s, &n)) { *msgs = NULL; return 0; }
    *msgs = s->view;
    return n;
}

int rm_session_last_interrupted(const rm_session *s)
{
    return s->nmsgs && s->msgs[s->nmsgs - 1].interrupted;
}

static int seq_push(rm_session *s, int32_t id)
{
    if (s->nseq == s->seqcap) {
        int cap = s->seqcap ? s->seqcap * 2 : 1024;
        int32_t *ns = realloc(s->seq, (size_t)cap * sizeof *ns);
        if (!ns) return -1;
        s->seq = ns;
        s->seqcap = cap;
    }
    s->seq[s->nseq++] = id;
    return 0;
}

/* ---- the generation loop ------------------------------------------------ */

typedef struct turn_ctx {
    rm_session *s;
    const rm_gen_events *ev;
    char *text[2];              /* reasoning, answer */
    size_t len[2], cap[2];
} turn_ctx;

static void on_text(void *ud, int channel, const char *text, size_t len)
{
    turn_ctx *t = ud;
    int i = channel == RM_CHAN_REASONING ? 0 : 1;
    if (t->len[i] + len + 1 > t->cap[i]) {
        size_t cap = (t->len[i] + len + 1) * 2;
        char *n = realloc(t->text[i], cap);
        if (!n) return;
        t->text[i] = n;
        t->cap[i] = cap;
    }
    memcpy(t->text[i] + t->len[i], text, len);
    t->len[i] += len;
    t->text[i][t->len[i]] = 0;
    if (t->ev && t->ev->on_text) t->ev->on_text(t->ev->ud, channel, text, len);
}

static void on_route(void *ud, int layer, int pos, const int *ids, const float *w, int k, float margin)
{
    rm_session *s = ud;
    int li = s->moe_index[layer];
    if (li < 0 || li >= RM_MAX_ROUTE_LAYERS) return;
    route_hist_put(&s->routes, pos, li, ids, k);
    for (int i = 0; i < k && i < RM_MAX_TOPK; i++) s->route_ids[li][i] = (int16_t)ids[i];
    if (li + 1 > s->route_layers) s->route_layers = li + 1;
    s->route_k = k < RM_MAX_TOPK ? k : RM_MAX_TOPK;
}

/* Feeds seq[nfed..nseq) to the state; last_logits gets the final row. */
static int feed_pending(rm_session *s, float *last_logits, rm_err *err)
{
    int n = s->nseq - s->nfed;
    if (n <= 0) return 0;
    if (route_hist_reserve(&s->routes, s->nseq)) return rm_errf(err, "out of memory");
    if (rm_forward(s->m, s->st, s->seq + s->nfed, n, NULL, last_logits, on_route, s, err)) return -1;
    s->nfed = s->nseq;
    return 0;
}

/* One JSONL record per token: the figures of rm_token_stats and the router's
 * choices per MoE layer for the token's (last) position. */
static void trace_token(rm_session *s)
{
    const rm_token_stats *t = &s->stats;
    static const char *ph[RM_PHASE_COUNT] = { "wait_io", "spine", "attention", "experts", "lm_head" };
    json_t *phases = json_object(), *routes = json_object();
    for (int i = 0; i < RM_PHASE_COUNT; i++) json_object_set_new(phases, ph[i], json_real(t->phase_seconds[i]));
    for (int l = 0; l < s->m->cfg.num_layers; l++) {
        int li = s->moe_index[l];
        if (li < 0 || li >= t->route_layers) continue;
        json_t *ids = json_array();
        for (int i = 0; i < t->route_k; i++) json_array_append_new(ids, json_integer(t->route_ids[li][i]));
        char key[16];
        snprintf(key, sizeof key, "%d", l);
        json_object_set_new(routes, key, ids);
    }
    json_t *j = json_pack("{s:b,s:I,s:i,s:f,s:o,s:I,s:I,s:I,s:I,s:I,s:f,s:i,s:f,s:o}", "prefill", t->prefill,
                          "index", (json_int_t)t->token_index, "id", t->token_id, "seconds", t->seconds,
                          "phases", phases, "bytes_spine", (json_int_t)t->bytes_spine_read,
                          "bytes_experts", (json_int_t)t->bytes_expert_read,
                          "bytes_experts_from_cache", (json_int_t)t->bytes_expert_from_cache,
                          "expert_hits", (json_int_t)t->expert_hits, "expert_misses", (json_int_t)t->expert_misses,
                          "read_gbps", t->read_gbps, "queue_depth", t->queue_depth,
                          "retained_fraction", t->retained_fraction, "routes", routes);
    json_object_set_new(j, "bytes_net", json_integer((json_int_t)t->bytes_net));
    json_object_set_new(j, "net_gbps", json_real(t->net_gbps));
    json_object_set_new(j, "spec_drafted", json_integer((json_int_t)t->spec_drafted));
    json_object_set_new(j, "spec_accepted", json_integer((json_int_t)t->spec_accepted));
    char *line = json_dumps(j, JSON_COMPACT);
    if (line) { fprintf(s->trace, "%s\n", line); fflush(s->trace); }
    free(line);
    json_decref(j);
}

/* Takes the model's figures since the last call into s->stats. */
static void collect_stats(rm_session *s)
{
    model_take_stats(s->m, &s->stats);
    s->stats.num_experts = s->m->cfg.num_experts;
    s->stats.device_gbps = s->device_gbps;
    memcpy(s->stats.route_ids, s->route_ids, sizeof s->route_ids);
    s->stats.route_layers = s->route_layers;
    s->stats.route_k = s->route_k;
}

static void publish_stats(rm_session *s, const rm_gen_events *ev)
{
    if (s->trace) trace_token(s);
    if (ev && ev->on_stats) ev->on_stats(ev->ud, &s->stats);
}

static void emit_stats(rm_session *s, const rm_gen_events *ev)
{
    collect_stats(s);
    publish_stats(s, ev);
}

/* The speculation totals of this turn so far. */
static void stats_spec_totals(rm_session *s)
{
    s->stats.spec_drafted = s->spec.drafted - s->spec_d0;
    s->stats.spec_accepted = s->spec.accepted - s->spec_a0;
}

/* Starts the figures of one emitted token. */
static void begin_stats(rm_session *s, int index, int32_t id, int np, double seconds)
{
    memset(&s->stats, 0, sizeof s->stats);
    s->stats.token_index = (uint64_t)index;
    s->stats.token_id = id;
    s->stats.prompt_tokens = np;
    s->stats.seconds = seconds;
    stats_spec_totals(s);
}

/* Where generated ids go: the chat stream splitter, or (raw completion) the
 * token bytes as answer text, ending at end-of-message or [EOS]. */
typedef struct out_sink {
    rm_chat_stream *chat;
    turn_ctx *tc;
    rm_utf8_stream u8;
    int eos, eos2;
} out_sink;

static int sink_feed(rm_session *s, out_sink *o, int32_t id)
{
    if (o->chat) return rm_chat_stream_feed(o->chat, id);
    if (id == o->eos || id == o->eos2) return 1;
    size_t n;
    const char *b = rm_tokenizer_token_bytes(s->tok, id, &n);
    char buf[256];
    for (size_t i = 0; b && i < n; i += 64) {
        size_t part = n - i < 64 ? n - i : 64;
        size_t w = rm_utf8_stream_feed(&o->u8, b + i, part, buf, sizeof buf, 0);
        if (w) on_text(o->tc, RM_CHAN_ANSWER, buf, w);
    }
    return 0;
}

static void sink_finish(out_sink *o)
{
    if (o->chat) { rm_chat_stream_finish(o->chat); return; }
    char buf[64];
    size_t w = rm_utf8_stream_feed(&o->u8, NULL, 0, buf, sizeof buf, 1);
    if (w) on_text(o->tc, RM_CHAN_ANSWER, buf, w);
}

/* Generates after the prompt ids: shared by chat turns and raw completion. */
static int generate(rm_session *s, const int32_t *prompt, int np, const rm_gen_opts *o,
                    out_sink *cs, const rm_gen_events *ev, volatile int *stop, int *interrupted,
                    rm_err *err)
{
    const int V = s->m->cfg.vocab_size;
    float *logits = malloc((size_t)V * sizeof *logits);
    float *vlog = malloc((size_t)(SPEC_KMAX + 1) * V * sizeof *vlog);
    sampler smp;
    if (!logits || !vlog || sampler_init(&smp, V, o ? o->temperature : 0, o && o->top_p > 0 ? o->top_p : 1,
                                o ? o->seed : 0)) {
        free(logits);
        free(vlog);
        return rm_errf(err, "out of memory");
    }
    int rc = 0;
    /* reuse the state when the prompt extends what it has consumed */
    int lcp = 0;
    while (lcp < s->nseq && lcp < np && s->seq[lcp] == prompt[lcp]) lcp++;
    if (lcp < s->nfed || lcp == np) {
        rm_state_reset(s->st);
        s->nfed = 0;
        lcp = 0;
    }
    s->nseq = lcp;
    for (int i = lcp; i < np; i++)
        if (seq_push(s, prompt[i])) { rc = rm_errf(err, "out of memory"); goto out; }
    memset(&s->stats, 0, sizeof s->stats);
    s->stats.prefill = 1;
    s->stats.prompt_tokens = np;
    double t0 = now();
    int prefilled = s->nseq - s->nfed;
    if ((rc = feed_pending(s, logits, err))) goto out;
    s->stats.seconds = now() - t0;
    s->stats.token_index = (uint64_t)prefilled;   /* tokens actually prefilled */
    emit_stats(s, ev);
    int max_new = o && o->max_new > 0 ? o->max_new : 1 << 30;
    const int greedy = !o || o->temperature <= 0;
    /* speculation is lossless only for greedy decoding */
    s->spec.mode = greedy ? (o ? o->spec : RM_SPEC_AUTO) : RM_SPEC_OFF;
    spec_reset(&s->spec);
    if (spec_push(&s->spec, s->seq, s->nseq)) { rc = rm_errf(err, "out of memory"); goto out; }
    s->spec_d0 = s->spec.drafted;
    s->spec_a0 = s->spec.accepted;
    *interrupted = 0;
    int n = 0;
    while (n < max_new) {
        if (stop && *stop) { *interrupted = 1; break; }
        double t1 = now();
        int32_t id = (int32_t)sampler_pick(&smp, logits);
        if (seq_push(s, id) || spec_push(&s->spec, &id, 1)) { rc = rm_errf(err, "out of memory"); break; }
        int done = sink_feed(s, cs, id);
        n++;
        int32_t draft[SPEC_KMAX + 1];
        int k = done || n >= max_new ? 0 : spec_draft(&s->spec, draft + 1, max_new - n < SPEC_KMAX ? max_new - n : SPEC_KMAX);
        if (k == 0) {
            /* a plain step; the closing token is fed at the next turn, only if needed */
            if (!done && n < max_new && (rc = feed_pending(s, logits, err))) break;
            begin_stats(s, n - 1, id, np, now() - t1);
            emit_stats(s, ev);
            if (done) break;
            spec_plain(&s->spec, s->stats.seconds, (double)s->stats.bytes_expert_read, s->stats.read_gbps);
            continue;
        }
        /* verify: id and k drafts in one pass over k+1 positions */
        draft[0] = id;
        if ((rc = rm_state_checkpoint(s->st, err))) break;
        if (route_hist_reserve(&s->routes, s->nseq + k)) { rc = rm_errf(err, "out of memory"); break; }
        if ((rc = rm_forward(s->m, s->st, draft, k + 1, vlog, NULL, on_route, s, err))) break;
        int acc = 0;
        while (acc < k && sampler_argmax(vlog + (size_t)acc * V, V) == draft[acc + 1]) acc++;
        double tv = now() - t1;
        s->nfed = s->nseq;     /* id is in the state */
        /* emit the accepted drafts; stop early at the end of the message */
        int kept = 0;
        const int emitted_total = 1 + acc;
        begin_stats(s, n - 1, id, np, tv / emitted_total);
        collect_stats(s);
        spec_verified(&s->spec, k, acc, tv, (double)s->stats.bytes_expert_read, s->stats.read_gbps);
        stats_spec_totals(s);   /* this pass counted */
        publish_stats(s, ev);
        for (int j = 1; j <= acc && !done && n < max_new; j++) {
            if (seq_push(s, draft[j]) || spec_push(&s->spec, &draft[j], 1)) { rc = rm_errf(err, "out of memory"); break; }
            s->nfed++;
            kept++;
            done = sink_feed(s, cs, draft[j]);
            n++;
            begin_stats(s, n - 1, draft[j], np, tv / emitted_total);
            emit_stats(s, ev);
        }
        if (rc) break;
        rm_state_rollback(s->st, 1 + kept);
        memcpy(logits, vlog + (size_t)kept * V, (size_t)V * sizeof *logits);
        if (done) break;
    }
    sink_finish(cs);
out:
    sampler_free(&smp);
    free(logits);
    free(vlog);
    return rc;
}

double rm_session_probe_device(rm_session *s, double seconds)
{
    rm_err err;
    double g = rm_bench_device(s->m, seconds, NULL, NULL, &err);
    if (g > 0) s->device_gbps = g;
    return g;
}

void session_set_draft_oracle(rm_session *s, int (*fn)(void *, const int32_t *, int, int32_t *, int), void *ud)
{
    s->spec.oracle = fn;
    s->spec.oracle_ud = ud;
}

int rm_session_turn(rm_session *s, const char *user_text, const rm_gen_opts *o, const rm_gen_events *ev,
                    volatile int *stop, rm_err *err)
{
    if (push_msg(s, "user", user_text, NULL)) return rm_errf(err, "out of memory");
    int n;
    if (build_view(s, &n)) return rm_errf(err, "out of memory");
    rm_chat_opts co = { o ? o->think : 1, o ? o->thinking_effort : NULL, 1, NULL };
    int32_t *ids = NULL;
    int np = rm_chat_render(s->tok, s->fmt, s->view, n, &co, &ids, err);
    if (np < 0) { s->nmsgs--; free(s->msgs[s->nmsgs].role); free(s->msgs[s->nmsgs].content); return -1; }
    turn_ctx tc = { s, ev, { NULL, NULL }, { 0, 0 }, { 0, 0 } };
    out_sink sink = { rm_chat_stream_new(s->tok, s->fmt, co.thinking, on_text, &tc), &tc, { {0}, 0 }, -1, -1 };
    int interrupted = 0, rc;
    if (!sink.chat) rc = rm_errf(err, "out of memory");
    else rc = generate(s, ids, np, o, &sink, ev, stop, &interrupted, err);
    rm_chat_stream_free(sink.chat);
    free(ids);
    if (!rc) {
        if (push_msg(s, "assistant", tc.text[1] ? tc.text[1] : "", tc.text[0])) rc = rm_errf(err, "out of memory");
        else s->msgs[s->nmsgs - 1].interrupted = interrupted;
    }
    free(tc.text[0]);
    free(tc.text[1]);
    return rc;
}

int rm_session_complete(rm_session *s, const char *text, const rm_gen_opts *o, const rm_gen_events *ev,
                        volatile int *stop, rm_err *err)
{
    int32_t *ids = NULL;
    int np = rm_tokenizer_encode(s->tok, text, strlen(text), 0, &ids, err);
    if (np < 0) return -1;
    if (np == 0) { free(ids); return rm_errf(err, "empty prompt"); }
    turn_ctx tc = { s, ev, { NULL, NULL }, { 0, 0 }, { 0, 0 } };
    out_sink sink = { NULL, &tc, { {0}, 0 }, s->m->cfg.eos_id, rm_tokenizer_special_id(s->tok, "[EOS]") };
    int interrupted = 0;
    int rc = generate(s, ids, np, o, &sink, ev, stop, &interrupted, err);
    free(ids);
    free(tc.text[0]);
    free(tc.text[1]);
    return rc;
}

/* ---- transcripts ------------------------------------------------------ */

/* One JSONL line for a message. */
static int append_line(char **buf, size_t *len, json_t *j)
{
    char *line = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(j);
    if (!line) return -1;
    size_t n = strlen(line);
    char *nb = realloc(*buf, *len + n + 2);
    if (!nb) { free(line); return -1; }
    memcpy(nb + *len, line, n);
    nb[*len + n] = '\n';
    *len += n + 1;
    *buf = nb;
    free(line);
    return 0;
}

int rm_session_save(const rm_session *s, const char *path, rm_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    int bad = s->system && append_line(&buf, &len, json_pack("{s:s,s:s}", "role", "system", "content", s->system));
    for (int i = 0; i < s->nmsgs && !bad; i++) {
        const msg *m = &s->msgs[i];
        json_t *j = json_pack("{s:s,s:s}", "role", m->role, "content", m->content);
        if (j && m->reasoning) json_object_set_new(j, "reasoning_content", json_string(m->reasoning));
        if (j && m->interrupted) json_object_set_new(j, "interrupted", json_true());
        bad = !j || append_line(&buf, &len, j);
    }
    int rc = bad ? rm_errf(err, "%s: out of memory writing the transcript", path)
                 : rm_write_atomic(path, buf ? buf : "", len, 0644, err);
    free(buf);
    return rc;
}

int rm_session_load(rm_session *s, const char *path, rm_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return rm_errf(err, "%s: cannot open: %s", path, strerror(errno));
    rm_session_clear(s);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, rc = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
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
        else if (!strcmp(role, "system") && s->nmsgs == 0) rc = rm_session_set_system(s, content);
        else if (push_msg(s, role, content, json_string_value(rj))) rc = rm_errf(err, "out of memory");
        else s->msgs[s->nmsgs - 1].interrupted = json_is_true(json_object_get(j, "interrupted"));
        json_decref(j);
        if (rc) break;
    }
    free(line);
    fclose(f);
    if (rc) rm_session_clear(s);
    return rc;
}
