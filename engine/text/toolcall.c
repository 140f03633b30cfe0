/* toolcall.c — reading tool calls out of a reply's tools block as it
 * streams (engine.h, rm_tool_event), for chat_stream.c.
 *
 * The parser reads text: the bytes of each token, special tokens as their
 * strings, so a marker is recognised whether the model wrote it as one
 * special id or as plain text split over several tokens; a tail that could
 * still become a marker is held back until it is one or is not (the
 * "partial tag overlap" of vLLM's kimi_k3_tool_parser.py).
 *
 * K3 XTML: <|open|>call tool="NAME" index="K"<|sep|> opens a call; each
 * <|open|>argument key="k" type="T"<|sep|>VALUE<|close|>argument<|sep|> is
 * one argument, VALUE raw text when T is string, JSON otherwise (checked
 * and re-written compact once whole); <|open|>json type="object"<|sep|>
 * {...}<|close|>json<|sep|> is the whole arguments object at once (the form
 * template.c renders when a client's arguments string is not an object);
 * <|close|>call<|sep|> ends the call, <|close|>tools<|sep|> the block.
 * Attribute values unescape &amp; and &quot; (template.c escapes them). As
 * in every peer's parser, a string value that contains the text
 * <|close|> cannot be told from the end of the argument.
 *
 * im format (Kimi-Linear, K2): <|tool_call_begin|>functions.NAME:IDX
 * <|tool_call_argument_begin|>{json}<|tool_call_end|>, ending at
 * <|tool_calls_section_end|> (the singular "tool_call_section" spelling
 * too; ids without "functions." too, as SGLang's regex takes them).
 *
 * Anything else (text between calls that is not blank, an unknown tag, an
 * argument without a key, a value that is not JSON, a block cut short)
 * makes the call malformed: RM_TOOL_BAD carries its text with the markers
 * left out, and the block ends there.
 */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "engine.h"
#include "text/toolcall.h"

#define HEADER_MAX 4096             /* a tag header or an im call id */
#define RAW_MAX (64 << 10)          /* text of a malformed call kept for the client */

enum { M_OPEN, M_CLOSE, M_SEP, M_CALL, M_ARG, M_END, M_SECTION_END, M_SECTION_END1 };
static const char *const xtml_marks[] = { "<|open|>", "<|close|>", "<|sep|>" };
static const char *const im_marks[] = { NULL, NULL, NULL, "<|tool_call_begin|>", "<|tool_call_argument_begin|>",
                                        "<|tool_call_end|>", "<|tool_calls_section_end|>",
                                        "<|tool_call_section_end|>" };
#define HOLD_MAX 32                 /* longer than any marker */

/* Where the parser is: between calls, in a tag header, in a call (between
 * its arguments), in an argument's value, in a json block; im: in a call's
 * id, in its arguments. */
enum { S_TOP, S_HEADER, S_CALL, S_VALUE, S_JSON, S_IM_ID, S_IM_ARGS, S_OVER };

struct tool_parser {
    rm_chat_format f;
    rm_tool_fn fn;
    void *ud;
    int state, back;                /* S_HEADER: the state the header belongs to */
    int closing;                    /* S_HEADER: after <|close|> */
    char hold[HOLD_MAX];
    size_t nhold;
    rm_buf header, value, raw, tmp;
    int ncalls, in_call;            /* calls begun; one is open */
    int nargs, string, whole;       /* whole: a json block gave the arguments */
    int junk;                       /* text where only markers belong: malformed at the next marker */
    rm_utf8_stream u8;
};

tool_parser *tool_parser_new(rm_chat_format f, rm_tool_fn fn, void *ud)
{
    tool_parser *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->f = f;
    p->fn = fn;
    p->ud = ud;
    p->header.max = HEADER_MAX;
    p->raw.max = RAW_MAX;
    return p;
}

void tool_parser_free(tool_parser *p)
{
    if (!p) return;
    rm_buf_free(&p->header);
    rm_buf_free(&p->value);
    rm_buf_free(&p->raw);
    rm_buf_free(&p->tmp);
    free(p);
}

static void event(tool_parser *p, int kind, const char *text, size_t len, const char *why)
{
    rm_tool_event e = { kind, p->in_call || kind == RM_TOOL_END ? p->ncalls - 1 : p->ncalls, text, len, why };
    if (p->fn) p->fn(p->ud, &e);
}

