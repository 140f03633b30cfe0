/* cmd_setup.c — `remora setup`: makes a model directory from a source URL
 * (by default Kimi K3 on Hugging Face), in full mode (every byte local) or
 * stream mode (headers and spine local, experts fetched on first use). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "engine.h"
#include "ui/term_safe.h"
#include "commands.h"
#include "opts.h"
#include "progress.h"

static void usage(FILE *f)
{
    char def[1024];
    rm_default_source(def, sizeof def);
    fprintf(f,
        "usage: remora setup --dir DIR [--source URL] [--full|--stream] [--connections N]\n"
        "  --dir DIR          the model directory to create or complete\n"
        "  --source URL       base URL of the checkpoint (default: %s;\n"
        "                     $REMORA_HF_HOST and $REMORA_HF_PATH change host and path)\n"
        "  --full             download every byte\n"
        "  --stream           download headers and spine only; experts come on first use\n"
        "                     (default: full when the free disk allows it, else stream)\n"
        "  --connections N    downloads at once (default 8)\n"
        "$HF_TOKEN is sent as a bearer token to the source's host, over https only.\n"
        "Interrupted? Run the same command again: it resumes.\n"
        "exit status: 0 ready, 1 download, disk or server failure, 2 bad arguments or bad source\n", def);
}

int cmd_setup(int argc, char **argv)
{
    rm_setup_opts o = { NULL, RM_SETUP_AUTO, 0 };
    const char *dir = NULL;
    static const struct option opts[] = {
        { "dir", required_argument, 0, 'd' }, { "source", required_argument, 0, 's' },
        { "full", no_argument, 0, 'f' }, { "stream", no_argument, 0, 'S' },
        { "connections", required_argument, 0, 'c' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    int c;
    while ((c = opts_next("setup", argc, argv, opts, NULL)) >= 0) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 's': o.source = optarg; break;
        case 'f': o.mode = RM_SETUP_FULL; break;
        case 'S': o.mode = RM_SETUP_STREAM; break;
        case 'c': if (opts_int_arg("setup", "connections", optarg, 1, 64, &o.connections)) return 2; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!dir || optind != argc) { usage(stderr); return 2; }
    progress_bar bar;
    progress_init(&bar, "remora setup");
    rm_setup_result res;
    rm_err err = { "" };
    int rc = rm_setup(dir, &o, progress_cb, &bar, &res, &err);
    progress_end(&bar);
    if (rc) { ui_safe_errorf("remora setup", "%s", err.msg); return rm_err_status(&err, 1); }
    if (res.rebuilt & 1) fprintf(stderr, "remora setup: %s/.remora/source.json was damaged and is rebuilt\n", dir);
    if (res.rebuilt & 2)
        fprintf(stderr, "remora setup: %s/.remora/manifest.json was damaged and is rebuilt (every span was checked "
                "again)\n", dir);
    char a[32], b[32], d[32], e[32];
    if (res.full)
        fprintf(stderr, "remora setup: %s is complete (%s, full mode) from %s; %s downloaded now\n", dir,
                rm_fmt_bytes(a, sizeof a, (double)res.model_bytes), res.source,
                rm_fmt_bytes(d, sizeof d, (double)res.downloaded));
    else
        fprintf(stderr, "remora setup: %s is ready in stream mode from %s: spine %s local, experts fetched on first use "
                "(%s downloaded now; full mode would need %s more, %s free; `remora fetch --dir %s` completes it)\n",
                dir, res.source, rm_fmt_bytes(a, sizeof a, (double)res.spine_bytes),
                rm_fmt_bytes(d, sizeof d, (double)res.downloaded), rm_fmt_bytes(b, sizeof b, (double)res.full_needs),
                rm_fmt_bytes(e, sizeof e, (double)res.disk_free), dir);
    return 0;
}
