/* test_model.c — the forward pass against the reference goldens of every
 * fixture model (tests/fixtures/{k3-tiny,kl-tiny}, read in place):
 * prefill logits, router choices, hidden states per layer, the cached greedy
 * continuation and its logits, prefill == token-by-token decoding, the
 * same bits with one compute thread and with two, and token ids outside
 * the vocabulary refused. (Checkpoint and rollback are
 * test_state.c's.)
 * Tolerances are those of tests/fixtures/README.md, "Tolerances the tests
 * apply, and why". */
#include <math.h>
#include <string.h>
#include <jansson.h>
#include "tests/unit/test.h"
#include "model/model.h"
#include "base/threadpool.h"

static const char *const models[] = { "k3-tiny", "kl-tiny" };

typedef struct {
    json_t *routes;         /* layers -> [[ids, w, margin] per position] */
    int bad;                /* route sets that differ where margin >= 1e-5 */
    int seen;
} route_check;

static void check_route(void *ud, int layer, int pos, const int *ids, const float *w, int k, float margin)
{
    route_check *rc = ud;
    char key[16];
    snprintf(key, sizeof key, "%d", layer);
    json_t *ref = json_array_get(json_object_get(rc->routes, key), (size_t)pos);
    rc->seen++;
    if (!ref) { rc->bad++; return; }
    json_t *rid = json_array_get(ref, 0);
    double rmargin = json_number_value(json_array_get(ref, 2));
    if (rmargin < 1e-5) return;
    for (int i = 0; i < k; i++) {
        int found = 0;
        for (size_t j = 0; j < json_array_size(rid); j++)
            found |= json_integer_value(json_array_get(rid, j)) == ids[i];
        if (!found) { rc->bad++; return; }
    }
}

static float *load_f32(const char *path, size_t n)
{
    size_t len = 0;
    char *p = path ? t_read_file(path, &len) : NULL;
    if (!p && path) fprintf(stderr, "  fixture %s: cannot read\n", path);
    else if (p && len != n * sizeof(float))
        fprintf(stderr, "  fixture %s: %zu bytes, expected %zu (truncated?)\n", path, len, n * sizeof(float));
    if (!p || len != n * sizeof(float)) { free(p); return NULL; }
    return (float *)p;
}

static double rel_rms(const float *a, const float *ref, size_t n, double *maxabs)
{
    double num = 0, den = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - ref[i];
        num += d * d;
        den += (double)ref[i] * ref[i];
        if (fabs(d) > mx) mx = fabs(d);
    }
    if (maxabs) *maxabs = mx;
    return sqrt(num / den);
}

static int argmax(const float *x, int n)
{
    int b = 0;
    for (int i = 1; i < n; i++) if (x[i] > x[b]) b = i;
    return b;
}

static rm_model *open_fixture(const char *name)
{
    const char *dir = fixture_path(name);
    if (!dir) return NULL;
    rm_model *m = NULL;
    rm_err err;
    if (rm_model_open(dir, NULL, &m, &err)) { fprintf(stderr, "  %s\n", err.msg); return NULL; }
    return m;
}

static int32_t *prompt_ids(json_t *p, int *T)
{
    json_t *a = json_object_get(p, "prompt_ids");
    *T = (int)json_array_size(a);
    int32_t *ids = malloc((size_t)*T * sizeof *ids);
    for (int i = 0; i < *T; i++) ids[i] = (int32_t)json_integer_value(json_array_get(a, (size_t)i));
    return ids;
}

static json_t *load_json(const char *model, const char *file)
{
    char rel[1100];
    snprintf(rel, sizeof rel, "%s/goldens/%s", model, file);
    const char *path = fixture_path(rel);
    return path ? json_load_file(path, 0, NULL) : NULL;
}

