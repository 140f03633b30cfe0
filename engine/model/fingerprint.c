/* fingerprint.c — what a snapshot names its model by (rm_model_fingerprint).
 *
 * A snapshot is only valid for the exact model that wrote it, so it carries a
 * 128-bit fingerprint of: config.json, model.safetensors.index.json (when
 * there is one), the tokenizer's tiktoken.model and tokenizer_config.json,
 * the tensor table of every shard header (names, dtypes, shapes, offsets:
 * this covers a single model.safetensors too), and the norm and router-bias
 * vectors the model holds in RAM. The last part makes the fingerprint depend
 * on the weights themselves without reading a byte more from storage: two
 * checkpoints with the same files but other weights (two `remora synth` runs
 * with different seeds) differ there. A stream-mode copy of a model has the
 * same files and headers as the full one, so it has the same fingerprint.
 *
 * The hash is FNV-1a with 128 bits (the published offset basis and prime):
 * a dozen lines with no table, and 128 bits make an accidental collision
 * between any two models anyone keeps out of the question. It is not a
 * defence against a forged file (a snapshot is the user's own file, and the
 * CRC and every size are checked anyway). On the 31.6 GB synth model (a
 * 1.1 MB index) it takes a few milliseconds, once per open model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/st.h"
#include "model/model.h"
#include "base/file.h"

typedef unsigned __int128 u128;

static void fnv(u128 *h, const void *p, size_t n)
{
    static const u128 prime = ((u128)0x0000000001000000ull << 64) | 0x000000000000013Bull;
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= prime;
    }
}

/* Hashes the file's name and bytes; a missing optional file hashes as
 * absent (so adding one changes the fingerprint). */
static int hash_file(u128 *h, const char *dir, const char *name, int optional, rm_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fnv(h, name, strlen(name) + 1);
    size_t len = 0;
    char *b = file_read(path, (size_t)1 << 30, &len, err);
    if (!b) {
        if (!optional) return -1;
        fnv(h, "absent", 7);
        err->msg[0] = 0;
        return 0;
    }
    uint64_t n = len;
    fnv(h, &n, sizeof n);
    fnv(h, b, len);
    free(b);
    return 0;
}

static void hash_floats(u128 *h, const float *v, int n)
{
    if (v) fnv(h, v, (size_t)n * sizeof *v);
    else fnv(h, "-", 1);
}

int rm_model_fingerprint(rm_model *m, uint8_t out[16], rm_err *err)
{
    if (!m->fingerprint_done) {
        rm_err local;
        if (!err) err = &local;
        u128 h = ((u128)0x6c62272e07bb0142ull << 64) | 0x62b821756295c58dull;
        const char *dir = m->st->dir;
        fnv(&h, "remora model fingerprint 1", 27);
        if (hash_file(&h, dir, "config.json", 0, err) || hash_file(&h, dir, "model.safetensors.index.json", 1, err) ||
            hash_file(&h, dir, "tiktoken.model", 0, err) || hash_file(&h, dir, "tokenizer_config.json", 0, err))
            return -1;
        for (int i = 0; i < m->st->ntensors; i++) {
            const st_tensor *t = &m->st->tensors[i];
            int64_t row[4 + ST_MAX_DIMS] = { t->dtype, t->ndim, (int64_t)t->offset, (int64_t)t->nbytes };
            for (int d = 0; d < t->ndim && d < ST_MAX_DIMS; d++) row[4 + d] = t->shape[d];
            fnv(&h, t->name, strlen(t->name) + 1);
            fnv(&h, row, sizeof row);
        }
        const rm_config *c = &m->cfg;
        hash_floats(&h, m->final_norm, c->hidden_size);
        for (int l = 0; l < c->num_layers; l++) {
            hash_floats(&h, m->layers[l].in_norm, c->hidden_size);
            hash_floats(&h, m->layers[l].post_norm, c->hidden_size);
            if (c->is_moe[l]) hash_floats(&h, m->layers[l].moe.bias, c->num_experts);
        }
        for (int i = 0; i < 16; i++) m->fingerprint[i] = (uint8_t)(h >> (8 * (15 - i)));
        m->fingerprint_done = 1;
    }
    memcpy(out, m->fingerprint, 16);
    return 0;
}
