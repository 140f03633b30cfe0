/* cmd_bench_ui.c — `remora bench-ui`: measures the terminal UI's own CPU
 * cost per streamed token (see ui/curses/bench.c). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include "commands.h"
#include "opts.h"
#include "ui/main.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: remora bench-ui [--tokens N] [--rate R] [--size COLSxROWS] [--panel-hz N]\n"
        "\n"
        "Streams N synthetic tokens at R tokens/s through the chat UI on a\n"
        "pseudo-terminal and reports the UI thread's CPU time per token, frames/s\n"
        "and the bytes written to the terminal per second.\n"
        "\n"
        "options:\n"
        "  --tokens N            tokens to stream (default 500)\n"
        "  --rate R              tokens per second (default 50)\n"
        "  --size COLSxROWS      terminal size (default 160x48)\n"
        "  --panel-hz N          panel redraws per second at most (default 10); N in [1, 60]\n"
        "  --help                print this help and exit\n");
}

int cmd_bench_ui(int argc, char **argv)
{
    static const struct option opts[] = {
        { "tokens", required_argument, 0, 't' },
        { "rate", required_argument, 0, 'r' },
        { "size", required_argument, 0, 's' },
        { "panel-hz", required_argument, 0, 'p' },
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    ui_bench_opts o = { .tokens = 500, .rate = 50, .rows = 48, .cols = 160 };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = opts_next("bench-ui", argc, argv, opts, NULL)) >= 0) {
        switch (c) {
        case 't': if (opts_int_arg("bench-ui", "tokens", optarg, 1, INT_MAX, &o.tokens)) return 2; break;
        case 'r': if (opts_real_arg("bench-ui", "rate", optarg, 0, 1e6, 1, &o.rate)) return 2; break;
        case 's':
            if (sscanf(optarg, "%dx%d", &o.cols, &o.rows) != 2 || o.cols < 1 || o.rows < 1 ||
                o.cols > 1000 || o.rows > 1000) {
                fprintf(stderr, "remora bench-ui: bad --size (want COLSxROWS)\n");
                return 2;
            }
            break;
        case 'p': if (opts_real_arg("bench-ui", "panel-hz", optarg, 1, 60, 0, &o.panel_hz)) return 2; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    return ui_bench_run(&o, stdout);
}
