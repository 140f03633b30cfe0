/* forced.c — a test hook: replies made of given tokens instead of sampled
 * ones, so that the server's tests can make a tiny random model "call a
 * tool" and check what clients receive, down to one token per byte.
 *
 * $REMORA_TEST_REPLIES names a JSON file holding an array of strings; the
 * k-th reply of the session (chat or raw) emits the tokens of string
 * k mod N, then samples as usual. In a string, <|name|> is that special
 * token when the tokenizer has it; every other byte is one token of its
 * own (each byte is a rank in every tiktoken vocabulary), so a reply's
 * text is split at every byte boundary. Drafting is off while a reply is
 * forced (a draft is accepted only when it is what the model would pick).
 * Without the variable nothing changes.
 */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "session/session.h"
#include "session/forced.h"

/* One string's tokens, appended to *ids. */
static int encode_forced(const rm_tokenizer *t, const char *s, size_t n, int32_t **ids, int *nids, int *cap)
{
    for (size_t i = 0; i < n;) {
        const char *e = s[i] == '<' && i + 1 < n && s[i + 1] == '|' ? memmem(s + i, n - i, "|>", 2) : NULL;
        if (e) {
            char name[128];
            size_t len = (size_t)(e + 2 - (s + i));
            if (len < sizeof name) {
                memcpy(name, s + i, len);
                name[len] = 0;
                int id = rm_tokenizer_special_id(t, name);
                if (id >= 0) {
                    if (RM_GROW(*ids, *cap, *nids + 1)) return -1;
                    (*ids)[(*nids)++] = id;
                    i += len;
                    continue;
                }
            }
        }
        int32_t *one = NULL;
        int k = rm_tokenizer_encode(t, s + i, 1, 0, &one, NULL);
        if (k < 0 || RM_GROW(*ids, *cap, *nids + k)) { free(one); return -1; }
        memcpy(*ids + *nids, one, (size_t)k * sizeof *one);
        *nids += k;
        free(one);
        i++;
    }
    return 0;
}

int session_forced_open(rm_session *s, rm_err *err)
{
    const char *path = getenv("REMORA_TEST_REPLIES");
    if (!path || !*path) return 0;
    json_error_t je;
    json_t *a = json_load_file(path, 0, &je);
    if (!json_is_array(a) || !json_array_size(a)) {
        json_decref(a);
        return rm_errf_input(err, "REMORA_TEST_REPLIES=%s: not a JSON array of strings (%s)", path, je.text);
    }
    size_t n = json_array_size(a);
    if (!(s->forced.seqs = calloc(n, sizeof *s->forced.seqs)) ||
        !(s->forced.lens = calloc(n, sizeof *s->forced.lens))) {
        json_decref(a);
        return rm_errf(err, "out of memory");
    }
    s->forced.n = (int)n;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(a, i);
        int cap = 0;
        if (!json_is_string(v) ||
            encode_forced(s->tok, json_string_value(v), json_string_length(v), &s->forced.seqs[i],
                          &s->forced.lens[i], &cap)) {
            json_decref(a);
            return rm_errf_input(err, "REMORA_TEST_REPLIES=%s: element %zu is not a string", path, i);
        }
    }
    json_decref(a);
    return 0;
}

void session_forced_free(rm_session *s)
{
    for (int i = 0; i < s->forced.n; i++) free(s->forced.seqs[i]);
    free(s->forced.seqs);
    free(s->forced.lens);
}

int session_forced_begin(rm_session *s)
{
    if (!s->forced.n) return 0;
    s->forced.cur = s->forced.replies++ % s->forced.n;
    s->forced.pos = 0;
    return 1;
}

int session_forced_next(rm_session *s, int32_t *id)
{
    if (!s->forced.n || s->forced.pos >= s->forced.lens[s->forced.cur]) return 0;
    *id = s->forced.seqs[s->forced.cur][s->forced.pos++];
    return 1;
}
