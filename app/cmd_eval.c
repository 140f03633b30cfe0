/* cmd_eval.c — `remora eval`: a quality harness usable on any model.
 *
 * The data is JSONL, one item per line: {"task", "prompt", "reference"} and
 * optionally "reasoning" (the reference reasoning), "history" (earlier turns
 * of the conversation, before the question), "think" (thinking on or off
 * for this item, whatever --no-think says) and "accept" (other answers
 * that count as right); assets/eval/README.md defines them. For each item:
 *   - NLL: the conversation [user: prompt, assistant: reasoning + reference]
 *     is rendered in the model's chat format and run in one pass; the
 *     negative log-likelihoods (natural log) of the reference's own tokens in
 *     the response channel are summed and divided by their number, per task
 *     and overall (the definition of assets/eval/README.md);
 *   - exact match: the answer generated greedily (reasoning on) must equal
 *     the reference exactly.
 * Router choices during the NLL passes give the expert load per MoE layer:
 * dead experts and the spread of the busiest and idlest shares.
 */
#include <getopt.h>
#include <math.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "engine.h"
#include "ui/term_safe.h"
#include "commands.h"
#include "opts.h"

#define MAX_TASKS 64

typedef struct task_acc {
    char name[64];
    int n, correct;
    double nll_sum;         /* Σ per-token nats */
    long nll_tokens;
} task_acc;

typedef struct load_acc {
    int layers, experts;
    long *count;            /* [layers][experts] */
    int *layer_of;          /* model layer -> row, or -1 */
} load_acc;

/* The shared options eval accepts (opts.h). */
#define EVAL_OPTS (OPT_BIT(OPT_MODEL) | OPT_BIT(OPT_MAX_NEW) | OPT_BIT(OPT_NO_THINK))

static void usage(FILE *f)
{
    static const char *const text[OPT_COUNT] = {
        [OPT_MAX_NEW] = "generation limit per item (default 256)",
        [OPT_NO_THINK] = "generate without the reasoning channel",
    };
    fprintf(f, "usage: remora eval --model DIR --data FILE.jsonl [--max-new N] [--limit N] [--no-think] [--json]\n"
               "  Prints, per task and overall, the mean negative log-likelihood (nats per token)\n"
               "  of the reference assistant turns and the exact-match accuracy of greedy answers,\n"
               "  then the routed-expert load over the NLL passes.\n");
    opts_help(f, OPT_BIT(OPT_MODEL), text);
    opts_help_line(f, "--data FILE.jsonl", "the items, one per line: {task, prompt, reference[, reasoning,\n"
                                           "history, think, accept]} (assets/eval/README.md)");
    opts_help(f, EVAL_OPTS & ~OPT_BIT(OPT_MODEL), text);
    opts_help_line(f, "--limit N", "only the first N items; N in [1, 1000000000]");
    opts_help_line(f, "--json", "end stdout with one JSON object of the figures");
    fprintf(f, "exit status: 0 done, 1 runtime failure, 2 bad input\n");
}

static void on_route(void *ud, int layer, int pos, const int *ids, const float *w, int k, float margin)
{
    load_acc *la = ud;
    int row = la->layer_of[layer];
    if (row < 0) return;
    for (int i = 0; i < k; i++)
        if (ids[i] >= 0 && ids[i] < la->experts) la->count[(size_t)row * la->experts + ids[i]]++;
}

/* The generated answer; lost = 1 when some of it could not be kept (out of
 * memory), which fails the run instead of scoring a shortened answer. */
typedef struct gen_text { rm_buf b; int lost; } gen_text;

static void on_text(void *ud, int channel, const char *text, size_t len)
{
    gen_text *g = ud;
    if (channel != RM_CHAN_ANSWER || g->lost) return;
    if (rm_buf_add(&g->b, text, len)) g->lost = 1;
}

static task_acc *task_for(task_acc *t, int *nt, const char *name)
{
    for (int i = 0; i < *nt; i++) if (!strcmp(t[i].name, name)) return &t[i];
    if (*nt == MAX_TASKS) return &t[MAX_TASKS - 1];
    task_acc *n = &t[(*nt)++];
    memset(n, 0, sizeof *n);
    snprintf(n->name, sizeof n->name, "%s", name);
    return n;
}

