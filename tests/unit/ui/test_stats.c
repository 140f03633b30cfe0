/* test_stats.c — the UI's statistics (ui/stats.c): the router's reuse
 * figure leaves out pairs of tokens from one speculative verify pass; the
 * end-of-message token (not fed through the model) counts as a token but
 * stays out of the timing window, so a turn never ends on "last 0.0 ms";
 * the prompt's records give "ctx N, M reused, K prefilled in T" (also from
 * an engine that only filled prompt_tokens and token_index), its progress
 * and how far a stopped prompt got. */
#include <string.h>
#include "tests/unit/test.h"
#include "ui/stats.h"

/* A fed token whose routes are `base` + i over 2 layers of 4 choices. */
static rm_token_stats token(int index, int base, int pass, double secs)
{
    rm_token_stats t;
    memset(&t, 0, sizeof t);
    t.kind = RM_REC_TOKEN;
    t.token_index = (uint64_t)index;
    t.seconds = secs;
    t.phase_seconds[RM_PHASE_EXPERTS] = secs;
    t.expert_hits = 6;
    t.expert_misses = 2;
    t.route_layers = 2;
    t.route_k = 4;
    t.num_experts = 64;
    t.spec_pass = pass;
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < 4; i++) t.route_ids[l][i] = (int16_t)(base + i + 10 * l);
    return t;
}

static void add(ui_stats *st, ui_reuse_tracker *r, const rm_token_stats *t)
{
    ui_sample s;
    ui_stats_sample(&s, t, r);
    ui_stats_add(st, &s);
    if (s.kind == RM_REC_TOKEN && s.fed) ui_stats_set_full(st, t, NULL);
}

TEST(ui_stats_reuse_leaves_out_pairs_of_one_verify_pass)
{
    static ui_stats st;
    ui_reuse_tracker r = { 0 };
    ui_stats_reset(&st);
    rm_token_stats a = token(0, 0, 0, 0.02);   /* ids 0..3 */
    rm_token_stats b = token(1, 2, 0, 0.02);   /* 2..5: shares 2 of 4 with a */
    rm_token_stats c = token(2, 2, 1, 0.01);   /* pass 1: shares 4 of 4 with b */
    rm_token_stats d = token(3, 2, 1, 0.01);   /* pass 1 too: left out */
    rm_token_stats e = token(4, 6, 0, 0.02);   /* shares 0 with d */
    add(&st, &r, &a);
    add(&st, &r, &b);
    ui_summary s;
    ui_stats_summary(&st, &s);
    CHECKF(s.reuse > 0.499 && s.reuse < 0.501, "%f", s.reuse);
    add(&st, &r, &c);
    add(&st, &r, &d);
    add(&st, &r, &e);
    ui_stats_summary(&st, &s);
    /* pairs (a,b) 2/4, (b,c) 4/4, (d,e) 0/4; (c,d) from one pass is out: 6 of 12 */
    CHECKF(s.reuse > 0.499 && s.reuse < 0.501, "%f", s.reuse);
    CHECK(st.count == 5 && st.tokens == 5);
    int pass = -1;
    CHECK(ui_stats_route(&st, 1, &pass) && pass == 1);    /* the zoom knows d's pass */
    double t[8];
    int passes[8];
    CHECK(ui_stats_times(&st, t, passes, 8) == 5 && passes[2] == 1 && passes[3] == 1 && passes[4] == 0);
}

TEST(ui_stats_end_of_message_token_stays_out_of_the_window)
{
    static ui_stats st;
    ui_reuse_tracker r = { 0 };
    ui_stats_reset(&st);
    for (int i = 0; i < 10; i++) {
        rm_token_stats t = token(i, i, 0, 0.025);
        add(&st, &r, &t);
    }
    /* the closing token: emitted, not computed (no phases, no lookups) */
    rm_token_stats end = token(10, 9, 0, 2e-5);
    memset(end.phase_seconds, 0, sizeof end.phase_seconds);
    end.expert_hits = end.expert_misses = 0;
    add(&st, &r, &end);
    ui_summary s;
    ui_stats_summary(&st, &s);
    CHECK(s.tokens == 11 && s.window == 10);
    CHECKF(s.last > 0.024 && s.median > 0.024, "last %f", s.last);
    CHECKF(s.last_hit_rate > 0.74 && s.last_hit_rate < 0.76, "%f", s.last_hit_rate);
    CHECK(st.have_cur && st.cur.token_index == 9);
}

