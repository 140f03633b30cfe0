/* cmd_serve.c — `remora serve`: the OpenAI- and Anthropic-compatible HTTP APIs, so that
 * SDKs, editors and agents can use the engine (app/serve/serve.h has the
 * parts). Parses the options, takes the API key from the environment
 * variable named by --api-key-env (never from the command line, where
 * other users see it in ps), refuses a non-loopback bind without a key,
 * listens, opens the model on the worker thread (requests get 503 until
 * then), prints the address, the model and its RAM plan, and serves until
 * SIGINT (exit 130), SIGTERM or SIGHUP (exit 0). At shutdown the queued
 * requests are refused with 503 and the running reply is stopped. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "engine.h"
#include "ui/term_safe.h"
#include "commands.h"
#include "opts.h"
#include "progress.h"
#include "app/serve/serve.h"
#include "model_path.h"
#include "ui/source.h"

#define GEN_OPTS (OPT_BIT(OPT_THINK) | OPT_BIT(OPT_NO_THINK) | OPT_BIT(OPT_EFFORT) | OPT_BIT(OPT_TEMPERATURE) | \
                  OPT_BIT(OPT_TOP_P) | OPT_BIT(OPT_SEED) | OPT_BIT(OPT_SPEC))
#define OPEN_OPTS (OPT_BIT(OPT_THREADS) | OPT_BIT(OPT_GPU) | OPT_BIT(OPT_VRAM) | OPT_BIT(OPT_IO_THREADS) | OPT_BIT(OPT_RAM) | OPT_BIT(OPT_TRACE) | \
                   OPT_BIT(OPT_PREFILL_CHUNK) | OPT_BIT(OPT_PREFIX_CACHE) | OPT_BIT(OPT_PREFIX_RAM))

static void usage(FILE *f)
{
    static const char *const text[OPT_COUNT] = {
        [OPT_THINK] = "requests think unless they say otherwise (the default)",
        [OPT_NO_THINK] = "requests do not think unless they ask to",
        [OPT_EFFORT] = "K3's thinking effort of requests that name none",
        [OPT_TEMPERATURE] = "temperature of requests that name none (default 0 = greedy)",
        [OPT_TOP_P] = "top_p of requests that name none (default 1 = off)",
        [OPT_SEED] = "seed of requests that name none (default 0)",
    };
    fprintf(f, "usage: remora serve [--model DIR] [options]\n"
               "OpenAI- and Anthropic-compatible HTTP APIs: /v1/chat/completions,\n"
               "/v1/completions, /v1/messages, /v1/messages/count_tokens, /v1/models and\n"
               "/health, with tool calls; one reply at a time, the others wait in a queue.\n");
    opts_help(f, OPT_BIT(OPT_MODEL), text);
    opts_help_line(f, "--host ADDR", "address to listen on (default 127.0.0.1); any other than a\n"
                                     "loopback address needs --api-key-env");
    opts_help_line(f, "--port N", "port (default 8080; 0: a free port, printed at start)");
    opts_help_line(f, "--api-key-env VAR", "require the API key held in environment variable VAR\n"
                                           "(Authorization: Bearer KEY)");
    opts_help_line(f, "--served-name NAME", "the model's id in the API (default: the heading of its README.md,\n"
                                            "else the directory's name, as the chat names it)");
    opts_help_line(f, "--queue N", "requests that may wait behind the running one (default 4);\n"
                                   "past them: 429; N in [0, 1000]");
    opts_help_line(f, "--max-tokens N", "the most tokens of a reply, and the default of a chat\n"
                                        "request (default 4096); N in [1, 1000000000]");
    opts_help_line(f, "--max-body MB", "the largest request body (default 8); MB in (0, 4096]");
    opts_help_line(f, "--keep-alive S", "send an SSE comment after S seconds without data\n"
                                        "(default 5); S in [0.05, 3600]");
    opts_help_line(f, "--max-connections N", "connections open at once (default 64); N in [1, 4096]");
    opts_help_line(f, "--idle-timeout S", "close a connection idle for S seconds (default 30);\n"
                                          "S in [1, 86400]");
    opts_help(f, GEN_OPTS | OPEN_OPTS, text);
    opts_help_line(f, "--help", "print this help and exit");
    fprintf(f, "exit status: 0 stopped by SIGTERM or SIGHUP, 1 runtime failure, 2 bad input,\n"
               "130 stopped by Ctrl-C\n");
}

/* The model's id: the directory's name without a trailing slash. */
static void announce_model(const serve *sv, rm_session *s)
{
    const serve_cfg *cfg = serve_config(sv);
    const rm_model_info *i = rm_model_get_info(rm_session_model(s));
    char b[5][32];
    fprintf(stderr, "remora serve: model '%s' (%s, %d layers) from %s\n", cfg->served_name, i->family, i->num_layers,
            cfg->model_dir);
    fprintf(stderr, "remora serve: RAM plan: budget %s; spine %s of %s resident; expert cache %s (%d of %d experts); "
            "%s beside the budget\n", rm_fmt_bytes(b[0], sizeof b[0], (double)i->ram_budget),
            rm_fmt_bytes(b[1], sizeof b[1], (double)i->spine_resident_bytes),
            rm_fmt_bytes(b[2], sizeof b[2], (double)i->spine_bytes),
            rm_fmt_bytes(b[3], sizeof b[3], (double)i->expert_cache_bytes), i->expert_cache_slots, i->total_experts,
            rm_fmt_bytes(b[4], sizeof b[4], (double)i->overhead_bytes));
    char note[1400];
    if (progress_stream_note(rm_session_model(s), note, sizeof note))
        fprintf(stderr, "remora serve: warning: experts are streamed over the network: %s; the first requests "
                "wait for their experts to arrive\n", note);
    fprintf(stderr, "remora serve: ready: one reply at a time, %d more wait in the queue\n", cfg->queue_max);
}

