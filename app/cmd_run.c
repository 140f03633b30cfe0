/* cmd_run.c — `remora run`: the pipe-friendly command line. Streams the
 * answer to stdout as it is generated and the reasoning to stderr (dimmed
 * when stderr is a terminal), so `remora run ... > answer.txt` keeps just the
 * answer. While a long prompt is processed, a progress line on stderr (a
 * terminal only) shows tokens, rate and ETA. Ctrl-C stops at the next token
 * (or, in the prompt, within a layer's work) and keeps what was generated; a
 * second Ctrl-C exits at once. One summary line goes to stderr at the end.
 * Everything that can be checked is checked before the first token (the
 * prompt, the transcript's place); a failed write to stdout (a full disk,
 * a closed descriptor) stops the reply and exits 1 with a message, except
 * EPIPE, a reader that went away (`| head`), which stays quiet.
 * With --endpoint URL the turn goes to an OpenAI-compatible server through
 * the chat's own endpoint source (ui/source.h), so the answer and the
 * reasoning are split exactly as the chat shows them.
 * With --transcript FILE the conversation is continued from FILE and its
 * snapshot FILE.state (when they fit together; otherwise it is computed
 * again, and stderr says why) and both are saved back. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "engine.h"
#include "commands.h"
#include "model_path.h"
#include "opts.h"
#include "progress.h"
#include "read_all.h"
#include "ui/source.h"
#include "ui/term_safe.h"

static volatile int stop_flag;
static int out_errno;           /* the first failed write to stdout */

static void on_sigint(int sig)
{
    (void)sig;
    stop_flag = 1;
    signal(SIGINT, SIG_DFL);    /* a second Ctrl-C ends the process */
}

static void usage(FILE *f)
{
    static const char *const text[OPT_COUNT] = {
        [OPT_EFFORT] = "add K3's thinking-effort note (implies --chat)",
        [OPT_MAX_NEW] = "stop after N new tokens (default 512)",
        [OPT_MODEL] = "model directory (default: ./assets/model, else the installed\nmodel, PREFIX/share/remora/model)",
    };
    fprintf(f, "usage: remora run [--model DIR] --prompt TEXT|- [options]\n"
               "       remora run --endpoint URL --prompt TEXT|- [options]\n");
    opts_help(f, OPT_BIT(OPT_MODEL), text);
    opts_help_line(f, "--prompt TEXT", "the prompt; '-' reads it from standard input");
    opts_help_line(f, "--chat", "wrap the prompt as a user message in the model's chat format");
    opts_help_line(f, "--system TEXT", "system message (implies --chat)");
    opts_help(f, OPTS_GEN_MASK, text);
    opts_help_line(f, "--transcript FILE", "continue the conversation in FILE (JSONL) and save it back\n"
                                           "atomically, with its state in a snapshot beside it (c.jsonl:\n"
                                           "c.state), so the next run computes only what is new;\n"
                                           "implies --chat");
    opts_help(f, OPTS_OPEN_MASK, text);
    opts_help(f, OPTS_ENDPOINT_MASK, text);
    fprintf(f,
        "The answer goes to stdout; reasoning goes to stderr. A summary line (context,\n"
        "reused, restored and prefilled tokens, prefill time, decode s/token, bytes\n"
        "read per token) goes to stderr at the end; on a terminal, a progress line\n"
        "shows a long prompt's tokens, rate and ETA while it is processed.\n"
        "exit status: 0 done, 1 runtime failure, 2 bad input, 130 stopped by Ctrl-C\n");
}

typedef struct run_ctx {
    int reasoning_open, dim;
    /* a raw completion on a chat model: its special tokens (chat markup)
     * are not the answer; the first one is said, with the way out */
    const rm_tokenizer *raw_tok;
    int markup_said;
    rm_prompt_figures prompt;   /* the prompt's record */
    double prefill_s, decode_s;
    uint64_t tokens, bytes, drafted, accepted;
    progress_bar bar;           /* the prompt's progress, on a terminal */
} run_ctx;