/* Prefill logits, routes and hidden states, then 24 cached greedy steps. */
static void check_model(const char *name)
{
    rm_model *m = open_fixture(name);
    REQUIRE(m);
    json_t *meta = load_json(name, "meta.json");
    REQUIRE(meta);
    const int V = m->cfg.vocab_size, D = m->cfg.hidden_size, L = m->cfg.num_layers;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(meta, "prompts"), i, p) {
        const char *pn = json_string_value(json_object_get(p, "name"));
        int T;
        int32_t *ids = prompt_ids(p, &T);
        char rel[512];
        snprintf(rel, sizeof rel, "%s/goldens/logits_%s.f32", name, pn);
        float *ref = load_f32(fixture_path(rel), (size_t)T * V);
        snprintf(rel, sizeof rel, "routes_%s.json", pn);
        json_t *rroot = load_json(name, rel);
        route_check rc = { json_object_get(rroot, "layers"), 0, 0 };
        float *logits = malloc((size_t)T * V * sizeof *logits);
        float *hidden = malloc((size_t)(L + 1) * T * D * sizeof *hidden);
        rm_err err;
        rm_state *st = rm_state_new(m, &err);
        REQUIRE(ref && rc.routes && logits && hidden && st);
        model_test_hidden(m, hidden);
        CHECK(rm_forward(m, st, ids, T, logits, NULL, check_route, &rc, &err) == 0);
        model_test_hidden(m, NULL);
        double mx, r = rel_rms(logits, ref, (size_t)T * V, &mx);
        CHECKF(r <= 1e-4 && mx <= 2e-3, "%s %s: logits rel RMS %.3g max abs %.3g", name, pn, r, mx);
        json_t *margins = json_object_get(p, "top2_margin");
        for (int t = 0; t < T; t++)
            if (json_number_value(json_array_get(margins, (size_t)t)) >= 1e-3)
                CHECKF(argmax(logits + (size_t)t * V, V) == argmax(ref + (size_t)t * V, V),
                       "%s %s: argmax differs at position %d", name, pn, t);
        CHECKF(rc.bad == 0 && rc.seen > 0, "%s %s: %d of %d route sets differ", name, pn, rc.bad, rc.seen);
        /* hidden states, for the prompts whose meta.json names a file: a
         * named file that is missing or short fails the test */
        const char *hname = json_string_value(json_object_get(p, "hidden_file"));
        if (hname) {
            snprintf(rel, sizeof rel, "%.64s/goldens/%.200s", name, hname);
            const char *hp = fixture_path(rel);
            float *href = hp ? load_f32(hp, (size_t)(L + 1) * T * D) : NULL;
            CHECKF(href != NULL, "%s: missing or truncated", hp ? hp : rel);
            for (int l = 0; href && l <= L; l++) {
                double hr = rel_rms(hidden + (size_t)l * T * D, href + (size_t)l * T * D, (size_t)T * D, NULL);
                CHECKF(hr <= 1e-4, "%s %s: hidden layer %d rel RMS %.3g", name, pn, l, hr);
            }
            free(href);
        }
        /* greedy continuation from the cache */
        json_t *greedy = json_object_get(json_object_get(p, "greedy"), "tokens");
        const int G = (int)json_array_size(greedy);
        snprintf(rel, sizeof rel, "%s/goldens/decode_%s.f32", name, pn);
        float *dref = load_f32(fixture_path(rel), (size_t)G * V);
        float *dl = malloc((size_t)G * V * sizeof *dl);
        REQUIRE(dref && dl);
        int32_t tok = (int32_t)argmax(logits + (size_t)(T - 1) * V, V);
        int ok_tokens = 0;
        for (int j = 0; j < G; j++) {
            int32_t want = (int32_t)json_integer_value(json_array_get(greedy, (size_t)j));
            if (tok != want) break;
            ok_tokens++;
            if (rm_forward(m, st, &tok, 1, NULL, dl + (size_t)j * V, NULL, NULL, &err)) break;
            tok = (int32_t)argmax(dl + (size_t)j * V, V);
        }
        CHECKF(ok_tokens == G, "%s %s: greedy continuation matches %d of %d tokens", name, pn, ok_tokens, G);
        if (ok_tokens == G) {
            r = rel_rms(dl, dref, (size_t)G * V, &mx);
            CHECKF(r <= 1e-4 && mx <= 2e-3, "%s %s: decode logits rel RMS %.3g max abs %.3g", name, pn, r, mx);
        }
        free(dl); free(dref); free(ids); free(ref); free(logits); free(hidden);
        json_decref(rroot);
        rm_state_free(st);
    }
    json_decref(meta);
    rm_model_free(m);
}