/* The call is malformed: say so with its text (as whole UTF-8, invalid
 * bytes as U+FFFD), and end the block. */
static void bad(tool_parser *p, const char *why)
{
    if (p->state == S_OVER) return;
    p->state = S_OVER;
    /* text on both sides of a marker that was left out may join into one */
    const char *const *marks = p->f == RM_CHAT_XTML ? xtml_marks : im_marks;
    for (int again = 1; again && p->raw.len;) {
        again = 0;
        for (int i = 0; i < (p->f == RM_CHAT_XTML ? 3 : 8); i++) {
            char *m = marks[i] ? memmem(p->raw.p, p->raw.len, marks[i], strlen(marks[i])) : NULL;
            if (!m) continue;
            size_t ml = strlen(marks[i]);
            memmove(m, m + ml, p->raw.len - (size_t)(m - p->raw.p) - ml);
            p->raw.len -= ml;
            again = 1;
        }
    }
    rm_utf8_stream u8 = { { 0 }, 0 };
    char *out = malloc(RM_UTF8_OUT_MAX(p->raw.len));
    size_t n = out ? rm_utf8_stream_feed(&u8, p->raw.p ? p->raw.p : "", p->raw.len, out, RM_UTF8_OUT_MAX(p->raw.len), 1)
                   : 0;
    event(p, RM_TOOL_BAD, out ? out : "", n, why);
    free(out);
}

/* A tool name must be whole UTF-8 to go out in JSON. */
static int valid_name(const char *s, size_t n)
{
    if (!n) return 0;
    json_t *v = json_stringn(s, n);
    json_decref(v);
    return v != NULL;
}

static void args(tool_parser *p, const char *s, size_t n)
{
    if (n) event(p, RM_TOOL_ARGS, s, n, NULL);
}

/* Bytes of a string value as JSON string text (without the quotes), as
 * complete UTF-8 (invalid bytes become U+FFFD, as in answer text). */
static int string_piece(tool_parser *p, const char *s, size_t n, int flush)
{
    char buf[RM_UTF8_OUT_MAX(128)];
    while (n > 0 || flush) {
        size_t k = n > 128 ? 128 : n;
        size_t o = rm_utf8_stream_feed(&p->u8, s, k, buf, sizeof buf, flush && k == n);
        if (o) {
            json_t *v = json_stringn(buf, o);
            char *j = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
            json_decref(v);
            if (!j) return -1;
            args(p, j + 1, strlen(j) - 2);
            free(j);
        }
        s += k;
        n -= k;
        if (n == 0) break;
    }
    return 0;
}

/* JSON text checked and written compact (must_object: an object); -1 when
 * it does not parse. */
static int json_value(tool_parser *p, const rm_buf *b, int must_object)
{
    json_t *v = json_loadb(b->p ? b->p : "", b->len, JSON_DECODE_ANY, NULL);
    if (!v || (must_object && !json_is_object(v))) { json_decref(v); return -1; }
    char *j = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    json_decref(v);
    if (!j) return -1;
    args(p, j, strlen(j));
    free(j);
    return 0;
}

/* The value of attribute key in an XTML header (`tag k="v" ...`), unescaped,
 * into p->tmp; 0 when found. */
static int attr(tool_parser *p, const char *h, size_t n, const char *key)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i + kl + 2 <= n; i++) {
        if (h[i] != ' ' || memcmp(h + i + 1, key, kl) || i + kl + 3 > n || h[i + 1 + kl] != '=' ||
            h[i + 2 + kl] != '"')
            continue;
        rm_buf_reset(&p->tmp);
        for (size_t j = i + kl + 3; j < n; j++) {
            if (h[j] == '"') return rm_buf_add(&p->tmp, "", 0);     /* p->tmp.p is set even when empty */
            const char *c = h + j;
            size_t adv = 1;
            if (n - j >= 5 && !memcmp(c, "&amp;", 5)) { c = "&"; adv = 5; }
            else if (n - j >= 6 && !memcmp(c, "&quot;", 6)) { c = "\""; adv = 6; }
            if (rm_buf_add(&p->tmp, c, 1)) return -1;
            j += adv - 1;
        }
        return -1;                  /* no closing quote */
    }
    return -1;
}

static int tag_is(const char *h, size_t n, const char *tag)
{
    size_t tl = strlen(tag);
    return n >= tl && !memcmp(h, tag, tl) && (n == tl || h[tl] == ' ');
}