static void on_text(void *ud, int channel, const char *text, size_t len)
{
    run_ctx *r = ud;
    if (channel == RM_CHAN_REASONING) {
        if (r->dim && !r->reasoning_open) fputs("\033[2m", stderr);
        r->reasoning_open = 1;
        ui_safe_write(stderr, text, len, 1);
        fflush(stderr);
    } else {
        if (r->markup_said) return;     /* what follows the markup is the template's, not an answer */
        if (r->raw_tok && len < 64) {
            char t[64];
            memcpy(t, text, len);
            t[len] = 0;
            if (rm_tokenizer_special_id(r->raw_tok, t) >= 0) {
                if (!r->markup_said)
                    fprintf(stderr, "remora run: the model answers this plain prompt with chat markup (%s); it is a "
                            "chat model: add --chat to talk to it (the rest is left out)\n", t);
                r->markup_said = 1;
                return;
            }
        }
        if (r->reasoning_open) {
            fputs(r->dim ? "\033[0m\n" : "\n", stderr);
            r->reasoning_open = 0;
        }
        if (!out_errno && (ui_safe_write(stdout, text, len, 1) || fflush(stdout))) {
            out_errno = errno ? errno : EIO;
            stop_flag = 1;      /* the answer cannot be delivered: stop generating it */
        }
    }
}

static void on_stats(void *ud, const rm_token_stats *st)
{
    run_ctx *r = ud;
    if (st->kind == RM_REC_PROGRESS) { progress_prompt(&r->bar, &st->prompt); return; }
    if (st->kind == RM_REC_PROMPT) {
        progress_end(&r->bar);
        r->prompt = st->prompt;
        r->prefill_s = st->seconds;
        return;
    }
    r->tokens++;
    r->decode_s += st->seconds;
    r->drafted = st->spec_drafted;
    r->accepted = st->spec_accepted;
    r->bytes += st->bytes_spine_read + st->bytes_expert_read + st->bytes_net;
}

/* The prompt of `--prompt -`: all of stdin, malloc'd into *out. Returns 0,
 * or the exit status after saying why. */
static int prompt_from_stdin(char **out)
{
    rm_buf in = { 0 };
    int r = read_all(stdin, &in);
    if (r) {
        fprintf(stderr, "remora run: %s\n", r == -1 ? "out of memory reading the prompt" : "cannot read the prompt from stdin");
        rm_buf_free(&in);
        return r == -1 ? 1 : 2;
    }
    const char *nul = memchr(in.p ? in.p : "", 0, in.len);
    if (nul) {
        fprintf(stderr, "remora run: the prompt on stdin holds a NUL byte at offset %zu; a prompt is text\n",
                (size_t)(nul - in.p));
        rm_buf_free(&in);
        return 2;
    }
    if (!(*out = rm_buf_take(&in, NULL))) { fprintf(stderr, "remora run: out of memory\n"); return 1; }
    return 0;
}

/* --transcript FILE is saved after the reply: a place it cannot be saved to
 * is refused now, before a token is generated (and the turn lost). */
static int check_transcript_place(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            fprintf(stderr, "remora run: --transcript %s: not a regular file\n", path);
            return 2;
        }
        return 0;
    }
    if (errno != ENOENT) {
        fprintf(stderr, "remora run: --transcript %s: %s\n", path, strerror(errno));
        return 2;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = 0;
    else *slash = 0;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK)) {
        fprintf(stderr, "remora run: --transcript %s: its folder %s %s\n", path, dir,
                stat(dir, &st) ? "does not exist" : !S_ISDIR(st.st_mode) ? "is not a folder" : "is not writable");
        return 2;
    }
    return 0;
}

/* The answer must have reached stdout: a failed write or close is exit 1
 * (EPIPE, a reader that went away, is quiet). */
static int check_stdout(void)
{
    if (fflush(stdout) && !out_errno) out_errno = errno ? errno : EIO;
    if (fclose(stdout) && !out_errno) out_errno = errno ? errno : EIO;
    if (!out_errno) return 0;
    if (out_errno != EPIPE) fprintf(stderr, "remora run: cannot write the answer to standard output: %s\n", strerror(out_errno));
    return 1;
}

/* A stream-mode model says how much of it is local before it starts. */
static void stream_note(rm_session *s)
{
    char note[1400];
    if (progress_stream_note(rm_session_model(s), note, sizeof note)) fprintf(stderr, "[%s]\n", note);
}

static void summary(const run_ctx *r)
{
    fprintf(stderr, "[ctx %d, %d reused, %d restored, %d prefilled in %.2f s (%.1f tok/s), decode %.3f s/token over "
            "%llu tokens, %.1f MB read/token, %llu of %llu drafted tokens accepted]%s\n",
            r->prompt.ctx, r->prompt.reused, r->prompt.restored, r->prompt.done, r->prefill_s,
            r->prefill_s > 0 ? r->prompt.done / r->prefill_s : 0.0,
            r->tokens ? r->decode_s / (double)r->tokens : 0.0, (unsigned long long)r->tokens,
            r->tokens ? (double)r->bytes / (double)r->tokens / 1e6 : 0.0, (unsigned long long)r->accepted,
            (unsigned long long)r->drafted, stop_flag ? " (stopped)" : "");
}

