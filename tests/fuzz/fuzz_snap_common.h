/* fuzz_snap_common.h — shared by the snapshot and prefix-cache fuzz targets:
 * the fixture model (k3-tiny, from $REMORA_FIXTURES or tests/fixtures)
 * opened once with the prefix cache off, a real snapshot of a short turn as
 * the seed every input is applied to, and the input read as edits of that
 * seed, so mutations reach past the header into the sizes, ids, states,
 * routes and CRC instead of stopping at "truncated".
 *
 * Input: byte 0 flags (bit 0: recompute the CRC after the edits, so the
 * checks after it are reached too; bit 1: cut the file to the length in
 * bytes 1-4, modulo its size), then 5-byte edits: a little-endian u32
 * offset (its top bit: an offset within the first 256 bytes, the header
 * and the ids) and a byte XORed in there. */
#ifndef REMORA_FUZZ_SNAP_COMMON_H
#define REMORA_FUZZ_SNAP_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "engine.h"
#include "session/session.h"
#include "session/snapshot.h"
#include "session/prefix.h"
#include "base/crc.h"

static rm_session *fz_s;
static unsigned char *fz_seed;
static size_t fz_seed_len;
static int32_t fz_ids[512];
static int fz_nids;
static char fz_dir[64];

static void fz_null_text(void *ud, int ch, const char *t, size_t n) { (void)ud; (void)ch; (void)t; (void)n; }

/* the prefix target's folder goes when the fuzzer ends */
static void fz_cleanup(void)
{
    char d[80];
    snprintf(d, sizeof d, "%s.d", fz_dir);
    rmdir(d);
}

static void fz_init(void)
{
    if (fz_s) return;
    const char *fx = getenv("REMORA_FIXTURES");
    char model[4096];
    snprintf(model, sizeof model, "%s/k3-tiny", fx && *fx ? fx : "../../tests/fixtures");
    rm_open_opts o = { 0 };
    o.prefix_cache_gb = -1;
    rm_err err;
    if (rm_session_open(model, &o, &fz_s, &err)) { fprintf(stderr, "fuzz: %s\n", err.msg); abort(); }
    rm_gen_opts g = { .max_new = 3, .top_p = 1 };
    rm_gen_events ev = { .on_text = fz_null_text };
    if (rm_session_turn(fz_s, "Name three colours of the rainbow, please.", &g, &ev, NULL, &err)) abort();
    snprintf(fz_dir, sizeof fz_dir, "/tmp/remora-fuzz-snap.%ld", (long)getpid());
    atexit(fz_cleanup);
    char path[128];
    snprintf(path, sizeof path, "%s.seed", fz_dir);
    if (rm_session_save_state(fz_s, path, &err)) { fprintf(stderr, "fuzz: %s\n", err.msg); abort(); }
    FILE *f = fopen(path, "rb");
    if (!f) abort();
    fseek(f, 0, SEEK_END);
    fz_seed_len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    if (!(fz_seed = malloc(fz_seed_len)) || fread(fz_seed, 1, fz_seed_len, f) != fz_seed_len) abort();
    fclose(f);
    unlink(path);
    fz_nids = fz_s->nseq < 512 ? fz_s->nseq : 512;
    memcpy(fz_ids, fz_s->seq, (size_t)fz_nids * sizeof *fz_ids);
}

/* The seed with the input's edits, written to path; its length. */
static size_t fz_write(const char *path, const uint8_t *data, size_t size)
{
    unsigned char *b = malloc(fz_seed_len);
    if (!b) abort();
    memcpy(b, fz_seed, fz_seed_len);
    size_t len = fz_seed_len;
    unsigned flags = size ? data[0] : 0;
    size_t i = 1;
    if ((flags & 2) && size >= 5) {
        uint32_t cut = data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 | (uint32_t)data[4] << 24;
        len = cut % (fz_seed_len + 1);
        i = 5;
    }
    for (; i + 5 <= size; i += 5) {
        uint32_t off = data[i] | (uint32_t)data[i + 1] << 8 | (uint32_t)data[i + 2] << 16 | (uint32_t)data[i + 3] << 24;
        off = off & 0x80000000u ? (off & 0xff) : off % (uint32_t)fz_seed_len;
        if (off < len) b[off] ^= data[i + 4];
    }
    if ((flags & 1) && len >= 4) {           /* the CRC covers everything before it */
        uint32_t c = crc_update(0, b, len - 4);
        for (int k = 0; k < 4; k++) b[len - 4 + k] = (unsigned char)(c >> (8 * k));
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, len, f) != len || fclose(f)) abort();
    free(b);
    return len;
}

#endif
