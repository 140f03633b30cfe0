/* test_source_synth.c — the synthetic chat source (ui/source_synth.c): its
 * transcript is written atomically through rm_write_atomic (one complete
 * file, no temporary left, an error naming the user's file when the folder
 * is missing or a folder is in the way) and loads back as it was. */
#include <stdio.h>
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

    CHECKF(b->vt->load(b, path, &err) == 0, "%s", err.msg);
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
