/* main.c — entry point of the remora binary: picks the subcommand and hands
 * it the rest of the command line. With no subcommand it opens the chat. */
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "opts.h"
#include "version.h"

static const struct command {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    { "chat",          cmd_chat,          "full-screen chat (the default command)" },
    { "run",           cmd_run,           "generate from a prompt, streaming to stdout" },
    { "serve",         cmd_serve,         "serve the OpenAI API over HTTP (chat and completions)" },
    { "setup",         cmd_setup,         "make a model directory from a URL (full or stream mode)" },
    { "fetch",         cmd_fetch,         "download the missing experts of a stream-mode model" },
    { "synth",         cmd_synth,         "write a random-weight K3-width checkpoint" },
    { "forecast",      cmd_forecast,      "predict how fast Kimi K3 would run here, before the download" },
    { "bench",         cmd_bench,         "measure decode speed, bytes read and the roofline" },
    { "eval",            cmd_eval,            "score a model: NLL and exact-match accuracy per task" },
    { "logits",        cmd_logits,        "write the logits (and routes) of a token-id file" },
    { "bench-kernels", cmd_bench_kernels, "measure matrix-vector kernel throughput" },
    { "tokenize",      cmd_tokenize,      "encode JSON strings or a chat to token ids" },
    { "bench-tokenizer", cmd_bench_tokenizer, "measure tokenizer encoding speed (MB/s)" },
    { "bench-ui",      cmd_bench_ui,      "measure the chat UI's CPU cost per streamed token" },
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "remora %s — chat with giant Mixture-of-Experts models on one machine\n\n"
               "usage: remora [COMMAND] [OPTIONS]\n       remora --version\n\ncommands:\n", REMORA_VERSION);
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-16s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nRun 'remora COMMAND --help' for the options of one command.\n");
}

int main(int argc, char **argv)
{
    if (argc > 0 && argv[0] && *argv[0]) opts_set_self(argv[0]);
    const char *name = argc > 1 ? argv[1] : "chat";
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
        printf("remora %s\n", REMORA_VERSION);
        return 0;
    }
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, commands[i].name))
            return commands[i].fn(argc > 1 ? argc - 1 : 1, argc > 1 ? argv + 1 : argv);
    fprintf(stderr, "remora: unknown command '%s'\n", name);
    usage(stderr);
    return 2;
}
