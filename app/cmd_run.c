/* cmd_run.c — `remora run`: the pipe-friendly command line. Streams the
 * answer to stdout as it is generated and the reasoning to stderr (dimmed
 * when stderr is a terminal), so `remora run ... > answer.txt` keeps just the
 * answer. Ctrl-C stops at the next token and keeps what was generated; a
 * second Ctrl-C exits at once. One summary line goes to stderr at the end. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "engine.h"
#include "commands.h"
#include "progress.h"

static volatile int stop_flag;

static void on_sigint(int sig)
{
    (void)sig;
    stop_flag = 1;
    signal(SIGINT, SIG_DFL);    /* a second Ctrl-C ends the process */
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: remora run --model DIR --prompt TEXT|- [options]\n"
        "  --model DIR          model directory (config.json, safetensors, tokenizer)\n"
        "  --prompt TEXT        the prompt; '-' reads it from standard input\n"
        "  --chat               wrap the prompt as a user message in the model's chat format\n"
        "  --system TEXT        system message (implies --chat)\n"
        "  --think, --no-think  open the reasoning channel or not (default: think)\n"
        "  --thinking-effort E  add K3's thinking-effort note (low, medium, high, max)\n"
        "  --max-new N          stop after N new tokens (default 512)\n"
        "  --temperature T      sampling temperature; 0 = greedy (default 0)\n"
        "  --top-p P            nucleus sampling mass (default 1 = off)\n"
        "  --seed S             random seed for sampling (default 0)\n"
        "  --transcript FILE    continue the conversation in FILE (JSONL) and save it back\n"
        "                       atomically; implies --chat\n"
        "  --threads N          compute threads (default: all cores)\n"
        "  --ram GB             RAM budget for weights (default: 60%% of available memory)\n"
        "  --spec MODE          n-gram speculation: auto (default), on or off; greedy only,\n"
        "                       never changes the output\n"
        "  --trace FILE         write a JSONL trace: per-token figures and router choices\n"
        "The answer goes to stdout; reasoning goes to stderr. A summary line\n"
        "(prompt tokens, prefill tokens/s, decode s/token, bytes read per token)\n"
        "goes to stderr at the end.\n"
        "exit status: 0 done, 1 runtime failure, 2 bad input, 130 stopped by Ctrl-C\n");
}

typedef struct run_ctx {
    int reasoning_open, dim;
    int prompt_tokens, prefilled;
    double prefill_s, decode_s;
    uint64_t tokens, bytes, drafted, accepted;
} run_ctx;

static void on_text(void *ud, int channel, const char *text, size_t len)
{
    run_ctx *r = ud;
    if (channel == RM_CHAN_REASONING) {
        if (r->dim && !r->reasoning_open) fputs("\033[2m", stderr);
        r->reasoning_open = 1;
        fwrite(text, 1, len, stderr);
        fflush(stderr);
    } else {
        if (r->reasoning_open) {
            fputs(r->dim ? "\033[0m\n" : "\n", stderr);
            r->reasoning_open = 0;
        }
        fwrite(text, 1, len, stdout);
        fflush(stdout);
    }
}

static void on_stats(void *ud, const rm_token_stats *st)
{
    run_ctx *r = ud;
    if (st->prefill) {
        r->prompt_tokens = st->prompt_tokens;
        r->prefilled = (int)st->token_index;
        r->prefill_s = st->seconds;
        return;
    }
    r->tokens++;
    r->decode_s += st->seconds;
    r->drafted = st->spec_drafted;
    r->accepted = st->spec_accepted;
    r->bytes += st->bytes_spine_read + st->bytes_expert_read + st->bytes_net;
}

static char *read_stdin(void)
{
    size_t cap = 65536, len = 0;
    char *b = malloc(cap);
    size_t n;
    while (b && (n = fread(b + len, 1, cap - len - 1, stdin)) > 0) {
        len += n;
        if (cap - len < 2) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) { free(b); return NULL; }
            b = nb;
        }
    }
    if (b) b[len] = 0;
    return b;
}

