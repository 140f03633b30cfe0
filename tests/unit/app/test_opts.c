/* test_opts.c — the shared option rules of app/opts.c: every option refuses
 * nan, inf, 1e300, a negative or overflowing value, an empty one and
 * trailing junk with a message naming the accepted range, and takes its
 * bounds and ordinary values exactly (a 64-bit seed as an integer). */
#include <math.h>
#include <string.h>
#include "tests/unit/test.h"
#include "app/opts.h"

static int parse(int id, const char *arg, opts_shared *o, char *msg)
{
    memset(o, 0, sizeof *o);
    msg[0] = 0;
    return opts_parse(id, arg, o, msg, 256);
}

/* Values every option with an argument refuses, with the message's tail. */
static const struct { int id; const char *tail; } ranged[] = {
    { OPT_MAX_NEW, "must be an integer in [1, 1000000000]" },
    { OPT_TEMPERATURE, "must be in [0, 10]" },
    { OPT_TOP_P, "must be in (0, 1]" },
    { OPT_SEED, "must be an integer in [0, 18446744073709551615]" },
    { OPT_THREADS, "must be an integer in [1, 4096]" },
    { OPT_IO_THREADS, "must be an integer in [1, 256]" },
    { OPT_RAM, "must be in [0.001, 1000000]" },
    { OPT_PREFIX_CACHE, "must be in [0, 1000000]" },
    { OPT_PREFIX_RAM, "must be in [0, 1000000]" },
    { OPT_SPEC, "must be auto, on or off" },
    { OPT_EFFORT, "must be low, medium, high or max" },
};
static const char *const refused[] = {
    "nan", "NaN", "inf", "-inf", "infinity", "1e300", "-1", "99999999999999999999999", "",
    "1x", "0.5 ", " 1", "0x10", "1,5", "--", "1e",
};

TEST(opts_refuse_bad_values_with_the_range)
{
    opts_shared o;
    char msg[256], want[256];
    for (size_t i = 0; i < sizeof ranged / sizeof ranged[0]; i++)
        for (size_t j = 0; j < sizeof refused / sizeof refused[0]; j++) {
            int rc = parse(ranged[i].id, refused[j], &o, msg);
            CHECKF(rc == -1, "option %d took '%s'", ranged[i].id, refused[j]);
            snprintf(want, sizeof want, " %s: %s", *refused[j] ? refused[j] : "''", ranged[i].tail);
            size_t n = strlen(msg), w = strlen(want);
            CHECKF(msg[0] == '-' && msg[1] == '-' && n > w && !strcmp(msg + n - w, want),
                   "option %d '%s': message '%s'", ranged[i].id, refused[j], msg);
            CHECK(o.given == 0);
        }
    CHECK(parse(OPT_MODEL, "", &o, msg) == -1 && !strcmp(msg, "--model '': must not be empty"));
    CHECK(parse(OPT_TRACE, "", &o, msg) == -1 && !strcmp(msg, "--trace '': must not be empty"));
    CHECK(parse(OPT_TOP_P, "1.5", &o, msg) == -1 && !strcmp(msg, "--top-p 1.5: must be in (0, 1]"));
}

