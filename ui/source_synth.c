/* source_synth.c — a synthetic chat source for demos, tests and benchmarks.
 *
 * It answers every message with deterministic text (seeded by the message):
 * reasoning first, then an answer that starts by stating how many bytes and
 * lines it received (the paste test reads this), with CJK, combining marks
 * and emoji mixed in. Text is cut into tokens of 1..6 bytes regardless of
 * character boundaries, as byte-level tokens are. Each token comes with an
 * rm_token_stats record shaped like a Kimi K3 run on a streaming machine:
 * 92 MoE layers choosing 16 of 896 experts with token-to-token reuse, a cache
 * that fills, phases and bytes that vary.
 *
 * It follows the engine's record protocol (engine.h) so the UI can be tested
 * without a model:
 *  - the prompt: the context is counted as the engine counts it (tokens of
 *    the earlier turns are reused while the conversation only grew; after
 *    /load, /clear or /system the whole conversation is computed again,
 *    flagged `reprefill`). With a prompt rate the prompt is processed in
 *    passes of PASS_TOKENS, one RM_REC_PROGRESS record after every layer, and
 *    the stop flag is looked at between layers: a stop keeps the complete
 *    passes and the turn, marked RM_STOPPED_PROMPT. One RM_REC_PROMPT record
 *    follows the prompt;
 *  - decoding: with greedy speculation allowed, some steps are verify passes
 *    that emit several tokens at once, numbered in spec_pass, each with its
 *    own routes and an equal share of the pass's time and bytes; a reply
 *    that reaches its end publishes one record for the end-of-message token,
 *    which is not fed through the model (no phases, no expert lookups), as
 *    the engine does; --max-new cuts the reply there.
 * Tokens are paced at the requested rate and the stop flag is honoured
 * between tokens. Conversations are saved and loaded with the engine's
 * transcript format (rm_conv, engine.h), "interrupted" included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "source.h"

enum { LAYERS = 92, EXPERTS = 896, TOPK = 16 };
enum { MODEL_LAYERS = LAYERS + 1, FIRST_MOE = 1 };     /* one dense layer first, as K3 */
enum { PASS_TOKENS = 2048 };                            /* prompt tokens per pass */
#define EXPERT_BYTES   (2.5e6)
#define SPINE_TOTAL    (14e9)
#define CACHE_CAP      (64e9)
#define DEVICE_GBPS    6.8

typedef struct synth_source {
    ui_source     base;
    ui_synth_opts o;
    rm_conv       conv;
    int           fed;              /* tokens the simulated state holds */
    uint64_t      rng;
    int16_t       route[LAYERS][TOPK];
    double        spine_resident, cache_bytes;
    uint64_t      drafted, accepted;    /* speculation, this turn */
    uint64_t      declined;             /* steps the simulated cost gate did not draft */
    int           pass_no, pass_left, pass_pos, pass_n;
    rm_token_stats st;
} synth_source;

static const char *reasoning_text[] = {
    "The user wants a reply; let me think about what matters here. ",
    "First, the message length and its lines. ",
    "Mixed scripts must keep their columns: 中文 takes two columns per character. ",
    "Combining marks such as e\xcc\x81" " and n\xcc\x83 sit on their base. ",
    "Emoji: 😀 🎉 🧑‍🌾 and the flag 🇯🇵 should not shift the border. ",
    "Then a short plan: greet, restate, give three points. ",
    "Check: nothing here needs a tool. ",
    "日本語のテキストも確認する。 ",
    "I should keep the answer concise but complete. ",
};

static const char *answer_text[] = {
    "Here is a synthetic answer streamed token by token. ",
    "It exists to exercise the terminal UI without a model. ",
    "\n\nWide characters: 漢字かな交じり文 and 한국어 텍스트 stay aligned. ",
    "Combining: cafe\xcc\x81, nai\xcc\x88ve, pin\xcc\x83" "ata. ",
    "Emoji: 👍🏽 🫶 ❤️ 🚀 🇬🇧 👩‍💻. ",
    "\n\n1. The answer pane wraps words at its width.\n",
    "2. The reasoning pane can be collapsed with F2.\n",
    "3. The panels show timing, cache, I/O, speculation and routing.\n",
    "\nA longer sentence follows so that wrapping has something to do when the pane is narrow, "
    "with words of varying length like supercalifragilistic and a URL "
    "https://example.com/a/very/long/path/that/does/not/fit/anywhere.html in the middle. ",
};

