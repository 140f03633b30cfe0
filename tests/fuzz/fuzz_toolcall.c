/* fuzz_toolcall.c — libFuzzer target for the tool-call parser
 * (text/toolcall.c). The first byte picks the format and how the rest is
 * cut into pieces; the rest is the text of a tools block. Every call's
 * arguments pieces must join into one JSON object, names and a malformed
 * call's text must be valid UTF-8 without a marker in them, events must
 * come in order, and nothing may come after the block ends. */
#include <jansson.h>
#include "fuzz_common.h"
#include "text/toolcall.h"

typedef struct state { int over, open, index; char args[1 << 16]; size_t n; int trunc; } state;

static int im;

/* The format's own markers (the other format's are plain text here). */
static void no_marker(const char *s, size_t n)
{
    static const char *const marks[] = { "<|open|>", "<|close|>", "<|sep|>", "<|tool_call_begin|>",
                                         "<|tool_call_argument_begin|>", "<|tool_call_end|>",
                                         "<|tool_calls_section_end|>" };
    for (size_t i = im ? 3 : 0; i < (im ? 7 : 3); i++)
        if (memmem(s, n, marks[i], strlen(marks[i]))) abort();
}

static void on_tool(void *ud, const rm_tool_event *e)
{
    state *st = ud;
    if (st->over) abort();
    switch (e->kind) {
    case RM_TOOL_BEGIN:
        if (st->open || e->index != st->index || !e->len) abort();
        check_utf8(e->text, e->len);
        st->open = 1;
        st->n = 0;
        st->trunc = 0;
        break;
    case RM_TOOL_ARGS:
        if (!st->open) abort();
        check_utf8(e->text, e->len);
        if (st->n + e->len > sizeof st->args) st->trunc = 1;
        else { memcpy(st->args + st->n, e->text, e->len); st->n += e->len; }
        break;
    case RM_TOOL_END: {
        if (!st->open || e->index != st->index) abort();
        if (!st->trunc) {
            json_t *v = json_loadb(st->args, st->n, JSON_ALLOW_NUL, NULL);   /* \u0000 is JSON */
            if (!json_is_object(v)) abort();
            json_decref(v);
        }
        st->open = 0;
        st->index++;
        break;
    }
    case RM_TOOL_DONE:
        if (st->open || e->index != st->index) abort();
        st->over = 1;
        break;
    case RM_TOOL_BAD:
        check_utf8(e->text, e->len);
        no_marker(e->text, e->len);
        if (!e->why) abort();
        st->over = 1;
        break;
    default:
        abort();
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1) return 0;
    static state st;
    memset(&st, 0, sizeof st);
    im = data[0] & 1;
    tool_parser *p = tool_parser_new(im ? RM_CHAT_IM : RM_CHAT_XTML, on_tool, &st);
    if (!p) abort();
    size_t piece = 1 + (data[0] >> 1), i = 1;
    int ended = 0;
    while (i < size) {
        size_t k = size - i < piece ? size - i : piece;
        int r = tool_parser_feed(p, (const char *)data + i, k);
        if (ended && !r) abort();
        ended |= r;
        if (r != st.over) abort();
        i += k;
    }
    tool_parser_finish(p);
    if (!st.over) abort();
    tool_parser_free(p);
    return 0;
}
