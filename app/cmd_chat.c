/* cmd_chat.c — `remora chat`: the full-screen chat (also what `remora` with
 * no arguments runs). Parses the options and hands over to ui/main.h. The
 * generation options are those of `remora run` with the same rules
 * (app/opts.c), except that a reply runs to the end of the message unless
 * --max-new is given. --resume takes an optional FILE, as a separate
 * argument (getopt's optional arguments need --resume=FILE). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "model_path.h"
#include "opts.h"
#include "ui/main.h"
#include "ui/keys.h"

/* Appends word to buf as the shell reads it: as it is when it holds only
 * characters no shell treats specially, else in single quotes. */
static void put_word(char *buf, size_t n, const char *word)
{
    size_t l = strlen(buf);
    int plain = *word != 0;
    for (const char *c = word; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+-:=,@%", *c)) plain = 0;
    if (plain) { snprintf(buf + l, n - l, " %s", word); return; }
    snprintf(buf + l, n - l, " '");
    for (const char *c = word; *c && (l = strlen(buf)) + 5 < n; c++)
        snprintf(buf + l, n - l, *c == '\'' ? "'\\''" : "%c", *c);
    l = strlen(buf);
    snprintf(buf + l, n - l, "'");
}

/* The command the quit note gives for going on from the autosave: this
 * program as it was run (so ./build/remora after `make run`), with the
 * source given on this command line (the default model needs none). */
static void resume_command(char *buf, size_t n, const char *model, int synthetic)
{
    buf[0] = 0;
    put_word(buf, n, opts_self());
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, " chat");
    if (synthetic) {
        l = strlen(buf);
        snprintf(buf + l, n - l, " --synthetic");
    } else if (model) {
        l = strlen(buf);
        snprintf(buf + l, n - l, " --model");
        put_word(buf, n, model);
    }
    l = strlen(buf);
    snprintf(buf + l, n - l, " --resume");
    memmove(buf, buf + 1, strlen(buf));     /* put_word's leading space */
}

static void usage(FILE *f)
{
    static const char *const text[OPT_COUNT] = {
        [OPT_MODEL] = "model directory (default: ./assets/model, else the installed\nmodel, PREFIX/share/remora/model)",
        [OPT_NO_THINK] = "start with thinking off (/think on turns it back on)",
        [OPT_MAX_NEW] = "stop a reply after N tokens (default: end of message)",
    };
    fprintf(f,
        "usage: remora chat [--model DIR | --endpoint URL |\n"
        "                    --synthetic [--synthetic-rate R] [--synthetic-prompt-rate P]] [OPTIONS]\n"
        "\n"
        "Full-screen chat: answer and reasoning side by side, live engine panels.\n"
        "\n"
        "options:\n");
    opts_help(f, OPT_BIT(OPT_MODEL), text);
    opts_help_line(f, "--synthetic", "demo and testing mode: a synthetic source, no model");
    opts_help_line(f, "--synthetic-rate R", "tokens per second of the synthetic source (default 20);\n"
                                            "R in [0.1, 1000000]");
    opts_help_line(f, "--synthetic-prompt-rate P", "prompt tokens per second of the synthetic source, with\n"
                                                   "progress (default: prompts take no time); P in [1, 10000000]");
    opts_help_line(f, "--system TEXT", "system prompt");
    opts_help_line(f, "--resume [FILE]", "go on with the last autosaved conversation, or with FILE\n"
                                         "(a transcript; its snapshot is used when it fits)");
    opts_help(f, OPTS_GEN_MASK | OPTS_OPEN_MASK | OPTS_ENDPOINT_MASK, text);
    opts_help_line(f, "--panel-hz N", "redraw the panels and the status line at most N times a\n"
                                      "second (default 10); N in [1, 60]");
    opts_help_line(f, "--mouse", "scroll with the mouse wheel (Shift+drag still selects)");
    opts_help_line(f, "--keys", "print the key bindings and exit");
    opts_help_line(f, "--help", "print this help and exit");
}

int cmd_chat(int argc, char **argv)
{
    enum { O_SYNTH = 256, O_RATE, O_PROMPT_RATE, O_SYSTEM, O_PANEL_HZ, O_RESUME, O_MOUSE, O_KEYS, O_HELP };
    static const struct option own[] = {
        { "synthetic", no_argument, 0, O_SYNTH },
        { "synthetic-rate", required_argument, 0, O_RATE },
        { "synthetic-prompt-rate", required_argument, 0, O_PROMPT_RATE },
        { "system", required_argument, 0, O_SYSTEM },
        { "panel-hz", required_argument, 0, O_PANEL_HZ },
        { "resume", no_argument, 0, O_RESUME },
        { "mouse", no_argument, 0, O_MOUSE },
        { "keys", no_argument, 0, O_KEYS },
        { "help", no_argument, 0, O_HELP },
        { 0, 0, 0, 0 },
    };
    const struct option *opts = opts_longopts(own, OPT_BIT(OPT_MODEL) | OPTS_GEN_MASK | OPTS_OPEN_MASK | OPTS_ENDPOINT_MASK);
    ui_main_opts o = {
        .synth = { .rate = 20, .reasoning_tokens = 120, .answer_tokens = 240 },
    };
    opts_shared so = {
        .gen = { .think = 1, .temperature = 0, .top_p = 1, .spec = RM_SPEC_AUTO },
    };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = opts_next("chat", argc, argv, opts, &so)) >= 0) {
        switch (c) {
        case O_SYNTH: o.synthetic = 1; break;
        case O_RATE:
            if (opts_real_arg("chat", "synthetic-rate", optarg, 0.1, 1e6, 0, &o.synth.rate)) return 2;
            break;
        case O_PROMPT_RATE:
            if (opts_real_arg("chat", "synthetic-prompt-rate", optarg, 1, 1e7, 0, &o.synth.prompt_rate)) return 2;
            break;
        case O_SYSTEM: o.system = optarg; break;
        case O_PANEL_HZ:
            if (opts_real_arg("chat", "panel-hz", optarg, 1, 60, 0, &o.panel_hz)) return 2;
            break;
        case O_RESUME: o.resume = ""; break;
        case O_MOUSE: o.mouse = 1; break;
        case O_KEYS: ui_keys_print(stdout); return 0;
        case O_HELP: usage(stdout); return 0;
        default:
            fprintf(stderr, "remora chat: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (c == OPTS_REFUSED) return 2;
    /* --resume FILE: the one argument that is not an option */
    if (o.resume && optind < argc) o.resume = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "remora chat: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    int rc = opts_endpoint("chat", &so, &o.endpoint);
    if (rc) return rc;
    if (o.synthetic && o.endpoint.url) {
        fprintf(stderr, "remora chat: --synthetic and --endpoint: one source at a time\n");
        return 2;
    }
    char dir[4400], resume_cmd[9000];
    resume_command(resume_cmd, sizeof resume_cmd, o.endpoint.url ? NULL : so.model, o.synthetic);
    o.resume_cmd = resume_cmd;
    if (!so.model && !o.synthetic && !o.endpoint.url) {
        if (model_path_default("chat", dir, sizeof dir)) { fprintf(stderr, "remora chat: %s\n", dir); return 2; }
        so.model = dir;
    }
    o.model_dir = so.model;
    o.open = so.open;
    o.gen = so.gen;
    return ui_main_run(&o);
}