/* One item of the data: its conversation so far (history), the question,
 * the reference answer and reasoning, the thinking setting, and the other
 * answers that count as right (accept). */
typedef struct eval_item_in {
    const char *task, *prompt, *reference, *reasoning;
    int think;
    rm_chat_msg *hist;          /* history, then the two messages the NLL adds */
    int nhist;
    json_t *accept;             /* array of strings, or NULL */
} eval_item_in;

/* NLL of the reference answer: the conversation [history…, user: prompt,
 * assistant: reasoning + reference] runs in one pass; the target tokens are
 * those of the reference in the response channel, found as where the
 * rendering with the reference differs from the one with an empty answer.
 * Returns the number of target tokens and adds their nats to *sum. */
static int item_nll(rm_session *s, const eval_item_in *it, load_acc *la, double *sum, rm_err *err)
{
    const rm_tokenizer *tok = rm_session_tokenizer(s);
    rm_model *m = rm_session_model(s);
    rm_chat_format f = rm_chat_detect(tok);
    const int n = it->nhist + 2;
    rm_chat_msg *msgs = it->hist;
    msgs[it->nhist] = (rm_chat_msg){ "user", it->prompt, NULL, NULL };
    msgs[it->nhist + 1] = (rm_chat_msg){ "assistant", it->reference, it->reasoning, NULL };
    rm_chat_opts ro = { it->think, NULL, 0, NULL };
    int32_t *a = NULL, *b = NULL;
    int na = rm_chat_render(tok, f, msgs, n, &ro, &a, err);
    msgs[it->nhist + 1].content = "";
    int nb = na < 0 ? -1 : rm_chat_render(tok, f, msgs, n, &ro, &b, err);
    int rc = -1;
    if (nb < 0) goto out;
    int start = 0;
    while (start < nb && a[start] == b[start]) start++;
    const int ntgt = na - nb;
    if (ntgt <= 0 || start == 0) { rm_errf(err, "cannot locate the reference in the rendered chat"); goto out; }
    const int V = rm_model_get_info(m)->vocab_size;
    float *logits = malloc((size_t)na * V * sizeof *logits);
    rm_state *st = rm_state_new(m, err);
    if (!logits || !st) { free(logits); rm_state_free(st); if (st) rm_errf(err, "out of memory"); goto out; }
    if (!rm_forward(m, st, a, na, logits, NULL, on_route, la, err)) {
        for (int t = start; t < start + ntgt; t++) {
            const float *l = logits + (size_t)(t - 1) * V;
            float mx = l[0];
            for (int v = 1; v < V; v++) if (l[v] > mx) mx = l[v];
            double z = 0;
            for (int v = 0; v < V; v++) z += exp((double)l[v] - mx);
            *sum += -((double)l[a[t]] - mx - log(z));
        }
        rc = ntgt;
    }
    free(logits);
    rm_state_free(st);
out:
    free(a);
    free(b);
    return rc;
}

