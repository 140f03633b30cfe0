/* source_synth.c — a synthetic chat source for demos, tests and benchmarks.
 *
 * It answers every message with deterministic text (seeded by the message):
 * reasoning first, then an answer that starts by stating how many bytes and
 * lines it received (the paste test reads this), with CJK, combining marks
 * and emoji mixed in. Text is cut into tokens of 1..6 bytes regardless of
 * character boundaries, as byte-level tokens are. Each token comes with an
 * rm_token_stats record shaped like a Kimi K3 run on a streaming machine:
 * 92 MoE layers choosing 16 of 896 experts with token-to-token reuse, a cache
 * that fills, phases and bytes that vary. Tokens are paced at the requested
 * rate and the stop flag is honoured between tokens, like the engine.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "source.h"

enum { LAYERS = 92, EXPERTS = 896, TOPK = 16 };
#define EXPERT_BYTES   (2.5e6)
#define SPINE_TOTAL    (14e9)
#define CACHE_CAP      (64e9)
#define DEVICE_GBPS    6.8

typedef struct msg { char *role, *content, *reasoning; } msg;

typedef struct synth_source {
    ui_source     base;
    ui_synth_opts o;
    msg          *msgs;
    rm_chat_msg  *view;
    int           n, cap, vcap;
    int           interrupted;
    uint64_t      rng;
    int16_t       route[LAYERS][TOPK];
    double        spine_resident, cache_bytes;
    uint64_t      drafted, accepted;    /* speculation, this turn */
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

static int push_msg(synth_source *s, const char *role, const char *content, const char *reasoning)
{
    if (RM_GROW(s->msgs, s->cap, s->n + 1) || RM_GROW(s->view, s->vcap, s->n + 1)) return -1;
    msg m = { strdup(role), strdup(content ? content : ""), reasoning ? strdup(reasoning) : NULL };
    if (!m.role || !m.content || (reasoning && !m.reasoning)) {
        free(m.role);
        free(m.content);
        free(m.reasoning);
        return -1;
    }
    s->msgs[s->n++] = m;
    return 0;
}

static void clear(ui_source *src)
{
    synth_source *s = (synth_source *)src;
    for (int i = 0; i < s->n; i++) {
        free(s->msgs[i].role);
        free(s->msgs[i].content);
        free(s->msgs[i].reasoning);
    }
    s->n = 0;
    s->interrupted = 0;
}

static int set_system(ui_source *src, const char *text, rm_err *err)
{
    synth_source *s = (synth_source *)src;
    if (s->n && !strcmp(s->msgs[0].role, "system")) {
        char *c = strdup(text);
        if (!c) return rm_errf(err, "out of memory");
        free(s->msgs[0].content);
        s->msgs[0].content = c;
        return 0;
    }
    if (push_msg(s, "system", text, NULL)) return rm_errf(err, "out of memory");
    msg sys = s->msgs[s->n - 1];
    memmove(s->msgs + 1, s->msgs, (size_t)(s->n - 1) * sizeof *s->msgs);
    s->msgs[0] = sys;
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

static void fill_stats(synth_source *s, uint64_t index, double nominal)
{
    rm_token_stats *st = &s->st;
    int reused = step_routes(s);
    int lookups = LAYERS * TOPK;
    double secs = nominal * (0.8 + 0.4 * unit(s));
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
    st->token_index = index;
    st->token_id = (int)(next_rand(s) % 163840);
    st->seconds = secs;
    for (int p = 0; p < RM_PHASE_COUNT; p++) st->phase_seconds[p] = secs * frac[p] / total;
    st->bytes_spine_read = (uint64_t)spine_read;
    st->bytes_expert_read = (uint64_t)expert_read;
    st->bytes_expert_from_cache = (uint64_t)(hits * EXPERT_BYTES);
    st->spine_resident_bytes = (uint64_t)s->spine_resident;
    st->spine_total_bytes = (uint64_t)SPINE_TOTAL;
    st->expert_cache_bytes = (uint64_t)s->cache_bytes;
    st->expert_cache_capacity = (uint64_t)CACHE_CAP;
    st->expert_hits = (uint64_t)hits;
    st->expert_misses = (uint64_t)misses;
    st->retained_fraction = s->cache_bytes / ((double)LAYERS * EXPERTS * EXPERT_BYTES);
    st->read_gbps = gbps;
    st->device_gbps = DEVICE_GBPS;
    st->queue_depth = (int)(unit(s) * 32);
    s->drafted += 2;
    s->accepted += (uint64_t)(unit(s) < 0.7) + (uint64_t)(unit(s) < 0.45);
    st->spec_drafted = s->drafted;
    st->spec_accepted = s->accepted;
    st->route_layers = LAYERS;
    st->route_k = TOPK;
    st->num_experts = EXPERTS;
    for (int l = 0; l < LAYERS; l++) memcpy(st->route_ids[l], s->route[l], sizeof s->route[l]);
}

/* Sleeps until rm_now() reaches t. */
static void sleep_until(double t)
{
    for (double d; (d = t - rm_now()) > 0;) {
        struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };
        nanosleep(&ts, NULL);
    }
}

/* Streams `ntok` tokens of text cycling through `pieces` on one channel,
 * keeping them in `out` (the reply). Returns 0, 1 when stopped, or -1 when
 * out of memory. */
