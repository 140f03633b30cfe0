/* stats.c — per-token statistics history and derived figures (see stats.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stats.h"

/* The share of this token's router choices that the previous token made
 * too, layer by layer; not counted for a pair from one verify pass. */
static void reuse_of(ui_sample *s, const rm_token_stats *st, ui_reuse_tracker *r)
{
    int layers = st->route_layers < RM_MAX_ROUTE_LAYERS ? st->route_layers : RM_MAX_ROUTE_LAYERS;
    int k = st->route_k < RM_MAX_TOPK ? st->route_k : RM_MAX_TOPK;
    if (layers <= 0 || k <= 0) return;
    int same_pass = st->spec_pass > 0 && r->have && r->pass == st->spec_pass;
    if (r->have && !same_pass && r->layers == layers && r->k == k) {
        int hit = 0;
        for (int l = 0; l < layers; l++)
            for (int i = 0; i < k; i++)
                for (int j = 0; j < k; j++)
                    if (st->route_ids[l][i] == r->ids[l][j]) { hit++; break; }
        s->reuse_hit = hit;
        s->reuse_n = layers * k;
    }
    r->have = 1;
    r->pass = st->spec_pass;
    r->layers = layers;
    r->k = k;
    for (int l = 0; l < layers; l++) memcpy(r->ids[l], st->route_ids[l], (size_t)k * sizeof r->ids[l][0]);
}

void ui_stats_sample(ui_sample *s, const rm_token_stats *st, ui_reuse_tracker *r)
{
    memset(s, 0, sizeof *s);
    s->token_index = st->token_index;
    s->seconds = st->seconds;
    memcpy(s->phase, st->phase_seconds, sizeof s->phase);
    s->spine = st->bytes_spine_read;
    s->expert = st->bytes_expert_read;
    s->net = st->bytes_net;
    s->from_cache = st->bytes_expert_from_cache;
    s->hits = st->expert_hits;
    s->misses = st->expert_misses;
    s->gpu_in = st->gpu_h2d_bytes;
    /* engines before record kinds marked the prompt with prefill only */
    s->kind = st->kind != RM_REC_TOKEN ? st->kind : st->prefill ? RM_REC_PROMPT : RM_REC_TOKEN;
    s->prompt_tokens = st->prompt_tokens;
    s->channel = 0;             /* the worker knows the text that came with it */
    s->prompt = st->prompt;
    s->spec_pass = st->spec_pass;
    if (s->kind != RM_REC_TOKEN) return;
    double phases = 0;
    for (int p = 0; p < RM_PHASE_COUNT; p++) phases += st->phase_seconds[p];
    /* an endpoint's token came through the server's model: its chunk's bytes say so */
    s->fed = phases > 0 || st->expert_hits + st->expert_misses > 0 || st->bytes_net > 0;
    if (s->fed && r) reuse_of(s, st, r);
}

void ui_stats_reset(ui_stats *st)
{
    st->count = st->tokens = 0;
    st->hits = st->misses = 0;
    memset(st->chan_tokens, 0, sizeof st->chan_tokens);
    st->seconds = 0;
    st->prompt_state = UI_PROMPT_NONE;
    memset(&st->prompt, 0, sizeof st->prompt);
    memset(&st->prompt_sum, 0, sizeof st->prompt_sum);
    st->nprogress = 0;
    st->have_cur = st->have_prev = st->have_pcur = 0;
    st->nroutes = 0;
    st->turn_bytes = 0;
    st->tb_used = 0;
    st->tb_size = 1;
    st->plain_secs = st->spec_secs = 0;
    st->plain_n = st->spec_n = 0;
    st->have_layers = 0;
}

void ui_layer_acc_reset(ui_layer_acc *a) { memset(a, 0, sizeof *a); }

