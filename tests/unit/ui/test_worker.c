/* test_worker.c — the worker thread and its mailbox (ui/worker.c) over the
 * synthetic source (ui/source_synth.c): a turn streamed as fast as it goes
 * and drained as the UI drains it arrives whole, reasoning and answer each
 * byte for byte what the source keeps in its conversation, with one sample
 * per record and one completion event. Closing the worker while its source
 * ignores the stop flag returns at the deadline instead of waiting. */
#include <poll.h>
#include <string.h>
#include <time.h>
#include "tests/unit/test.h"
#include "ui/source.h"
#include "ui/worker.h"

TEST(ui_worker_streams_a_turn_whole)
{
    ui_synth_opts so = { 0, 300, 700, 0 };      /* rate 0: as fast as possible */
    rm_err err = { "" };
    ui_source *src = NULL;
    REQUIRE(ui_source_synth_open(&so, &src, &err) == 0);
    ui_worker *w = NULL;
    int fd = -1;
    REQUIRE(ui_worker_start(src, &w, &fd) == 0);
    static ui_drain d;
    rm_buf text[3] = { { 0 } };
    rm_gen_opts gen = { .think = 1, .top_p = 1 };
    REQUIRE(ui_worker_submit(w, UI_CMD_TURN, "hello", &gen) == 0);
    CHECK(ui_worker_submit(w, UI_CMD_CLEAR, NULL, NULL) == -1);     /* one command at a time */
    int done = 0, samples = 0, drains = 0;
    for (int spins = 0; !done && spins < 100000; spins++) {
        struct pollfd p = { fd, POLLIN, 0 };
        if (poll(&p, 1, 1000) <= 0) continue;
        ui_worker_drain(w, &d);
        drains++;
        for (int c = 1; c < 3; c++) CHECK(rm_buf_add(&text[c], d.text[c] ? d.text[c] : "", d.len[c]) == 0);
        samples += d.nsamples + d.lost_samples;
        if (d.have_done) {
            done = 1;
            CHECKF(d.done.cmd == UI_CMD_TURN && d.done.rc == 0 && !d.done.interrupted, "rc %d: %s", d.done.rc,
                   d.done.msg);
        }
    }
    REQUIRE(done);
    const rm_chat_msg *m;
    int n = src->vt->messages(src, &m);
    REQUIRE(n == 2 && !strcmp(m[1].role, "assistant"));
    CHECK(text[RM_CHAN_ANSWER].len == strlen(m[1].content) && !strcmp(text[RM_CHAN_ANSWER].p, m[1].content));
    CHECK(m[1].reasoning_content && text[RM_CHAN_REASONING].len == strlen(m[1].reasoning_content) &&
          !strcmp(text[RM_CHAN_REASONING].p, m[1].reasoning_content));
    /* the prompt's record, the tokens, the end-of-message token's */
    CHECKF(samples == 1 + 300 + 700 + 1, "%d samples in %d drains", samples, drains);
    for (int c = 0; c < 3; c++) rm_buf_free(&text[c]);
    CHECK(ui_worker_close(w, 5) == 0);
    src->vt->free(src);
}

/* A source whose turn ignores the stop flag for `hold` seconds (a prompt in
 * an engine that cannot be interrupted). */
typedef struct stuck_source { ui_source base; double hold; volatile int *entered; } stuck_source;

static int stuck_turn(ui_source *s, const char *user, const rm_gen_opts *o, const rm_gen_events *ev,
                      volatile int *stop, rm_err *err)
{
    (void)user; (void)o; (void)ev; (void)stop; (void)err;
    stuck_source *k = (stuck_source *)s;
    *k->entered = 1;
    double t0 = rm_now();
    while (rm_now() - t0 < k->hold) { struct timespec ts = { 0, 10000000 }; nanosleep(&ts, NULL); }
    return 0;
}
static int stuck_zero(ui_source *s) { (void)s; return 0; }

TEST(ui_worker_close_never_waits_without_bound)
{
    static volatile int entered;
    static const ui_source_vt vt = { stuck_turn, NULL, NULL, NULL, NULL, NULL, stuck_zero, NULL, NULL };
    static stuck_source src = { { .vt = &vt, .label = "stuck" }, 1.0, &entered };
    static ui_worker *w;                        /* left to its thread: reachable, not leaked */
    int fd = -1;
    REQUIRE(ui_worker_start(&src.base, &w, &fd) == 0);
    rm_gen_opts gen = { .think = 1, .top_p = 1 };
    REQUIRE(ui_worker_submit(w, UI_CMD_TURN, "hello", &gen) == 0);
    for (int i = 0; i < 500 && !entered; i++) { struct timespec ts = { 0, 1000000 }; nanosleep(&ts, NULL); }
    REQUIRE(entered);
    double t0 = rm_now();
    CHECK(ui_worker_close(w, 0.3) == -1);       /* still inside the source: left to it */
    double took = rm_now() - t0;
    CHECKF(took >= 0.25 && took < 1.0, "%.2f s", took);
    /* the thread ends on its own later (the chat would have exited by then) */
    struct timespec ts = { 1, 0 };
    nanosleep(&ts, NULL);
}

/* A source whose save takes `hold` seconds and cannot be stopped (a K3
 * snapshot being written). */
static int slow_save(ui_source *s, const char *path, rm_err *err)
{
    (void)path; (void)err;
    stuck_source *k = (stuck_source *)s;
    *k->entered = 1;
    double t0 = rm_now();
    while (rm_now() - t0 < k->hold) { struct timespec ts = { 0, 10000000 }; nanosleep(&ts, NULL); }
    return 0;
}

TEST(ui_worker_close_waits_for_a_save)
{
    static volatile int entered;
    static const ui_source_vt vt = { NULL, NULL, NULL, slow_save, NULL, NULL, stuck_zero, NULL, NULL };
    static stuck_source src = { { .vt = &vt, .label = "saving" }, 1.0, &entered };
    ui_worker *w;
    int fd = -1;
    REQUIRE(ui_worker_start(&src.base, &w, &fd) == 0);
    REQUIRE(ui_worker_submit(w, UI_CMD_SAVE, "/nonexistent/x.jsonl", NULL) == 0);
    for (int i = 0; i < 500 && !entered; i++) { struct timespec ts = { 0, 1000000 }; nanosleep(&ts, NULL); }
    REQUIRE(entered);
    double t0 = rm_now();
    CHECK(ui_worker_close(w, 0.3) == 0);        /* past the 0.3 s: the save is waited for to its end */
    double took = rm_now() - t0;
    CHECKF(took >= 0.8 && took < 3.0, "%.2f s", took);
}