static uint64_t next_rand(synth_source *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return s->rng;
}

static double unit(synth_source *s) { return (double)(next_rand(s) >> 11) / 9007199254740992.0; }

/* Tokens a message takes in the simulated context (about 4 bytes a token,
 * plus the chat format's markers). */
static int msg_tokens(const char *text) { return (int)(strlen(text ? text : "") / 4 + 8); }

static void clear(ui_source *src)
{
    synth_source *s = (synth_source *)src;
    rm_conv_clear(&s->conv);
    s->fed = 0;
}

static int set_system(ui_source *src, const char *text, rm_err *err)
{
    synth_source *s = (synth_source *)src;
    if (rm_conv_set_system(&s->conv, text)) return rm_errf(err, "out of memory");
    s->fed = 0;         /* the rendering changed from its start */
    return 0;
}

/* Advances the router: most choices stay from the last token, the rest
 * move near a per-layer hot region; ids in a layer stay distinct. */
static int step_routes(synth_source *s)
{
    int reused = 0;
    for (int l = 0; l < LAYERS; l++) {
        for (int k = 0; k < TOPK; k++) {
            if (s->route[l][k] >= 0 && unit(s) < 0.62) { reused++; continue; }
            for (int tries = 0; tries < 16; tries++) {
                int hot = (l * 97) % EXPERTS;
                int id = unit(s) < 0.5 ? (hot + (int)(unit(s) * 120)) % EXPERTS
                                       : (int)(unit(s) * EXPERTS);
                int dup = 0;
                for (int j = 0; j < TOPK; j++) if (j != k && s->route[l][j] == id) dup = 1;
                if (!dup) { s->route[l][k] = (int16_t)id; break; }
            }
        }
    }
    return reused;
}

/* Storage figures shared by every kind of record. */
static void fill_storage(synth_source *s, rm_token_stats *st)
{
    st->spine_resident_bytes = (uint64_t)s->spine_resident;
    st->spine_total_bytes = (uint64_t)SPINE_TOTAL;
    st->expert_cache_bytes = (uint64_t)s->cache_bytes;
    st->expert_cache_capacity = (uint64_t)CACHE_CAP;
    st->retained_fraction = s->cache_bytes / ((double)LAYERS * EXPERTS * EXPERT_BYTES);
    st->device_gbps = DEVICE_GBPS;
    st->route_layers = LAYERS;
    st->route_k = TOPK;
    st->num_experts = EXPERTS;
    for (int l = 0; l < LAYERS; l++) memcpy(st->route_ids[l], s->route[l], sizeof s->route[l]);
}

/* A token fed through the model in `secs` seconds. */
static void fill_token(synth_source *s, uint64_t index, double secs)
{
    rm_token_stats *st = &s->st;
    int reused = step_routes(s);
    int lookups = LAYERS * TOPK;
    double frac[RM_PHASE_COUNT] = { 0.1 + 0.3 * unit(s), 0.15 + 0.05 * unit(s), 0.12 + 0.06 * unit(s),
                                    0.25 + 0.1 * unit(s), 0.04 + 0.02 * unit(s) };
    double total = 0;
    for (int p = 0; p < RM_PHASE_COUNT; p++) total += frac[p];
    /* Reads fit the time spent waiting for them at close to the ceiling. */
    double gbps = DEVICE_GBPS * (0.7 + 0.25 * unit(s));
    double budget = secs * frac[RM_PHASE_WAIT_IO] / total * gbps * 1e9;
    double spine_read = s->spine_resident < SPINE_TOTAL ? budget * 0.5 : 0;
    s->spine_resident += spine_read;
    if (s->spine_resident > SPINE_TOTAL) s->spine_resident = SPINE_TOTAL;
    int misses = (int)((budget - spine_read) / EXPERT_BYTES);
    if (misses > lookups - reused) misses = lookups - reused;
    int hits = lookups - misses;
    double expert_read = misses * EXPERT_BYTES;
    s->cache_bytes += expert_read;
    if (s->cache_bytes > CACHE_CAP) s->cache_bytes = CACHE_CAP;

    memset(st, 0, sizeof *st);
    st->kind = RM_REC_TOKEN;
    st->token_index = index;
    st->token_id = (int)(next_rand(s) % 163840);
    st->seconds = secs;
    for (int p = 0; p < RM_PHASE_COUNT; p++) st->phase_seconds[p] = secs * frac[p] / total;
    st->bytes_spine_read = (uint64_t)spine_read;
    st->bytes_expert_read = (uint64_t)expert_read;
    st->bytes_expert_from_cache = (uint64_t)(hits * EXPERT_BYTES);
    st->expert_hits = (uint64_t)hits;
    st->expert_misses = (uint64_t)misses;
    st->read_gbps = gbps;
    st->queue_depth = (int)(unit(s) * 32);
    fill_storage(s, st);
    /* the chosen experts' residency: the misses among the choices the
     * previous token did not make, a few of them in flight */
    int left = misses;
    for (int l = 0; l < LAYERS; l++)
        for (int k = 0; k < TOPK; k++) {
            int fresh = unit(s) < 0.38;
            st->route_state[l][k] = fresh && left > 0 ? (unit(s) < 0.2 ? RM_ROUTE_INFLIGHT : RM_ROUTE_READ)
                                                      : RM_ROUTE_RESIDENT;
            if (st->route_state[l][k] != RM_ROUTE_RESIDENT) left--;
        }
    /* the misses fall on the layers at random, more on the later ones */
    for (int m = 0; m < misses; m++) {
        double u = unit(s);
        int l = (int)(LAYERS * (1 - u * u));
        st->layer_bytes_read[l < LAYERS ? l : LAYERS - 1] += (uint64_t)EXPERT_BYTES;
    }
}

