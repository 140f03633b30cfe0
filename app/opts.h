/* opts.h — the options that `remora run`, `chat`, `bench` and `eval` share,
 * parsed by one table with one rule per option (see opts.c for the table).
 *
 * A value is taken whole or refused: numbers are decimal, finite and in the
 * option's range, integers are read as integers (with overflow detection),
 * words are one of a fixed list, paths are not empty. A refused value prints
 * "remora CMD: --OPTION VALUE: must be ..." with the accepted range, and the
 * command exits 2. Each command picks the shared options it accepts (a mask
 * of OPT_BIT()s) and keeps its own for the rest; opts_next reads both
 * (getopt_long over opts_longopts()'s table). The same number rules serve
 * the commands' own numeric options (opts_int_arg, opts_real_arg).
 */
#ifndef REMORA_APP_OPTS_H
#define REMORA_APP_OPTS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "engine.h"

enum {
    OPT_MODEL,          /* --model DIR */
    OPT_THINK,          /* --think */
    OPT_NO_THINK,       /* --no-think */
    OPT_EFFORT,         /* --thinking-effort low|medium|high|max */
    OPT_MAX_NEW,        /* --max-new N */
    OPT_TEMPERATURE,    /* --temperature T */
    OPT_TOP_P,          /* --top-p P */
    OPT_SEED,           /* --seed S */
    OPT_SPEC,           /* --spec auto|on|off */
    OPT_THREADS,        /* --threads N */
    OPT_IO_THREADS,     /* --io-threads N */
    OPT_RAM,            /* --ram GB */
    OPT_TRACE,          /* --trace FILE */
    OPT_PREFILL_CHUNK,  /* --prefill-chunk N */
    OPT_MAX_CTX,        /* --max-ctx N */
    OPT_ENDPOINT,       /* --endpoint URL */
    OPT_ENDPOINT_MODEL, /* --endpoint-model NAME */
    OPT_API_KEY_ENV,    /* --api-key-env VAR */
    OPT_ENDPOINT_TIMEOUT, /* --endpoint-timeout S */
    OPT_PREFIX_CACHE,   /* --prefix-cache GB */
    OPT_PREFIX_RAM,     /* --prefix-ram GB */
    OPT_GPU,            /* --gpu auto|off|N */
    OPT_VRAM,           /* --vram GB */
    OPT_COUNT
};
#define OPT_BIT(id) (1u << (id))

/* The generation and model options that run and chat share (serve and
 * bench take sets of their own). */
#define OPTS_GEN_MASK (OPT_BIT(OPT_THINK) | OPT_BIT(OPT_NO_THINK) | OPT_BIT(OPT_EFFORT) | OPT_BIT(OPT_MAX_NEW) | \
                       OPT_BIT(OPT_TEMPERATURE) | OPT_BIT(OPT_TOP_P) | OPT_BIT(OPT_SEED) | OPT_BIT(OPT_SPEC))
#define OPTS_OPEN_MASK (OPT_BIT(OPT_THREADS) | OPT_BIT(OPT_RAM) | OPT_BIT(OPT_TRACE) | OPT_BIT(OPT_PREFILL_CHUNK) | \
                        OPT_BIT(OPT_MAX_CTX) | OPT_BIT(OPT_PREFIX_CACHE) | OPT_BIT(OPT_PREFIX_RAM) | OPT_BIT(OPT_GPU) | \
                        OPT_BIT(OPT_VRAM))

/* getopt_long returns OPT_CODE + id for a shared option; commands keep
 * their own codes below it. */
#define OPT_CODE 0x1000

/* Where the shared options land. The caller sets the command's defaults
 * before parsing; only options on the command line change them. */