/* Reads one line into *it (pointers into j). Returns NULL, or what is wrong. */
static const char *parse_item(json_t *j, int default_think, eval_item_in *it)
{
    memset(it, 0, sizeof *it);
    it->task = json_string_value(json_object_get(j, "task"));
    it->prompt = json_string_value(json_object_get(j, "prompt"));
    it->reference = json_string_value(json_object_get(j, "reference"));
    it->reasoning = json_string_value(json_object_get(j, "reasoning"));
    if (!it->prompt || !it->reference) return "each line needs string \"prompt\" and \"reference\"";
    json_t *th = json_object_get(j, "think");
    if (th && !json_is_boolean(th)) return "\"think\" must be true or false";
    it->think = th ? json_is_true(th) : default_think;
    json_t *ac = json_object_get(j, "accept");
    if (ac) {
        size_t i;
        json_t *v;
        if (!json_is_array(ac)) return "\"accept\" must be an array of strings";
        json_array_foreach(ac, i, v) if (!json_is_string(v)) return "\"accept\" must be an array of strings";
        it->accept = ac;
    }
    json_t *h = json_object_get(j, "history");
    if (h && !json_is_array(h)) return "\"history\" must be an array of messages";
    const size_t nh = h ? json_array_size(h) : 0;
    if (!(it->hist = calloc(nh + 2, sizeof *it->hist))) return "out of memory";
    for (size_t i = 0; i < nh; i++) {
        json_t *m = json_array_get(h, i), *rc = json_object_get(m, "reasoning_content");
        const char *role = json_string_value(json_object_get(m, "role"));
        const char *content = json_string_value(json_object_get(m, "content"));
        if (!json_is_object(m) || !role || (strcmp(role, "user") && strcmp(role, "assistant")) || !content ||
            (rc && !json_is_null(rc) && !json_is_string(rc)))
            return "each \"history\" message needs \"role\" user or assistant, string \"content\" and "
                   "an optional string \"reasoning_content\"";
        it->hist[i] = (rm_chat_msg){ role, content, json_string_value(rc), NULL };
    }
    it->nhist = (int)nh;
    return NULL;
}

/* The answer is right when it is the reference or one of the accepted ones. */
static int answer_ok(const eval_item_in *it, const char *answer)
{
    if (!strcmp(answer, it->reference)) return 1;
    size_t i;
    json_t *v;
    json_array_foreach(it->accept, i, v) if (!strcmp(answer, json_string_value(v))) return 1;
    return 0;
}

/* Sets up the load counters: one row per MoE layer (those with routed
 * experts, from first_moe_layer on). Returns 0 or -1 (out of memory). */
static int load_init(load_acc *la, const rm_model_info *in)
{
    *la = (load_acc){ 0, in->num_experts, NULL, NULL };
    la->layer_of = malloc((size_t)in->num_layers * sizeof *la->layer_of);
    if (!la->layer_of) return -1;
    for (int l = 0; l < in->num_layers; l++)
        la->layer_of[l] = in->num_experts && l >= in->first_moe_layer && in->first_moe_layer >= 0 ? la->layers++ : -1;
    la->count = calloc((size_t)(la->layers ? la->layers : 1) * (la->experts ? la->experts : 1), sizeof *la->count);
    return la->count ? 0 : -1;
}

/* What one run of eval works with. */
typedef struct eval_run {
    rm_session *s;
    const char *data;       /* the file name, for messages */
    int         max_new, think, json;
    task_acc   *tasks;
    int         ntasks, items;
    load_acc    la;
} eval_run;

/* Every line of the data is checked before the model opens: a bad item
 * found after an hour of scoring would lose the hour. Returns 0 or 2. */
static int check_items(FILE *f, const char *data)
{
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0, items = 0;
    while (!rc && getline(&line, &cap, f) > 0) {
        lineno++;
        if (line[strspn(line, " \t\r\n")] == 0) continue;
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        const char *ref = j ? json_string_value(json_object_get(j, "reference")) : NULL;
        json_t *task = j ? json_object_get(j, "task") : NULL, *rs = j ? json_object_get(j, "reasoning") : NULL;
        const char *why = !j ? je.text
                        : !json_is_string(json_object_get(j, "prompt")) || !ref ? "each line needs string \"prompt\" and \"reference\""
                        : !*ref ? "\"reference\" is empty: there is nothing to score"
                        : (task && !json_is_string(task)) ? "\"task\" must be a string"
                        : (rs && !json_is_null(rs) && !json_is_string(rs)) ? "\"reasoning\" must be a string" : NULL;
        eval_item_in it = { 0 };
        if (!why) why = parse_item(j, 1, &it);     /* history, think, accept */
        free(it.hist);
        if (why) { fprintf(stderr, "remora eval: %s:%d: %s\n", data, lineno, why); rc = 2; }
        items++;
        json_decref(j);
    }
    free(line);
    if (!rc && !items) { fprintf(stderr, "remora eval: %s: no items\n", data); rc = 2; }
    if (!rc && (ferror(f) || fseek(f, 0, SEEK_SET))) { fprintf(stderr, "remora eval: %s: cannot read: %s\n", data, strerror(errno)); rc = 1; }
    return rc;
}

