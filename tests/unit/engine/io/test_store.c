/* test_store.c — the weight store under RAM budgets: the same greedy tokens
 * from a budget that holds everything down to the smallest one accepted,
 * and byte counters that agree with the kernel's own accounting of what the
 * process read from storage (/proc/self/io read_bytes). */
#include <string.h>
#include "tests/unit/test.h"
#include "model/model.h"

static uint64_t proc_read_bytes(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    char key[64];
    unsigned long long v = 0, out = 0;
    while (f && fscanf(f, "%63s %llu", key, &v) == 2)
        if (!strcmp(key, "read_bytes:")) out = v;
    if (f) fclose(f);
    return out;
}

/* Greedy-decodes n tokens after a fixed prompt at the given budget; writes
 * the ids to out and returns the bytes the model counted while decoding. */
static int decode_at(const char *dir, double ram_gb, int n, int32_t *out, uint64_t *counted,
                     uint64_t *kernel, rm_model_info *info)
{
    rm_model *m = NULL;
    rm_err err;
    rm_open_opts o = { .ram_gb = ram_gb };
    if (rm_model_open(dir, &o, &m, &err)) { fprintf(stderr, "  %s\n", err.msg); return -1; }
    *info = *rm_model_get_info(m);
    rm_state *s = rm_state_new(m, &err);
    const int V = m->cfg.vocab_size;
    float *logits = malloc((size_t)V * sizeof *logits);
    int32_t prompt[6] = { 839, 2083, 1734, 1881, 1948, 2032 };
    int rc = rm_forward(m, s, prompt, 6, NULL, logits, NULL, NULL, &err);
    rm_token_stats st;
    model_take_stats(m, &st, 1);
    uint64_t k0 = proc_read_bytes(), sum = 0;
    for (int i = 0; i < n && !rc; i++) {
        int32_t id = 0;
        for (int v = 1; v < V; v++) if (logits[v] > logits[id]) id = v;
        out[i] = id;
        rc = rm_forward(m, s, &id, 1, NULL, logits, NULL, NULL, &err);
        model_take_stats(m, &st, 1);
        sum += st.bytes_spine_read + st.bytes_expert_read;
    }
    *kernel = proc_read_bytes() - k0;
    *counted = sum;
    free(logits);
    rm_state_free(s);
    rm_model_free(m);
    return rc;
}

TEST(store_same_tokens_at_every_budget)
{
    const char *dir = fixture_path("k3-tiny");
    REQUIRE(dir);
    enum { N = 16 };
    int32_t ref[N], got[N];
    uint64_t counted, kernel;
    rm_model_info info;
    REQUIRE(decode_at(dir, 1.0, N, ref, &counted, &kernel, &info) == 0);
    CHECK(info.spine_resident_bytes == info.spine_bytes);
    const double min_gb = info.min_ram_budget / 1e9;
    /* spine resident with a small expert cache; part of the spine streamed;
     * the minimum the engine accepts */
    double budgets[3] = { (info.spine_bytes + 8 * (info.expert_cache_bytes / info.expert_cache_slots)) / 1e9,
                          (min_gb + info.spine_bytes / 1e9) / 2, min_gb };
    for (int b = 0; b < 3; b++) {
        REQUIRE(decode_at(dir, budgets[b], N, got, &counted, &kernel, &info) == 0);
        CHECKF(!memcmp(ref, got, sizeof ref), "tokens differ at a budget of %.4f GB", budgets[b]);
        if (b == 2) CHECK(info.spine_resident_bytes < info.spine_bytes && counted > 0);
    }
    rm_model *m = NULL;
    rm_err err;
    CHECK(rm_model_open(dir, &(rm_open_opts){ .ram_gb = min_gb * 0.9 }, &m, &err) == -1);
    CHECK(strstr(err.msg, "too small") != NULL);
}

TEST(store_counters_match_kernel_read_bytes)
{
    const char *dir = fixture_path("k3-tiny");
    REQUIRE(dir);
    enum { N = 12 };
    int32_t got[N];
    uint64_t counted, kernel;
    rm_model_info info;
    REQUIRE(decode_at(dir, 1.0, 1, got, &counted, &kernel, &info) == 0);
    REQUIRE(info.direct_io);     /* without O_DIRECT the page cache hides reads */
    REQUIRE(decode_at(dir, info.min_ram_budget / 1e9, N, got, &counted, &kernel, &info) == 0);
    double diff = (double)counted - (double)kernel;
    CHECKF(counted > 0 && (diff < 0 ? -diff : diff) <= 0.02 * (double)kernel,
           "counted %llu bytes, the kernel says %llu", (unsigned long long)counted, (unsigned long long)kernel);
}

/* prints figures when run by hand: REMORA_VERBOSE=1 */
TEST(store_report)
{
    if (!getenv("REMORA_VERBOSE")) return;
    const char *dir = fixture_path("k3-tiny");
    int32_t got[12];
    uint64_t counted, kernel;
    rm_model_info info;
    decode_at(dir, 1.0, 1, got, &counted, &kernel, &info);
    decode_at(dir, info.min_ram_budget / 1e9, 12, got, &counted, &kernel, &info);
    printf("min budget %.4f GB: counted %llu kernel %llu\n", info.min_ram_budget / 1e9,
           (unsigned long long)counted, (unsigned long long)kernel);
}