TEST(ui_stats_prompt_figures_progress_and_stop)
{
    static ui_stats st;
    ui_stats_reset(&st);
    ui_summary s;
    char buf[200];
    /* an engine that filled only prompt_tokens (the context) and token_index
     * (the tokens prefilled) */
    rm_token_stats p;
    memset(&p, 0, sizeof p);
    p.kind = RM_REC_PROMPT;
    p.prefill = 1;
    p.prompt_tokens = 377;
    p.token_index = 28;
    p.seconds = 0.155;
    ui_sample sm;
    ui_stats_sample(&sm, &p, NULL);
    ui_stats_add(&st, &sm);
    ui_stats_summary(&st, &s);
    ui_fmt_prompt(buf, sizeof buf, &s);
    CHECKF(!strcmp(buf, "ctx 377, 349 reused, 28 prefilled in 155 ms"), "%s", buf);

    /* progress of a long prompt: 2 passes of 2048, the second half done */
    ui_stats_reset(&st);
    memset(&p, 0, sizeof p);
    p.kind = RM_REC_PROGRESS;
    p.prefill = 1;
    p.seconds = 0.5;
    p.bytes_expert_read = 1000000000;
    p.phase_seconds[RM_PHASE_WAIT_IO] = 0.5;
    p.prompt = (rm_prompt_figures){ .ctx = 4096, .total = 4096, .done = 2048, .chunk = 1, .chunks = 2,
                                    .chunk_tokens = 2048, .layer = 46, .layers = 92, .elapsed = 33,
                                    .tok_per_s = 93, .eta = 145 };
    ui_stats_sample(&sm, &p, NULL);
    ui_stats_add(&st, &sm);
    ui_stats_summary(&st, &s);
    CHECK(s.prompt_state == UI_PROMPT_RUNNING && s.tokens == 0 && s.window == 0);
    CHECKF(ui_prompt_fraction(&s.prompt) > 0.749 && ui_prompt_fraction(&s.prompt) < 0.751, "%f",
           ui_prompt_fraction(&s.prompt));
    ui_fmt_progress(buf, sizeof buf, &s.prompt);
    CHECKF(!strcmp(buf, "75% of the work (4096 tok), pass 2/2 layer 46/92, ETA 2m25s"), "%s", buf);
    CHECK(s.expert_bps > 1.99e9 && s.expert_bps < 2.01e9 && s.phase_frac[RM_PHASE_WAIT_IO] > 0.99);
    /* stopped there: the panels say how far it got */
    ui_stats_prompt_stopped(&st);
    ui_stats_summary(&st, &s);
    ui_fmt_prompt(buf, sizeof buf, &s);
    CHECKF(!strcmp(buf, "ctx 4096, 0 reused, stopped at 2048 of 4096 prefilled after 33 s"), "%s", buf);
    /* also when the engine closes the stopped prompt with its record */
    ui_stats_reset(&st);
    p.kind = RM_REC_PROMPT;
    p.prompt.done = 2048;
    p.prompt.elapsed = 34;
    p.token_index = 2048;
    ui_stats_sample(&sm, &p, NULL);
    ui_stats_add(&st, &sm);
    ui_stats_summary(&st, &s);
    ui_fmt_prompt(buf, sizeof buf, &s);
    CHECKF(s.prompt_state == UI_PROMPT_STOPPED &&
           !strcmp(buf, "ctx 4096, 0 reused, stopped at 2048 of 4096 prefilled after 34 s"), "%s", buf);
}

TEST(ui_stats_formats)
{
    char b[32];
    ui_fmt_eta(b, sizeof b, 45);
    CHECK(!strcmp(b, "45 s"));
    ui_fmt_eta(b, sizeof b, 3725);
    CHECK(!strcmp(b, "1h02m"));
    ui_fmt_eta(b, sizeof b, -1);
    CHECK(!strcmp(b, "?"));
    ui_fmt_secs(b, sizeof b, 0.0123);
    CHECK(!strcmp(b, "12.3 ms"));
    rm_fmt_bytes(b, sizeof b, 1.23e9);
    CHECK(!strcmp(b, "1.23 GB"));
}

/* The whole turn's rate history keeps UI_TURN_BUCKETS points however long
 * the reply, oldest first; the turn's summary line and /stats all row say
 * the prompt, tokens, rate, bytes per token, hit rate and speculation. */