int cmd_run(int argc, char **argv)
{
    const char *model = NULL, *prompt = NULL, *system = NULL, *transcript = NULL, *effort = NULL;
    int chat = 0, think = 1, threads = 0;
    double ram = 0;
    const char *trace = NULL;
    rm_gen_opts go = { .max_new = 512, .temperature = 0.0f, .top_p = 1.0f, .think = 1, .spec = RM_SPEC_AUTO };
    enum { O_CHAT = 256, O_SYSTEM, O_THINK, O_NOTHINK, O_MAXNEW, O_TEMP, O_TOPP, O_SEED, O_TRANS, O_EFFORT, O_THREADS, O_RAM, O_TRACE, O_SPEC };
    static const struct option opts[] = {
        { "model", required_argument, 0, 'm' },     { "prompt", required_argument, 0, 'p' },
        { "chat", no_argument, 0, O_CHAT },         { "system", required_argument, 0, O_SYSTEM },
        { "think", no_argument, 0, O_THINK },       { "no-think", no_argument, 0, O_NOTHINK },
        { "max-new", required_argument, 0, O_MAXNEW }, { "temperature", required_argument, 0, O_TEMP },
        { "top-p", required_argument, 0, O_TOPP },  { "seed", required_argument, 0, O_SEED },
        { "transcript", required_argument, 0, O_TRANS }, { "thinking-effort", required_argument, 0, O_EFFORT },
        { "threads", required_argument, 0, O_THREADS }, { "ram", required_argument, 0, O_RAM },
        { "trace", required_argument, 0, O_TRACE }, { "spec", required_argument, 0, O_SPEC }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case 'p': prompt = optarg; break;
        case O_CHAT: chat = 1; break;
        case O_SYSTEM: system = optarg; chat = 1; break;
        case O_THINK: think = 1; break;
        case O_NOTHINK: think = 0; break;
        case O_MAXNEW:
            go.max_new = (int)strtol(optarg, &end, 10);
            if (*end || go.max_new < 1) { fprintf(stderr, "remora run: --max-new wants a positive integer\n"); return 2; }
            break;
        case O_TEMP:
            go.temperature = strtof(optarg, &end);
            if (*end || go.temperature < 0) { fprintf(stderr, "remora run: --temperature wants a number >= 0\n"); return 2; }
            break;
        case O_TOPP:
            go.top_p = strtof(optarg, &end);
            if (*end || go.top_p <= 0 || go.top_p > 1) { fprintf(stderr, "remora run: --top-p wants a number in (0, 1]\n"); return 2; }
            break;
        case O_SEED: go.seed = strtoull(optarg, &end, 10); if (*end) { fprintf(stderr, "remora run: bad --seed\n"); return 2; } break;
        case O_TRANS: transcript = optarg; chat = 1; break;
        case O_EFFORT: effort = optarg; chat = 1; break;
        case O_THREADS:
            threads = (int)strtol(optarg, &end, 10);
            if (*end || threads < 1) { fprintf(stderr, "remora run: --threads wants a positive integer\n"); return 2; }
            break;
        case O_RAM:
            ram = strtod(optarg, &end);
            if (*end || ram <= 0) { fprintf(stderr, "remora run: --ram wants a positive number of GB\n"); return 2; }
            break;
        case O_TRACE: trace = optarg; break;
        case O_SPEC:
            if (!strcmp(optarg, "auto")) go.spec = RM_SPEC_AUTO;
            else if (!strcmp(optarg, "on")) go.spec = RM_SPEC_ON;
            else if (!strcmp(optarg, "off")) go.spec = RM_SPEC_OFF;
            else { fprintf(stderr, "remora run: --spec wants auto, on or off\n"); return 2; }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!model || !prompt || optind != argc) { usage(stderr); return 2; }
    char *owned = NULL;
    if (!strcmp(prompt, "-")) {
        if (!(owned = read_stdin())) { fprintf(stderr, "remora run: cannot read the prompt from stdin\n"); return 2; }
        prompt = owned;
    }
    go.think = think;
    go.thinking_effort = effort;
    rm_err err = { "" };
    rm_session *s = NULL;
    if (rm_session_open(model, &(rm_open_opts){ .threads = threads, .ram_gb = ram, .trace_path = trace }, &s, &err)) {
        fprintf(stderr, "remora run: %s\n", err.msg);
        free(owned);
        return 2;
    }
    rm_pool_status ps;
    char pl[32], pt[32], pf[32];
    if (!rm_model_pool_status(rm_session_model(s), &ps, &err) && ps.stream)
        fprintf(stderr, "[stream mode from %s: %d of %d experts local (%s of %s); the rest is fetched on first use, "
                "%s more to finish (remora fetch)]\n", ps.source, ps.experts_local, ps.experts_total,
                progress_bytes(pl, sizeof pl, (double)ps.bytes_local), progress_bytes(pt, sizeof pt, (double)ps.bytes_total),
                progress_bytes(pf, sizeof pf, (double)(ps.bytes_total - ps.bytes_local)));
    int rc = 0;
    if (transcript && access(transcript, F_OK) == 0 && rm_session_load(s, transcript, &err)) {
        fprintf(stderr, "remora run: %s\n", err.msg);
        rc = 2;
        goto out;
    }
    if (system && rm_session_set_system(s, system)) { fprintf(stderr, "remora run: out of memory\n"); rc = 1; goto out; }
    run_ctx r = { 0 };
    r.dim = isatty(2);
    rm_gen_events ev = { &r, on_text, on_stats };
    signal(SIGINT, on_sigint);
    int fail = chat ? rm_session_turn(s, prompt, &go, &ev, &stop_flag, &err)
                    : rm_session_complete(s, prompt, &go, &ev, &stop_flag, &err);
    signal(SIGINT, SIG_DFL);
    if (r.reasoning_open && r.dim) fputs("\033[0m", stderr);
    fputs("\n", stdout);
    fflush(stdout);
    if (fail) { fprintf(stderr, "remora run: %s\n", err.msg); rc = 1; goto out; }
    fprintf(stderr, "[%d prompt tokens, prefill %.1f tok/s, decode %.3f s/token over %llu tokens, "
            "%.1f MB read/token, %llu of %llu drafted tokens accepted]%s\n",
            r.prompt_tokens, r.prefill_s > 0 ? r.prefilled / r.prefill_s : 0.0,
            r.tokens ? r.decode_s / (double)r.tokens : 0.0, (unsigned long long)r.tokens,
            r.tokens ? (double)r.bytes / (double)r.tokens / 1e6 : 0.0, (unsigned long long)r.accepted,
            (unsigned long long)r.drafted, stop_flag ? " (stopped)" : "");
    if (transcript && rm_session_save(s, transcript, &err)) { fprintf(stderr, "remora run: %s\n", err.msg); rc = 1; }
    if (!rc && stop_flag) rc = 130;
out:
    rm_session_free(s);
    free(owned);
    return rc;
}
