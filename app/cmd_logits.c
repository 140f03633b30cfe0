/* cmd_logits.c — `remora logits`: the debugging entry point that feeds a file
 * of token ids through the model in one prefill and writes the logits of
 * every position (raw little-endian float32 [T, vocab]) and, optionally, the
 * router choices in the JSON layout of the fixtures' routes_*.json. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "engine.h"
#include "ui/term_safe.h"
#include "commands.h"
#include "opts.h"

/* The shared options that change where and how the pass runs, never its
 * bits: the GPU tests compare the logits of each setting (tests/gpu/run.sh). */
#define LOGITS_OPTS (OPT_BIT(OPT_PREFILL_CHUNK) | OPT_BIT(OPT_RAM) | OPT_BIT(OPT_THREADS) | OPT_BIT(OPT_GPU) | \
                     OPT_BIT(OPT_VRAM))

static void usage(FILE *f)
{
    fprintf(f, "usage: remora logits --model DIR --ids-file FILE --out LOGITS [--routes ROUTES] [options]\n"
               "  Writes float32 [T, vocab] logits of every position to LOGITS and, with\n"
               "  --routes, the router choices per MoE layer and position as JSON.\n");
    opts_help(f, LOGITS_OPTS, NULL);
    fprintf(f, "exit status: 0 success, 1 write failure, 2 bad input\n");
}

/* Returns 0, -1 on bad input (exit 2) or -2 when out of memory (exit 1). */
static int read_ids(const char *path, int32_t **out, int *n)
{
    /* non-blocking open: a FIFO is refused, not waited on */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
        fprintf(stderr, "remora logits: %s: not a regular file\n", path);
        close(fd);
        return -1;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) { fprintf(stderr, "remora logits: %s: %s\n", path, strerror(errno)); if (fd >= 0) close(fd); return -1; }
    int cap = 0, cnt = 0;
    int32_t *ids = NULL;
    long long v;
    while (fscanf(f, "%lld", &v) == 1) {
        if (v < 0 || v > INT32_MAX) {
            fprintf(stderr, "remora logits: %s: token id %lld at index %d is out of range\n", path, v, cnt);
            goto bad;
        }
        if (RM_GROW(ids, cap, cnt + 1)) {
            fprintf(stderr, "remora logits: %s: out of memory at token %d\n", path, cnt);
            fclose(f);
            free(ids);
            return -2;
        }
        ids[cnt++] = (int32_t)v;
    }
    if (!feof(f)) {
        fprintf(stderr, "remora logits: %s: expected whitespace-separated token ids (bad text after id %d)\n", path, cnt);
        goto bad;
    }
    if (!cnt) { fprintf(stderr, "remora logits: %s: no token ids\n", path); goto bad; }
    fclose(f);
    *out = ids;
    *n = cnt;
    return 0;
bad:
    fclose(f);
    free(ids);
    return -1;
}

typedef struct { json_t *layers; } route_sink;

static void on_route(void *ud, int layer, int pos, const int *ids, const float *w, int k, float margin)
{
    route_sink *rs = ud;
    char key[16];
    snprintf(key, sizeof key, "%d", layer);
    json_t *arr = json_object_get(rs->layers, key);
    if (!arr) { arr = json_array(); json_object_set_new(rs->layers, key, arr); }
    json_t *ji = json_array(), *jw = json_array();
    for (int i = 0; i < k; i++) {
        json_array_append_new(ji, json_integer(ids[i]));
        json_array_append_new(jw, json_real(w[i]));
    }
    (void)pos;   /* positions arrive in order, one call per layer each */
    /* with k == number of experts there is no (k+1)-th: the margin is null */
    json_array_append_new(arr, json_pack("[o,o,o]", ji, jw, isfinite(margin) ? json_real(margin) : json_null()));
}

int cmd_logits(int argc, char **argv)
{
    const char *model = NULL, *ids_file = NULL, *out = NULL, *routes = NULL;
    static const struct option own[] = {
        { "model", required_argument, 0, 'm' }, { "ids-file", required_argument, 0, 'i' },
        { "out", required_argument, 0, 'o' },   { "routes", required_argument, 0, 'r' },
        { "help", no_argument, 0, 'h' },        { 0, 0, 0, 0 } };
    const struct option *opts = opts_longopts(own, LOGITS_OPTS);
    opts_shared so = { 0 };
    int c;
    while ((c = opts_next("logits", argc, argv, opts, &so)) >= 0) {
        switch (c) {
        case 'm': model = optarg; break;
        case 'i': ids_file = optarg; break;
        case 'o': out = optarg; break;
        case 'r': routes = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (c == OPTS_REFUSED) return 2;
    if (!model || !ids_file || !out || optind != argc) { usage(stderr); return 2; }
    int32_t *ids = NULL;
    int n = 0;
    int r = read_ids(ids_file, &ids, &n);
    if (r) return r == -2 ? 1 : 2;
    rm_err err = { "" };
    rm_model *m = NULL;
    if (rm_model_open(model, &so.open, &m, &err)) {
        ui_safe_errorf("remora logits", "%s", err.msg);
        free(ids);
        return rm_err_status(&err, 2);
    }
    int rc = 0;
    const int V = rm_model_get_info(m)->vocab_size;
    float *logits = malloc((size_t)n * V * sizeof *logits);
    rm_state *st = rm_state_new(m, &err);
    route_sink rs = { json_object() };
    if (!logits || !st) { fprintf(stderr, "remora logits: %s\n", st ? "out of memory" : err.msg); rc = 1; goto done; }
    if (rm_forward(m, st, ids, n, logits, NULL, routes ? on_route : NULL, &rs, &err)) {
        fprintf(stderr, "remora logits: %s: %s\n", ids_file, err.msg);
        rc = 2;
        goto done;
    }
    /* atomic: a full disk leaves the old file (or none), never a partial one */
    if (rm_write_atomic(out, logits, (size_t)n * V * sizeof *logits, 0644, &err)) {
        ui_safe_errorf("remora logits", "%s", err.msg);
        rc = 1;
        goto done;
    }
    if (routes) {
        json_t *root = json_pack("{s:O}", "layers", rs.layers);
        char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;
        if (!text || rm_write_atomic(routes, text, strlen(text), 0644, &err)) {
            fprintf(stderr, "remora logits: %s\n", text ? err.msg : "out of memory");
            rc = 1;
        }
        free(text);
        json_decref(root);
    }
done:
    json_decref(rs.layers);
    rm_state_free(st);
    rm_model_free(m);
    free(logits);
    free(ids);
    return rc;
}