TEST(ui_stats_turn_history_and_summary_line)
{
    static ui_stats st;
    ui_stats_reset(&st);
    ui_reuse_tracker tr = { 0 };
    rm_token_stats p;
    memset(&p, 0, sizeof p);
    p.kind = RM_REC_PROMPT;
    p.prefill = 1;
    p.prompt = (rm_prompt_figures){ .ctx = 377, .reused = 349, .total = 28, .done = 28, .elapsed = 0.155 };
    add(&st, &tr, &p);
    /* 1000 tokens: the first 500 at 10 ms, the rest at 20 ms */
    for (int i = 0; i < 1000; i++) {
        rm_token_stats t = token(i, i % 7, 0, i < 500 ? 0.010 : 0.020);
        t.bytes_expert_read = 5000;
        t.spec_drafted = 200;
        t.spec_accepted = 69;
        add(&st, &tr, &t);
    }
    double r[UI_TURN_BUCKETS];
    int n = ui_stats_turn_rates(&st, r, UI_TURN_BUCKETS);
    CHECKF(n > UI_TURN_BUCKETS / 2 && n <= UI_TURN_BUCKETS, "%d", n);
    CHECKF(r[0] > 99 && r[0] < 101, "%f", r[0]);
    CHECKF(r[n - 1] > 49 && r[n - 1] < 51, "%f", r[n - 1]);
    ui_turn_rec rec;
    ui_stats_turn(&st, 3, 0, &rec);
    char line[300];
    ui_fmt_turn(line, sizeof line, &rec, " · ");
    CHECKF(!strcmp(line, "prompt 28 tok (349 reused) 155 ms · 1000 tok 66.7 tok/s · 5 kB/tok · hit 75.0% · spec 69/200"),
           "%s", line);
    ui_fmt_turn_row(line, sizeof line, &rec);
    CHECKF(strstr(line, "   3     377     349      28   155 ms   1000    66.7      5 kB   75.0    69/200"), "%s", line);
    ui_stats_reset(&st);
    ui_stats_turn(&st, 1, 0, &rec);
    ui_fmt_turn(line, sizeof line, &rec, " · ");
    CHECKF(!strcmp(line, "no tokens"), "%s", line);
}

/* The turn's per-layer figures (ui_layer_acc): reuse against the previous
 * fed token (verify-pass pairs out), bytes per layer, and the most chosen
 * experts in order. */
TEST(ui_stats_layer_figures)
{
    static ui_layer_acc acc;
    ui_layer_acc_reset(&acc);
    ui_reuse_tracker tr = { 0 };
    for (int i = 0; i < 10; i++) {
        /* layer 0 always chooses 3, 4, 5, 6; layer 1 shifts by one each token */
        rm_token_stats t = token(i, 0, 0, 0.01);
        for (int k = 0; k < 4; k++) { t.route_ids[0][k] = (int16_t)(3 + k); t.route_ids[1][k] = (int16_t)(20 + i + k); }
        t.route_ids[0][0] = (int16_t)(i < 7 ? 3 : 9);
        t.layer_bytes_read[1] = 1000;
        ui_layer_acc_add(&acc, &t, &tr);
        ui_sample s;
        ui_stats_sample(&s, &t, &tr);
    }
    const ui_layer_figs *f = &acc.f;
    CHECK(f->layers == 2 && f->tokens == 10);
    /* layer 0: 9 pairs x 4 choices, one change (3 -> 9) */
    CHECKF(f->reuse_n[0] == 36 && f->reuse_hit[0] == 35, "%u/%u", f->reuse_hit[0], f->reuse_n[0]);
    CHECKF(f->reuse_hit[1] == 27, "%u", f->reuse_hit[1]);
    CHECK(f->bytes[1] == 10000 && f->bytes[0] == 0);
    CHECKF(f->hot_n[0][0] == 10 && f->hot_n[0][2] == 10, "%u %u", f->hot_n[0][0], f->hot_n[0][2]);
    int has3 = 0;
    for (int h = 0; h < UI_HOT; h++) has3 |= f->hot[0][h] == 3;
    CHECK(!has3);                   /* 3 was chosen 7 times, 4, 5 and 6 ten */
    CHECK(f->hot_n[1][0] == 4);     /* layer 1: ids 23..29 were chosen 4 times each */
}
