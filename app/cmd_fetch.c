/* cmd_fetch.c — `remora fetch`: completes the local expert pool of a
 * stream-mode model (all missing experts of some layers into the disk
 * cache), resumably, with a progress bar; --dry-run only counts. */
#include <getopt.h>
#include <limits.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include "engine.h"
#include "ui/term_safe.h"
#include "commands.h"
#include "opts.h"
#include "progress.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: remora fetch --dir DIR [--layers A-B] [--connections N] [--dry-run]\n"
        "  --dir DIR          a model directory made by `remora setup` (stream mode)\n"
        "  --layers A-B       only these layers (0-based, inclusive; A alone: one layer)\n"
        "  --connections N    downloads at once (default 8)\n"
        "  --dry-run          print how many experts are local and missing, and their size\n"
        "Interrupted? Run it again: cached experts are kept, the rest is fetched.\n"
        "exit status: 0 done, 1 download or disk failure, 2 bad arguments\n");
}

/* --layers A-B (or A): two integers, 0 <= A <= B. */
static int layer_range(const char *arg, rm_fetch_opts *o)
{
    char a[32], msg[128];
    size_t k = strcspn(arg, "-");
    long long first, last;
    int ok = k < sizeof a;
    if (ok) {
        memcpy(a, arg, k);
        a[k] = 0;
        ok = !opts_parse_int("layers", a, 0, INT_MAX, &first, msg, sizeof msg) &&
             !opts_parse_int("layers", arg[k] ? arg + k + 1 : a, 0, INT_MAX, &last, msg, sizeof msg) && last >= first;
    }
    if (!ok) {
        fprintf(stderr, "remora fetch: --layers %s: must be A-B with 0 <= A <= B\n", *arg ? arg : "''");
        return -1;
    }
    o->first_layer = (int)first;
    o->last_layer = (int)last;
    return 0;
}

int cmd_fetch(int argc, char **argv)
{
    rm_fetch_opts o = { -1, -1, 0, 0 };
    const char *dir = NULL;
    static const struct option opts[] = {
        { "dir", required_argument, 0, 'd' }, { "model", required_argument, 0, 'd' },
        { "layers", required_argument, 0, 'l' }, { "connections", required_argument, 0, 'c' },
        { "dry-run", no_argument, 0, 'n' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    int c;
    while ((c = opts_next("fetch", argc, argv, opts, NULL)) >= 0) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 'l': if (layer_range(optarg, &o)) return 2; break;
        case 'c': if (opts_int_arg("fetch", "connections", optarg, 1, 64, &o.connections)) return 2; break;
        case 'n': o.dry_run = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!dir || optind != argc) { usage(stderr); return 2; }
    progress_bar bar;
    progress_init(&bar, "remora fetch");
    rm_pool_status st;
    rm_err err = { "" };
    double t0 = rm_now();
    int rc = rm_pool_fetch(dir, &o, &st, o.dry_run ? NULL : progress_cb, &bar, &err);
    double el = rm_now() - t0;
    progress_end(&bar);
    if (rc) { ui_safe_errorf("remora fetch", "%s", err.msg); return rm_err_status(&err, 1); }
    char a[32], b[32], f[32], r[32];
    const int missing = st.experts_total - st.experts_local;
    const double mbytes = (double)(st.bytes_total - st.bytes_local);
    if (o.dry_run) {
        printf("experts: %d, local: %d (%s), missing: %d (%s)\n", st.experts_total, st.experts_local,
               rm_fmt_bytes(a, sizeof a, (double)st.bytes_local), missing, rm_fmt_bytes(b, sizeof b, mbytes));
        printf("disk free: %s\n", rm_fmt_bytes(f, sizeof f, (double)st.disk_free));
        return 0;
    }
    fprintf(stderr, "remora fetch: %d experts (%s) fetched in %.1f s (%s/s); %d of %d local\n", missing,
            rm_fmt_bytes(a, sizeof a, mbytes), el, rm_fmt_bytes(r, sizeof r, el > 0 ? mbytes / el : 0),
            st.experts_total, st.experts_total);
    return 0;
}
