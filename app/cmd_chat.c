/* cmd_chat.c — `remora chat`: the full-screen chat (also what `remora` with
 * no arguments runs). Parses the options and hands over to ui/main.h. The
 * generation options have the names and defaults of `remora run`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "ui/main.h"
#include "ui/keys.h"

#define DEFAULT_MODEL "assets/model"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: remora chat [--model DIR | --synthetic [--synthetic-rate R]] [OPTIONS]\n"
        "\n"
        "Full-screen chat: answer and reasoning side by side, live engine panels.\n"
        "\n"
        "options:\n"
        "  --model DIR           model directory (default " DEFAULT_MODEL ")\n"
        "  --synthetic           demo and testing mode: a synthetic source, no model\n"
        "  --synthetic-rate R    tokens per second of the synthetic source (default 20)\n"
        "  --system TEXT         system prompt\n"
        "  --think               open the reasoning channel (the default)\n"
        "  --no-think            start with thinking off (/think on turns it back on)\n"
        "  --thinking-effort E   add K3's thinking-effort note (low, medium, high, max)\n"
        "  --max-new N           stop a reply after N tokens (default: end of message)\n"
        "  --temperature T       sampling temperature; 0 = greedy (default 0)\n"
        "  --top-p P             nucleus sampling mass (default 1 = off)\n"
        "  --seed S              random seed for sampling (default 0)\n"
        "  --spec MODE           n-gram speculation: auto (default), on or off\n"
        "  --threads N           compute threads (default: all cores)\n"
        "  --ram GB              RAM budget for weights (default: 60%% of available memory)\n"
        "  --trace FILE          write a JSONL trace: per-token figures and router choices\n"
        "  --mouse               scroll with the mouse wheel (Shift+drag still selects)\n"
        "  --keys                print the key bindings and exit\n"
        "  --help                print this help and exit\n");
}

static int number(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || v < lo || v > hi) {
        fprintf(stderr, "remora chat: %s wants a number in [%g, %g], not '%s'\n", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cmd_chat(int argc, char **argv)
{
    enum { O_MODEL = 256, O_SYNTH, O_RATE, O_SYSTEM, O_THINK, O_NOTHINK, O_EFFORT, O_MAXNEW, O_TEMP,
           O_TOPP, O_SEED, O_SPEC, O_THREADS, O_RAM, O_TRACE, O_MOUSE, O_KEYS, O_HELP };
    static const struct option opts[] = {
        { "model", required_argument, 0, O_MODEL },
        { "synthetic", no_argument, 0, O_SYNTH },
        { "synthetic-rate", required_argument, 0, O_RATE },
        { "system", required_argument, 0, O_SYSTEM },
        { "think", no_argument, 0, O_THINK },
        { "no-think", no_argument, 0, O_NOTHINK },
        { "thinking-effort", required_argument, 0, O_EFFORT },
        { "max-new", required_argument, 0, O_MAXNEW },
        { "temperature", required_argument, 0, O_TEMP },
        { "top-p", required_argument, 0, O_TOPP },
        { "seed", required_argument, 0, O_SEED },
        { "spec", required_argument, 0, O_SPEC },
        { "threads", required_argument, 0, O_THREADS },
        { "ram", required_argument, 0, O_RAM },
        { "trace", required_argument, 0, O_TRACE },
        { "mouse", no_argument, 0, O_MOUSE },
        { "keys", no_argument, 0, O_KEYS },
        { "help", no_argument, 0, O_HELP },
        { 0, 0, 0, 0 },
    };
    ui_main_opts o = {
        .model_dir = DEFAULT_MODEL,
        .synth = { .rate = 20, .reasoning_tokens = 120, .answer_tokens = 240 },
        .gen = { .think = 1, .temperature = 0, .top_p = 1, .spec = RM_SPEC_AUTO },
    };
    double v;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_MODEL: o.model_dir = optarg; break;
        case O_SYNTH: o.synthetic = 1; break;
        case O_RATE:
            if (number("--synthetic-rate", optarg, 0.1, 1e6, &v)) return 2;
            o.synth.rate = v;
            break;
        case O_SYSTEM: o.system = optarg; break;
        case O_THINK: o.gen.think = 1; break;
        case O_NOTHINK: o.gen.think = 0; break;
        case O_EFFORT:
            if (strcmp(optarg, "low") && strcmp(optarg, "medium") && strcmp(optarg, "high") &&
                strcmp(optarg, "max")) {
                fprintf(stderr, "remora chat: --thinking-effort wants low, medium, high or max\n");
                return 2;
            }
            o.gen.thinking_effort = optarg;
            break;
        case O_MAXNEW:
            if (number("--max-new", optarg, 1, 1e9, &v)) return 2;
            o.gen.max_new = (int)v;
            break;
        case O_TEMP:
            if (number("--temperature", optarg, 0, 10, &v)) return 2;
            o.gen.temperature = (float)v;
            break;
        case O_TOPP:
            if (number("--top-p", optarg, 0, 1, &v)) return 2;
            o.gen.top_p = (float)v;
            break;
        case O_SEED:
            if (number("--seed", optarg, 0, 1.8e19, &v)) return 2;
            o.gen.seed = (uint64_t)v;
            break;
        case O_SPEC:
            if (!strcmp(optarg, "auto")) o.gen.spec = RM_SPEC_AUTO;
            else if (!strcmp(optarg, "on")) o.gen.spec = RM_SPEC_ON;
            else if (!strcmp(optarg, "off")) o.gen.spec = RM_SPEC_OFF;
            else { fprintf(stderr, "remora chat: --spec wants auto, on or off\n"); return 2; }
            break;
        case O_THREADS:
            if (number("--threads", optarg, 0, 4096, &v)) return 2;
            o.open.threads = (int)v;
            break;
        case O_RAM:
            if (number("--ram", optarg, 0.001, 1e6, &v)) return 2;
            o.open.ram_gb = v;
            break;
        case O_TRACE: o.open.trace_path = optarg; break;
        case O_MOUSE: o.mouse = 1; break;
        case O_KEYS: ui_keys_print(stdout); return 0;
        case O_HELP: usage(stdout); return 0;
        default:
            fprintf(stderr, "remora chat: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "remora chat: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    return ui_main_run(&o);
}