/* Own options; 0, or the exit status. */
static int parse(int argc, char **argv, serve_cfg *cfg, opts_shared *so, const char **key_env)
{
    enum { O_HOST = 256, O_PORT, O_KEY, O_NAME, O_QUEUE, O_MAXTOK, O_BODY, O_KEEP, O_CONNS, O_IDLE, O_HELP };
    static const struct option own[] = {
        { "host", required_argument, 0, O_HOST }, { "port", required_argument, 0, O_PORT },
        { "api-key-env", required_argument, 0, O_KEY }, { "served-name", required_argument, 0, O_NAME },
        { "queue", required_argument, 0, O_QUEUE }, { "max-tokens", required_argument, 0, O_MAXTOK },
        { "max-body", required_argument, 0, O_BODY }, { "keep-alive", required_argument, 0, O_KEEP },
        { "max-connections", required_argument, 0, O_CONNS }, { "idle-timeout", required_argument, 0, O_IDLE },
        { "help", no_argument, 0, O_HELP }, { 0, 0, 0, 0 } };
    const struct option *opts = opts_longopts(own, OPT_BIT(OPT_MODEL) | GEN_OPTS | OPEN_OPTS);
    int c;
    double mb = 8;
    optind = 1;
    while ((c = opts_next("serve", argc, argv, opts, so)) >= 0) {
        switch (c) {
        case O_HOST:
            if (!*optarg) { fprintf(stderr, "remora serve: --host '': must not be empty\n"); return 2; }
            cfg->host = optarg;
            break;
        case O_PORT: if (opts_int_arg("serve", "port", optarg, 0, 65535, &cfg->port)) return 2; break;
        case O_KEY: *key_env = optarg; break;
        case O_NAME:
            if (!*optarg) { fprintf(stderr, "remora serve: --served-name '': must not be empty\n"); return 2; }
            cfg->served_name = optarg;
            break;
        case O_QUEUE: if (opts_int_arg("serve", "queue", optarg, 0, 1000, &cfg->queue_max)) return 2; break;
        case O_MAXTOK: if (opts_int_arg("serve", "max-tokens", optarg, 1, 1000000000, &cfg->max_tokens)) return 2; break;
        case O_BODY: if (opts_real_arg("serve", "max-body", optarg, 0, 4096, 1, &mb)) return 2; break;
        case O_KEEP: if (opts_real_arg("serve", "keep-alive", optarg, 0.05, 3600, 0, &cfg->keepalive_s)) return 2; break;
        case O_CONNS:
            if (opts_int_arg("serve", "max-connections", optarg, 1, 4096, &cfg->max_connections)) return 2;
            break;
        case O_IDLE: if (opts_int_arg("serve", "idle-timeout", optarg, 1, 86400, &cfg->idle_timeout_s)) return 2; break;
        case O_HELP: usage(stdout); return -1;
        default: usage(stderr); return 2;
        }
    }
    if (c == OPTS_REFUSED) return 2;
    if (optind != argc) { usage(stderr); return 2; }
    cfg->max_body = (size_t)(mb * 1e6);
    return 0;
}