void ui_layer_acc_add(ui_layer_acc *a, const rm_token_stats *st, const ui_reuse_tracker *r)
{
    int layers = st->route_layers < RM_MAX_ROUTE_LAYERS ? st->route_layers : RM_MAX_ROUTE_LAYERS;
    int k = st->route_k < RM_MAX_TOPK ? st->route_k : RM_MAX_TOPK;
    if (layers <= 0 || k <= 0) return;
    ui_layer_figs *f = &a->f;
    f->layers = layers;
    f->tokens++;
    int same_pass = st->spec_pass > 0 && r->have && r->pass == st->spec_pass;
    int reuse = r->have && !same_pass && r->layers == layers && r->k == k;
    for (int l = 0; l < layers; l++) {
        f->bytes[l] += st->layer_bytes_read[l];
        for (int i = 0; i < k; i++) {
            int id = st->route_ids[l][i];
            if (reuse) {
                for (int j = 0; j < k; j++) if (r->ids[l][j] == id) { f->reuse_hit[l]++; break; }
                f->reuse_n[l]++;
            }
            if (id < 0 || id >= UI_HOT_IDS) continue;
            if (a->hist[l][id] < UINT16_MAX) a->hist[l][id]++;
            uint32_t c = a->hist[l][id];
            /* keep the UI_HOT most chosen in order: O(UI_HOT) a choice */
            int at = -1;
            for (int h = 0; h < UI_HOT; h++) if (f->hot_n[l][h] && f->hot[l][h] == id) at = h;
            if (at < 0) {
                if (c <= f->hot_n[l][UI_HOT - 1]) continue;
                at = UI_HOT - 1;
                f->hot[l][at] = (int16_t)id;
            }
            f->hot_n[l][at] = c;
            while (at > 0 && f->hot_n[l][at] > f->hot_n[l][at - 1]) {
                int16_t ti = f->hot[l][at]; f->hot[l][at] = f->hot[l][at - 1]; f->hot[l][at - 1] = ti;
                uint32_t tn = f->hot_n[l][at]; f->hot_n[l][at] = f->hot_n[l][at - 1]; f->hot_n[l][at - 1] = tn;
                at--;
            }
        }
    }
}

/* One token into the whole turn's rate history. */
static void turn_bucket_add(ui_stats *st, double seconds)
{
    if (st->tb_size < 1) st->tb_size = 1;
    int i = st->tb_used ? st->tb_used - 1 : 0;
    if (!st->tb_used || st->tb_tokens[i] >= st->tb_size) {
        if (st->tb_used == UI_TURN_BUCKETS) {
            for (int k = 0; k < UI_TURN_BUCKETS / 2; k++) {
                st->tb_secs[k] = st->tb_secs[2 * k] + st->tb_secs[2 * k + 1];
                st->tb_tokens[k] = st->tb_tokens[2 * k] + st->tb_tokens[2 * k + 1];
            }
            st->tb_used = UI_TURN_BUCKETS / 2;
            st->tb_size *= 2;
        }
        i = st->tb_used - 1;
        if (!st->tb_used || st->tb_tokens[i] >= st->tb_size) {
            i = st->tb_used++;
            st->tb_secs[i] = 0;
            st->tb_tokens[i] = 0;
        }
    }
    st->tb_secs[i] += seconds;
    st->tb_tokens[i]++;
}

int ui_stats_turn_rates(const ui_stats *st, double *out, int n)
{
    int k = st->tb_used < n ? st->tb_used : n;
    int first = st->tb_used - k;
    for (int i = 0; i < k; i++) {
        double secs = st->tb_secs[first + i];
        out[i] = secs > 0 ? st->tb_tokens[first + i] / secs : 0;
    }
    return k;
}

static void sum_into(ui_sample *a, const ui_sample *s)
{
    for (int p = 0; p < RM_PHASE_COUNT; p++) a->phase[p] += s->phase[p];
    a->spine += s->spine;
    a->expert += s->expert;
    a->net += s->net;
    a->from_cache += s->from_cache;
    a->hits += s->hits;
    a->misses += s->misses;
    a->gpu_in += s->gpu_in;
}

/* The figures of a prompt record; engines that did not fill them gave the
 * context in prompt_tokens and the tokens prefilled in token_index. */
static rm_prompt_figures prompt_of(const ui_sample *s)
{
    rm_prompt_figures p = s->prompt;
    if (p.ctx == 0 && s->kind == RM_REC_PROMPT) {
        p.ctx = s->prompt_tokens;
        p.total = p.done = (int)s->token_index <= p.ctx ? (int)s->token_index : p.ctx;
        p.reused = p.ctx - p.total;
        p.elapsed = s->seconds;
        p.tok_per_s = s->seconds > 0 ? p.total / s->seconds : 0;
    }
    return p;
}

