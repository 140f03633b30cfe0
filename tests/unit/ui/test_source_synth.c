/* test_source_synth.c — the synthetic chat source (ui/source_synth.c): its
 * transcript is written atomically through rm_write_atomic (one complete
 * file, no temporary left, an error naming the user's file when the folder
 * is missing or a folder is in the way) and loads back as it was; a failed
 * load changes nothing and says which line is wrong and why. It follows the
 * engine's record protocol: a prompt in passes with a progress record per
 * layer, stopped between layers (the complete passes kept, the turn marked
 * RM_STOPPED_PROMPT and saved as interrupted), the context counted as the
 * engine counts it (reused after a turn, computed again after /load),
 * verify passes numbered with each token's place, the end-of-message
 * record, and --max-new. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "scratch.h"
#include "ui/source.h"

TEST(ui_source_synth_save_is_atomic_and_loads_back)
{
    char dir[] = "/tmp/remora-synth-XXXXXX";
    REQUIRE(mkdtemp(dir));
    ui_synth_opts so = { 0, 20, 40, 0 };
    rm_err err = { "" };
    int ctx = -1;
    ui_source *a = NULL, *b = NULL;
    REQUIRE(ui_source_synth_open(&so, &a, &err) == 0 && ui_source_synth_open(&so, &b, &err) == 0);
    rm_gen_opts gen = { .think = 1, .top_p = 1 };
    rm_gen_events ev = { 0 };
    volatile int stop = 0;
    REQUIRE(a->vt->set_system(a, "be brief", &err) == 0);
    REQUIRE(a->vt->turn(a, "hello", &gen, &ev, &stop, &err) == 0);

    char path[4200], missing[4200], folder[4200];
    snprintf(path, sizeof path, "%s/conv.jsonl", dir);
    snprintf(missing, sizeof missing, "%s/none/conv.jsonl", dir);
    snprintf(folder, sizeof folder, "%s/adir", dir);
    CHECKF(a->vt->save(a, path, &err) == 0, "%s", err.msg);
    CHECK(scratch_entries(dir) == 1);               /* no temporary file left */
    size_t len = 0;
    char *text = t_read_file(path, &len);
    REQUIRE(text);
    int lines = 0;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    CHECK(lines == 3 && len && text[len - 1] == '\n');
    CHECK(strstr(text, "{\"role\":\"system\",\"content\":\"be brief\"}\n") == text);
    free(text);

    CHECKF(b->vt->load(b, path, &ctx, &err) == 0, "%s", err.msg);
    const rm_chat_msg *ma, *mb;
    int na = a->vt->messages(a, &ma), nb = b->vt->messages(b, &mb);
    REQUIRE(na == 3 && nb == 3);
    for (int i = 0; i < 3; i++) {
        CHECK(!strcmp(ma[i].role, mb[i].role) && !strcmp(ma[i].content, mb[i].content));
        CHECK(!ma[i].reasoning_content == !mb[i].reasoning_content);
        if (ma[i].reasoning_content && mb[i].reasoning_content)
            CHECK(!strcmp(ma[i].reasoning_content, mb[i].reasoning_content));
    }

    /* failures name the user's file, not a temporary one */
    char want[4400];
    CHECK(a->vt->save(a, missing, &err) == -1);
    snprintf(want, sizeof want, "%s: cannot write: No such file or directory", missing);
    CHECKF(!strcmp(err.msg, want), "%s", err.msg);
    REQUIRE(mkdir(folder, 0755) == 0);
    CHECK(a->vt->save(a, folder, &err) == -1);
    snprintf(want, sizeof want, "%s: is a directory", folder);
    CHECKF(!strcmp(err.msg, want), "%s", err.msg);
    CHECK(scratch_entries(dir) == 2);               /* conv.jsonl and adir only */

    a->vt->free(a);
    b->vt->free(b);
    scratch_remove(dir);
}