/* An endpoint's summary: a remora serve endpoint reports what a local model
 * does; any other reports no storage reads nor speculation, so they are
 * left out rather than printed as zeros, and its records are chunks of
 * text, not tokens. */
static void summary_endpoint(const run_ctx *r, const ui_source *src)
{
    fputc('[', stderr);
    ui_safe_write(stderr, src->label, strlen(src->label), 0);      /* the model id is the server's */
    fputs("] ", stderr);
    if (!src->unreported) { summary(r); return; }
    char ctx[96] = "";
    if (r->prompt.ctx) snprintf(ctx, sizeof ctx, "ctx %d, %d reused, ", r->prompt.ctx, r->prompt.reused);
    fprintf(stderr, "[%sfirst text in %.2f s, %llu chunks of text %.3f s apart, %.1f kB received]%s\n", ctx,
            r->prefill_s, (unsigned long long)r->tokens, r->tokens > 1 ? r->decode_s / (double)(r->tokens - 1) : 0.0,
            (double)r->bytes / 1e3, stop_flag ? " (stopped)" : "");
}

/* What generates: a chat turn or a raw completion on a session, or a
 * turn on an endpoint. */
typedef struct gen_target {
    rm_session *ses;
    int chat;
    ui_source *src;
} gen_target;

/* Streams one turn (chat) or completion; Ctrl-C stops it at a token. */
static int generate(const gen_target *g, const char *prompt, const rm_gen_opts *go, run_ctx *r, rm_err *err)
{
    r->dim = isatty(2);
    progress_init(&r->bar, "remora run");
    rm_gen_events ev = { r, on_text, on_stats };
    signal(SIGINT, on_sigint);
    int fail = g->src ? g->src->vt->turn(g->src, prompt, go, &ev, &stop_flag, err)
             : g->chat ? rm_session_turn(g->ses, prompt, go, &ev, &stop_flag, err)
                       : rm_session_complete(g->ses, prompt, go, &ev, &stop_flag, err);
    signal(SIGINT, SIG_DFL);
    progress_end(&r->bar);
    if (r->reasoning_open && r->dim) fputs("\033[0m", stderr);
    /* the answer's last line ends; a turn refused before its first token wrote nothing */
    if ((!fail || r->tokens) && !out_errno && (fputs("\n", stdout) == EOF || fflush(stdout)))
        out_errno = errno ? errno : EIO;
    return fail;
}

