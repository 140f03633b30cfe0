/* opts.c — the shared options of run, chat, bench and eval (see opts.h).
 *
 * One row per option: its name, its argument, its rule and its help text.
 * Where the commands used to differ, the row takes the stricter rule, so
 * no value one of them refused is accepted now: --threads 1..4096 (run
 * took any count, chat also 0), --top-p in (0, 1] (chat took 0, which meant
 * "off"), --temperature in [0, 10] (run took any), --ram in [0.001, 1e6] GB,
 * --seed a whole 64-bit integer (chat went through a double), --max-new
 * 1..1e9 read as an integer (run cut 99999999999 silently), and
 * --thinking-effort one of the four levels (run took any word). Numbers
 * must be finite: nan, inf and 1e300 are refused with the range. The
 * default of --max-new stays each command's own (run 512, chat: end of
 * message, eval 256).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "ui/source.h"

enum { K_PATH, K_FLAG, K_WORD, K_INT, K_U64, K_REAL };

static const struct rule {
    const char *name, *arg;
    int         kind;
    double      lo, hi;
    int         lo_open;
    const char *words[5];           /* K_WORD, NULL-terminated */
    const char *what;
} rules[OPT_COUNT] = {
    [OPT_MODEL]       = { "model", "DIR", K_PATH, .what = "model directory (config.json, safetensors, tokenizer)" },
    [OPT_THINK]       = { "think", NULL, K_FLAG, .what = "open the reasoning channel (the default)" },
    [OPT_NO_THINK]    = { "no-think", NULL, K_FLAG, .what = "do not open the reasoning channel" },
    [OPT_EFFORT]      = { "thinking-effort", "E", K_WORD, .words = { "low", "medium", "high", "max" },
                          .what = "add K3's thinking-effort note" },
    [OPT_MAX_NEW]     = { "max-new", "N", K_INT, 1, 1e9, .what = "stop after N new tokens" },
    [OPT_TEMPERATURE] = { "temperature", "T", K_REAL, 0, 10, .what = "sampling temperature; 0 = greedy (default 0)" },
    [OPT_TOP_P]       = { "top-p", "P", K_REAL, 0, 1, 1, .what = "nucleus sampling mass (default 1 = off)" },
    [OPT_SEED]        = { "seed", "S", K_U64, .what = "random seed for sampling (default 0)" },
    [OPT_SPEC]        = { "spec", "MODE", K_WORD, .words = { "auto", "on", "off" },
                          .what = "n-gram speculation (default auto); greedy only,\nnever changes the output" },
    [OPT_THREADS]     = { "threads", "N", K_INT, 1, 4096, .what = "compute threads (default: all cores)" },
    [OPT_IO_THREADS]  = { "io-threads", "N", K_INT, 1, 256, .what = "expert reader threads = queue depth (default 8)" },
    [OPT_RAM]         = { "ram", "GB", K_REAL, 0.001, 1e6,
                          .what = "RAM budget for weights (default: 60% of available memory)" },
    [OPT_TRACE]       = { "trace", "FILE", K_PATH, .what = "write a JSONL trace: per-token figures and router choices" },
    [OPT_PREFILL_CHUNK] = { "prefill-chunk", "N", K_INT, 1, 1048576,
                          .what = "prompt tokens per layer-major pass (default: the planner's,\nfrom the RAM budget)" },
    [OPT_MAX_CTX]     = { "max-ctx", "N", K_INT, 1, 1e9,
                          .what = "refuse a context of more than N tokens (default: the\nmodel's max_position_embeddings)" },
    [OPT_ENDPOINT]    = { "endpoint", "URL", K_PATH,
                          .what = "an OpenAI-compatible server instead of a model: its API's\nbase URL (http://HOST:PORT/v1)" },
    [OPT_ENDPOINT_MODEL] = { "endpoint-model", "NAME", K_PATH,
                          .what = "the endpoint's model (default: the first it lists)" },
    [OPT_API_KEY_ENV] = { "api-key-env", "VAR", K_PATH,
                          .what = "send the API key held in environment variable VAR, only to\nthe endpoint's host over HTTPS or to a loopback address" },
    [OPT_ENDPOINT_TIMEOUT] = { "endpoint-timeout", "S", K_REAL, 0.1, 86400,
                          .what = "give a request up after S seconds without data (default 300)" },
    [OPT_PREFIX_CACHE] = { "prefix-cache", "GB", K_REAL, 0, 1e6,
                          .what = "size bound of the prefix cache of prompt beginnings\n"
                                  "(default $REMORA_PREFIX_CACHE_GB, else 4); 0 turns it off" },
    [OPT_PREFIX_RAM]  = { "prefix-ram", "GB", K_REAL, 0, 1e6,
                          .what = "its RAM tier: the most recent entries kept in memory (default\n"
                                  "$REMORA_PREFIX_RAM_GB, else 1, at most 1/8 of the RAM budget);\n0 turns it off" },
    [OPT_GPU]         = { "gpu", "auto|off|N", K_PATH,
                          .what = "where products run: auto (device 0 of a CUDA build, if any),\n"
                                  "off (the CPU), or CUDA device N (default auto)" },
    [OPT_VRAM]        = { "vram", "GB", K_REAL, 0.001, 1e6,
                          .what = "GPU memory for weights placed there (default: the card's\nfree memory less 10%, at least 2 GiB)" },
};