static int stream(synth_source *s, const char *head, const char **pieces, int npieces, int ntok,
                  int channel, rm_buf *out, const rm_gen_events *ev, volatile int *stop,
                  uint64_t *index, double *deadline, double nominal)
{
    int piece = head ? npieces - 1 : (int)(next_rand(s) % (uint64_t)npieces);
    const char *text = head ? head : pieces[piece];
    size_t pos = 0, len = strlen(text);
    for (int t = 0; t < ntok; t++) {
        if (*stop) return 1;
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
        if (s->o.rate > 0) {
            sleep_until(*deadline);
            *deadline += 1.0 / s->o.rate;
        }
        if (rm_buf_add(out, text + pos, n)) return -1;
        if (ev->on_text) ev->on_text(ev->ud, channel, text + pos, n);
        pos += n;
        fill_stats(s, (*index)++, nominal);
        if (ev->on_stats) ev->on_stats(ev->ud, &s->st);
    }
    return 0;
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
    if (push_msg(s, "user", user, NULL)) return rm_errf(err, "out of memory");

    double nominal = s->o.rate > 0 ? 1.0 / s->o.rate : 0.02;
    s->drafted = s->accepted = 0;
    memset(&s->st, 0, sizeof s->st);
    s->st.prefill = 1;
    s->st.prompt_tokens = (int)(ulen / 4 + 8);
    s->st.seconds = s->st.prompt_tokens * nominal * 0.1;
    if (ev->on_stats) ev->on_stats(ev->ud, &s->st);

    rm_buf reasoning = { 0 }, answer = { 0 };
    char head[256];
    snprintf(head, sizeof head, "Received 1 message: %zu bytes, %d lines. ", ulen, lines);
    uint64_t index = 0;
    double deadline = rm_now();
    int stopped = 0;
    if (o->think && s->o.reasoning_tokens > 0)
        stopped = stream(s, NULL, reasoning_text, (int)(sizeof reasoning_text / sizeof *reasoning_text),
                         s->o.reasoning_tokens, RM_CHAN_REASONING, &reasoning, ev, stop, &index,
                         &deadline, nominal);
    if (!stopped)
        stopped = stream(s, head, answer_text, (int)(sizeof answer_text / sizeof *answer_text),
                         s->o.answer_tokens, RM_CHAN_ANSWER, &answer, ev, stop, &index, &deadline,
                         nominal);
    s->interrupted = stopped == 1;
    int rc = stopped < 0 ? -1 : push_msg(s, "assistant", answer.p ? answer.p : "", reasoning.p);
    rm_buf_free(&reasoning);
    rm_buf_free(&answer);
    return rc ? rm_errf(err, "out of memory") : 0;
}

/* The conversation as JSONL of {role, content[, reasoning_content]},
 * replaced atomically (rm_write_atomic: temporary file, fsync, rename,
 * folder fsync). engine/session.c writes the engine's transcripts; this
 * should become the engine's transcript writer once engine.h exports one. */
static int save(ui_source *src, const char *path, rm_err *err)
{
    synth_source *s = (synth_source *)src;
    rm_buf b = { 0 };
    int bad = 0;
    for (int i = 0; i < s->n && !bad; i++) {
        json_t *o = json_pack("{s:s, s:s}", "role", s->msgs[i].role, "content", s->msgs[i].content);
        if (o && s->msgs[i].reasoning)
            json_object_set_new(o, "reasoning_content", json_string(s->msgs[i].reasoning));
        char *line = o ? json_dumps(o, JSON_COMPACT) : NULL;
        bad = !line || rm_buf_adds(&b, line) || rm_buf_add(&b, "\n", 1);
        free(line);
        json_decref(o);
    }
    int rc = bad ? rm_errf(err, "%s: out of memory", path) : rm_write_atomic(path, b.p ? b.p : "", b.len, 0644, err);
    rm_buf_free(&b);
    return rc;
}

static int load(ui_source *src, const char *path, rm_err *err)
{
    synth_source *s = (synth_source *)src;
    FILE *f = fopen(path, "r");
    if (!f) return rm_errf(err, "%s: cannot open", path);
    clear(src);
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        const char *role = NULL, *content = NULL, *reasoning = NULL;
        if (!o || json_unpack(o, "{s:s, s:s, s?s}", "role", &role, "content", &content,
                              "reasoning_content", &reasoning)) {
            rc = rm_errf(err, "%s:%d: not a {role, content} record", path, lineno);
            json_decref(o);
            break;
        }
        if (push_msg(s, role, content, reasoning)) rc = rm_errf(err, "out of memory");
        json_decref(o);
        if (rc) break;
    }
    free(line);
    fclose(f);
    return rc;
}

static int messages(ui_source *src, const rm_chat_msg **out)
{
    synth_source *s = (synth_source *)src;
    for (int i = 0; i < s->n; i++) {
        s->view[i] = (rm_chat_msg){ s->msgs[i].role, s->msgs[i].content, s->msgs[i].reasoning, NULL };
    }
    *out = s->view;
    return s->n;
}

static int last_interrupted(ui_source *src) { return ((synth_source *)src)->interrupted; }

static void destroy(ui_source *src)
{
    synth_source *s = (synth_source *)src;
    clear(src);
    free(s->msgs);
    free(s->view);
    free(s);
}

static const ui_source_vt synth_vt = {
    turn, set_system, clear, save, load, messages, last_interrupted, destroy,
};

int ui_source_synth_open(const ui_synth_opts *o, ui_source **out, rm_err *err)
{
    synth_source *s = calloc(1, sizeof *s);
    if (!s) return rm_errf(err, "out of memory");
    s->base.vt = &synth_vt;
    s->o = *o;
    memset(s->route, 0xff, sizeof s->route);     /* -1: no previous choice */
    snprintf(s->base.label, sizeof s->base.label, "synthetic %.0f tok/s", o->rate);
    *out = &s->base;
    return 0;
}