static void begin(tool_parser *p, const char *name, size_t n)
{
    p->ncalls++;
    p->in_call = 1;
    event(p, RM_TOOL_BEGIN, name, n, NULL);
}

static void end_call(tool_parser *p)
{
    p->in_call = 0;
    event(p, RM_TOOL_END, NULL, 0, NULL);
    rm_buf_reset(&p->raw);
    p->state = S_TOP;
}

/* A whole XTML header: what it opens or closes decides the next state. */
static void header(tool_parser *p)
{
    const char *h = p->header.p ? p->header.p : "";
    size_t n = p->header.len;
    const int at = p->back;
    if (!p->closing && at == S_TOP && tag_is(h, n, "call")) {
        if (attr(p, h, n, "tool") || !valid_name(p->tmp.p, p->tmp.len)) { bad(p, "a call without a tool name"); return; }
        begin(p, p->tmp.p, p->tmp.len);
        p->nargs = p->whole = 0;
        p->state = S_CALL;
    } else if (p->closing && at == S_TOP && tag_is(h, n, "tools")) {
        p->state = S_OVER;
        event(p, RM_TOOL_DONE, NULL, 0, NULL);
    } else if (!p->closing && at == S_CALL && !p->whole && tag_is(h, n, "argument")) {
        if (attr(p, h, n, "key")) { bad(p, "an argument without a key"); return; }
        json_t *k = json_string(p->tmp.p);
        char *kj = k ? json_dumps(k, JSON_ENCODE_ANY) : NULL;
        json_decref(k);
        if (!kj) { bad(p, "an argument key that is not UTF-8"); return; }
        p->string = attr(p, h, n, "type") || !strcmp(p->tmp.p, "string");
        args(p, p->nargs++ ? "," : "{", 1);
        args(p, kj, strlen(kj));
        free(kj);
        args(p, p->string ? ":\"" : ":", p->string ? 2 : 1);
        memset(&p->u8, 0, sizeof p->u8);
        rm_buf_reset(&p->value);
        p->state = S_VALUE;
    } else if (!p->closing && at == S_CALL && !p->nargs && !p->whole && tag_is(h, n, "json")) {
        rm_buf_reset(&p->value);
        p->state = S_JSON;
    } else if (p->closing && at == S_VALUE && tag_is(h, n, "argument")) {
        if (p->string) {
            if (string_piece(p, "", 0, 1)) { bad(p, "out of memory"); return; }
            args(p, "\"", 1);
        } else if (json_value(p, &p->value, 0)) {
            bad(p, "an argument value that is not JSON");
            return;
        }
        p->state = S_CALL;
    } else if (p->closing && at == S_JSON && tag_is(h, n, "json")) {
        if (json_value(p, &p->value, 1)) { bad(p, "a json block that is not a JSON object"); return; }
        p->whole = 1;
        p->state = S_CALL;
    } else if (p->closing && at == S_CALL && tag_is(h, n, "call")) {
        if (!p->nargs && !p->whole) args(p, "{}", 2);
        else if (!p->whole) args(p, "}", 1);
        end_call(p);
    } else {
        bad(p, "an unexpected tag in the tools block");
    }
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\n' && s[i] != '\t' && s[i] != '\r') return 0;
    return 1;
}

/* Text between markers. */
static void text(tool_parser *p, const char *s, size_t n)
{
    if (!n || p->state == S_OVER) return;
    if (p->state != S_TOP || !blank(s, n))
        if (rm_buf_add(&p->raw, s, n)) {}      /* past RAW_MAX the rest is not kept */
    switch (p->state) {
    case S_TOP: case S_CALL: p->junk |= !blank(s, n); break;
    case S_HEADER: case S_IM_ID:
        if (rm_buf_add(&p->header, s, n)) bad(p, "a tag too long");
        break;
    case S_VALUE:
        if (p->string ? string_piece(p, s, n, 0) : rm_buf_add(&p->value, s, n)) bad(p, "out of memory");
        break;
    case S_JSON: case S_IM_ARGS:
        if (rm_buf_add(&p->value, s, n)) bad(p, "out of memory");
        break;
    }
}