/* remora run --endpoint: the same steps on the endpoint source. */
static int run_endpoint(const ui_endpoint_opts *eo, const char *prompt, const char *system, const char *transcript,
                        const rm_gen_opts *go)
{
    rm_err err = { "" };
    ui_source *src = NULL;
    int rc = ui_source_endpoint_open(eo, &src, &err);
    if (rc) {
        ui_safe_errorf("remora run", "%s", err.msg);
        return rc == -2 ? 2 : 1;
    }
    const ui_source_vt *vt = src->vt;
    gen_target g = { .src = src };
    run_ctx r = { 0 };
    int ctx;    /* not said: the server counts the conversation */
    if (transcript && access(transcript, F_OK) == 0 && vt->load(src, transcript, &ctx, &err)) {
        ui_safe_errorf("remora run", "%s", err.msg);
        rc = 2;
    } else if (system && vt->set_system(src, system, &err)) {
        ui_safe_errorf("remora run", "%s", err.msg);
        rc = 1;
    } else if (generate(&g, prompt, go, &r, &err)) {
        ui_safe_errorf("remora run", "%s", err.msg);
        rc = 1;
    } else {
        if (err.msg[0]) ui_safe_errorf("remora run", "note: %s", err.msg);     /* the turn's note */
        summary_endpoint(&r, src);
        if (transcript && vt->save(src, transcript, &err)) { ui_safe_errorf("remora run", "%s", err.msg); rc = 1; }
        if (!rc && stop_flag && !out_errno) rc = 130;
    }
    if (check_stdout() && (!rc || rc == 130)) rc = 1;
    vt->free(src);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    const char *prompt = NULL, *system = NULL, *transcript = NULL;
    int chat = 0;
    opts_shared so = { .gen = { .max_new = 512, .temperature = 0.0f, .top_p = 1.0f, .think = 1, .spec = RM_SPEC_AUTO } };
    enum { O_PROMPT = 256, O_CHAT, O_SYSTEM, O_TRANS, O_HELP };
    static const struct option own[] = {
        { "prompt", required_argument, 0, O_PROMPT }, { "chat", no_argument, 0, O_CHAT },
        { "system", required_argument, 0, O_SYSTEM }, { "transcript", required_argument, 0, O_TRANS },
        { "help", no_argument, 0, O_HELP }, { 0, 0, 0, 0 } };
    const struct option *opts = opts_longopts(own, OPT_BIT(OPT_MODEL) | OPTS_GEN_MASK | OPTS_OPEN_MASK | OPTS_ENDPOINT_MASK);
    int c;
    while ((c = opts_next("run", argc, argv, opts, &so)) >= 0) {
        switch (c) {
        case O_PROMPT: prompt = optarg; break;
        case O_CHAT: chat = 1; break;
        case O_SYSTEM: system = optarg; chat = 1; break;
        case O_TRANS: transcript = optarg; chat = 1; break;
        case O_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (c == OPTS_REFUSED) return 2;
    if (so.given & OPT_BIT(OPT_EFFORT)) chat = 1;
    ui_endpoint_opts eo;
    int rc = opts_endpoint("run", &so, &eo);
    if (rc) return rc;
    if (!prompt || optind != argc) { usage(stderr); return 2; }
    char dir[4400];
    if (!so.model && !eo.url) {
        if (model_path_default("run", dir, sizeof dir)) { fprintf(stderr, "remora run: %s\n", dir); return 2; }
        so.model = dir;
    }
    char *owned = NULL;
    rc = !strcmp(prompt, "-") ? prompt_from_stdin(&owned) : 0;
    if (rc) return rc;
    if (owned) prompt = owned;
    if (eo.url) chat = 1;           /* an endpoint takes chat completions */
    if (!chat && !*prompt) {
        fprintf(stderr, "remora run: the prompt is empty (a completion needs text to continue; --chat allows an empty message)\n");
        free(owned);
        return 2;
    }
    if (transcript && (rc = check_transcript_place(transcript))) { free(owned); return rc; }
    if (eo.url) {
        rc = run_endpoint(&eo, prompt, system, transcript, &so.gen);
        free(owned);
        return rc;
    }
    rm_err err = { "" };
    rm_session *s = NULL;
    if (rm_session_open(so.model, &so.open, &s, &err)) {
        ui_safe_errorf("remora run", "%s", err.msg);
        free(owned);
        return rm_err_status(&err, 2);
    }
    stream_note(s);
    run_ctx r = { 0 };
    rm_resume res = { 0 };
    if (transcript && access(transcript, F_OK) == 0 && rm_session_load_with_state(s, transcript, &res, &err)) {
        ui_safe_errorf("remora run", "%s", err.msg);
        rc = 2;
    } else if (system && rm_session_set_system(s, system)) {
        fprintf(stderr, "remora run: out of memory\n");
        rc = 1;
    } else {
        /* a snapshot that cannot be used is said; the conversation is computed again */
        if (transcript && access(transcript, F_OK) == 0 && res.found && !res.restored)
            ui_safe_errorf("remora run", "%s; the conversation is computed again", res.why);
        else if (transcript && res.restored)
            fprintf(stderr, "remora run: %d tokens of state restored from the snapshot (%.1f MB) in %.3f s\n",
                    res.restored, (double)res.bytes / 1e6, res.seconds);
        if (!chat) r.raw_tok = rm_session_tokenizer(s);
        if (generate(&(gen_target){ .ses = s, .chat = chat }, prompt, &so.gen, &r, &err)) {
            ui_safe_errorf("remora run", "%s", err.msg);
            rc = rm_err_status(&err, 1);
        } else {
            summary(&r);
            if (transcript && rm_session_save_with_state(s, transcript, &err)) {
                ui_safe_errorf("remora run", "%s", err.msg);
                rc = 1;
            }
            if (!rc && stop_flag && !out_errno) rc = 130;
        }
    }
    if (check_stdout() && (!rc || rc == 130)) rc = 1;
    rm_session_free(s);
    free(owned);
    return rc;
}