/* Sleeps until rm_now() reaches t. */
static void sleep_until(double t)
{
    for (double d; (d = t - rm_now()) > 0;) {
        struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };
        nanosleep(&ts, NULL);
    }
}

/* ---- the prompt ---------------------------------------------------------- */

/* Tokens of the whole conversation. */
static int ctx_tokens(const synth_source *s)
{
    const rm_conv *c = &s->conv;
    int ctx = c->system ? msg_tokens(c->system) : 0;
    for (int i = 0; i < c->n; i++)
        ctx += msg_tokens(c->msgs[i].content) + (c->msgs[i].reasoning ? msg_tokens(c->msgs[i].reasoning) : 0);
    return ctx;
}

/* The prompt's figures before any pass: ctx, reused, total, reprefill. */
static void prompt_base(synth_source *s, int user_tokens, rm_prompt_figures *p)
{
    memset(p, 0, sizeof *p);
    int ctx = ctx_tokens(s) + user_tokens;
    p->ctx = ctx;
    p->reused = s->fed < ctx ? s->fed : 0;
    p->reprefill = p->reused == 0 && ctx > user_tokens;     /* earlier turns computed again */
    p->total = ctx - p->reused;
    p->chunks = (p->total + PASS_TOKENS - 1) / PASS_TOKENS;
    p->layers = MODEL_LAYERS;
    p->eta = -1;
}

/* One layer of a pass: its time, phases and expert reads (each expert the
 * layer needs is read once per pass). */
static void progress_record(synth_source *s, rm_prompt_figures *p, double secs, double t0)
{
    rm_token_stats *st = &s->st;
    memset(st, 0, sizeof *st);
    st->kind = RM_REC_PROGRESS;
    st->prefill = 1;
    st->prompt_tokens = p->ctx;
    st->seconds = secs;
    static const double frac[RM_PHASE_COUNT] = { 0.35, 0.15, 0.15, 0.33, 0.02 };
    for (int q = 0; q < RM_PHASE_COUNT; q++) st->phase_seconds[q] = secs * frac[q];
    double gbps = DEVICE_GBPS * (0.75 + 0.2 * unit(s));
    double bytes = secs * frac[RM_PHASE_WAIT_IO] * gbps * 1e9;
    int misses = (int)(bytes / EXPERT_BYTES);
    st->bytes_expert_read = (uint64_t)(misses * EXPERT_BYTES);
    st->expert_misses = (uint64_t)misses;
    st->expert_hits = (uint64_t)(p->chunk_tokens > 0 ? TOPK * 4 : 0);
    st->bytes_expert_from_cache = (uint64_t)(st->expert_hits * EXPERT_BYTES);
    st->read_gbps = gbps;
    s->cache_bytes += (double)st->bytes_expert_read;
    if (s->cache_bytes > CACHE_CAP) s->cache_bytes = CACHE_CAP;
    p->chunk_bytes_read += st->bytes_expert_read;
    p->chunk_bytes_left = (uint64_t)((double)st->bytes_expert_read * (p->layers - p->layer));
    p->elapsed = rm_now() - t0;
    double done = p->done + (double)p->chunk_tokens * p->layer / p->layers;
    p->tok_per_s = p->elapsed > 0 ? done / p->elapsed : 0;
    p->eta = p->tok_per_s > 0 ? (p->total - done) / p->tok_per_s : -1;
    p->work = done / p->total;      /* its layers all weigh the same */
    st->prompt = *p;
    fill_storage(s, st);
}