void ui_stats_add(ui_stats *st, const ui_sample *s)
{
    if (s->kind == RM_REC_PROGRESS) {
        st->prompt = prompt_of(s);
        st->prompt_state = UI_PROMPT_RUNNING;
        sum_into(&st->prompt_sum, s);
        st->prompt_sum.seconds += s->seconds;
        st->nprogress++;
        return;
    }
    if (s->kind == RM_REC_PROMPT) {
        st->prompt = prompt_of(s);
        /* an engine may close a stopped prompt with its record too */
        st->prompt_state = st->prompt.done < st->prompt.total ? UI_PROMPT_STOPPED : UI_PROMPT_DONE;
        sum_into(&st->prompt_sum, s);
        st->prompt_sum.seconds = st->prompt.elapsed > 0 ? st->prompt.elapsed : s->seconds;
        return;
    }
    st->tokens++;
    st->seconds += s->seconds;
    if (s->channel > 0 && s->channel < 3) st->chan_tokens[s->channel]++;
    if (!s->fed) return;
    st->hist[st->count % UI_HIST] = *s;
    st->count++;
    st->hits += s->hits;
    st->misses += s->misses;
    st->turn_bytes += s->spine + s->expert + s->net;
    turn_bucket_add(st, s->seconds);
    if (s->spec_pass) { st->spec_secs += s->seconds; st->spec_n++; }
    else { st->plain_secs += s->seconds; st->plain_n++; }
}

void ui_stats_prompt_stopped(ui_stats *st)
{
    if (st->prompt_state != UI_PROMPT_NONE) st->prompt_state = UI_PROMPT_STOPPED;
}

void ui_stats_set_full(ui_stats *st, const rm_token_stats *cur, const rm_token_stats *prev)
{
    if (cur->prefill || cur->kind != RM_REC_TOKEN) {
        st->pcur = *cur;
        st->have_pcur = 1;
        return;
    }
    st->cur = *cur;
    st->have_cur = 1;
    if (prev) { st->prev = *prev; st->have_prev = 1; }
    int layers = cur->route_layers < RM_MAX_ROUTE_LAYERS ? cur->route_layers : RM_MAX_ROUTE_LAYERS;
    if (layers > 0)
        memcpy(st->routes[st->nroutes % UI_ROUTE_HIST], cur->route_ids,
               (size_t)layers * sizeof cur->route_ids[0]);
    st->route_pass[st->nroutes % UI_ROUTE_HIST] = cur->spec_pass;
    st->nroutes++;
}

const int16_t (*ui_stats_route(const ui_stats *st, int age, int *pass))[RM_MAX_TOPK]
{
    if (age < 0 || age >= st->nroutes || age >= UI_ROUTE_HIST) return NULL;
    int i = (st->nroutes - 1 - age) % UI_ROUTE_HIST;
    if (pass) *pass = st->route_pass[i];
    return st->routes[i];
}

