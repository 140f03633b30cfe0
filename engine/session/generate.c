/* generate.c — one turn of a session, and the two entry points that run one
 * (rm_session_turn, rm_session_complete).
 *
 * A turn renders the whole conversation with the chat format (plus the
 * generation prompt), compares it with the tokens the state has already
 * consumed, and feeds only the new suffix; when the rendering no longer
 * extends what was fed (an edited history, or generated text that
 * re-tokenises differently), the state is reset and the conversation is
 * prefilled again, so the result is always that of a fresh run. Generated
 * ids go through the chat stream splitter, which hands reasoning and answer
 * text to the caller; per-token figures go out as rm_token_stats (stats.c).
 * With greedy decoding, n-gram drafts (spec.h) are verified several
 * positions at a time and the state is rolled back past rejected ones.
 */
#include <stdlib.h>
#include <string.h>
#include "session/session.h"
#include "session/generate.h"
#include "session/prefix.h"
#include "session/stats.h"
#include "session/trace.h"
#include "session/sampler.h"

static int seq_push(rm_session *s, int32_t id)
{
    if (RM_GROW(s->seq, s->seqcap, s->nseq + 1)) return -1;
    s->seq[s->nseq++] = id;
    return 0;
}

/* ---- the generation loop ------------------------------------------------ */

/* What a turn keeps of its streamed text (the reply that joins the
 * conversation) and where the text goes on to. Keeping can fail (out of
 * memory); the text is then not passed on either, and the loop ends the
 * turn with an error at this token, so the caller never sees a reply that
 * the conversation does not hold. */
typedef struct turn_ctx {
    rm_session *s;
    const rm_gen_events *ev;
    rm_buf *text;               /* [2] reasoning, answer; NULL: nothing kept */
    int failed;
} turn_ctx;

static void on_text(void *ud, int channel, const char *text, size_t len)
{
    turn_ctx *t = ud;
    if (t->failed) return;
    if (t->text && rm_buf_add(&t->text[channel == RM_CHAN_REASONING ? 0 : 1], text, len)) { t->failed = 1; return; }
    if (t->ev && t->ev->on_text) t->ev->on_text(t->ev->ud, channel, text, len);
}