/* One line of the data: its NLL pass, then its greedy answer after its
 * history. Returns 0, or the exit status (2 bad item, 1 runtime failure)
 * after printing why. */
static int eval_item(eval_run *r, const char *line, int lineno)
{
    rm_err err = { "" };
    json_error_t je;
    json_t *j = json_loads(line, 0, &je);
    eval_item_in it;
    const char *bad = j ? parse_item(j, r->think, &it) : je.text;
    int rc = 0;
    if (bad) {
        fprintf(stderr, "remora eval: %s:%d: %s\n", r->data, lineno, bad);
        if (j) free(it.hist);
        json_decref(j);
        return !strcmp(bad, "out of memory") ? 1 : 2;
    }
    task_acc *ta = task_for(r->tasks, &r->ntasks, it.task ? it.task : "all");
    double nats = 0;
    int n = item_nll(r->s, &it, &r->la, &nats, &err);
    gen_text g = { { 0 }, 0 };
    if (n < 0) { rc = 1; goto out; }
    ta->nll_sum += nats;
    ta->nll_tokens += n;
    rm_session_clear(r->s);
    for (int i = 0; i < it.nhist && !rc; i++)
        if (rm_session_add_message(r->s, it.hist[i].role, it.hist[i].content, it.hist[i].reasoning_content, &err))
            rc = 1;
    if (rc) goto out;
    rm_gen_opts go = { .max_new = r->max_new, .think = it.think, .spec = RM_SPEC_AUTO };
    rm_gen_events ev = { &g, on_text, NULL };
    if (rm_session_turn(r->s, it.prompt, &go, &ev, NULL, &err) || (g.lost && rm_errf(&err, "out of memory"))) {
        rc = 1;
        goto out;
    }
    int ok = answer_ok(&it, g.b.p ? g.b.p : "");
    ta->correct += ok;
    ta->n++;
    r->items++;
    if (!r->json) fprintf(stderr, "%4d %-20s %s  %s\n", r->items, ta->name, ok ? "ok  " : "MISS", g.b.p ? g.b.p : "");
    rm_session_clear(r->s);
out:
    if (rc) fprintf(stderr, "remora eval: %s:%d: %s\n", r->data, lineno, err.msg);
    rm_buf_free(&g.b);
    free(it.hist);
    json_decref(j);
    return rc;
}

/* Prints the per-task table and the overall line; returns the JSON of the
 * figures (tasks and overall) for --json. */
static json_t *report_tasks(const eval_run *r)
{
    int tn = 0, tc = 0;
    long ttok = 0;
    double tnll = 0;
    printf("%-20s %6s %9s %12s\n", "task", "items", "accuracy", "NLL/token");
    json_t *jt = json_object();
    for (int i = 0; i < r->ntasks; i++) {
        const task_acc *t = &r->tasks[i];
        double acc = t->n ? (double)t->correct / t->n : 0, nll = t->nll_tokens ? t->nll_sum / t->nll_tokens : 0;
        printf("%-20s %6d %8.1f%% %12.7f\n", t->name, t->n, 100 * acc, nll);
        json_object_set_new(jt, t->name, json_pack("{s:i,s:f,s:f}", "items", t->n, "accuracy", acc, "nll", nll));
        tn += t->n; tc += t->correct; ttok += t->nll_tokens; tnll += t->nll_sum;
    }
    double oacc = tn ? (double)tc / tn : 0, onll = ttok ? tnll / ttok : 0;
    printf("%-20s %6d %8.1f%% %12.7f\n", "overall", tn, 100 * oacc, onll);
    return json_pack("{s:o,s:i,s:f,s:f}", "tasks", jt, "items", tn, "accuracy", oacc, "nll", onll);
}

/* Prints the expert load: dead experts and the smallest and largest share
 * of a layer's choices; adds them to the JSON figures. */
