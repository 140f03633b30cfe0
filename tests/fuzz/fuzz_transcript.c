/* fuzz_transcript.c — libFuzzer target for the transcript reader
 * (session/transcript.c, rm_transcript_parse). A transcript fails with
 * "NAME:LINE: ..." and leaves nothing behind, or gives messages with known
 * roles whose text saves and reads back the same. */
#include <unistd.h>
#include "fuzz_common.h"

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    snprintf(path, sizeof path, "/tmp/remora-fuzz-tr.%ld", (long)getpid());
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    rm_transcript t, back;
    rm_err err = { "" };
    if (rm_transcript_parse((const char *)data, size, "fuzz.jsonl", &t, &err)) {
        if (!strstr(err.msg, "fuzz.jsonl") && !strstr(err.msg, "out of memory")) abort();
        if (t.n || t.msgs || t.system) abort();
        return 0;
    }
    for (int i = 0; i < t.n; i++) {
        const char *r = t.msgs[i].role;
        if (strcmp(r, "user") && strcmp(r, "assistant") && strcmp(r, "tool") && strcmp(r, "system")) abort();
    }
    if (rm_transcript_save(path, t.msgs, t.interrupted, t.n, t.system, &err)) abort();
    if (rm_transcript_load(path, &back, &err)) abort();
    /* a later "system" line is a message; a first one is the system prompt either way */
    if (back.n != t.n || (!back.system != !t.system) || (t.system && strcmp(t.system, back.system))) abort();
    for (int i = 0; i < t.n; i++)
        if (strcmp(t.msgs[i].content, back.msgs[i].content) || strcmp(t.msgs[i].role, back.msgs[i].role)) abort();
    rm_transcript_free(&back);
    rm_transcript_free(&t);
    unlink(path);
    return 0;
}
