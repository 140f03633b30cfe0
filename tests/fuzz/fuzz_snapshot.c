/* fuzz_snapshot.c — libFuzzer target for the snapshot reader
 * (engine/session/snapshot.c's snap_read): a real snapshot of the fixture
 * model, edited as fuzz_snap_common.h says, read back with and without the
 * conversation's ids to match. Nothing may crash or leak; a snapshot that
 * is accepted must hold at most the conversation's tokens and their ids,
 * and must install into the session. */
#include "fuzz_snap_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_init();
    char path[128];
    snprintf(path, sizeof path, "%s.state", fz_dir);
    fz_write(path, data, size);
    snap_data d;
    rm_err err;
    int rc = snap_read(fz_s, path, fz_ids, fz_nids, &d, &err);
    if (rc == 0) {
        if (d.tokens < 0 || d.tokens > fz_nids || memcmp(d.ids, fz_ids, (size_t)d.tokens * sizeof *fz_ids)) abort();
        snap_data_free(&d);
    } else if (!err.msg[0]) {
        abort();                                /* a refusal always says why */
    }
    if (snap_read(fz_s, path, NULL, 0, &d, &err) == 0) {
        if (d.tokens < 0) abort();
        snap_data_free(&d);
    }
    unlink(path);
    return 0;
}
