/* cmd_synth.c — `remora synth`: writes a random-weight Kimi K3 checkpoint at
 * the real K3 widths, so a machine can be measured (`remora bench`) before a
 * 1.5 TB download. */
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "commands.h"
#include "opts.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: remora synth --out DIR [--layers N] [--experts E] [--seed S]\n"
               "  Writes a K3-format checkpoint with random weights at K3 widths (hidden 7168,\n"
               "  96 heads, latent 3584, expert width 3072, MXFP4 experts of 17,547,264 bytes).\n"
               "  Its greedy output follows one fixed cycle through the printable bytes, so it\n"
               "  repeats text it has seen (for measuring speculation).\n"
               "  --layers N   decoder layers, layer 0 dense (default 3)\n"
               "  --experts E  routed experts per MoE layer (default: enough to exceed physical\n"
               "               RAM where the disk allows, never more than half the free disk)\n"
               "  --seed S     random seed (default 1)\n"
               "exit status: 0 written, 1 write failure (e.g. disk full), 2 bad arguments\n");
}

static volatile int stopped;
static void on_signal(int sig) { (void)sig; stopped = 1; }

static void progress(void *ud, const char *shard, double frac)
{
    (void)ud;
    fprintf(stderr, "\rremora synth: %5.1f%%  %s", frac * 100, shard);
    fflush(stderr);
}

int cmd_synth(int argc, char **argv)
{
    const char *out = NULL;
    int layers = 0, experts = 0;
    uint64_t seed = 1;
    static const struct option opts[] = {
        { "out", required_argument, 0, 'o' }, { "layers", required_argument, 0, 'l' },
        { "experts", required_argument, 0, 'e' }, { "seed", required_argument, 0, 's' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    int c;
    while ((c = opts_next("synth", argc, argv, opts, NULL)) >= 0) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'l': if (opts_int_arg("synth", "layers", optarg, 2, INT_MAX, &layers)) return 2; break;
        case 'e': if (opts_int_arg("synth", "experts", optarg, 1, INT_MAX, &experts)) return 2; break;
        case 's': if (opts_u64_arg("synth", "seed", optarg, &seed)) return 2; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!out || optind != argc) { usage(stderr); return 2; }
    rm_err err = { "" };
    rm_synth_info plan;
    if (rm_synth_plan(out, layers, experts, &plan, &err)) {
        fprintf(stderr, "remora synth: %s\n", err.msg);
        return 1;
    }
    /* the plan before the gigabytes: what, how big, against what */
    fprintf(stderr, "remora synth: writing %d layers with %d experts each (K3 widths) to %s: %.1f GB (%.1f GB of "
            "experts); %.1f GB RAM here, %.1f GB free on its disk\n", plan.layers, plan.experts, out, plan.bytes / 1e9,
            plan.expert_bytes / 1e9, plan.ram / 1e9, plan.disk_free / 1e9);
    /* Ctrl-C ends the shard being written and removes it */
    struct sigaction sa = { 0 };
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (rm_synth_k3(out, plan.layers, plan.experts, seed, progress, NULL, &stopped, &err)) {
        fprintf(stderr, "\nremora synth: %s\n", err.msg);
        if (stopped) {
            fprintf(stderr, "remora synth: stopped; the shards written so far stay in %s (run the same command to "
                    "write it whole)\n", out);
            return 130;
        }
        return 1;
    }
    fprintf(stderr, "\nremora synth: wrote %s; next: `remora forecast --model %s` predicts it here, "
            "`remora bench --model %s` measures it\n", out, out, out);
    return 0;
}
