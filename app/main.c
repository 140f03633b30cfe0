/* main.c — entry point of the remora binary: picks the subcommand and hands
 * it the rest of the command line. With no subcommand it opens the chat. */
#include <stdio.h>
#include <string.h>
#include "commands.h"

static const struct command {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    { "chat",          cmd_chat,          "full-screen chat (the default command)" },
    { "logits",        cmd_logits,        "write the logits (and routes) of a token-id file" },
    { "bench-kernels", cmd_bench_kernels, "measure matrix-vector kernel throughput" },
    { "bench-ui",      cmd_bench_ui,      "measure the chat UI's CPU cost per streamed token" },
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: remora [COMMAND] [OPTIONS]\n\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nRun 'remora COMMAND --help' for the options of one command.\n");
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "chat";
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return 0;
    }
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, commands[i].name))
            return commands[i].fn(argc > 1 ? argc - 1 : 1, argc > 1 ? argv + 1 : argv);
    fprintf(stderr, "remora: unknown command '%s'\n", name);
    usage(stderr);
    return 2;
}