TEST(model_k3_goldens) { check_model(models[0]); }
TEST(model_kl_goldens) { check_model(models[1]); }

/* Feeding a prompt in one prefill, token by token, or in uneven pieces gives
 * the same logits bit for bit: the kernels and the per-token steps use one
 * accumulation order however the positions are batched. */
static void check_prefill_equals_decode(const char *name)
{
    rm_model *m = open_fixture(name);
    REQUIRE(m);
    json_t *meta = load_json(name, "meta.json");
    REQUIRE(meta);
    json_t *p = json_array_get(json_object_get(meta, "prompts"), 1);   /* chat: 57 tokens */
    int T;
    int32_t *ids = prompt_ids(p, &T);
    const int V = m->cfg.vocab_size;
    float *a = malloc((size_t)T * V * sizeof *a), *b = malloc((size_t)T * V * sizeof *b);
    rm_err err;
    rm_state *s1 = rm_state_new(m, &err), *s2 = rm_state_new(m, &err);
    REQUIRE(a && b && s1 && s2);
    CHECK(rm_forward(m, s1, ids, T, a, NULL, NULL, NULL, &err) == 0);
    int t = 0, step = 1;
    while (t < T) {
        int n = step < T - t ? step : T - t;
        CHECK(rm_forward(m, s2, ids + t, n, b + (size_t)t * V, NULL, NULL, NULL, &err) == 0);
        t += n;
        step = step == 1 ? 7 : 1;
    }
    CHECKF(memcmp(a, b, (size_t)T * V * sizeof *a) == 0, "%s: prefill and stepwise logits differ", name);
    rm_state_reset(s2);
    CHECK(rm_state_pos(s2) == 0);
    CHECK(rm_forward(m, s2, ids, T, b, NULL, NULL, NULL, &err) == 0);
    CHECKF(memcmp(a, b, (size_t)T * V * sizeof *a) == 0, "%s: logits differ after state reset", name);
    free(a); free(b); free(ids);
    rm_state_free(s1); rm_state_free(s2);
    json_decref(meta);
    rm_model_free(m);
}

TEST(model_k3_prefill_equals_decode) { check_prefill_equals_decode(models[0]); }
TEST(model_kl_prefill_equals_decode) { check_prefill_equals_decode(models[1]); }

/* A long sequence for the pass tests: the fixture's long prompt (293
 * tokens) and its chat prompt, repeated to n tokens, so a pass crosses the
 * forward pass's 256-position blocks. */
static int32_t *long_ids(json_t *meta, int n)
{
    int T0, T1;
    int32_t *a = prompt_ids(json_array_get(json_object_get(meta, "prompts"), 2), &T0);
    int32_t *b = prompt_ids(json_array_get(json_object_get(meta, "prompts"), 1), &T1);
    int32_t *ids = malloc((size_t)n * sizeof *ids);
    for (int i = 0; ids && i < n; i++) ids[i] = (i / 293) % 2 ? b[i % T1] : a[i % T0];
    free(a);
    free(b);
    return ids;
}

typedef struct route_log { int *ids; int n, cap; } route_log;

