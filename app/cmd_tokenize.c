/* cmd_tokenize.c — `remora tokenize`: text to token ids on the command line,
 * for checking the tokenizer and chat renderer against reference encoders.
 *
 * Reads a JSON array of strings on stdin and prints a JSON array of id
 * arrays, one per string; special-token strings are plain text unless
 * --allow-special is given. With --chat it reads one conversation object
 * ({messages, tools, thinking, thinking_effort, add_generation_prompt}) and
 * prints the rendered prompt's ids as one JSON array.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "commands.h"
#include "opts.h"
#include "engine.h"
#include "ui/term_safe.h"
#include "read_all.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: remora tokenize --tokenizer DIR [--allow-special] [--chat [--format xtml|im]]\n"
        "\n"
        "Reads a JSON array of strings on stdin and prints a JSON array of token-id\n"
        "arrays. DIR holds tiktoken.model and tokenizer_config.json.\n"
        "\n"
        "  --tokenizer DIR    tokenizer (or model) directory\n"
        "  --allow-special    special-token strings in the text map to their ids\n"
        "                     (otherwise they are encoded as plain text)\n"
        "  --chat             read one conversation object {messages, tools, thinking,\n"
        "                     thinking_effort, add_generation_prompt} and print the ids\n"
        "                     of the rendered prompt as one JSON array\n"
        "  --format F         chat format: xtml (Kimi K3) or im (Kimi-Linear); the\n"
        "                     default follows the tokenizer's special tokens\n"
        "\n"
        "Exit status: 0 success; 2 bad usage, an unreadable or damaged tokenizer, or\n"
        "bad input (with a message on stderr); 1 out of memory or a write error.\n");
}

static void print_ids(const int32_t *ids, int n)
{
    putchar('[');
    for (int i = 0; i < n; i++) printf(i ? ",%d" : "%d", ids[i]);
    putchar(']');
}

/* --chat: one conversation object to the ids of its rendered prompt.
 * Returns the exit status. */
static int tokenize_chat(const rm_tokenizer *t, const char *format, const char *in, size_t len)
{
    rm_err err;
    rm_chat_format f = !format ? rm_chat_detect(t) : !strcmp(format, "im") ? RM_CHAT_IM : RM_CHAT_XTML;
    int32_t *ids;
    int n = rm_chat_render_json(t, f, in, len, &ids, &err);
    if (n < 0) {
        fprintf(stderr, "remora tokenize: stdin: %s\n", err.msg);
        return 2;
    }
    print_ids(ids, n);
    putchar('\n');
    free(ids);
    return 0;
}

/* A JSON array of strings to an array of id arrays. Returns the exit
 * status. */
static int tokenize_strings(const rm_tokenizer *t, int allow, const char *in, size_t len)
{
    rm_err err;
    json_error_t je;
    json_t *arr = json_loadb(in, len, JSON_ALLOW_NUL, &je);
    int rc = 2;
    if (!arr || !json_is_array(arr)) {
        if (arr) fprintf(stderr, "remora tokenize: stdin: expected a JSON array of strings\n");
        else fprintf(stderr, "remora tokenize: stdin: line %d column %d: %s\n", je.line, je.column, je.text);
        goto out;
    }
    for (size_t i = 0; i < json_array_size(arr); i++)
        if (!json_is_string(json_array_get(arr, i))) {
            fprintf(stderr, "remora tokenize: stdin: element %zu is not a string\n", i);
            goto out;
        }
    putchar('[');
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *s = json_array_get(arr, i);
        int32_t *ids;
        int n = rm_tokenizer_encode(t, json_string_value(s), json_string_length(s), allow, &ids, &err);
        if (n < 0) {
            fprintf(stderr, "remora tokenize: element %zu: %s\n", i, err.msg);
            rc = 1;
            goto out;
        }
        if (i) putchar(',');
        print_ids(ids, n);
        free(ids);
    }
    puts("]");
    rc = 0;
out:
    json_decref(arr);
    return rc;
}

int cmd_tokenize(int argc, char **argv)
{
    const char *dir = NULL, *format = NULL;
    int allow = 0, chat = 0;
    enum { O_TOKENIZER = 256, O_FORMAT, O_ALLOW, O_CHAT, O_HELP };
    static const struct option opts[] = {
        { "tokenizer", required_argument, 0, O_TOKENIZER }, { "format", required_argument, 0, O_FORMAT },
        { "allow-special", no_argument, 0, O_ALLOW }, { "chat", no_argument, 0, O_CHAT },
        { "help", no_argument, 0, O_HELP }, { 0, 0, 0, 0 } };
    int c;
    opterr = 0;
    while ((c = opts_next("tokenize", argc, argv, opts, NULL)) >= 0) {
        switch (c) {
        case O_TOKENIZER: dir = optarg; break;
        case O_FORMAT: format = optarg; break;
        case O_ALLOW: allow = 1; break;
        case O_CHAT: chat = 1; break;
        case O_HELP: usage(stdout); return 0;
        default:
            fprintf(stderr, "remora tokenize: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "remora tokenize: unknown or incomplete option '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!dir) {
        fprintf(stderr, "remora tokenize: --tokenizer DIR is required\n");
        usage(stderr);
        return 2;
    }
    if (format && strcmp(format, "xtml") && strcmp(format, "im")) {
        fprintf(stderr, "remora tokenize: --format must be xtml or im\n");
        return 2;
    }
    rm_err err;
    rm_tokenizer *t;
    if (rm_tokenizer_open(dir, &t, &err)) {
        ui_safe_errorf("remora tokenize", "%s", err.msg);
        return 2;
    }
    rm_buf in = { 0 };
    int rc, r = read_all(stdin, &in);
    if (r) {
        fprintf(stderr, "remora tokenize: %s\n", r == -1 ? "out of memory reading stdin" : "cannot read stdin");
        rc = r == -1 ? 1 : 2;
    } else if (chat) {
        rc = tokenize_chat(t, format, in.p ? in.p : "", in.len);
    } else {
        rc = tokenize_strings(t, allow, in.p ? in.p : "", in.len);
    }
    rm_buf_free(&in);
    rm_tokenizer_free(t);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "remora tokenize: error writing stdout\n");
        return 1;
    }
    return rc;
}
