/* trace.c — `--trace FILE`: one JSON line per rm_token_stats record, with
 * the phase times by name and the router's choices per MoE layer
 * ("kind": "token" or "prompt"), and one line per complete prefill pass
 * ("kind": "pass": its tokens, bytes, flops and seconds).
 *
 * Each line goes out in one write of the whole line; a write that fails or
 * falls short (a full disk) is cut back to the end of the last whole line,
 * tracing stops, and the turn reports the failure (session_trace_failed),
 * so a trace never ends in a partial line and never fails silently. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "session/session.h"
#include "session/trace.h"

/* Stops tracing after a failed write; the turn reports it. */
static void trace_fail(rm_session *s, int e)
{
    if (!s->trace.failed_errno) s->trace.failed_errno = e;
    if (s->trace.f) fclose(s->trace.f);
    s->trace.f = NULL;
}

/* One line: j (taken) as compact JSON and a newline, in one write. */
static void write_line(rm_session *s, json_t *j)
{
    char *line = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!s->trace.f) { free(line); return; }
    if (!line) { trace_fail(s, ENOMEM); return; }
    size_t n = strlen(line);
    line[n] = '\n';        /* json_dumps leaves room only for the NUL: write n + 1 bytes from a copy */
    char *buf = realloc(line, n + 2);
    if (!buf) { free(line); trace_fail(s, ENOMEM); return; }
    buf[n + 1] = 0;
    const int fd = fileno(s->trace.f);
    off_t end = lseek(fd, 0, SEEK_END);
    size_t w = 0;
    while (w < n + 1) {
        ssize_t r = write(fd, buf + w, n + 1 - w);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int e = r < 0 ? errno : ENOSPC;
            if (end >= 0 && ftruncate(fd, end)) { /* the cut failed too: the error below says the trace is bad */ }
            free(buf);
            trace_fail(s, e);
            return;
        }
        w += (size_t)r;
    }
    free(buf);
}

/* One JSONL record per token: the figures of rm_token_stats and the router's
 * choices per MoE layer for the token's (last) position. */

void session_trace_token(rm_session *s)
{
    const rm_token_stats *t = &s->stats;
    json_t *phases = json_object(), *routes = json_object();
    for (int i = 0; i < RM_PHASE_COUNT; i++) json_object_set_new(phases, rm_phase_name(i), json_real(t->phase_seconds[i]));
    for (int l = 0; l < s->m->cfg.num_layers; l++) {
        int li = s->moe_index[l];
        if (li < 0 || li >= t->route_layers) continue;
        json_t *ids = json_array();
        for (int i = 0; i < t->route_k; i++) json_array_append_new(ids, json_integer(t->route_ids[li][i]));
        char key[16];
        snprintf(key, sizeof key, "%d", l);
        json_object_set_new(routes, key, ids);
    }
    json_t *j = json_pack("{s:b,s:I,s:i,s:f,s:o,s:I,s:I,s:I,s:I,s:I,s:f,s:i,s:f,s:o}", "prefill", t->prefill,
                          "index", (json_int_t)t->token_index, "id", t->token_id, "seconds", t->seconds,
                          "phases", phases, "bytes_spine", (json_int_t)t->bytes_spine_read,
                          "bytes_experts", (json_int_t)t->bytes_expert_read,
                          "bytes_experts_from_cache", (json_int_t)t->bytes_expert_from_cache,
                          "expert_hits", (json_int_t)t->expert_hits, "expert_misses", (json_int_t)t->expert_misses,
                          "read_gbps", t->read_gbps, "queue_depth", t->queue_depth,
                          "retained_fraction", t->retained_fraction, "routes", routes);
    json_object_set_new(j, "bytes_net", json_integer((json_int_t)t->bytes_net));
    json_object_set_new(j, "net_gbps", json_real(t->net_gbps));
    json_object_set_new(j, "spec_drafted", json_integer((json_int_t)t->spec_drafted));
    json_object_set_new(j, "spec_accepted", json_integer((json_int_t)t->spec_accepted));
    json_object_set_new(j, "kind", json_string(t->kind == RM_REC_PROMPT ? "prompt" : "token"));
    json_object_set_new(j, "flops", json_integer((json_int_t)t->flops));
    if (t->spec_pass) {
        json_object_set_new(j, "spec_pass", json_integer(t->spec_pass));
        json_object_set_new(j, "spec_pass_pos", json_integer(t->spec_pass_pos));
    }
    if (t->kind == RM_REC_PROMPT)
        json_object_set_new(j, "prompt", json_pack("{s:i,s:i,s:i,s:i,s:b}", "ctx", t->prompt.ctx, "reused",
                                                   t->prompt.reused, "restored", t->prompt.restored, "prefilled",
                                                   t->prompt.done, "reprefill", t->prompt.reprefill));
    write_line(s, j);
}

void session_trace_pass(rm_session *s, const rm_token_stats *t)
{
    json_t *phases = json_object();
    for (int i = 0; i < RM_PHASE_COUNT; i++) json_object_set_new(phases, rm_phase_name(i), json_real(t->phase_seconds[i]));
    json_t *j = json_pack("{s:s,s:I,s:f,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "kind", "pass", "fed",
                          (json_int_t)t->token_index, "seconds", t->seconds, "phases", phases, "bytes_spine",
                          (json_int_t)t->bytes_spine_read, "bytes_experts", (json_int_t)t->bytes_expert_read,
                          "bytes_experts_from_cache", (json_int_t)t->bytes_expert_from_cache, "expert_hits",
                          (json_int_t)t->expert_hits, "expert_misses", (json_int_t)t->expert_misses, "bytes_net",
                          (json_int_t)t->bytes_net, "flops", (json_int_t)t->flops);
    write_line(s, j);
}

int session_trace_failed(rm_session *s, rm_err *err)
{
    if (!s->trace.failed_errno) return 0;
    return rm_errf_runtime(err, "%s: cannot write the trace: %s (tracing stopped; the trace ends at its last whole line)",
                           s->trace.path, strerror(s->trace.failed_errno));
}
