/* fuzz_prefix.c — libFuzzer target for the prefix cache's entries
 * (engine/session/prefix.c): a folder holding one entry, the fixture
 * model's real snapshot edited as fuzz_snap_common.h says, under the name
 * the cache gives it (its fingerprint, token count and id hash) or, when
 * the input's flags ask (bit 2), under a name made of the input's last
 * bytes; then a lookup for the conversation's prompt. Nothing may crash or
 * leak; what is restored must be a prefix of the prompt; an entry that
 * fails is removed, never left to fail again. */
#include <dirent.h>
#include <sys/stat.h>
#include "fuzz_snap_common.h"

/* The cache's name for the seed (prefix.c's entry_name). */
static void entry_name(char *buf, size_t cap)
{
    uint8_t fp[16];
    rm_err e;
    if (rm_model_fingerprint(fz_s->m, fp, &e)) abort();
    char hex[33];
    for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", fp[i]);
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < fz_nids; i++)
        for (int b = 0; b < 4; b++) { h ^= ((uint32_t)fz_ids[i] >> (8 * b)) & 0xff; h *= 0x100000001b3ull; }
    snprintf(buf, cap, "%s-%d-%016llx.snap", hex, fz_nids, (unsigned long long)h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_init();
    prefix_cache *pc = &fz_s->prefix;
    snprintf(pc->dir, sizeof pc->dir, "%s.d", fz_dir);
    pc->limit = (uint64_t)1 << 40;
    mkdir(pc->dir, 0700);
    char name[256], path[4400];
    entry_name(name, sizeof name);
    if (size > 8 && (data[0] & 4)) {            /* a name of the input's choosing, inside the folder */
        size_t n = data[size - 1] % 48;
        if (n > size - 1) n = size - 1;
        char *p = name + strlen(name) - 5 - 16; /* keep the fingerprint, replace the rest */
        for (size_t i = 0; i < n; i++) {
            char c = (char)data[size - 1 - n + i];
            p[i] = c == '/' || c == 0 ? '_' : c;
        }
        snprintf(p + n, sizeof name - (size_t)(p + n - name), ".snap");
    }
    snprintf(path, sizeof path, "%s/%s", pc->dir, name);
    fz_write(path, data, size);
    int got = prefix_restore(fz_s, fz_ids, fz_nids);
    if (got < 0 || got > fz_nids || fz_s->nseq != got && got) abort();
    if (got && memcmp(fz_s->seq, fz_ids, (size_t)got * sizeof *fz_ids)) abort();
    pc->in_use[0] = 0;
    DIR *d = opendir(pc->dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", pc->dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    return 0;
}