/* ---- the number rules -------------------------------------------------- */

static const char *shown(const char *s) { return *s ? s : "''"; }

int opts_parse_int(const char *name, const char *s, long long lo, long long hi, long long *out,
                   char *msg, size_t msglen)
{
    const char *d = s + (*s == '-' || *s == '+');
    int ok = *d && strspn(d, "0123456789") == strlen(d);
    char *end;
    errno = 0;
    long long v = ok ? strtoll(s, &end, 10) : 0;
    if (!ok || errno || *end || v < lo || v > hi) {
        snprintf(msg, msglen, "--%s %s: must be an integer in [%lld, %lld]", name, shown(s), lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int opts_parse_u64(const char *name, const char *s, uint64_t *out, char *msg, size_t msglen)
{
    int ok = *s && strspn(s, "0123456789") == strlen(s);
    char *end;
    errno = 0;
    unsigned long long v = ok ? strtoull(s, &end, 10) : 0;
    if (!ok || errno || *end) {
        snprintf(msg, msglen, "--%s %s: must be an integer in [0, %llu]", name, shown(s),
                 (unsigned long long)UINT64_MAX);
        return -1;
    }
    *out = v;
    return 0;
}

int opts_parse_real(const char *name, const char *s, double lo, double hi, int lo_open, double *out,
                    char *msg, size_t msglen)
{
    /* decimal only: no nan, inf, hex or blanks */
    int ok = *s && strspn(s, "0123456789.eE+-") == strlen(s) && strpbrk(s, "0123456789");
    char *end;
    errno = 0;
    double v = ok ? strtod(s, &end) : NAN;
    if (!ok || *end || !isfinite(v) || (lo_open ? v <= lo : v < lo) || v > hi) {
        snprintf(msg, msglen, "--%s %s: must be in %c%.15g, %.15g]", name, shown(s), lo_open ? '(' : '[', lo, hi);
        return -1;
    }
    *out = v == 0 ? 0 : v;      /* -0 is 0 */
    return 0;
}

int opts_int_arg(const char *cmd, const char *name, const char *s, long long lo, long long hi, int *out)
{
    char msg[256];
    long long v;
    if (opts_parse_int(name, s, lo, hi, &v, msg, sizeof msg)) {
        fprintf(stderr, "remora %s: %s\n", cmd, msg);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int opts_real_arg(const char *cmd, const char *name, const char *s, double lo, double hi, int lo_open,
                  double *out)
{
    char msg[256];
    if (opts_parse_real(name, s, lo, hi, lo_open, out, msg, sizeof msg)) {
        fprintf(stderr, "remora %s: %s\n", cmd, msg);
        return -1;
    }
    return 0;
}

int opts_u64_arg(const char *cmd, const char *name, const char *s, uint64_t *out)
{
    char msg[256];
    if (opts_parse_u64(name, s, out, msg, sizeof msg)) {
        fprintf(stderr, "remora %s: %s\n", cmd, msg);
        return -1;
    }
    return 0;
}

/* ---- the shared options ------------------------------------------------ */

/* "a, b or c" */
static void word_list(const struct rule *r, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; r->words[i] && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i == 0 ? "" : r->words[i + 1] ? ", " : " or ",
                                r->words[i]);
}

static int word_index(const struct rule *r, const char *s)
{
    for (int i = 0; r->words[i]; i++)
        if (!strcmp(r->words[i], s)) return i;
    return -1;
}

int opts_parse(int id, const char *arg, opts_shared *o, char *msg, size_t msglen)
{
    if (id < 0 || id >= OPT_COUNT) { snprintf(msg, msglen, "unknown option %d", id); return -1; }
    const struct rule *r = &rules[id];
    long long i = 0;
    double d = 0;
    if (r->kind == K_PATH && !*arg) {
        snprintf(msg, msglen, "--%s '': must not be empty", r->name);
        return -1;
    }
    if (r->kind == K_WORD && word_index(r, arg) < 0) {
        char list[128];
        word_list(r, list, sizeof list);
        snprintf(msg, msglen, "--%s %s: must be %s", r->name, shown(arg), list);
        return -1;
    }
    if (r->kind == K_INT && opts_parse_int(r->name, arg, (long long)r->lo, (long long)r->hi, &i, msg, msglen))
        return -1;
    if (r->kind == K_REAL && opts_parse_real(r->name, arg, r->lo, r->hi, r->lo_open, &d, msg, msglen))
        return -1;
    switch (id) {
    case OPT_MODEL:       o->model = arg; break;
    case OPT_THINK:       o->gen.think = 1; break;
    case OPT_NO_THINK:    o->gen.think = 0; break;
    case OPT_EFFORT:      o->gen.thinking_effort = arg; break;
    case OPT_MAX_NEW:     o->gen.max_new = (int)i; break;
    case OPT_TEMPERATURE: o->gen.temperature = (float)d; break;
    case OPT_TOP_P:       o->gen.top_p = (float)d; break;
    case OPT_SEED:        if (opts_parse_u64(r->name, arg, &o->gen.seed, msg, msglen)) return -1; break;
    case OPT_SPEC: {
        static const int modes[] = { RM_SPEC_AUTO, RM_SPEC_ON, RM_SPEC_OFF };
        o->gen.spec = modes[word_index(r, arg)];
        break;
    }
    case OPT_THREADS:     o->open.threads = (int)i; break;
    case OPT_IO_THREADS:  o->open.io_threads = (int)i; break;
    case OPT_RAM:         o->open.ram_gb = d; break;
    case OPT_TRACE:       o->open.trace_path = arg; break;
    case OPT_PREFILL_CHUNK: o->open.prefill_chunk = (int)i; break;
    case OPT_MAX_CTX:     o->open.max_ctx = (int)i; break;
    case OPT_ENDPOINT:    o->endpoint = arg; break;
    case OPT_ENDPOINT_MODEL: o->endpoint_model = arg; break;
    case OPT_API_KEY_ENV: o->api_key_env = arg; break;
    case OPT_ENDPOINT_TIMEOUT: o->endpoint_timeout = d; break;
    case OPT_PREFIX_CACHE: o->open.prefix_cache_gb = d > 0 ? d : -1; break;   /* 0 is "off" here, "default" there */
    case OPT_PREFIX_RAM:  o->open.prefix_ram_gb = d > 0 ? d : -1; break;
    case OPT_GPU:
        if (!strcmp(arg, "auto")) o->open.gpu = RM_GPU_AUTO;
        else if (!strcmp(arg, "off")) o->open.gpu = RM_GPU_OFF;
        else if (opts_parse_int(r->name, arg, 0, 255, &i, msg, msglen)) {
            snprintf(msg, msglen, "--gpu %s: must be auto, off or a device number in [0, 255]", shown(arg));
            return -1;
        } else { o->open.gpu = RM_GPU_DEVICE; o->open.gpu_device = (int)i; }
        break;
    case OPT_VRAM:        o->open.vram_gb = d; break;
    }
    o->given |= OPT_BIT(id);
    return 0;
}

int opts_take(const char *cmd, int c, const char *arg, opts_shared *o)
{
    if (c < OPT_CODE || c >= OPT_CODE + OPT_COUNT) return 0;
    char msg[256];
    if (opts_parse(c - OPT_CODE, arg, o, msg, sizeof msg)) {
        fprintf(stderr, "remora %s: %s\n", cmd, msg);
        return -1;
    }
    return 1;
}

int opts_next(const char *cmd, int argc, char **argv, const struct option *opts, opts_shared *so)
{
    for (;;) {
        int c = getopt_long(argc, argv, "", opts, NULL);
        if (c == -1) return -1;
        int taken = so ? opts_take(cmd, c, optarg, so) : 0;
        if (taken < 0) return OPTS_REFUSED;
        if (!taken) return c;
    }
}

const struct option *opts_longopts(const struct option *own, unsigned mask)
{
    static struct option table[64];
    int n = 0;
    for (; own && own->name && n < 64 - OPT_COUNT - 1; own++) table[n++] = *own;
    for (int id = 0; id < OPT_COUNT; id++)
        if (mask & OPT_BIT(id))
            table[n++] = (struct option){ rules[id].name, rules[id].arg ? required_argument : no_argument, NULL,
                                          OPT_CODE + id };
    table[n] = (struct option){ 0, 0, 0, 0 };
    return table;
}

/* ---- the endpoint -------------------------------------------------------- */

int opts_endpoint(const char *cmd, const opts_shared *o, struct ui_endpoint_opts *e)
{
    static const int local[] = { OPT_MODEL, OPT_THREADS, OPT_IO_THREADS, OPT_RAM, OPT_TRACE, OPT_PREFILL_CHUNK,
                                 OPT_MAX_CTX, OPT_SPEC, OPT_PREFIX_CACHE, OPT_PREFIX_RAM, OPT_GPU,
                                 OPT_VRAM };
    memset(e, 0, sizeof *e);
    if (!o->endpoint) {
        for (int id = OPT_ENDPOINT_MODEL; id <= OPT_ENDPOINT_TIMEOUT; id++)
            if (o->given & OPT_BIT(id)) {
                fprintf(stderr, "remora %s: --%s is an option of --endpoint URL\n", cmd, rules[id].name);
                return 2;
            }
        return 0;
    }
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
        if (o->given & OPT_BIT(local[i])) {
            fprintf(stderr, "remora %s: --%s is for a local model, not with --endpoint (the server has its own)\n",
                    cmd, rules[local[i]].name);
            return 2;
        }
    e->url = o->endpoint;
    e->model = o->endpoint_model;
    e->timeout = o->endpoint_timeout;
    if (o->api_key_env) {
        const char *k = getenv(o->api_key_env);
        if (!k || !*k) {
            fprintf(stderr, "remora %s: --api-key-env %s: the environment variable is not set or empty\n", cmd,
                    o->api_key_env);
            return 2;
        }
        if (strpbrk(k, "\r\n")) {
            fprintf(stderr, "remora %s: --api-key-env %s: the key holds a line break\n", cmd, o->api_key_env);
            return 2;
        }
        e->api_key = k;
    }
    return 0;
}

/* ---- help -------------------------------------------------------------- */

#define HELP_COL 23     /* where descriptions start */
#define HELP_WIDTH 79

/* Prints what (lines split at '\n') from HELP_COL on; the first line goes
 * after `lead`, which ends at or before HELP_COL - 1. */
static void help_text(FILE *f, const char *lead, const char *what)
{
    fprintf(f, "  %-*s ", HELP_COL - 3, lead);
    if ((int)strlen(lead) > HELP_COL - 3) fprintf(f, "\n%*s", HELP_COL, "");
    for (const char *p = what; *p;) {
        size_t n = strcspn(p, "\n");
        fprintf(f, "%.*s\n", (int)n, p);
        p += n;
        if (*p) { p++; fprintf(f, "%*s", HELP_COL, ""); }
    }
}

void opts_help_line(FILE *f, const char *opt, const char *what) { help_text(f, opt, what); }

void opts_help(FILE *f, unsigned mask, const char *const *text)
{
    for (int id = 0; id < OPT_COUNT; id++) {
        if (!(mask & OPT_BIT(id))) continue;
        const struct rule *r = &rules[id];
        char lead[64], range[160] = "", what[512];
        snprintf(lead, sizeof lead, "--%s%s%s", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
        if (r->kind == K_INT)
            snprintf(range, sizeof range, "%s in [%.0f, %.0f]", r->arg, r->lo, r->hi);
        else if (r->kind == K_U64)
            snprintf(range, sizeof range, "%s in [0, %llu]", r->arg, (unsigned long long)UINT64_MAX);
        else if (r->kind == K_REAL)
            snprintf(range, sizeof range, "%s in %c%.15g, %.15g]", r->arg, r->lo_open ? '(' : '[', r->lo, r->hi);
        else if (r->kind == K_WORD) {
            char list[128];
            word_list(r, list, sizeof list);
            snprintf(range, sizeof range, "%s: %s", r->arg, list);
        }
        const char *desc = text && text[id] ? text[id] : r->what;
        const char *last = strrchr(desc, '\n');
        size_t last_len = strlen(last ? last + 1 : desc);
        if (!*range) snprintf(what, sizeof what, "%s", desc);
        else if (HELP_COL + last_len + 2 + strlen(range) <= HELP_WIDTH) snprintf(what, sizeof what, "%s; %s", desc, range);
        else snprintf(what, sizeof what, "%s;\n%s", desc, range);
        help_text(f, lead, what);
    }
}

static const char *self = "remora";

void opts_set_self(const char *argv0) { self = argv0; }

const char *opts_self(void) { return self; }
