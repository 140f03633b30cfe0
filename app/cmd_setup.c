/* cmd_setup.c — `remora setup`: makes a model directory from a source URL
 * (by default Kimi K3 on Hugging Face), in full mode (every byte local) or
 * stream mode (headers and spine local, experts fetched on first use). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
        "usage: remora setup --dir DIR [--source URL] [--full|--stream] [--connections N] [--dry-run]\n"
        "  --dir DIR          the model directory to create or complete\n"
        "  --source URL       base URL of the checkpoint (default: %s;\n"
        "                     $REMORA_HF_HOST and $REMORA_HF_PATH change host and path)\n"
        "  --full             download every byte\n"
        "  --stream           download headers and spine only; experts come on first use\n"
        "                     (default: full when the free disk allows it, else stream)\n"
        "  --connections N    downloads at once (default 8)\n"
        "  --dry-run          download nothing: say the disk each mode needs for Kimi K3, which\n"
        "                     mode would be chosen, and what `remora forecast` predicts here\n"
        "$HF_TOKEN is sent as a bearer token to the source's host, over https only.\n"
        "Interrupted? Run the same command again: it resumes.\n"
        "exit status: 0 ready, 1 download, disk or server failure, 2 bad arguments or bad source\n", def);
}

/* --dry-run: Kimi K3's shapes are known, so the disk each mode needs, the
 * mode the free disk allows and a short forecast need no network. */
static int dry_run(const char *dir, const rm_setup_opts *o)
{
    char def[1024];
    rm_default_source(def, sizeof def);
    if (o->source && strcmp(o->source, def)) {
        printf("remora setup --dry-run: %s is not the default source; its shapes are known only from its config.json, "
               "which a dry run does not download (`remora forecast --model DIR` predicts it once set up)\n", o->source);
        return 0;
    }
    rm_err err = { "" };
    rm_fmodel *f = NULL;
    rm_machine mc;
    rm_prediction p;
    if (rm_fmodel_builtin("k3", &f, &err)) { fprintf(stderr, "remora setup: %s\n", err.msg); return 1; }
    const rm_fmodel_info *fi = rm_fmodel_get_info(f);
    fprintf(stderr, "remora setup --dry-run: measuring this machine for a forecast (a few seconds)...\n");
    const int measured = !rm_machine_probe(f, dir, 0.3, &mc, &err);
    const double free_gb = measured ? mc.disk_free / 1e9 : 0;
    printf("remora setup --dry-run: %s from %s (nothing downloaded)\n", fi->name, def);
    printf("  full mode: %.0f GB on disk (every expert local)\n", fi->disk_bytes / 1e9);
    printf("  stream mode: %.0f GB on disk (headers, spine, embedding; experts fetched on first use and kept in a "
           "disk cache)\n", fi->stream_disk_bytes / 1e9);
    if (measured) {
        const int full = o->mode == RM_SETUP_FULL || (o->mode == RM_SETUP_AUTO && fi->disk_bytes + (1ull << 30) <= mc.disk_free);
        printf("  %s: %.0f GB free: %s\n", mc.disk_dir, free_gb,
               full && fi->disk_bytes > mc.disk_free ? "full mode does not fit (use --stream)"
               : !full && fi->stream_disk_bytes > mc.disk_free ? "not even stream mode fits: free disk or choose another --dir"
               : full ? "setup would download everything (full mode)" : "setup would use stream mode");
        if (!rm_forecast(f, &mc, 0, 0, &p))
            printf("  forecast at the default RAM budget (%.1f GB): %.1f s/token decode (%s-bound), %.0f s per 1000 "
                   "prompt tokens; `remora forecast --dir %s` for the whole picture\n", p.ram_gb, p.decode_s,
                   rm_bound_name(p.decode_bound), p.prefill_s_per_1k_tokens, dir);
    } else {
        printf("  (no forecast: %s)\n", err.msg);
    }
    rm_fmodel_free(f);
    return 0;
}

/* A setup that failed before config.json arrived did not reach the source. */
static void hint_unreachable(const char *dir, const rm_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (err->kind == RM_ERR_INPUT || !access(path, F_OK)) return;
    fprintf(stderr, "remora setup: the source could not be reached from here; check the network, or give "
            "--source URL (a mirror, or a server of your own such as http://127.0.0.1:8080/Kimi-K3); "
            "`remora setup --dir %s --dry-run` says what it would need without a network\n", dir);
}

int cmd_setup(int argc, char **argv)
{
    rm_setup_opts o = { NULL, RM_SETUP_AUTO, 0 };
    const char *dir = NULL;
    int dry = 0;
    static const struct option opts[] = {
        { "dry-run", no_argument, 0, 'n' },
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
        case 'n': dry = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!dir || optind != argc) { usage(stderr); return 2; }
    if (dry) return dry_run(dir, &o);
    progress_bar bar;
    progress_init(&bar, "remora setup");
    rm_setup_result res;
    rm_err err = { "" };
    int rc = rm_setup(dir, &o, progress_cb, &bar, &res, &err);
    progress_end(&bar);
    if (rc) {
        ui_safe_errorf("remora setup", "%s", err.msg);
        hint_unreachable(dir, &err);
        return rm_err_status(&err, 1);
    }
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