TEST(opts_take_bounds_and_values)
{
    opts_shared o;
    char msg[256];
    /* --prefix-cache 0 is "off", which rm_open_opts spells as negative (0 there is the default) */
    CHECK(parse(OPT_PREFIX_CACHE, "0", &o, msg) == 0 && o.open.prefix_cache_gb < 0);
    CHECK(parse(OPT_PREFIX_CACHE, "2.5", &o, msg) == 0 && o.open.prefix_cache_gb == 2.5);
    CHECK(parse(OPT_PREFIX_RAM, "0", &o, msg) == 0 && o.open.prefix_ram_gb < 0);
    CHECK(parse(OPT_PREFIX_RAM, "0.004", &o, msg) == 0 && o.open.prefix_ram_gb == 0.004);
    CHECK(parse(OPT_PREFIX_RAM, "1G", &o, msg) == -1 && !strcmp(msg, "--prefix-ram 1G: must be in [0, 1000000]"));
    CHECK(parse(OPT_MAX_NEW, "1", &o, msg) == 0 && o.gen.max_new == 1 && o.given == OPT_BIT(OPT_MAX_NEW));
    CHECK(parse(OPT_MAX_NEW, "1000000000", &o, msg) == 0 && o.gen.max_new == 1000000000);
    CHECK(parse(OPT_MAX_NEW, "1000000001", &o, msg) == -1);
    CHECK(parse(OPT_MAX_NEW, "0", &o, msg) == -1);
    CHECK(parse(OPT_TEMPERATURE, "0", &o, msg) == 0 && o.gen.temperature == 0 && !signbit(o.gen.temperature));
    CHECK(parse(OPT_TEMPERATURE, "-0", &o, msg) == 0 && !signbit(o.gen.temperature));
    CHECK(parse(OPT_TEMPERATURE, "10", &o, msg) == 0 && o.gen.temperature == 10);
    CHECK(parse(OPT_TEMPERATURE, "0.7", &o, msg) == 0 && fabsf(o.gen.temperature - 0.7f) < 1e-7f);
    CHECK(parse(OPT_TEMPERATURE, "10.000001", &o, msg) == -1);
    CHECK(parse(OPT_TOP_P, "1", &o, msg) == 0 && o.gen.top_p == 1);
    CHECK(parse(OPT_TOP_P, "1e-3", &o, msg) == 0 && fabsf(o.gen.top_p - 1e-3f) < 1e-9f);
    CHECK(parse(OPT_TOP_P, "0", &o, msg) == -1);
    CHECK(parse(OPT_SEED, "0", &o, msg) == 0 && o.gen.seed == 0);
    /* above 2^53: a double would lose the low bits */
    CHECK(parse(OPT_SEED, "18446744073709551615", &o, msg) == 0 && o.gen.seed == UINT64_MAX);
    CHECK(parse(OPT_SEED, "9007199254740993", &o, msg) == 0 && o.gen.seed == 9007199254740993ull);
    CHECK(parse(OPT_SEED, "18446744073709551616", &o, msg) == -1);
    CHECK(parse(OPT_THREADS, "1", &o, msg) == 0 && o.open.threads == 1);
    CHECK(parse(OPT_THREADS, "4096", &o, msg) == 0 && o.open.threads == 4096);
    CHECK(parse(OPT_THREADS, "0", &o, msg) == -1);
    CHECK(parse(OPT_IO_THREADS, "256", &o, msg) == 0 && o.open.io_threads == 256);
    CHECK(parse(OPT_RAM, "0.001", &o, msg) == 0 && o.open.ram_gb == 0.001);
    CHECK(parse(OPT_RAM, "1e6", &o, msg) == 0 && o.open.ram_gb == 1e6);
    CHECK(parse(OPT_RAM, "3.5", &o, msg) == 0 && o.open.ram_gb == 3.5);
    CHECK(parse(OPT_RAM, "0.0009", &o, msg) == -1);
    CHECK(parse(OPT_SPEC, "on", &o, msg) == 0 && o.gen.spec == RM_SPEC_ON);
    CHECK(parse(OPT_SPEC, "off", &o, msg) == 0 && o.gen.spec == RM_SPEC_OFF);
    CHECK(parse(OPT_SPEC, "auto", &o, msg) == 0 && o.gen.spec == RM_SPEC_AUTO);
    CHECK(parse(OPT_SPEC, "ON", &o, msg) == -1);
    CHECK(parse(OPT_EFFORT, "max", &o, msg) == 0 && !strcmp(o.gen.thinking_effort, "max"));
    CHECK(parse(OPT_THINK, NULL, &o, msg) == 0 && o.gen.think == 1);
    o.gen.think = 1;
    CHECK(opts_parse(OPT_NO_THINK, NULL, &o, msg, sizeof msg) == 0 && o.gen.think == 0);
    CHECK(parse(OPT_MODEL, "dir", &o, msg) == 0 && !strcmp(o.model, "dir"));
    CHECK(parse(OPT_TRACE, "t.jsonl", &o, msg) == 0 && !strcmp(o.open.trace_path, "t.jsonl"));
}

TEST(opts_longopts_joins_own_and_shared)
{
    static const struct option own[] = { { "prompt", required_argument, 0, 256 }, { 0, 0, 0, 0 } };
    const struct option *t = opts_longopts(own, OPT_BIT(OPT_TOP_P) | OPT_BIT(OPT_THINK));
    REQUIRE(t[0].name && !strcmp(t[0].name, "prompt") && t[0].val == 256);
    REQUIRE(t[1].name && !strcmp(t[1].name, "think") && t[1].has_arg == no_argument && t[1].val == OPT_CODE + OPT_THINK);
    REQUIRE(t[2].name && !strcmp(t[2].name, "top-p") && t[2].has_arg == required_argument);
    CHECK(t[3].name == NULL);
    opts_shared o = { 0 };
    CHECK(opts_take("test", 256, "x", &o) == 0);
    CHECK(opts_take("test", OPT_CODE + OPT_TOP_P, "0.5", &o) == 1 && o.gen.top_p == 0.5f);
}