static void log_route(void *ud, int layer, int pos, const int *ids, const float *w, int k, float margin)
{
    route_log *r = ud;
    if (RM_GROW(r->ids, r->cap, r->n + k + 2)) return;
    r->ids[r->n++] = layer;
    r->ids[r->n++] = pos;
    for (int i = 0; i < k; i++) r->ids[r->n++] = ids[i];
}

/* Passes of 1, 7, 256 positions and the whole sequence, and the planner's
 * own size, give the same logits, routes and greedy continuation bit for
 * bit (routes come layer by layer, so they are compared as a table of
 * (position, layer) -> ids). Under ASan the passes of 1 position are left
 * to the release build: they are 300 decode steps, a third of this test
 * there (k3-tiny 12.4 CPU-s), and the sanitizers see the one-position
 * pass from position 0 in check_prefill_equals_decode (steps of 1 and 7
 * over the chat prompt) and at positions 300-307 in each pass size's
 * greedy continuation below. */
static void check_pass_sizes(const char *name)
{
    rm_model *m = open_fixture(name);
    REQUIRE(m);
    json_t *meta = load_json(name, "meta.json");
    REQUIRE(meta);
    const int n = 300, V = m->cfg.vocab_size, k = m->cfg.topk;
    int32_t *ids = long_ids(meta, n);
    static const int sizes[] = { 0, 1, 7, 256, 300 };
    float *ref = malloc((size_t)n * V * sizeof *ref), *got = malloc((size_t)n * V * sizeof *got);
    int32_t greedy_ref[8], greedy[8];
    route_log rref = { 0 };
    REQUIRE(ids && ref && got);
    for (int si = 0; si < 5; si++) {
        if (T_ASAN && sizes[si] == 1) continue;
        rm_err err;
        rm_state *st = rm_state_new(m, &err);
        REQUIRE(st);
        route_log r = { 0 };
        rm_forward_ctl ctl = { .chunk_tokens = sizes[si] };
        int fed = -1;
        CHECK(rm_forward_ex(m, st, ids, n, si ? got : ref, NULL, log_route, &r, &ctl, &fed, &err) == 0);
        CHECK(fed == n && rm_state_pos(st) == n);
        float *lg = si ? got : ref;
        int32_t *g = si ? greedy : greedy_ref;
        float row[4096];
        REQUIRE(V <= 4096);
        memcpy(row, lg + (size_t)(n - 1) * V, (size_t)V * sizeof *row);
        for (int j = 0; j < 8; j++) {
            g[j] = (int32_t)argmax(row, V);
            CHECK(rm_forward(m, st, &g[j], 1, NULL, row, NULL, NULL, &err) == 0);
        }
        /* each (position, layer) record once; compare as a per-position table */
        int *tab = calloc((size_t)n * m->cfg.num_layers * k, sizeof *tab);
        REQUIRE(tab);
        for (int i = 0; i + 2 + k <= r.n; i += 2 + k)
            memcpy(tab + ((size_t)r.ids[i + 1] * m->cfg.num_layers + r.ids[i]) * k, r.ids + i + 2, (size_t)k * sizeof *tab);
        if (si == 0) {
            rref = r;
            rref.ids = tab;
            free(r.ids);
        } else {
            CHECKF(memcmp(ref, got, (size_t)n * V * sizeof *ref) == 0, "%s: pass of %d: logits differ", name, sizes[si]);
            CHECKF(memcmp(greedy_ref, greedy, sizeof greedy) == 0, "%s: pass of %d: greedy tokens differ", name, sizes[si]);
            CHECKF(memcmp(rref.ids, tab, (size_t)n * m->cfg.num_layers * k * sizeof *tab) == 0,
                   "%s: pass of %d: routes differ", name, sizes[si]);
            free(tab);
            free(r.ids);
        }
        rm_state_free(st);
    }
    /* and the same as token-by-token decoding; under ASan the greedy
     * continuations decoded 32 tokens after the whole sequence, so the 300
     * decodes (as long as the passes of 1) are left to the release build */
    rm_err err;
    rm_state *st = T_ASAN ? NULL : rm_state_new(m, &err);
    for (int t = 0; st && t < n; t++)
        CHECK(rm_forward(m, st, ids + t, 1, got + (size_t)t * V, NULL, NULL, NULL, &err) == 0);
    if (st) CHECKF(memcmp(ref, got, (size_t)n * V * sizeof *ref) == 0, "%s: passes and decoding differ", name);
    rm_state_free(st);
    free(rref.ids); free(ref); free(got); free(ids);
    json_decref(meta);
    rm_model_free(m);
}