static void report_load(const load_acc *la, json_t *o)
{
    int dead = 0;
    double minshare = 1, maxshare = 0;
    for (int l = 0; l < la->layers; l++) {
        long tot = 0;
        for (int e = 0; e < la->experts; e++) tot += la->count[(size_t)l * la->experts + e];
        for (int e = 0; e < la->experts && tot; e++) {
            double sh = (double)la->count[(size_t)l * la->experts + e] / tot;
            if (!la->count[(size_t)l * la->experts + e]) dead++;
            if (sh < minshare) minshare = sh;
            if (sh > maxshare) maxshare = sh;
        }
    }
    if (la->layers && la->experts)
        printf("expert load over %d MoE layers x %d experts: %d dead; share per expert min %.4f, max %.4f "
               "(uniform %.4f)\n", la->layers, la->experts, dead, minshare, maxshare, 1.0 / la->experts);
    json_object_set_new(o, "dead_experts", json_integer(dead));
    json_object_set_new(o, "min_share", json_real(minshare));
    json_object_set_new(o, "max_share", json_real(maxshare));
}

int cmd_eval(int argc, char **argv)
{
    const char *data = NULL;
    int limit = 0, json = 0;
    opts_shared so = { .gen = { .max_new = 256, .think = 1 } };
    enum { O_DATA = 256, O_LIMIT, O_JSON, O_HELP };
    static const struct option own[] = {
        { "data", required_argument, 0, O_DATA }, { "limit", required_argument, 0, O_LIMIT },
        { "json", no_argument, 0, O_JSON }, { "help", no_argument, 0, O_HELP }, { 0, 0, 0, 0 } };
    const struct option *opts = opts_longopts(own, EVAL_OPTS);
    int c;
    while ((c = opts_next("eval", argc, argv, opts, &so)) >= 0) {
        switch (c) {
        case O_DATA: data = optarg; break;
        case O_LIMIT: if (opts_int_arg("eval", "limit", optarg, 1, 1000000000, &limit)) return 2; break;
        case O_JSON: json = 1; break;
        case O_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (c == OPTS_REFUSED) return 2;
    if (!so.model || !data || optind != argc) { usage(stderr); return 2; }
    struct stat dst;
    if (stat(data, &dst) == 0 && !S_ISREG(dst.st_mode)) { fprintf(stderr, "remora eval: %s: not a regular file\n", data); return 2; }
    FILE *f = fopen(data, "r");
    if (!f) { fprintf(stderr, "remora eval: %s: cannot open: %s\n", data, strerror(errno)); return 2; }
    int bad = check_items(f, data);
    if (bad) { fclose(f); return bad; }
    rm_err err = { "" };
    eval_run r = { .data = data, .max_new = so.gen.max_new, .think = so.gen.think, .json = json };
    /* no prefix cache: hundreds of one-off prompts would push the user's
     * entries out, and the figures are the same without it */
    const rm_open_opts oo = { .prefix_cache_gb = -1 };
    if (rm_session_open(so.model, &oo, &r.s, &err)) {
        ui_safe_errorf("remora eval", "%s", err.msg);
        fclose(f);
        return rm_err_status(&err, 2);
    }
    int rc = 0, lineno = 0;
    char *line = NULL;
    size_t cap = 0;
    r.tasks = calloc(MAX_TASKS, sizeof *r.tasks);
    if (!r.tasks || load_init(&r.la, rm_model_get_info(rm_session_model(r.s)))) {
        fprintf(stderr, "remora eval: out of memory\n");
        rc = 1;
        goto done;
    }
    while (!rc && getline(&line, &cap, f) > 0 && (!limit || r.items < limit)) {
        lineno++;
        if (line[strspn(line, " \t\r\n")] != 0) rc = eval_item(&r, line, lineno);
    }
    if (rc) goto done;
    json_t *o = report_tasks(&r);
    report_load(&r.la, o);
    if (json) {
        char *str = json_dumps(o, JSON_COMPACT);
        printf("%s\n", str);
        free(str);
    }
    json_decref(o);
done:
    free(line);
    fclose(f);
    free(r.tasks);
    free(r.la.count);
    free(r.la.layer_of);
    rm_session_free(r.s);
    return rc;
}