/* An im call id, functions.NAME:IDX or NAME:IDX: the name. */
static void im_begin(tool_parser *p)
{
    const char *h = p->header.p ? p->header.p : "";
    size_t n = p->header.len;
    while (n && (h[n - 1] == ' ' || h[n - 1] == '\n')) n--;
    while (n && (*h == ' ' || *h == '\n')) { h++; n--; }
    if (n > 10 && !memcmp(h, "functions.", 10)) { h += 10; n -= 10; }
    const char *colon = memrchr(h, ':', n);
    if (colon) n = (size_t)(colon - h);
    if (!valid_name(h, n)) { bad(p, "a call without a tool name"); return; }
    begin(p, h, n);
    rm_buf_reset(&p->value);
    p->state = S_IM_ARGS;
}

static void mark(tool_parser *p, int m)
{
    if (p->junk) { bad(p, p->state == S_TOP ? "text between tool calls" : "text between arguments"); return; }
    switch (p->state) {
    case S_OVER: return;
    case S_TOP: case S_CALL: case S_VALUE: case S_JSON:
        /* a value ends at <|close|>; elsewhere a tag may open or close */
        if (m == M_CLOSE || (m == M_OPEN && (p->state == S_TOP || p->state == S_CALL))) {
            p->back = p->state;
            p->closing = m == M_CLOSE;
            rm_buf_reset(&p->header);
            p->state = S_HEADER;
            return;
        }
        if (p->state == S_TOP && (m == M_SECTION_END || m == M_SECTION_END1)) {
            p->state = S_OVER;
            event(p, RM_TOOL_DONE, NULL, 0, NULL);
            return;
        }
        if (p->state == S_TOP && m == M_CALL) {
            rm_buf_reset(&p->header);
            p->state = S_IM_ID;
            return;
        }
        break;
    case S_HEADER:
        if (m == M_SEP) { header(p); return; }
        break;
    case S_IM_ID:
        if (m == M_ARG) { im_begin(p); return; }
        break;
    case S_IM_ARGS:
        if (m == M_END) {
            if (json_value(p, &p->value, 1)) { bad(p, "arguments that are not a JSON object"); return; }
            end_call(p);
            return;
        }
        break;
    }
    bad(p, "a marker out of place in the tools block");
}

/* The marker that s (n bytes) is (its M_*), -1 when none; *prefix set
 * when s is a proper beginning of one. */
static int which_mark(const tool_parser *p, const char *s, size_t n, int *prefix)
{
    const char *const *marks = p->f == RM_CHAT_XTML ? xtml_marks : im_marks;
    const int nm = p->f == RM_CHAT_XTML ? 3 : 8;
    *prefix = 0;
    for (int i = 0; i < nm; i++) {
        if (!marks[i]) continue;
        size_t ml = strlen(marks[i]);
        if (n <= ml && !memcmp(s, marks[i], n)) {
            if (n == ml) return i;
            *prefix = 1;
        }
    }
    return -1;
}

int tool_parser_feed(tool_parser *p, const char *s, size_t n)
{
    size_t start = 0;               /* s[start, i) is text not yet handed on */
    for (size_t i = 0; i < n && p->state != S_OVER; i++) {
        if (!p->nhold && s[i] != '<') continue;
        if (!p->nhold) text(p, s + start, i - start);
        p->hold[p->nhold++] = s[i];
        start = i + 1;
        /* the held bytes: a marker, the start of one, or text (the first
         * byte; the rest may begin a marker) */
        for (;;) {
            int prefix, m = which_mark(p, p->hold, p->nhold, &prefix);
            if (m >= 0) { p->nhold = 0; mark(p, m); break; }
            if (prefix) break;
            size_t k = 1;
            while (k < p->nhold && p->hold[k] != '<') k++;
            text(p, p->hold, k);
            memmove(p->hold, p->hold + k, p->nhold - k);
            p->nhold -= k;
            if (!p->nhold) break;
        }
    }
    if (p->state != S_OVER && !p->nhold) text(p, s + start, n - start);
    return p->state == S_OVER;
}

int tool_parser_special(tool_parser *p, const char *s, size_t n)
{
    int prefix;
    if (p->nhold) {                 /* what was held is text: a special cannot end a marker */
        text(p, p->hold, p->nhold);
        p->nhold = 0;
    }
    if (which_mark(p, s, n, &prefix) >= 0) return tool_parser_feed(p, s, n);
    bad(p, "a special token in the tools block");
    return 1;
}

void tool_parser_finish(tool_parser *p)
{
    if (p->state == S_OVER) return;
    if (p->nhold) text(p, p->hold, p->nhold);
    p->nhold = 0;
    bad(p, p->junk ? "text between tool calls" : "the reply ended inside the tools block");
}