int ui_stats_times(const ui_stats *st, double *out, int *pass, int n)
{
    int have = st->count < UI_HIST ? st->count : UI_HIST;
    if (n > have) n = have;
    for (int i = 0; i < n; i++) {
        const ui_sample *s = &st->hist[(st->count - n + i) % UI_HIST];
        out[i] = s->seconds;
        if (pass) pass[i] = s->spec_pass;
    }
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Phase shares and read rates of the prompt's records so far. */
static void prompt_summary(const ui_stats *st, ui_summary *o)
{
    const ui_sample *a = &st->prompt_sum;
    o->prompt_state = st->prompt_state;
    o->prompt = st->prompt;
    o->prompt_bytes = a->spine + a->expert + a->net;
    if (st->count) return;              /* tokens have their own window */
    double total = 0;
    for (int p = 0; p < RM_PHASE_COUNT; p++) total += a->phase[p];
    if (total > 0)
        for (int p = 0; p < RM_PHASE_COUNT; p++) o->phase_frac[p] = a->phase[p] / total;
    if (a->seconds > 0) {
        o->spine_bps = (double)a->spine / a->seconds;
        o->expert_bps = (double)(a->expert + a->net) / a->seconds;
        o->gpu_in_bps = (double)a->gpu_in / a->seconds;
    }
    if (st->have_pcur) {
        o->device_gbps = st->pcur.device_gbps;
        o->read_gbps = st->pcur.read_gbps;
    }
}

void ui_stats_summary(const ui_stats *st, ui_summary *o)
{
    memset(o, 0, sizeof *o);
    o->tokens = st->tokens;
    o->reasoning_tokens = st->chan_tokens[RM_CHAN_REASONING];
    o->answer_tokens = st->chan_tokens[RM_CHAN_ANSWER];
    o->hit_rate = st->hits + st->misses ? (double)st->hits / (double)(st->hits + st->misses) : -1;
    o->last_hit_rate = -1;
    o->reuse = -1;
    o->spec_mean_accepted = -1;
    o->spec_gained = -1;
    prompt_summary(st, o);
    if (st->have_cur) {
        const rm_token_stats *c = &st->cur;
        o->drafted = c->spec_drafted;
        o->accepted = c->spec_accepted;
        o->spec_passes = c->spec_passes;
        o->spec_declined = c->spec_declined;
        o->device_gbps = c->device_gbps;
        o->read_gbps = c->read_gbps;
        o->vram_resident = c->vram_resident_bytes;
        if (c->expert_hits + c->expert_misses)
            o->last_hit_rate = (double)c->expert_hits / (double)(c->expert_hits + c->expert_misses);
    }
    if (st->tokens) o->tok_per_s = st->seconds > 0 ? st->tokens / st->seconds : 0;
    if (o->spec_passes) o->spec_mean_accepted = (double)o->accepted / (double)o->spec_passes;
    /* what plain steps, at their mean time this turn, would have made in
     * the time the verify passes took */
    if (st->spec_n && st->plain_n && st->plain_secs > 0)
        o->spec_gained = st->spec_n - st->spec_secs / (st->plain_secs / st->plain_n);
    if (st->count == 0) return;

    double w[UI_WINDOW] = { 0 };
    int n = ui_stats_times(st, w, NULL, UI_WINDOW);
    o->window = n;
    o->last = w[n - 1];
    qsort(w, (size_t)n, sizeof w[0], cmp_double);
    o->median = w[n / 2];
    o->p90 = w[(int)(0.9 * (n - 1) + 0.5)];

    double secs = 0, phase_total = 0, spine = 0, expert = 0, net = 0, cache = 0, gpu_in = 0;
    long reuse_hit = 0, reuse_n = 0;
    for (int i = 0; i < n; i++) {
        const ui_sample *s = &st->hist[(st->count - n + i) % UI_HIST];
        secs += s->seconds;
        for (int p = 0; p < RM_PHASE_COUNT; p++) {
            o->phase_frac[p] += s->phase[p];
            phase_total += s->phase[p];
        }
        spine += (double)s->spine;
        expert += (double)s->expert;
        net += (double)s->net;
        cache += (double)s->from_cache;
        gpu_in += (double)s->gpu_in;
        reuse_hit += s->reuse_hit;
        reuse_n += s->reuse_n;
    }
    if (phase_total > 0)
        for (int p = 0; p < RM_PHASE_COUNT; p++) o->phase_frac[p] /= phase_total;
    if (secs > 0) {
        o->spine_bps = spine / secs;
        o->expert_bps = expert / secs;
        o->gpu_in_bps = gpu_in / secs;
    }
    o->bytes_per_token = (spine + expert + net) / n;
    o->cache_bytes_per_token = cache / n;
    if (reuse_n) o->reuse = (double)reuse_hit / (double)reuse_n;
}

/* ---- formatting --------------------------------------------------------- */

void ui_fmt_bytes_short(char *buf, size_t n, double b)
{
    static const char unit[] = "BKMGT";
    int u = 0;
    if (b < 0) b = 0;
    while (b >= 999.5 && u < 4) { b /= 1000; u++; }
    snprintf(buf, n, u == 0 || b >= 99.5 ? "%.0f%c" : b >= 9.95 ? "%.1f%c" : "%.2f%c", b, unit[u]);
}

ui_bytes_text ui_fmt_bytes_both(double bytes)
{
    ui_bytes_text t;
    rm_fmt_bytes(t.full, sizeof t.full, bytes);
    ui_fmt_bytes_short(t.brief, sizeof t.brief, bytes);
    return t;
}

void ui_fmt_secs(char *buf, size_t n, double s)
{
    if (s < 0) s = 0;
    if (s >= 10) snprintf(buf, n, "%.0f s", s);
    else if (s >= 1) snprintf(buf, n, "%.2f s", s);
    else if (s >= 0.1) snprintf(buf, n, "%.0f ms", s * 1e3);
    else if (s >= 1e-3) snprintf(buf, n, "%.1f ms", s * 1e3);
    else snprintf(buf, n, "%.0f us", s * 1e6);
}

void ui_fmt_eta(char *buf, size_t n, double s)
{
    if (s < 0) { snprintf(buf, n, "?"); return; }
    long t = (long)(s + 0.5);
    if (t < 60) snprintf(buf, n, "%ld s", t);
    else if (t < 3600) snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
    else snprintf(buf, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

double ui_prompt_fraction(const rm_prompt_figures *p)
{
    if (p->total <= 0) return 1;
    /* the engine's count of the work (a server's may not say it) */
    if (p->work > 0) return p->work < 1 ? p->work : 1;
    double done = p->done;
    if (p->layers > 0 && p->done < p->total) done += (double)p->chunk_tokens * p->layer / p->layers;
    double f = done / p->total;
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

void ui_fmt_prompt(char *buf, size_t n, const ui_summary *s)
{
    const rm_prompt_figures *p = &s->prompt;
    char t[32], restored[48] = "";
    ui_fmt_secs(t, sizeof t, p->elapsed);
    if (p->restored) snprintf(restored, sizeof restored, ", %d restored", p->restored);
    if (s->prompt_state == UI_PROMPT_STOPPED)
        snprintf(buf, n, "ctx %d, %d reused%s, stopped at %d of %d prefilled after %s", p->ctx, p->reused,
                 restored, p->done, p->total, t);
    else
        snprintf(buf, n, "ctx %d, %d reused%s, %d prefilled in %s", p->ctx, p->reused, restored, p->total, t);
}

void ui_stats_turn(const ui_stats *st, int turn, int interrupted, ui_turn_rec *r)
{
    ui_summary s;
    ui_stats_summary(st, &s);
    memset(r, 0, sizeof *r);
    r->turn = turn;
    r->prompt_state = s.prompt_state;
    r->prompt = s.prompt;
    r->tokens = s.tokens;
    r->seconds = st->seconds;
    r->tok_per_s = s.tok_per_s;
    r->bytes_per_token = st->count ? (double)st->turn_bytes / st->count : 0;
    r->hit_rate = s.hit_rate;
    r->drafted = s.drafted;
    r->accepted = s.accepted;
    r->interrupted = interrupted;
}

void ui_fmt_turn(char *buf, size_t n, const ui_turn_rec *r, const char *sep)
{
    const rm_prompt_figures *p = &r->prompt;
    char t[32], b[32];
    size_t len = 0;
#define ADD(...) do { if (len < n) len += (size_t)snprintf(buf + len, n - len, __VA_ARGS__); } while (0)
    buf[0] = 0;
    ui_fmt_secs(t, sizeof t, p->elapsed);
    if (r->prompt_state == UI_PROMPT_STOPPED)
        ADD("prompt stopped at %d of %d tok after %s", p->done, p->total, t);
    else if (r->prompt_state != UI_PROMPT_NONE)
        ADD("prompt %d tok (%d reused) %s", p->total, p->reused + p->restored, t);
    if (r->tokens) {
        ADD("%s%d tok %.1f tok/s", len ? sep : "", r->tokens, r->tok_per_s);
        rm_fmt_bytes(b, sizeof b, r->bytes_per_token);
        ADD("%s%s/tok", sep, b);
        if (r->hit_rate >= 0) ADD("%shit %.1f%%", sep, r->hit_rate * 100);
        if (r->drafted) ADD("%sspec %llu/%llu", sep, (unsigned long long)r->accepted, (unsigned long long)r->drafted);
    } else if (!len) {
        ADD("no tokens");
    }
#undef ADD
}

void ui_fmt_turn_header(char *buf, size_t n)
{
    snprintf(buf, n, "%4s %7s %7s %7s %8s %6s %7s %9s %6s %9s", "turn", "ctx", "reused", "prefill", "time",
             "tokens", "tok/s", "B/tok", "hit%", "spec");
}

void ui_fmt_turn_row(char *buf, size_t n, const ui_turn_rec *r)
{
    char t[32], b[32], hit[16], spec[32];
    ui_fmt_secs(t, sizeof t, r->prompt.elapsed);
    rm_fmt_bytes(b, sizeof b, r->bytes_per_token);
    if (r->hit_rate >= 0) snprintf(hit, sizeof hit, "%.1f", r->hit_rate * 100);
    else snprintf(hit, sizeof hit, "-");
    snprintf(spec, sizeof spec, "%llu/%llu", (unsigned long long)r->accepted, (unsigned long long)r->drafted);
    snprintf(buf, n, "%4d %7d %7d %7d %8s %6d %7.1f %9s %6s %9s%s", r->turn, r->prompt.ctx,
             r->prompt.reused + r->prompt.restored, r->prompt.total, t, r->tokens, r->tok_per_s, b, hit, spec,
             r->interrupted ? " stopped" : "");
}

void ui_fmt_progress(char *buf, size_t n, const rm_prompt_figures *p)
{
    char where[64], eta[32];
    if (p->chunks > 1)
        snprintf(where, sizeof where, "pass %d/%d layer %d/%d", p->chunk + 1, p->chunks, p->layer, p->layers);
    else
        snprintf(where, sizeof where, "layer %d/%d", p->layer, p->layers);
    ui_fmt_eta(eta, sizeof eta, p->eta);
    if (p->eta >= 0)
        snprintf(buf, n, "%.0f%% of the work (%d tok), %s, ETA %s", 100 * ui_prompt_fraction(p), p->total, where, eta);
    else
        snprintf(buf, n, "%.0f%% of the work (%d tok), %s", 100 * ui_prompt_fraction(p), p->total, where);
}
