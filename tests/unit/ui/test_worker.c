/* test_worker.c — the worker thread and its mailbox (ui/worker.c) over the
 * synthetic source (ui/source_synth.c): a turn streamed as fast as it goes
 * and drained as the UI drains it arrives whole, reasoning and answer each
 * byte for byte what the source keeps in its conversation, with one sample
 * per token and one completion event. */
#include <poll.h>
#include <string.h>
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