TEST(model_k3_pass_sizes_are_bit_identical) { check_pass_sizes(models[0]); }
TEST(model_kl_pass_sizes_are_bit_identical) { check_pass_sizes(models[1]); }

/* A capture (rm_forward_ctl.capture) inside a pass hands out, layer by
 * layer, exactly the state of having fed the tokens before it, and the
 * pass's logits are those without a capture; one on a pass boundary is not
 * called (the state at the pass's end is it). */
typedef struct capture_buf { rm_state *st; int pos, layers; rm_buf bytes; } capture_buf;

static int add_bytes(void *ud, void *p, size_t n) { return rm_buf_add(ud, p, n); }

static void on_capture(void *ud, int layer)
{
    capture_buf *c = ud;
    CHECK(layer == c->layers);
    c->layers++;
    CHECK(state_layer_io(c->st, layer, c->pos, add_bytes, &c->bytes) == 0);
}

static void check_capture(const char *name)
{
    rm_model *m = open_fixture(name);
    REQUIRE(m);
    json_t *meta = load_json(name, "meta.json");
    REQUIRE(meta);
    const int n = 300, V = m->cfg.vocab_size, L = m->cfg.num_layers;
    int32_t *ids = long_ids(meta, n);
    float *ref = malloc((size_t)V * sizeof *ref), *got = malloc((size_t)V * sizeof *got);
    rm_err err;
    REQUIRE(ids && ref && got);
    rm_state *st = rm_state_new(m, &err);
    REQUIRE(st);
    CHECK(rm_forward(m, st, ids, n, NULL, ref, NULL, NULL, &err) == 0);
    static const struct { int at, chunk, called; } cases[] = {
        { 1, 0, 1 }, { 293, 0, 1 }, { 150, 100, 1 }, { 100, 100, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rm_state_reset(st);
        capture_buf c = { st, cases[i].at, 0, { 0 } };
        rm_forward_ctl ctl = { .chunk_tokens = cases[i].chunk, .capture = cases[i].at, .on_capture = on_capture,
                               .ud = &c };
        CHECK(rm_forward_ex(m, st, ids, n, NULL, got, NULL, NULL, &ctl, NULL, &err) == 0);
        CHECKF(!memcmp(ref, got, (size_t)V * sizeof *ref), "%s: capture at %d: the logits differ", name, cases[i].at);
        CHECKF(c.layers == (cases[i].called ? L : 0), "%s: capture at %d: %d layers handed out", name, cases[i].at,
               c.layers);
        if (cases[i].called) {
            rm_state *want = rm_state_new(m, &err);
            rm_buf wb = { 0 };
            REQUIRE(want);
            CHECK(rm_forward(m, want, ids, cases[i].at, NULL, NULL, NULL, NULL, &err) == 0);
            for (int l = 0; l < L; l++) CHECK(state_layer_io(want, l, cases[i].at, add_bytes, &wb) == 0);
            CHECKF(wb.len == c.bytes.len && !memcmp(wb.p, c.bytes.p, wb.len), "%s: capture at %d is not the state there",
                   name, cases[i].at);
            rm_buf_free(&wb);
            rm_state_free(want);
        }
        rm_buf_free(&c.bytes);
    }
    rm_state_free(st);
    free(ids); free(ref); free(got);
    json_decref(meta);
    rm_model_free(m);
}

TEST(model_k3_capture_is_the_state_there) { check_capture(models[0]); }
TEST(model_kl_capture_is_the_state_there) { check_capture(models[1]); }

/* A stop in the middle of a pass leaves the state of the last complete
 * pass: continuing from there gives the logits of an uninterrupted feed.
 * The stop is raised from the progress hook at a layer of the second pass,
 * and, separately, before the first pass (nothing fed). */
typedef struct stop_at { volatile int stop; int chunk, layer, calls; } stop_at;

static void raise_stop(void *ud, const rm_prompt_figures *p)
{
    stop_at *s = ud;
    s->calls++;
    if (p->chunk == s->chunk && p->layer == s->layer) s->stop = 1;
}

static void check_stop_in_a_pass(const char *name)
{
    rm_model *m = open_fixture(name);
    REQUIRE(m);
    json_t *meta = load_json(name, "meta.json");
    REQUIRE(meta);
    const int n = 90, V = m->cfg.vocab_size;
    int32_t *ids = long_ids(meta, n);
    float *ref = malloc((size_t)V * sizeof *ref), *got = malloc((size_t)V * sizeof *got);
    rm_err err;
    rm_state *a = rm_state_new(m, &err), *b = rm_state_new(m, &err);
    REQUIRE(ids && ref && got && a && b);
    CHECK(rm_forward(m, a, ids, n, NULL, ref, NULL, NULL, &err) == 0);
    stop_at sa = { 0, 1, 3, 0 };
    rm_forward_ctl ctl = { .stop = &sa.stop, .chunk_tokens = 40, .on_progress = raise_stop, .ud = &sa };
    int fed = -1;
    CHECK(rm_forward_ex(m, b, ids, n, NULL, got, NULL, NULL, &ctl, &fed, &err) == 1);
    CHECKF(fed == 30 && rm_state_pos(b) == 30, "%s: fed %d, pos %d after a stop in pass 1", name, fed, rm_state_pos(b));
    CHECK(sa.calls > 0);
    /* the passes were 30 tokens each (90 in three): go on from 30 */
    rm_forward_ctl go = { 0 };
    CHECK(rm_forward_ex(m, b, ids + fed, n - fed, NULL, got, NULL, NULL, &go, NULL, &err) == 0);
    CHECKF(memcmp(ref, got, (size_t)V * sizeof *ref) == 0, "%s: logits after a stopped pass differ", name);
    /* stopped before anything: nothing fed */
    rm_state_reset(b);
    volatile int now = 1;
    rm_forward_ctl pre = { .stop = &now };
    CHECK(rm_forward_ex(m, b, ids, n, NULL, got, NULL, NULL, &pre, &fed, &err) == 1 && fed == 0 && rm_state_pos(b) == 0);
    free(ids); free(ref); free(got);
    rm_state_free(a); rm_state_free(b);
    json_decref(meta);
    rm_model_free(m);
}

/* Progress counts the work (rm_prompt_figures.work): it never goes back,
 * stays in 0..1, is known from the first layer on, and reaches 1 with an
 * ETA of 0 at the last layer of the last pass. */
typedef struct work_seen { int calls, back, out, last_layer; double first, last, last_eta; } work_seen;

static void see_work(void *ud, const rm_prompt_figures *p)
{
    work_seen *w = ud;
    if (p->layer == 0) return;      /* a pass's start: nothing measured in it yet */
    if (!w->calls++) w->first = p->work;
    w->back += p->work < w->last;
    w->out += p->work < 0 || p->work > 1;
    w->last = p->work;
    w->last_eta = p->eta;
    w->last_layer = p->layer;
}

static void check_progress_work(const char *name)
{
    rm_model *m = open_fixture(name);
    REQUIRE(m);
    json_t *meta = load_json(name, "meta.json");
    REQUIRE(meta);
    const int n = 90;
    int32_t *ids = long_ids(meta, n);
    rm_err err;
    rm_state *s = rm_state_new(m, &err);
    REQUIRE(ids && s);
    work_seen w = { 0 };
    rm_forward_ctl ctl = { .chunk_tokens = 30, .on_progress = see_work, .ud = &w };
    CHECK(rm_forward_ex(m, s, ids, n, NULL, NULL, NULL, NULL, &ctl, NULL, &err) == 0);
    CHECKF(w.calls == 3 * m->cfg.num_layers && !w.back && !w.out, "%s: %d calls, %d back, %d out", name, w.calls,
           w.back, w.out);
    CHECKF(w.first > 0 && w.first < 0.5 && w.last > 1 - 1e-9 && w.last_eta == 0 && w.last_layer == m->cfg.num_layers,
           "%s: work %g first, %g last, ETA %g", name, w.first, w.last, w.last_eta);
    free(ids);
    rm_state_free(s);
    json_decref(meta);
    rm_model_free(m);
}

TEST(model_k3_progress_counts_the_work) { check_progress_work(models[0]); }
TEST(model_kl_progress_counts_the_work) { check_progress_work(models[1]); }

TEST(model_k3_stop_keeps_the_last_complete_pass) { check_stop_in_a_pass(models[0]); }
TEST(model_kl_stop_keeps_the_last_complete_pass) { check_stop_in_a_pass(models[1]); }

/* The long prompt's prefill and 8 decode steps give the same logits bit
 * for bit with one compute thread and with two, whatever the pool's width
 * the run was given: tests/run.sh holds most suites to one core, where the
 * pool is one thread and every product runs as one chunk, so this is where
 * the model's every product is also cut across threads (and, in the ASan
 * build, where the sanitizers see each chunk's bounds). */
static void check_threads(const char *name)
{
    rm_model *m = open_fixture(name);
    REQUIRE(m);
    json_t *meta = load_json(name, "meta.json");
    REQUIRE(meta);
    int T;
    int32_t *ids = prompt_ids(json_array_get(json_object_get(meta, "prompts"), 2), &T);  /* 293 tokens */
    const int V = m->cfg.vocab_size, steps = 8;
    float *out[2];
    rm_err err;
    for (int k = 0; k < 2; k++) {
        pool_set_threads(k + 1);
        REQUIRE(pool_threads() == k + 1);
        out[k] = malloc((size_t)(T + steps) * V * sizeof *out[k]);
        rm_state *st = rm_state_new(m, &err);
        REQUIRE(out[k] && st);
        CHECK(rm_forward(m, st, ids, T, out[k], NULL, NULL, NULL, &err) == 0);
        for (int j = 0; j < steps; j++) {
            int32_t tok = argmax(out[k] + (size_t)(T + j - 1) * V, V);
            CHECK(rm_forward(m, st, &tok, 1, out[k] + (size_t)(T + j) * V, NULL, NULL, NULL, &err) == 0);
        }
        rm_state_free(st);
    }
    CHECKF(memcmp(out[0], out[1], (size_t)(T + steps) * V * sizeof *out[0]) == 0,
           "%s: one thread and two give other logits", name);
    pool_free();        /* the next test's model opens it at the default width again */
    free(out[0]); free(out[1]); free(ids);
    json_decref(meta);
    rm_model_free(m);
}

TEST(model_k3_threads_do_not_change_logits) { check_threads(models[0]); }
TEST(model_kl_threads_do_not_change_logits) { check_threads(models[1]); }

TEST(model_rejects_bad_token_ids)
{
    rm_model *m = open_fixture("k3-tiny");
    REQUIRE(m);
    rm_err err;
    rm_state *s = rm_state_new(m, &err);
    int32_t ids[2] = { 5, 999999 };
    CHECK(rm_forward(m, s, ids, 2, NULL, NULL, NULL, NULL, &err) == -1);
    CHECK(strstr(err.msg, "outside the vocabulary") != NULL);
    rm_state_free(s);
    rm_model_free(m);
}
