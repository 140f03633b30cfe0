/* transcript.c — a session's conversation as JSONL, one {role, content,
 * reasoning_content, interrupted} object per line (the system prompt first),
 * written atomically and checked line by line when read back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "session/session.h"

/* One JSONL line for a message. */
static int append_line(rm_buf *b, json_t *j)
{
    char *line = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(j);
    int rc = !line || rm_buf_adds(b, line) || rm_buf_add(b, "\n", 1) ? -1 : 0;
    free(line);
    return rc;
}

int rm_session_save(const rm_session *s, const char *path, rm_err *err)
{
    rm_buf b = { 0 };
    int bad = s->system && append_line(&b, json_pack("{s:s,s:s}", "role", "system", "content", s->system));
    for (int i = 0; i < s->nmsgs && !bad; i++) {
        const session_msg *m = &s->msgs[i];
        json_t *j = json_pack("{s:s,s:s}", "role", m->role, "content", m->content);
        if (j && m->reasoning) json_object_set_new(j, "reasoning_content", json_string(m->reasoning));
        if (j && m->interrupted) json_object_set_new(j, "interrupted", json_true());
        bad = append_line(&b, j);
    }
    int rc = bad ? rm_errf(err, "%s: out of memory writing the transcript", path)
                 : rm_write_atomic(path, b.p ? b.p : "", b.len, 0644, err);
    rm_buf_free(&b);
    return rc;
}

int rm_session_load(rm_session *s, const char *path, rm_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return rm_errf(err, "%s: cannot open: %s", path, strerror(errno));
    rm_session_clear(s);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, rc = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (len == 1 && line[0] == '\n') continue;
        json_error_t je;
        json_t *j = json_loadb(line, (size_t)len, 0, &je);
        const char *role = j ? json_string_value(json_object_get(j, "role")) : NULL;
        const char *content = j ? json_string_value(json_object_get(j, "content")) : NULL;
        json_t *rj = j ? json_object_get(j, "reasoning_content") : NULL;
        if (!j) rc = rm_errf(err, "%s:%d: not valid JSON: %s", path, lineno, je.text);
        else if (!role || (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant") &&
                           strcmp(role, "tool")))
            rc = rm_errf(err, "%s:%d: \"role\" must be system, user, assistant or tool", path, lineno);
        else if (!content) rc = rm_errf(err, "%s:%d: \"content\" must be a string", path, lineno);
        else if (rj && !json_is_null(rj) && !json_is_string(rj))
            rc = rm_errf(err, "%s:%d: \"reasoning_content\" must be a string", path, lineno);
        else if (!strcmp(role, "system") && s->nmsgs == 0) rc = rm_session_set_system(s, content);
        else if (session_push_msg(s, role, content, json_string_value(rj))) rc = rm_errf(err, "out of memory");
        else s->msgs[s->nmsgs - 1].interrupted = json_is_true(json_object_get(j, "interrupted"));
        json_decref(j);
        if (rc) break;
    }
    free(line);
    fclose(f);
    if (rc) rm_session_clear(s);
    return rc;
}