/* What a turn published. */
typedef struct seen {
    int tokens, progress, prompts, end_records, pass_tokens, bad_pass_pos;
    int last_pass, last_pos;
    int stop_after_progress;    /* > 0: set *stop after this many progress records */
    volatile int *stop;
    rm_prompt_figures first, last;
    int done_step_ok;           /* done only grows, in whole passes */
} seen;

static void on_stats(void *ud, const rm_token_stats *st)
{
    seen *s = ud;
    if (st->kind == RM_REC_PROGRESS) {
        if (!s->progress) s->first = st->prompt;
        if (st->prompt.done < s->last.done || st->prompt.done % 2048) s->done_step_ok = 0;
        s->last = st->prompt;
        if (++s->progress == s->stop_after_progress) *s->stop = 1;
    } else if (st->kind == RM_REC_PROMPT) {
        s->prompts++;
        s->last = st->prompt;
    } else {
        s->tokens++;
        double ph = 0;
        for (int p = 0; p < RM_PHASE_COUNT; p++) ph += st->phase_seconds[p];
        if (ph == 0 && st->expert_hits + st->expert_misses == 0) s->end_records++;
        if (st->spec_pass) {
            s->pass_tokens++;
            int want = st->spec_pass == s->last_pass ? s->last_pos + 1 : 0;
            if (st->spec_pass_pos != want) s->bad_pass_pos++;
            s->last_pass = st->spec_pass;
            s->last_pos = st->spec_pass_pos;
        }
    }
}

TEST(ui_source_synth_prompt_passes_stop_and_speculation)
{
    ui_synth_opts so = { 0, 30, 60, 2e6 };     /* prompts at 2M tokens/s: ~5 ms a pass */
    rm_err err = { "" };
    int ctx = -1;
    ui_source *s = NULL;
    REQUIRE(ui_source_synth_open(&so, &s, &err) == 0);
    rm_gen_opts gen = { .think = 1, .top_p = 1 };
    volatile int stop = 0;
    seen a = { .stop = &stop, .done_step_ok = 1 };
    rm_gen_events ev = { &a, NULL, on_stats };
    /* a plain turn: the prompt in passes, then tokens, verify passes among them */
    REQUIRE(s->vt->turn(s, "hello", &gen, &ev, &stop, &err) == 0);
    CHECK(a.prompts == 1 && a.progress == 93 && a.last.done == a.last.total && a.last.ctx == a.last.total);
    CHECK(a.tokens == 30 + 60 + 1 && a.end_records == 1);     /* and the end-of-message token */
    CHECK(a.pass_tokens > 0 && a.bad_pass_pos == 0);
    CHECK(s->vt->last_interrupted(s) == 0);

    /* a 40 KB message (10008 tokens, 5 passes) stopped in its third pass */
    char *big = malloc(40001);
    REQUIRE(big);
    memset(big, 'x', 40000);
    big[40000] = 0;
    seen b = { .stop = &stop, .stop_after_progress = 2 * 93 + 40, .done_step_ok = 1 };
    ev.ud = &b;
    REQUIRE(s->vt->turn(s, big, &gen, &ev, &stop, &err) == 0);
    CHECK(b.progress == 2 * 93 + 40 && b.prompts == 0 && b.tokens == 0 && b.done_step_ok);
    CHECK(b.first.reused > a.last.ctx && b.first.total == 10008);   /* the first turn and its reply */
    CHECK(b.last.done == 2 * 2048 && b.last.chunk == 2 && b.last.layer == 40 && b.last.chunks == 5);
    CHECK(b.last.eta > 0 && b.last.tok_per_s > 0 && !b.last.reprefill);
    CHECK(s->vt->last_interrupted(s) == RM_STOPPED_PROMPT);
    const rm_chat_msg *m;
    int n = s->vt->messages(s, &m);
    CHECK(n == 4 && !strcmp(m[2].content, big) && !strcmp(m[3].role, "assistant") && !m[3].content[0]);

    /* the next turn reuses what the complete passes left in the state */
    stop = 0;
    seen c = { .stop = &stop, .done_step_ok = 1 };
    ev.ud = &c;
    gen.max_new = 20;
    REQUIRE(s->vt->turn(s, "next", &gen, &ev, &stop, &err) == 0);
    CHECK(c.first.reused == b.first.reused + 2 * 2048 && !c.first.reprefill);
    CHECK(c.tokens == 20 && c.end_records == 0 && s->vt->last_interrupted(s) == 0);   /* --max-new: cut */

    /* a transcript keeps the interrupted turn; loading it computes it all again */
    char dir[] = "/tmp/remora-synth-XXXXXX";
    REQUIRE(mkdtemp(dir));
    char path[4200];
    snprintf(path, sizeof path, "%s/conv.jsonl", dir);
    REQUIRE(s->vt->save(s, path, &err) == 0);
    char *text = t_read_file(path, NULL);
    REQUIRE(text);
    CHECK(strstr(text, "{\"role\":\"assistant\",\"content\":\"\",\"interrupted\":true,\"stopped_in\":\"prompt\"}\n"));
    free(text);
    REQUIRE(s->vt->load(s, path, &ctx, &err) == 0);
    {   /* the load keeps how each reply ended, and counts the conversation */
        const rm_chat_msg *lm;
        int ln = s->vt->messages(s, &lm);
        CHECK(ln == 6 && !strcmp(lm[3].role, "assistant") && s->vt->interrupted(s, 3) == RM_STOPPED_PROMPT);
        CHECK(s->vt->interrupted(s, 1) == 0 && s->vt->interrupted(s, 2) == 0 && s->vt->interrupted(s, 6) == 0);
        /* the context leaves the stopped turn out: less than its 10008 tokens */
        CHECK(ctx > 0 && ctx < 10008);
    }
    seen d = { .stop = &stop, .done_step_ok = 1 };
    ev.ud = &d;
    gen.max_new = 5;
    REQUIRE(s->vt->turn(s, "again", &gen, &ev, &stop, &err) == 0);
    CHECKF(d.first.reused == 0 && d.first.reprefill && d.first.total == d.first.ctx && d.first.chunks == 5,
           "reused %d reprefill %d total %d ctx %d chunks %d", d.first.reused, d.first.reprefill, d.first.total,
           d.first.ctx, d.first.chunks);
    scratch_remove(dir);
    free(big);
    s->vt->free(s);
}

