/* transcript.c — conversations as JSONL (rm_transcript_save/parse/load in
 * engine.h); a session saves and loads its conversation through them
 * (rm_session_save, rm_session_load in session.c).
 *
 * One JSON object per line: {"role", "content"} plus "reasoning_content"
 * when the message has one and "interrupted": true for a reply stopped
 * before its end; the system prompt is the first line, role "system".
 * Lines are written with JSON_ENSURE_ASCII, so a transcript is plain ASCII
 * whatever the text, and the file is replaced atomically (rm_write_atomic).
 * Text that is not valid UTF-8 (a prompt piped in from a binary file) is
 * stored with U+FFFD in place of each invalid sequence, as the chat view
 * shows it, rather than failing after the reply was generated. Reading
 * checks every line (CRLF line ends are accepted) and names the file and
 * line of the first bad one; a load that fails changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "session/session.h"
#include "base/file.h"

/* Transcripts are read whole: past this they are not a conversation. */
#define TRANSCRIPT_MAX (1ull << 30)

/* One JSONL line for a message; j is consumed. */
static int append_line(rm_buf *b, json_t *j)
{
    char *line = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(j);
    int rc = !line || rm_buf_adds(b, line) || rm_buf_add(b, "\n", 1) ? -1 : 0;
    free(line);
    return rc;
}

/* A JSON string of s, with U+FFFD for every invalid UTF-8 sequence. */
static json_t *text_json(const char *s)
{
    size_t n = strlen(s);
    json_t *j = json_stringn(s, n);
    if (j) return j;                        /* valid UTF-8: the common case */
    char *fixed = malloc(RM_UTF8_OUT_MAX(n));
    if (!fixed) return NULL;
    rm_utf8_stream u = { { 0 }, 0 };
    size_t k = rm_utf8_stream_feed(&u, s, n, fixed, RM_UTF8_OUT_MAX(n), 1);
    j = json_stringn(fixed, k);
    free(fixed);
    return j;
}

/* {"role": role, "content": content}, the texts repaired as text_json does. */
static json_t *message_json(const char *role, const char *content)
{
    json_t *j = json_object();
    if (j && !json_object_set_new(j, "role", text_json(role)) && !json_object_set_new(j, "content", text_json(content)))
        return j;
    json_decref(j);
    return NULL;
}

int rm_transcript_save(const char *path, const rm_chat_msg *msgs, const int *interrupted, int n,
                       const char *system, rm_err *err)
{
    rm_buf b = { 0 };
    int bad = system && append_line(&b, message_json("system", system));
    for (int i = 0; i < n && !bad; i++) {
        const rm_chat_msg *m = &msgs[i];
        json_t *j = message_json(m->role ? m->role : "", m->content ? m->content : "");
        if (j && m->reasoning_content && json_object_set_new(j, "reasoning_content", text_json(m->reasoning_content)))
            { json_decref(j); j = NULL; }
        if (j && interrupted && interrupted[i] && json_object_set_new(j, "interrupted", json_true()))
            { json_decref(j); j = NULL; }
        if (j && interrupted && interrupted[i] == RM_STOPPED_PROMPT &&
            json_object_set_new(j, "stopped_in", json_string("prompt")))
            { json_decref(j); j = NULL; }
        bad = append_line(&b, j);
    }
    int rc = bad ? rm_errf(err, "%s: out of memory writing the transcript", path)
                 : rm_write_atomic(path, b.p ? b.p : "", b.len, 0600, err);
    rm_buf_free(&b);
    return rc;
}

void rm_transcript_free(rm_transcript *t)
{
    for (int i = 0; i < t->n; i++) {
        free((char *)t->msgs[i].role);
        free((char *)t->msgs[i].content);
        free((char *)t->msgs[i].reasoning_content);
    }
    free(t->msgs);
    free(t->interrupted);
    free(t->system);
    memset(t, 0, sizeof *t);
}

/* Appends one message (strings copied). */
static int add_msg(rm_transcript *t, int *cap, int *icap, const char *role, const char *content,
                   const char *reasoning, int interrupted)
{
    if (RM_GROW(t->msgs, *cap, t->n + 1) || RM_GROW(t->interrupted, *icap, t->n + 1)) return -1;
    rm_chat_msg *m = &t->msgs[t->n];
    *m = (rm_chat_msg){ strdup(role), strdup(content), reasoning ? strdup(reasoning) : NULL, NULL };
    if (!m->role || !m->content || (reasoning && !m->reasoning_content)) {
        free((char *)m->role); free((char *)m->content); free((char *)m->reasoning_content);
        return -1;
    }
    t->interrupted[t->n++] = interrupted;
    return 0;
}

/* Whether a line holds only white space (a blank line, "\r" of CRLF included). */
static int blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') return 0;
    return 1;
}

/* One line of a transcript into t; name and lineno for the message. */
static int parse_line(const char *name, int lineno, const char *line, size_t len, rm_transcript *t, int *cap,
                      int *icap, rm_err *err)
{
    json_error_t je;
    json_t *j = json_loadb(line, len, 0, &je);
    const char *role = j ? json_string_value(json_object_get(j, "role")) : NULL;
    const char *content = j ? json_string_value(json_object_get(j, "content")) : NULL;
    json_t *rj = j ? json_object_get(j, "reasoning_content") : NULL;
    int rc = 0;
    if (!j && (json_error_code(&je) == json_error_out_of_memory || !je.text[0])) rc = rm_errf_runtime(err, "%s:%d: out of memory", name, lineno);
    else if (!j) rc = rm_errf(err, "%s:%d: not valid JSON: %s", name, lineno, je.text);
    else if (!role || (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant") &&
                       strcmp(role, "tool")))
        rc = rm_errf(err, "%s:%d: \"role\" must be system, user, assistant or tool", name, lineno);
    else if (!content) rc = rm_errf(err, "%s:%d: \"content\" must be a string", name, lineno);
    else if (rj && !json_is_null(rj) && !json_is_string(rj))
        rc = rm_errf(err, "%s:%d: \"reasoning_content\" must be a string", name, lineno);
    else if (!strcmp(role, "system") && t->n == 0) {    /* the system prompt */
        char *sys = strdup(content);
        if (!sys) rc = rm_errf(err, "out of memory");
        else { free(t->system); t->system = sys; }
    } else {
        const char *in = json_string_value(json_object_get(j, "stopped_in"));
        const int stopped = !json_is_true(json_object_get(j, "interrupted")) ? 0
                            : in && !strcmp(in, "prompt") ? RM_STOPPED_PROMPT : RM_STOPPED_REPLY;
        if (add_msg(t, cap, icap, role, content, json_string_value(rj), stopped)) rc = rm_errf(err, "out of memory");
    }
    json_decref(j);
    return rc;
}

int rm_transcript_parse(const char *text, size_t len, const char *name, rm_transcript *t, rm_err *err)
{
    memset(t, 0, sizeof *t);
    int lineno = 0, rc = 0, cap = 0, icap = 0;
    for (size_t pos = 0; pos < len && !rc;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        lineno++;
        if (!blank(text + pos, n)) rc = parse_line(name, lineno, text + pos, n, t, &cap, &icap, err);
        pos += n + 1;
    }
    if (rc) rm_transcript_free(t);
    return rc;
}

int rm_transcript_load(const char *path, rm_transcript *t, rm_err *err)
{
    memset(t, 0, sizeof *t);
    size_t len = 0;
    char *text = file_read(path, TRANSCRIPT_MAX, &len, err);
    if (!text) return -1;
    int rc = rm_transcript_parse(text, len, path, t, err);
    free(text);
    return rc;
}