typedef struct opts_shared {
    const char  *model;
    /* an OpenAI-compatible server instead of a model (run and chat) */
    const char  *endpoint, *endpoint_model, *api_key_env;
    double       endpoint_timeout;
    rm_open_opts open;          /* threads, io_threads, ram_gb, trace_path, prefill_chunk, prefix_cache_gb, prefix_ram_gb, gpu, vram_gb */
    rm_gen_opts  gen;           /* max_new, temperature, top_p, seed, think, thinking_effort, spec */
    unsigned     given;         /* OPT_BIT of each shared option seen */
} opts_shared;

/* The command's own long options (ending with a zero entry) followed by the
 * shared options of mask, as one getopt_long table. The table lives until
 * the next call. */
const struct option *opts_longopts(const struct option *own, unsigned mask);

/* Applies shared option `id` with its argument (NULL for the flags) to o.
 * Returns 0, or -1 with "--OPTION VALUE: must be ..." in msg. */
int opts_parse(int id, const char *arg, opts_shared *o, char *msg, size_t msglen);

/* For getopt_long's result c: 1 when c is a shared option and its value
 * was taken, 0 when c is not a shared option, -1 when the value was refused
 * (the message is on stderr, prefixed "remora CMD: "). */
int opts_take(const char *cmd, int c, const char *arg, opts_shared *o);

/* The next option of argv that is the command's own (its getopt_long
 * code, '?' for an unknown one), taking the shared options of the table
 * (opts_longopts) into so on the way (so NULL: the command has none): -1
 * after the last option, OPTS_REFUSED when a shared option's value was
 * refused (the message is on stderr, prefixed "remora CMD: "; the command
 * exits 2). Every command reads its options through it. */
#define OPTS_REFUSED (-2)
int opts_next(const char *cmd, int argc, char **argv, const struct option *opts, opts_shared *so);

/* Prints the help lines of the shared options of mask, in table order:
 * name, argument, what it does and its accepted range. text[id], when
 * given and not NULL, replaces an option's description (a command's own
 * default, such as --max-new's). */
void opts_help(FILE *f, unsigned mask, const char *const *text);
/* One help line of a command's own option, in the same columns. */
void opts_help_line(FILE *f, const char *opt, const char *what);

/* The endpoint options as a source's: checks that they come with
 * --endpoint and without a local model's options, and takes the API key
 * from the environment variable --api-key-env names (never from the
 * command line, where other users see it). 0, or the exit status after
 * saying why on stderr. */
#define OPTS_ENDPOINT_MASK (OPT_BIT(OPT_ENDPOINT) | OPT_BIT(OPT_ENDPOINT_MODEL) | OPT_BIT(OPT_API_KEY_ENV) | \
                            OPT_BIT(OPT_ENDPOINT_TIMEOUT))
struct ui_endpoint_opts;
int opts_endpoint(const char *cmd, const opts_shared *o, struct ui_endpoint_opts *e);

/* The number rules, for the commands' own options as well: the whole of s,
 * decimal, finite, lo <= v <= hi (lo < v when lo_open). Return 0, or -1
 * with "--NAME S: must be ..." in msg. */
int opts_parse_int(const char *name, const char *s, long long lo, long long hi, long long *out,
                   char *msg, size_t msglen);
int opts_parse_u64(const char *name, const char *s, uint64_t *out, char *msg, size_t msglen);
int opts_parse_real(const char *name, const char *s, double lo, double hi, int lo_open, double *out,
                    char *msg, size_t msglen);
/* The same, printing "remora CMD: ..." on stderr when the value is refused. */
int opts_int_arg(const char *cmd, const char *name, const char *s, long long lo, long long hi, int *out);
int opts_real_arg(const char *cmd, const char *name, const char *s, double lo, double hi, int lo_open,
                  double *out);
int opts_u64_arg(const char *cmd, const char *name, const char *s, uint64_t *out);

/* The program as it was run (main's argv[0]: "remora" from the PATH,
 * "./build/remora" after `make run`; "remora" until set), for the commands
 * a message tells the user to type next. */
void opts_set_self(const char *argv0);
const char *opts_self(void);

#endif