/* Processes the prompt; returns 0, or 1 when stopped (p->done then holds
 * the tokens of the complete passes). */
static int process_prompt(synth_source *s, rm_prompt_figures *p, const rm_gen_events *ev,
                          volatile int *stop, double nominal)
{
    double t0 = rm_now();
    if (s->o.prompt_rate > 0) {
        double t = t0;
        for (p->chunk = 0; p->chunk < p->chunks; p->chunk++) {
            p->chunk_tokens = p->total - p->done < PASS_TOKENS ? p->total - p->done : PASS_TOKENS;
            p->chunk_bytes_read = 0;
            double layer_s = p->chunk_tokens / s->o.prompt_rate / p->layers;
            for (p->layer = 0; p->layer < p->layers;) {
                if (*stop) return 1;
                double t1 = t + layer_s;
                sleep_until(t1);
                p->layer++;
                progress_record(s, p, t1 - t, t0);
                t = t1;
                if (ev->on_stats) ev->on_stats(ev->ud, &s->st);
            }
            p->done += p->chunk_tokens;
        }
        p->chunk = p->chunks ? p->chunks - 1 : 0;
    } else {
        p->done = p->total;
    }
    rm_token_stats *st = &s->st;
    memset(st, 0, sizeof *st);
    st->kind = RM_REC_PROMPT;
    st->prefill = 1;
    st->prompt_tokens = p->ctx;
    p->done = p->total;
    p->elapsed = s->o.prompt_rate > 0 ? rm_now() - t0 : p->total * nominal * 0.1;
    p->tok_per_s = p->elapsed > 0 ? p->total / p->elapsed : 0;
    p->eta = 0;
    p->work = 1;
    st->seconds = p->elapsed;
    st->token_index = (uint64_t)p->total;       /* tokens prefilled, as the engine reports */
    st->prompt = *p;
    fill_storage(s, st);
    if (ev->on_stats) ev->on_stats(ev->ud, st);
    return 0;
}

/* ---- decoding ------------------------------------------------------------ */

/* Starts the next step: a plain one, or (when allowed, some of the time) a
 * verify pass whose drafts are partly accepted; returns the tokens it emits. */
static int next_step(synth_source *s, int spec)
{
    s->pass_pos = 0;
    if (!spec || unit(s) >= 0.35) {
        if (spec && unit(s) < 0.3) s->declined++;
        s->pass_n = 1;
        return 1;
    }
    int k = 2 + (int)(next_rand(s) % 3);
    int acc = (int)(next_rand(s) % (uint64_t)(k + 1));
    s->drafted += (uint64_t)k;
    s->accepted += (uint64_t)acc;
    s->pass_no++;
    s->pass_n = 1 + acc;
    return s->pass_n;
}

typedef struct decode {
    const rm_gen_events *ev;
    volatile int *stop;
    uint64_t index;
    double deadline, nominal;
    int spec;               /* verify passes allowed */
    int left;               /* tokens before --max-new cuts the reply */
} decode;

/* Publishes one token's record, paced at the rate; the tokens of a verify
 * pass come together and share the pass's time. */
