/* fuzz_config.c — libFuzzer target for config.json (format/config.c). A
 * config either fails with a message naming the file, or gives values
 * inside the ranges the engine relies on. */
#include "fuzz_common.h"
#include "format/config.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    rm_config c;
    rm_err err = { "" };
    if (config_parse((const char *)data, size, "config.json", &c, &err)) {
        if (!strstr(err.msg, "config.json")) abort();
        return 0;
    }
    if (c.vocab_size < 1 || c.hidden_size < 1 || c.num_layers < 1 || c.num_layers > CFG_MAX_LAYERS) abort();
    if (c.num_experts && (c.topk < 1 || c.topk > c.num_experts || c.topk > RM_MAX_TOPK)) abort();
    if (c.num_experts && (c.n_group < 1 || c.num_experts % c.n_group || c.topk_group > c.n_group)) abort();
    for (int l = 0; l < c.num_layers; l++)
        if (c.is_kda[l] > 1 || c.is_moe[l] > 1) abort();
    return 0;
}