static int text_failed(const turn_ctx *t, rm_err *err)
{
    return rm_errf(err, "out of memory keeping the reply (%zu bytes so far); the turn ends here",
                   t->text ? t->text[0].len + t->text[1].len : 0);
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

/* Feeds seq[nfed..nseq) to the state (decode steps and short feeds);
 * last_logits gets the final row. */
static int feed_pending(rm_session *s, float *last_logits, rm_err *err)
{
    int n = s->nseq - s->nfed;
    if (n <= 0) return 0;
    if (route_hist_reserve(&s->routes, s->nseq)) return rm_errf(err, "out of memory");
    if (rm_forward(s->m, s->st, s->seq + s->nfed, n, NULL, last_logits, on_route, s, err)) return -1;
    s->nfed = s->nseq;
    return 0;
}

/* ---- the prompt ---------------------------------------------------------- */

/* A prompt's figures while it is fed: a progress record after every layer
 * of every pass (the bytes and phases since the record before, so rates
 * and panels keep moving), a trace line per complete pass, and the sum of
 * them all for the prompt's own record. */
typedef struct prompt_run {
    rm_session *s;
    const rm_gen_events *ev;
    rm_token_stats total;       /* since the prompt began */
    rm_token_stats pass;        /* since the pass in progress began */
    double t0, last;
    int base, np;               /* tokens in the state when the feed began; the prompt's */
    double work;                /* the share of the work done, as the last progress said */
} prompt_run;

static void prompt_take(prompt_run *r)
{
    rm_session *s = r->s;
    const double now = rm_now();
    s->stats.seconds = now - r->last;
    r->last = now;
    session_collect_stats(s);
    session_stats_add(&r->total, &s->stats);
    session_stats_add(&r->pass, &s->stats);
}

static void on_prompt_progress(void *ud, const rm_prompt_figures *f)
{
    prompt_run *r = ud;
    rm_session *s = r->s;
    memset(&s->stats, 0, sizeof s->stats);
    s->stats.kind = RM_REC_PROGRESS;
    s->stats.prefill = 1;
    prompt_take(r);
    s->stats.prompt = *f;
    r->work = f->work;
    s->stats.prompt_tokens = f->ctx;
    s->stats.token_index = (uint64_t)f->done;
    /* progress goes to the caller only: the trace gets one line per pass */
    if (r->ev && r->ev->on_stats) r->ev->on_stats(r->ev->ud, &s->stats);
}

static void on_prompt_pass(void *ud, int fed)
{
    prompt_run *r = ud;
    rm_session *s = r->s;
    memset(&s->stats, 0, sizeof s->stats);
    s->stats.kind = RM_REC_PROGRESS;
    prompt_take(r);
    r->pass.token_index = (uint64_t)fed;
    if (s->trace.f) session_trace_pass(s, &r->pass);
    memset(&r->pass, 0, sizeof r->pass);
    /* prefix cache entries: a capture this pass completes (on its boundary,
     * the state now is the capture's), then the pass boundary itself */
    const int at = r->base + fed, cap = s->prefix.cap;
    if (cap && at >= cap) {
        if (at == cap)
            for (int l = 0; l < s->m->cfg.num_layers; l++) prefix_capture_layer(s, l);
        prefix_capture_end(s, 1);
    }
    if (at < r->np && at != cap) prefix_store(s, at, NULL, 1);
}

static void on_prompt_capture(void *ud, int layer) { prefix_capture_layer(((prompt_run *)ud)->s, layer); }

/* Where the prompt's first message ends (after its end-of-message token),
 * 0 if it does not: the beginning conversations share most. */
static int first_message_end(const rm_session *s, const int32_t *prompt, int np)
{
    for (int i = 0; s->eom_id >= 0 && i < np; i++)
        if (prompt[i] == s->eom_id) return i + 1;
    return 0;
}

/* Makes the state hold the prompt: what it has consumed is kept when the
 * prompt extends it, else the state is reset (and the figures say the
 * whole context is computed again) and the longest beginning of the prompt
 * the prefix cache holds is restored; the rest is fed in layer-major passes
 * (rm_forward_ex), which leave the last position's logits. A state that
 * holds exactly the prompt with its logits (a snapshot, a cache entry) is
 * used as it is. *stop ends it between layers and experts, keeping the
 * complete passes: returns 1 then. The prompt's record (RM_REC_PROMPT) says
 * how many tokens the context holds, how many were reused, restored from a
 * snapshot or the cache, and computed. */
static int prefill(rm_session *s, const int32_t *prompt, int np, float *logits, const rm_gen_events *ev,
                   volatile int *stop, rm_err *err)
{
    /* only what the state has consumed counts: seq may hold more (a prompt
     * stopped before its end), which would make the same prompt sent again
     * look like one the state already holds without its logits */
    int lcp = 0;
    while (lcp < s->nfed && lcp < np && s->seq[lcp] == prompt[lcp]) lcp++;
    int reprefill = 0, restored, restored_ram = 0, fresh = 0, kept = 0, kept_ram = 0;
    double restore_s = 0, keep_s = 0;
    const int whole = lcp == np && s->nfed == np && s->logits_pos == np;
    const int had = s->nfed > 0 || s->stale;      /* a conversation was there before this prompt */
    if (lcp < s->nfed || (lcp == np && !whole)) {
        /* another conversation's prompt: the one the state holds is kept
         * first when asked (rm_open_opts.keep_states), with its logits */
        if (s->keep_states && lcp < s->nfed && s->nfed >= PREFIX_MIN_TOKENS) {
            const double t = rm_now();
            const int where = prefix_store(s, s->nfed, s->logits_pos == s->nfed ? s->logits : NULL, 0);
            if (where) {
                kept = s->nfed;
                kept_ram = where == PREFIX_IN_RAM;
                keep_s = rm_now() - t;
            }
        }
        rm_state_reset(s->st);
        s->nfed = s->nseq = 0;
        s->logits_pos = -1;
    }
    if (s->nfed == 0) {
        const double t = rm_now();
        restored = lcp = prefix_restore(s, prompt, np);
        restored_ram = s->prefix.restored_ram;
        if (restored) restore_s = rm_now() - t;
        reprefill = had && !restored;
        fresh = 1;
    } else {
        restored = s->restored_pending < s->nfed ? s->restored_pending : s->nfed;
    }
    s->restored_pending = 0;
    s->stale = 0;
    s->nseq = lcp;
    for (int i = lcp; i < np; i++)
        if (seq_push(s, prompt[i])) return rm_errf(err, "out of memory");
    const int reused = s->nfed - restored, todo = s->nseq - s->nfed;
    prompt_run r = { s, ev, { 0 }, { 0 }, rm_now(), 0, s->nfed, np };
    r.last = r.t0;
    /* a turn stopped in its prompt leaves it out of the conversation
     * (rm_conv_context): the state goes back to where the prompt began, so
     * the next turn goes on from there */
    rm_forward_ctl ctl = { .stop = stop, .on_progress = on_prompt_progress, .on_chunk = on_prompt_pass, .ud = &r,
                           .stop_to_start = 1 };
    ctl.base = (rm_prompt_figures){ .ctx = np, .reused = reused, .restored = restored, .restored_ram = restored_ram,
                                    .restore_s = restore_s, .kept = kept, .kept_ram = kept_ram, .keep_s = keep_s,
                                    .total = todo, .reprefill = reprefill, .eta = -1 };
    const int cap = first_message_end(s, prompt, np);
    if (todo > 0 && cap > s->nfed && cap < np && prefix_capture_begin(s, cap)) {
        ctl.capture = cap - s->nfed;
        ctl.on_capture = on_prompt_capture;
    }
    int fed = 0, rc = 0;
    if (todo > 0) {
        if (route_hist_reserve(&s->routes, s->nseq)) rc = rm_errf(err, "out of memory");
        else rc = rm_forward_ex(s->m, s->st, s->seq + s->nfed, todo, NULL, logits, on_route, s, &ctl, &fed, err);
        s->nfed += fed;
    } else {
        memcpy(logits, s->logits, (size_t)s->m->cfg.vocab_size * sizeof *logits);
    }
    prefix_capture_end(s, 0);       /* one the prompt did not complete */
    /* a conversation that goes on in its own state has no use for its
     * prompt in the cache (a snapshot keeps it); a new one, or one whose
     * state was elsewhere (a server's clients), does */
    if (rc == 0 && fresh && todo >= PREFIX_MIN_TOKENS) prefix_store(s, np, logits, 0);
    prefix_prompt_done(s);
    if (rc < 0) return -1;
    memset(&s->stats, 0, sizeof s->stats);
    s->stats.kind = RM_REC_PROMPT;      /* this take ages the cache, once per prompt */
    prompt_take(&r);
    s->stats = (rm_token_stats){ .kind = RM_REC_PROMPT, .prefill = 1 };
    session_stats_add(&s->stats, &r.total);
    s->stats.seconds = rm_now() - r.t0;
    s->stats.read_gbps = r.total.read_busy_seconds > 0 ? r.total.bytes_expert_read / r.total.read_busy_seconds / 1e9 : 0;
    s->stats.read_busy_seconds = r.total.read_busy_seconds;
    s->stats.prompt = ctl.base;
    s->stats.prompt.done = fed;
    s->stats.prompt.chunks = 0;
    s->stats.prompt.elapsed = s->stats.seconds;
    s->stats.prompt.tok_per_s = s->stats.seconds > 0 ? fed / s->stats.seconds : 0;
    s->stats.prompt.work = fed == todo ? 1 : r.work;
    s->stats.prompt_tokens = np;
    s->stats.token_index = (uint64_t)fed;        /* tokens actually prefilled */
    /* the cache and spine figures of the record are the model's now */
    rm_token_stats now;
    model_take_stats(s->m, &now, 0);
    s->stats.spine_resident_bytes = now.spine_resident_bytes;
    s->stats.spine_total_bytes = now.spine_total_bytes;
    s->stats.expert_cache_bytes = now.expert_cache_bytes;
    s->stats.expert_cache_capacity = now.expert_cache_capacity;
    s->stats.retained_fraction = now.retained_fraction;
    s->stats.num_experts = s->m->cfg.num_experts;
    s->stats.device_gbps = s->device_gbps;
    memcpy(s->stats.route_ids, s->route_ids, sizeof s->route_ids);
    s->stats.route_layers = s->route_layers;
    s->stats.route_k = s->route_k;
    session_publish_stats(s, ev);
    return rc;
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

/* The decoding loop of one turn. */
typedef struct gen {
    rm_session *s;
    out_sink *cs;
    const rm_gen_events *ev;
    int np, max_new, n;         /* prompt tokens, the cap, tokens emitted so far */
    int V;
    float *logits;              /* [V] the next position's logits */
    float *vlog;                /* [SPEC_KMAX + 1][V] a verify pass's rows */
} gen;

/* One verify pass: id (sampled and emitted already) and the k drafts after
 * it go through the model at once; the drafts that greedy decoding would
 * have produced are emitted, up to the end of the message or the cap, the
 * state is rolled back past the others, and g->logits becomes the row
 * after the last token kept. */
static int verify(gen *g, int32_t id, int32_t *draft, int k, double t1, int *done, rm_err *err)
{
    rm_session *s = g->s;
    const int V = g->V;
    draft[0] = id;
    if (rm_state_checkpoint(s->st, err)) return -1;
    if (route_hist_reserve(&s->routes, s->nseq + k)) return rm_errf(err, "out of memory");
    if (rm_forward(s->m, s->st, draft, k + 1, g->vlog, NULL, on_route, s, err)) return -1;
    int acc = 0;
    while (acc < k && sampler_argmax(g->vlog + (size_t)acc * V, V) == draft[acc + 1]) acc++;
    double tv = rm_now() - t1;
    s->nfed = s->nseq;     /* id is in the state */
    /* emit the accepted drafts; stop early at the end of the message. Each
     * token's record has its own position's routes and a share of the
     * pass's time; the pass's bytes go with its first token. */
    int kept = 0;
    const int emitted_total = 1 + acc, pos0 = s->nfed - 1, pass_no = ++s->spec_pass;
    session_begin_stats(s, g->n - 1, id, g->np, tv / emitted_total);
    session_collect_stats(s);
    spec_verified(&s->spec, k, acc, tv, (double)s->stats.bytes_expert_read, s->stats.read_gbps);
    session_spec_totals(s);   /* this pass counted */
    s->stats.spec_pass = pass_no;
    session_stats_routes(s, pos0);
    session_publish_stats(s, g->ev);
    for (int j = 1; j <= acc && !*done && g->n < g->max_new; j++) {
        if (seq_push(s, draft[j]) || spec_push(&s->spec, &draft[j], 1)) return rm_errf(err, "out of memory");
        s->nfed++;
        kept++;
        *done = sink_feed(s, g->cs, draft[j]);
        if (g->cs->tc->failed) return text_failed(g->cs->tc, err);
        g->n++;
        session_begin_stats(s, g->n - 1, draft[j], g->np, tv / emitted_total);
        session_collect_stats(s);
        s->stats.spec_pass = pass_no;
        s->stats.spec_pass_pos = j;
        session_stats_routes(s, pos0 + j);
        session_publish_stats(s, g->ev);
    }
    rm_state_rollback(s->st, 1 + kept);
    memcpy(g->logits, g->vlog + (size_t)kept * V, (size_t)V * sizeof *g->logits);
    return 0;
}

/* After a failed step the state may hold part of it: it is dropped, and
 * the next turn computes the conversation again. */
static void drop_state(rm_session *s)
{
    rm_state_reset(s->st);
    s->nfed = s->nseq = 0;
    s->logits_pos = -1;
}

/* Generates after the prompt ids: shared by chat turns and raw completion.
 * Each step samples a token and emits it; then either a plain step feeds it
 * alone, or (greedy decoding, and the drafter's gate says it pays) a verify
 * pass feeds it with the drafts after it. The sampler starts from the seed
 * of the conversation's turn `turn` (sampler_turn_seed; raw completion and
 * replies to a conversation given whole: 0). The logits after the last
 * token fed are kept in s->logits for a snapshot. */
static int generate(rm_session *s, const int32_t *prompt, int np, const rm_gen_opts *o, int turn,
                    out_sink *cs, const rm_gen_events *ev, volatile int *stop, gen_end *end,
                    rm_err *err)
{
    *end = (gen_end){ 0 };
    const int V = s->m->cfg.vocab_size;
    const uint64_t seed = sampler_turn_seed(o ? o->seed : 0, turn);
    gen g = { s, cs, ev, np, o && o->max_new > 0 ? o->max_new : 1 << 30, 0, V,
              malloc((size_t)V * sizeof(float)), malloc((size_t)(SPEC_KMAX + 1) * V * sizeof(float)) };
    sampler smp;
    if (!g.logits || !g.vlog || sampler_init(&smp, V, o ? o->temperature : 0, o && o->top_p > 0 ? o->top_p : 1,
                                             seed)) {
        free(g.logits);
        free(g.vlog);
        return rm_errf(err, "out of memory");
    }
    int rc = prefill(s, prompt, np, g.logits, ev, stop, err);
    if (rc == 1) { end->interrupted = RM_STOPPED_PROMPT; rc = 0; s->logits_pos = -1; goto out; }
    if (rc) { s->logits_pos = -1; goto out; }
    /* the context limit holds for the reply too: it ends (as at max_new)
     * when the context is full, instead of running past the limit */
    const int room = s->max_ctx - s->nseq;
    if (s->max_ctx && g.max_new > room) g.max_new = room > 0 ? room : 0;
    /* speculation is lossless only for greedy decoding (and a forced reply
     * is not the model's choice) */
    const int forced = session_forced_begin(s);
    const int greedy = !o || o->temperature <= 0;
    s->spec.mode = greedy && !forced ? (o ? o->spec : RM_SPEC_AUTO) : RM_SPEC_OFF;
    spec_reset(&s->spec);
    if (spec_push(&s->spec, s->seq, s->nseq)) { rc = rm_errf(err, "out of memory"); goto out; }
    s->spec_d0 = s->spec.drafted;
    s->spec_a0 = s->spec.accepted;
    s->spec_p0 = s->spec.verify_passes;
    s->spec_x0 = s->spec.declined;
    s->spec_pass = 0;
    int done = 0;
    while (g.n < g.max_new) {
        if (stop && *stop) { end->interrupted = RM_STOPPED_REPLY; break; }
        double t1 = rm_now();
        if (s->test.logits) s->test.logits(s->test.logits_ud, g.logits, V);
        int32_t id = (int32_t)sampler_pick(&smp, g.logits);
        if (forced) session_forced_next(s, &id);
        if (seq_push(s, id) || spec_push(&s->spec, &id, 1)) { rc = rm_errf(err, "out of memory"); break; }
        done = sink_feed(s, cs, id);
        if (cs->tc->failed) { rc = text_failed(cs->tc, err); break; }
        g.n++;
        int32_t draft[SPEC_KMAX + 1];
        const int left = g.max_new - g.n;
        int k = done || left <= 0 ? 0 : spec_draft(&s->spec, draft + 1, left < SPEC_KMAX ? left : SPEC_KMAX);
        if (k == 0) {
            /* a plain step; the closing token is fed at the next turn, only
             * if needed, so it has no figures of its own to publish */
            if (done) break;
            if (left > 0 && (rc = feed_pending(s, g.logits, err))) break;
            session_begin_stats(s, g.n - 1, id, np, rm_now() - t1);
            session_emit_stats(s, ev);
            spec_plain(&s->spec, s->stats.seconds, (double)s->stats.bytes_expert_read, s->stats.read_gbps);
            continue;
        }
        if ((rc = verify(&g, id, draft, k, t1, &done, err)) || done) break;
    }
    end->message = done;
    end->tokens = g.n;
    sink_finish(cs);
    if (!rc && cs->tc->failed) rc = text_failed(cs->tc, err);
    if (rc) {
        drop_state(s);
    } else {
        memcpy(s->logits, g.logits, (size_t)V * sizeof *s->logits);
        s->logits_pos = s->nfed;
    }
out:
    sampler_free(&smp);
    free(g.logits);
    free(g.vlog);
    return rc;
}

/* The reply of a chat turn or a raw completion (session.h). */
int session_generate(rm_session *s, const int32_t *ids, int np, int chat, int think, const char *tools_prime, int turn,
                     const rm_gen_opts *o, const rm_gen_events *ev, volatile int *stop, rm_buf kept[2], gen_end *end,
                     rm_err *err)
{
    turn_ctx tc = { s, ev, kept, 0 };
    out_sink sink = { NULL, &tc, { {0}, 0 }, -1, -1 };
    *end = (gen_end){ 0 };
    if (chat && !(sink.chat = rm_chat_stream_new(s->tok, s->fmt, think, on_text, &tc))) return rm_errf(err, "out of memory");
    if (sink.chat && ev && ev->on_tool) rm_chat_stream_on_tool(sink.chat, ev->on_tool, ev->ud);
    if (sink.chat && tools_prime) rm_chat_stream_open_tools(sink.chat, tools_prime, strlen(tools_prime));
    if (!chat) {
        sink.eos = s->m->cfg.eos_id;
        sink.eos2 = rm_tokenizer_special_id(s->tok, "[EOS]");
    }
    int rc = generate(s, ids, np, o, turn, &sink, ev, stop, end, err);
    rm_chat_stream_free(sink.chat);
    return rc;
}

int rm_session_turn(rm_session *s, const char *user_text, const rm_gen_opts *o, const rm_gen_events *ev,
                    volatile int *stop, rm_err *err)
{
    int turn = 0;       /* replies so far: this turn's number */
    for (int i = 0; i < s->conv.n; i++) turn += !strcmp(s->conv.msgs[i].role, "assistant");
    if (rm_conv_push(&s->conv, "user", user_text, NULL, 0)) return rm_errf(err, "out of memory");
    const rm_chat_msg *view;
    int n = rm_conv_context(&s->conv, &view);
    if (n < 0) return rm_errf(err, "out of memory");
    rm_chat_opts co = { o ? o->think : 1, o ? o->thinking_effort : NULL, 1, NULL };
    int32_t *ids = NULL;
    int np = rm_chat_render(s->tok, s->fmt, view, n, &co, &ids, err);
    if (np >= 0 && session_check_ctx(s, np, err)) { free(ids); np = -1; }
    if (np < 0) { rm_conv_pop(&s->conv); return -1; }
    rm_buf kept[2] = { { .max = s->test.text_max }, { .max = s->test.text_max } };
    /* only XTML's generation prompt opens the think channel; an im-format
     * model opens <think> itself when it has one */
    gen_end end;
    int rc = session_generate(s, ids, np, 1, co.thinking && s->fmt == RM_CHAT_XTML, NULL, turn, o, ev, stop, kept,
                              &end, err);
    free(ids);
    if (!rc) {
        if (rm_conv_push(&s->conv, "assistant", kept[1].p ? kept[1].p : "", kept[0].p, end.interrupted))
            rc = rm_errf(err, "out of memory");
    }
    rm_buf_free(&kept[0]);
    rm_buf_free(&kept[1]);
    return rc ? rc : session_trace_failed(s, err);
}

int rm_session_complete(rm_session *s, const char *text, const rm_gen_opts *o, const rm_gen_events *ev,
                        volatile int *stop, rm_err *err)
{
    int32_t *ids = NULL;
    int np = rm_tokenizer_encode(s->tok, text, strlen(text), 0, &ids, err);
    if (np < 0) return -1;
    if (np == 0) { free(ids); return rm_errf_input(err, "empty prompt"); }
    if (session_check_ctx(s, np, err)) { free(ids); return -1; }
    gen_end end;
    int rc = session_generate(s, ids, np, 0, 0, NULL, 0, o, ev, stop, NULL, &end, err);
    free(ids);
    return rc ? rc : session_trace_failed(s, err);
}