static void emit_token(synth_source *s, decode *d)
{
    if (s->pass_left == 0) {
        s->pass_left = next_step(s, d->spec);
        if (s->o.rate > 0) {
            d->deadline += s->pass_left / s->o.rate;
            sleep_until(d->deadline);
        }
    }
    double secs = d->nominal * (0.8 + 0.4 * unit(s));
    if (s->pass_n > 1) secs *= 0.6;            /* a pass costs less than its tokens one by one */
    fill_token(s, d->index++, secs);
    s->st.spec_drafted = s->drafted;
    s->st.spec_accepted = s->accepted;
    s->st.spec_passes = (uint64_t)s->pass_no;
    s->st.spec_declined = s->declined;
    if (s->pass_n > 1) {
        s->st.spec_pass = s->pass_no;
        s->st.spec_pass_pos = s->pass_pos;
    }
    s->pass_pos++;
    s->pass_left--;
    d->left--;
    if (d->ev->on_stats) d->ev->on_stats(d->ev->ud, &s->st);
}

/* Streams `ntok` tokens of text cycling through `pieces` on one channel,
 * keeping them in `out` (the reply). Returns 0, 1 when stopped, 2 when
 * --max-new cut it, or -1 when out of memory. */
static int stream(synth_source *s, decode *d, const char *head, const char **pieces, int npieces, int ntok,
                  int channel, rm_buf *out)
{
    int piece = head ? npieces - 1 : (int)(next_rand(s) % (uint64_t)npieces);
    const char *text = head ? head : pieces[piece];
    size_t pos = 0, len = strlen(text);
    for (int t = 0; t < ntok; t++) {
        if (*d->stop) return 1;
        if (d->left <= 0) return 2;
        if (pos == len) {
            piece = (piece + 1) % npieces;
            text = pieces[piece];
            pos = 0;
            len = strlen(text);
        }
        size_t n = 1 + next_rand(s) % 6;
        if (n > len - pos) n = len - pos;
        if (t == ntok - 1) {        /* end the channel on a whole character */
            while (pos + n < len && ((unsigned char)text[pos + n] & 0xC0) == 0x80) n++;
        }
        if (rm_buf_add(out, text + pos, n)) return -1;
        if (d->ev->on_text) d->ev->on_text(d->ev->ud, channel, text + pos, n);
        pos += n;
        emit_token(s, d);
    }
    return 0;
}

/* The end-of-message token: emitted, not fed through the model. */
static void end_of_message(synth_source *s, decode *d)
{
    rm_token_stats *st = &s->st;
    st->kind = RM_REC_TOKEN;
    st->token_index = d->index++;
    st->token_id = 163586;
    st->seconds = 2e-5;
    memset(st->phase_seconds, 0, sizeof st->phase_seconds);
    st->bytes_spine_read = st->bytes_expert_read = st->bytes_expert_from_cache = st->bytes_net = 0;
    st->expert_hits = st->expert_misses = 0;
    st->read_gbps = 0;
    st->spec_pass = st->spec_pass_pos = 0;
    if (d->ev->on_stats) d->ev->on_stats(d->ev->ud, st);
}

static int turn(ui_source *src, const char *user, const rm_gen_opts *o, const rm_gen_events *ev,
                volatile int *stop, rm_err *err)
{
    synth_source *s = (synth_source *)src;
    size_t ulen = strlen(user);
    int lines = 1;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < ulen; i++) {
        if (user[i] == '\n') lines++;
        h = (h ^ (unsigned char)user[i]) * 1099511628211ull;
    }
    s->rng = h | 1;
    double nominal = s->o.rate > 0 ? 1.0 / s->o.rate : 0.02;
    s->drafted = s->accepted = s->declined = 0;
    s->pass_no = s->pass_left = 0;

    rm_prompt_figures p;
    prompt_base(s, msg_tokens(user), &p);
    if (rm_conv_push(&s->conv, "user", user, NULL, 0)) return rm_errf(err, "out of memory keeping the message");
    if (process_prompt(s, &p, ev, stop, nominal)) {
        s->fed = p.reused + p.done;             /* the complete passes stay in the state */
        if (rm_conv_push(&s->conv, "assistant", "", NULL, RM_STOPPED_PROMPT)) return rm_errf(err, "out of memory");
        return 0;
    }

    rm_buf reasoning = { 0 }, answer = { 0 };
    char head[256];
    snprintf(head, sizeof head, "Received 1 message: %zu bytes, %d lines. ", ulen, lines);
    decode d = { ev, stop, 0, rm_now(), nominal, o->spec != RM_SPEC_OFF && o->temperature <= 0,
                 o->max_new > 0 ? o->max_new : 1 << 30 };
    int rc = 0;
    if (o->think && s->o.reasoning_tokens > 0)
        rc = stream(s, &d, NULL, reasoning_text, (int)(sizeof reasoning_text / sizeof *reasoning_text),
                    s->o.reasoning_tokens, RM_CHAN_REASONING, &reasoning);
    if (rc == 0)
        rc = stream(s, &d, head, answer_text, (int)(sizeof answer_text / sizeof *answer_text),
                    s->o.answer_tokens, RM_CHAN_ANSWER, &answer);
    if (rc == 0) end_of_message(s, &d);
    int bad = rc < 0 || rm_conv_push(&s->conv, "assistant", answer.p ? answer.p : "", reasoning.p,
                                 rc == 1 ? RM_STOPPED_REPLY : 0);
    s->fed = bad ? 0 : ctx_tokens(s);          /* the state holds the whole conversation */
    rm_buf_free(&reasoning);
    rm_buf_free(&answer);
    return bad ? rm_errf(err, "out of memory keeping the reply") : 0;
}

