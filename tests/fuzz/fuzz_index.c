/* fuzz_index.c — libFuzzer target for model.safetensors.index.json
 * (format/st.c, st_index_parse), which st_open and `remora setup` read. An
 * index fails with a message, or gives distinct shard names that are plain
 * file names (no '/', not "." or ".."), at most CAP_SHARDS of them. */
#include "fuzz_common.h"
#include "format/st.h"
#include "base/caps.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    st_index ix;
    rm_err err = { "" };
    if (st_index_parse((const char *)data, size, "index.json", &ix, &err)) {
        if (!strstr(err.msg, "index.json") || ix.root || ix.shards) abort();
        return 0;
    }
    if (ix.nshards < 1 || ix.nshards > CAP_SHARDS) abort();
    for (int i = 0; i < ix.nshards; i++) {
        if (!st_safe_shard_name(ix.shards[i])) abort();
        for (int j = 0; j < i && j < 256; j++)
            if (!strcmp(ix.shards[i], ix.shards[j])) abort();
    }
    st_index_free(&ix);
    return 0;
}