/* The key, from the environment only; the refusal of an open bind without
 * one. 0, or the exit status. */
static int take_key(serve_cfg *cfg, const char *key_env)
{
    if (key_env) {
        const char *k = getenv(key_env);
        if (!k || !*k) {
            fprintf(stderr, "remora serve: --api-key-env %s: the environment variable is not set or empty\n", key_env);
            return 2;
        }
        cfg->api_key = k;
        cfg->api_key_len = strlen(k);
    }
    rm_err err = { "" };
    if (serve_bind_is_loopback(cfg->host, &cfg->loopback, &err)) {
        ui_safe_errorf("remora serve", "%s", err.msg);
        return 2;
    }
    if (!cfg->loopback && !cfg->api_key) {
        fprintf(stderr, "remora serve: --host %s is not a loopback address: anyone who can reach it could use the "
                "server, so it needs an API key (--api-key-env VAR)\n", cfg->host);
        return 2;
    }
    return 0;
}

/* Serves until a signal; returns the exit status. */
static int run(serve *sv, const sigset_t *sigs)
{
    int announced = 0;
    for (;;) {
        struct timespec ts = { 0, 200 * 1000 * 1000 };
        int sig = sigtimedwait(sigs, NULL, &ts);
        rm_err err = { "" };
        int st = serve_state(sv, &err);
        if (st == SERVE_FAILED) {
            ui_safe_errorf("remora serve", "%s", err.msg);
            return 2;
        }
        if (st == SERVE_READY && !announced) {
            announce_model(sv, serve_session(sv));
            announced = 1;
        }
        if (sig > 0) {
            fprintf(stderr, "remora serve: %s: stopping\n", sig == SIGINT ? "interrupted" : "terminated");
            return sig == SIGINT ? 130 : 0;
        }
    }
}

int cmd_serve(int argc, char **argv)
{
    serve_cfg cfg = { .host = "127.0.0.1", .port = 8080, .queue_max = 4, .max_tokens = 4096, .keepalive_s = 5,
                      .max_connections = 64, .idle_timeout_s = 30 };
    opts_shared so = { .gen = { .temperature = 0, .top_p = 1, .think = 1, .spec = RM_SPEC_AUTO } };
    const char *key_env = NULL;
    int rc = parse(argc, argv, &cfg, &so, &key_env);
    if (rc) return rc < 0 ? 0 : rc;
    if ((rc = take_key(&cfg, key_env))) return rc;
    char name[PATH_MAX], dir[4400];
    if (!so.model) {    /* the default model, as chat and run find it */
        if (model_path_default("serve", dir, sizeof dir)) { fprintf(stderr, "remora serve: %s\n", dir); return 2; }
        so.model = dir;
    }
    cfg.model_dir = so.model;
    /* named as the chat names it (its README's heading, else its folder) */
    if (!cfg.served_name) { ui_model_name(so.model, name, sizeof name); cfg.served_name = name; }
    cfg.open = so.open;
    cfg.open.keep_states = 1;      /* clients interleave conversations: each resumes from its own state */
    cfg.gen = so.gen;
    /* the signals are taken by sigtimedwait in run(); every thread started
     * from here on inherits the mask, so none of them is interrupted */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    serve *sv = serve_new(&cfg);
    if (!sv) { fprintf(stderr, "remora serve: out of memory\n"); return 1; }
    rm_err err = { "" };
    serve_http *http = NULL;
    int port = 0;
    if (serve_http_start(sv, &http, &port, &err)) {
        ui_safe_errorf("remora serve", "%s", err.msg);
        serve_free(sv, 0);
        return 1;
    }
    int v6 = strchr(cfg.host, ':') != NULL;
    fprintf(stderr, "remora serve: listening on http://%s%s%s:%d/v1%s\n", v6 ? "[" : "", cfg.host, v6 ? "]" : "", port,
            cfg.api_key ? " (API key required)" : "");
    fprintf(stderr, "remora serve: loading %s\n", cfg.model_dir);
    if (serve_start(sv, &err)) {
        ui_safe_errorf("remora serve", "%s", err.msg);
        serve_http_stop(http);
        serve_free(sv, 0);
        return 1;
    }
    rc = run(sv, &sigs);
    if (serve_state(sv, NULL) == SERVE_LOADING) {
        /* the model is still being opened: nothing to finish or save */
        serve_http_stop(http);
        return rc;
    }
    serve_begin_shutdown(sv, 2.0);
    serve_http_stop(http);
    serve_free(sv, 3.0);
    return rc;
}