/* ---- the conversation ---------------------------------------------------- */

static int messages(ui_source *src, const rm_chat_msg **out)
{
    return rm_conv_view(&((synth_source *)src)->conv, out);
}

static int save(ui_source *src, const char *path, rm_err *err)
{
    return rm_conv_save(&((synth_source *)src)->conv, path, err);
}

/* Replaces the conversation only when the whole file is valid. */
static int load(ui_source *src, const char *path, int *ctx, rm_err *err)
{
    synth_source *s = (synth_source *)src;
    if (rm_conv_load(&s->conv, path, err)) return -1;
    s->fed = 0;
    /* what the model is given of it: a turn stopped in its prompt is not */
    const rm_chat_msg *m;
    int n = rm_conv_context(&s->conv, &m);
    *ctx = 0;
    for (int i = 0; i < n; i++)
        *ctx += msg_tokens(m[i].content) + (m[i].reasoning_content ? msg_tokens(m[i].reasoning_content) : 0);
    return 0;
}

static int last_interrupted(ui_source *src) { return rm_conv_last_interrupted(&((synth_source *)src)->conv); }
static int interrupted(ui_source *src, int i) { return rm_conv_interrupted(&((synth_source *)src)->conv, i); }

static double probe(ui_source *src, double seconds) { (void)src; (void)seconds; return DEVICE_GBPS; }

static void destroy(ui_source *src)
{
    synth_source *s = (synth_source *)src;
    rm_conv_free(&s->conv);
    free(s);
}

static const ui_source_vt synth_vt = {
    turn, set_system, clear, save, load, messages, last_interrupted, interrupted, probe, destroy,
};

int ui_source_synth_open(const ui_synth_opts *o, ui_source **out, rm_err *err)
{
    synth_source *s = calloc(1, sizeof *s);
    if (!s) return rm_errf(err, "out of memory");
    s->base.vt = &synth_vt;
    s->base.route_layer0 = FIRST_MOE;
    s->base.model_layers = MODEL_LAYERS;
    s->o = *o;
    memset(s->route, 0xff, sizeof s->route);     /* -1: no previous choice */
    snprintf(s->base.label, sizeof s->base.label, "synthetic %.0f tok/s", o->rate);
    snprintf(s->base.name, sizeof s->base.name, "synthetic K3-shaped source");
    /* Kimi K3's published size (2.8 T parameters, 1.56 TB) on a machine
     * with the spine and cache above in RAM */
    rm_model_info *mi = &s->base.info;
    mi->family = "kimi_k3";
    mi->num_layers = MODEL_LAYERS;
    mi->first_moe_layer = FIRST_MOE;
    mi->num_experts = EXPERTS;
    mi->experts_per_token = TOPK;
    mi->total_experts = LAYERS * EXPERTS;
    mi->num_params = 2800000000000ull;
    mi->total_weight_bytes = 1560000000000ull;
    mi->spine_bytes = mi->spine_resident_bytes = (uint64_t)SPINE_TOTAL;
    mi->expert_bytes = mi->total_weight_bytes - mi->spine_bytes;
    mi->expert_cache_bytes = (uint64_t)CACHE_CAP;
    mi->expert_cache_slots = (int)(CACHE_CAP / EXPERT_BYTES);
    mi->ram_budget = mi->spine_bytes + mi->expert_cache_bytes;
    mi->expert_mxfp4 = 1;
    *out = &s->base;
    return 0;
}
