/* test_welcome.c — the chat's opening note (ui/welcome.c): the embedded
 * model's welcome names it (from its model card), gives its parameters,
 * layers, experts and RAM plan from the engine, and says what it can do
 * with prompts to try; the synthetic source's gives Kimi K3's size and no
 * demo text; counts read "56.5 M", "2.80 T". */
#include <string.h>
#include "tests/unit/test.h"
#include "ui/source.h"
#include "ui/welcome.h"

TEST(ui_welcome_embedded_model)
{
    rm_open_opts oo = { 0 };
    ui_source *src = NULL;
    rm_err err = { "" };
    const char *dir = fixture_path("../../assets/model");
    CHECK(dir && ui_source_engine_open(dir, &oo, &src, &err) == 0);
    if (!src) { fprintf(stderr, "    %s\n", err.msg); return; }
    CHECKF(!strcmp(src->name, UI_EMBEDDED_MODEL), "%s", src->name);
    rm_buf w = { 0 };
    CHECK(ui_welcome(src, &w) == 0);
    CHECKF(w.p && strstr(w.p, "remora-k3-demo: 56.5 M parameters in "), "%s", w.p);
    CHECKF(strstr(w.p, "10 layers, 9 with 64 routed experts (4 a token, MXFP4)"), "%s", w.p);
    CHECKF(strstr(w.p, "100% resident; expert cache "), "%s", w.p);
    CHECKF(strstr(w.p, "Try:\n  What is 37*12?\n"), "%s", w.p);
    /* the phrasings the model answers: the word to count quoted; no follow-ups */
    CHECKF(strstr(w.p, "  How many times does the letter \"r\" appear in \"strawberry\"?\n"), "%s", w.p);
    CHECKF(strstr(w.p, "follow-ups such as \"Add 10 to that answer.\" are not understood"), "%s", w.p);
    CHECKF(strstr(w.p, "F1: "), "%s", w.p);
    rm_buf_free(&w);
    src->vt->free(src);
    src = NULL;         /* a failed open below leaves it as it is */
    /* a directory without a model card is named after itself */
    dir = fixture_path("k3-tiny");
    CHECK(dir && ui_source_engine_open(dir, &oo, &src, &err) == 0);
    if (src) {
        CHECKF(!strcmp(src->name, "k3-tiny"), "%s", src->name);
        src->vt->free(src);
    }
}

TEST(ui_welcome_synthetic_and_counts)
{
    ui_synth_opts so = { .rate = 50 };
    ui_source *src = NULL;
    rm_err err = { "" };
    CHECK(ui_source_synth_open(&so, &src, &err) == 0);
    rm_buf w = { 0 };
    CHECK(ui_welcome(src, &w) == 0);
    CHECKF(strstr(w.p, "2.80 T parameters in 1.56 TB; 93 layers, 92 with 896 routed experts (16 a token"), "%s", w.p);
    CHECK(!strstr(w.p, "Try:"));
    rm_buf_free(&w);
    src->vt->free(src);
    char b[32];
    ui_fmt_count(b, sizeof b, 56.5e6); CHECKF(!strcmp(b, "56.5 M"), "%s", b);
    ui_fmt_count(b, sizeof b, 2.8e12); CHECKF(!strcmp(b, "2.80 T"), "%s", b);
    ui_fmt_count(b, sizeof b, 48e9); CHECKF(!strcmp(b, "48.0 B"), "%s", b);
    ui_fmt_count(b, sizeof b, 512); CHECKF(!strcmp(b, "512"), "%s", b);
}
