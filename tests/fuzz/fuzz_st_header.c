/* fuzz_st_header.c — libFuzzer target for the safetensors header reader
 * (format/st.c, st_parse_header). The input is a shard's JSON header; the
 * shard is taken to be as long as the header plus a data section whose size
 * the first byte picks. Parsing must fail with a message, or give tensors
 * whose spans lie inside the data section without overlapping, each findable
 * by name. */
#include <jansson.h>
#include "fuzz_common.h"
#include "format/st.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1) return 0;
    uint64_t data_size = (uint64_t)data[0] << (data[0] & 7);
    const char *hdr = (const char *)data + 1;
    uint64_t hlen = size - 1, file_size = 8 + hlen + data_size;
    st_set *s = NULL;
    rm_err err = { "" };
    if (st_parse_header("fuzz.safetensors", hdr, hlen, file_size, &s, &err)) {
        if (!err.msg[0] || s) abort();
        return 0;
    }
    for (int i = 0; i < s->ntensors; i++) {
        const st_tensor *t = &s->tensors[i];
        if (t->offset < 8 + hlen || t->offset + t->nbytes > file_size || t->offset + t->nbytes < t->offset) abort();
        if (st_find(s, t->name) != t) abort();
        for (int j = 0; j < i; j++) {
            const st_tensor *u = &s->tensors[j];
            if (t->nbytes && u->nbytes && t->offset < u->offset + u->nbytes && u->offset < t->offset + t->nbytes)
                abort();
        }
        if (i > 64) break;
    }
    st_close(s);
    return 0;
}