TEST(ui_source_synth_failed_load_changes_nothing)
{
    char dir[] = "/tmp/remora-synth-XXXXXX";
    REQUIRE(mkdtemp(dir));
    ui_synth_opts so = { 0, 5, 5, 0 };
    rm_err err = { "" };
    int ctx = -1;
    ui_source *s = NULL;
    REQUIRE(ui_source_synth_open(&so, &s, &err) == 0);
    rm_gen_opts gen = { .think = 1, .top_p = 1 };
    rm_gen_events ev = { 0 };
    volatile int stop = 0;
    REQUIRE(s->vt->turn(s, "keep me", &gen, &ev, &stop, &err) == 0);
    char bad[4200], missing[4200], want[4400];
    snprintf(bad, sizeof bad, "%s/bad.jsonl", dir);
    snprintf(missing, sizeof missing, "%s/none.jsonl", dir);
    FILE *f = fopen(bad, "w");
    REQUIRE(f);
    fputs("{\"role\":\"user\",\"content\":\"other\"}\nnot json at all\n", f);
    fclose(f);
    CHECK(s->vt->load(s, bad, &ctx, &err) == -1);
    snprintf(want, sizeof want, "%s:2: not valid JSON", bad);
    CHECKF(!strncmp(err.msg, want, strlen(want)), "%s", err.msg);       /* file, line and reason */
    CHECK(s->vt->load(s, missing, &ctx, &err) == -1);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", missing);
    CHECKF(!strcmp(err.msg, want), "%s", err.msg);
    const rm_chat_msg *m;
    int n = s->vt->messages(s, &m);
    CHECK(n == 2 && !strcmp(m[0].content, "keep me"));
    s->vt->free(s);
    scratch_remove(dir);
}
