/* test_config.c — format/config.c: both fixture configs read as their
 * family (nested K3, flat Kimi-Linear) with every switch set as in the
 * file, and each unsupported or malformed value refused naming config.json
 * and the key. */
#include <string.h>
#include "tests/unit/test.h"
#include "format/config.h"

static void expect_config_error(const char *json, const char *want)
{
    rm_config c;
    rm_err err = { "" };
    CHECKF(config_parse(json, strlen(json), "config.json", &c, &err) == -1, "accepted config (%s)", want);
    CHECKF(strstr(err.msg, want) && strstr(err.msg, "config.json"), "message '%s' lacks '%s'", err.msg, want);
}

TEST(config_reads_both_families)
{
    rm_config c;
    rm_err err;
    REQUIRE(fixture_path("k3-tiny"));
    CHECK(config_load(fixture_path("k3-tiny"), &c, &err) == 0);
    CHECK(!strcmp(c.family, "kimi_k3") && c.num_layers == 8 && c.attn_res_block == 2);
    CHECK(!c.is_kda[3] && !c.is_kda[6] && !c.is_kda[7] && c.is_kda[0] && c.is_kda[4]);
    CHECK(!c.is_moe[0] && c.is_moe[1] && c.experts_mxfp4 && c.latent == 128 && c.act == ACT_SITU);
    CHECK(c.kda_has_lower_bound && c.kda_lower_bound == -5.0 && c.kda_full_rank_gate);
    CHECK(config_load(fixture_path("kl-tiny"), &c, &err) == 0);
    CHECK(!strcmp(c.family, "kimi_linear") && c.num_layers == 7 && !c.attn_res_block && !c.experts_mxfp4);
    CHECK(c.q_lora_rank == 0 && c.act == ACT_SILU && !c.kda_has_lower_bound && c.routed_scaling > 2.4);
}

TEST(config_rejects_unsupported)
{
    char *base = t_read_file(fixture_path("kl-tiny/config.json"), NULL);
    REQUIRE(base);
    struct { const char *from, *to, *want; } cases[] = {
        { "\"model_type\": \"kimi_linear\"", "\"model_type\": \"llama\"", "unsupported model_type \"llama\"" },
        { "\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"", "\"hidden_act\" \"gelu\" is not supported" },
        { "\"mla_use_nope\": true", "\"mla_use_nope\": false", "rotary embeddings are not supported" },
        { "\"moe_router_activation_func\": \"sigmoid\"", "\"moe_router_activation_func\": \"softmax\"", "sigmoid only" },
        { "\"num_experts_per_token\": 4", "\"num_experts_per_token\": 40", "out of range" },
        { "\"hidden_size\": 128", "\"hidden_size\": \"big\"", "\"hidden_size\" must be an integer" },
        { "\"num_hidden_layers\": 7", "\"num_hidden_layers\": 9", "in neither kda_layers nor full_attn_layers" },
        { "\"vocab_size\": 3072", "\"vocab_size_x\": 3072", "missing key \"vocab_size\"" },
        { "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 1", "num_key_value_heads" },
        /* found by fuzz_config: a huge float was cast to an integer (undefined behaviour) */
        { "\"hidden_size\": 128", "\"hidden_size\": 12e72", "\"hidden_size\" must be an integer" },
        { "\"hidden_size\": 128", "\"hidden_size\": -1e300", "\"hidden_size\" must be an integer" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *at = strstr(base, cases[i].from);
        CHECKF(at != NULL, "fixture config lacks %s", cases[i].from);
        if (!at) continue;
        char buf[8192];
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - base), base, cases[i].to, at + strlen(cases[i].from));
        expect_config_error(buf, cases[i].want);
    }
    expect_config_error("{\"model_type\": ", "not valid JSON");
    expect_config_error("[]", "not a JSON object");
    expect_config_error("{\"model_type\": \"kimi_k3\"}", "text_config");
    free(base);
}
