/* stats_json.c — rm_token_stats as one JSON object and back
 * (rm_token_stats_json, rm_token_stats_parse; the mapping is described in
 * engine.h and in the man page's SERVE section).
 *
 * The object is what `remora serve` sends in the `remora` field of each
 * chunk when a request asks for stats, and what a chat client of the server
 * reads back to draw the same panels as for a local model. Both directions
 * are driven by one table per struct, so a field added to the table is
 * written and read alike; the few fields that are not plain numbers (the
 * record kind, the phase times, the routes) are handled beside it.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <jansson.h>
#include "engine.h"

enum { F_U64, F_INT, F_DBL, F_BOOL };

typedef struct field {
    const char *name;
    size_t off;
    int type;
} field;

#define TS(f, t) { #f, offsetof(rm_token_stats, f), t }
static const field token_fields[] = {
    TS(token_index, F_U64), TS(token_id, F_INT), TS(seconds, F_DBL), TS(prefill, F_BOOL),
    TS(prompt_tokens, F_INT), TS(bytes_spine_read, F_U64), TS(bytes_expert_read, F_U64), TS(bytes_net, F_U64),
    TS(bytes_expert_from_cache, F_U64), TS(spine_resident_bytes, F_U64), TS(spine_total_bytes, F_U64),
    TS(expert_cache_bytes, F_U64), TS(expert_cache_capacity, F_U64), TS(expert_hits, F_U64),
    TS(expert_misses, F_U64), TS(retained_fraction, F_DBL), TS(read_gbps, F_DBL), TS(net_gbps, F_DBL),
    TS(device_gbps, F_DBL), TS(queue_depth, F_INT), TS(prefetch_issued, F_U64), TS(prefetch_used, F_U64),
    TS(read_busy_seconds, F_DBL), TS(flops, F_U64), TS(gpu_h2d_bytes, F_U64), TS(gpu_seconds, F_DBL),
    TS(vram_resident_bytes, F_U64),
    TS(spec_drafted, F_U64), TS(spec_accepted, F_U64), TS(spec_passes, F_U64), TS(spec_declined, F_U64),
    TS(spec_pass, F_INT), TS(spec_pass_pos, F_INT),
    TS(route_layers, F_INT), TS(route_k, F_INT), TS(num_experts, F_INT),
};
#undef TS

#define PF(f, t) { #f, offsetof(rm_prompt_figures, f), t }
static const field prompt_fields[] = {
    PF(ctx, F_INT), PF(reused, F_INT), PF(restored, F_INT), PF(total, F_INT), PF(done, F_INT), PF(chunk, F_INT),
    PF(chunks, F_INT), PF(chunk_tokens, F_INT), PF(layer, F_INT), PF(layers, F_INT), PF(reprefill, F_BOOL),
    PF(chunk_bytes_read, F_U64), PF(chunk_bytes_left, F_U64), PF(elapsed, F_DBL), PF(tok_per_s, F_DBL),
    PF(eta, F_DBL), PF(work, F_DBL), PF(restored_ram, F_INT), PF(restore_s, F_DBL), PF(kept, F_INT),
    PF(kept_ram, F_BOOL), PF(keep_s, F_DBL),
};
#undef PF

#define NFIELDS(t) (sizeof t / sizeof t[0])

/* A field added to either struct must be added to its table above (and to
 * the engine.h comment if it is not a plain number); these sizes are the
 * reminder, to be updated with the tables. */
_Static_assert(sizeof(rm_token_stats) == 13752, "rm_token_stats changed: update token_fields");
_Static_assert(sizeof(rm_prompt_figures) == 128, "rm_prompt_figures changed: update prompt_fields");

static const char *const kind_names[] = { [RM_REC_TOKEN] = "token", [RM_REC_PROMPT] = "prompt",
                                          [RM_REC_PROGRESS] = "progress" };
#define NKINDS (int)(sizeof kind_names / sizeof kind_names[0])

/* ---- writing ------------------------------------------------------------ */

/* A number JSON can hold: non-finite doubles become null. */
static json_t *real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* Sets every field of the table from the struct at base; 0, or -1 when out
 * of memory. */
static int put_fields(json_t *o, const void *base, const field *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *p = (const char *)base + f[i].off;
        json_t *v;
        switch (f[i].type) {
        case F_U64: {
            uint64_t u;
            memcpy(&u, p, sizeof u);
            v = json_integer(u > (uint64_t)LLONG_MAX ? LLONG_MAX : (json_int_t)u);
            break;
        }
        case F_INT: {
            int x;
            memcpy(&x, p, sizeof x);
            v = json_integer(x);
            break;
        }
        case F_BOOL: {
            int x;
            memcpy(&x, p, sizeof x);
            v = json_boolean(x);
            break;
        }
        default: {
            double d;
            memcpy(&d, p, sizeof d);
            v = real_or_null(d);
            break;
        }
        }
        if (json_object_set_new(o, f[i].name, v)) return -1;
    }
    return 0;
}

static int dump_to_buf(const char *data, size_t size, void *ud)
{
    return rm_buf_add(ud, data, size);
}

int rm_token_stats_json(const rm_token_stats *st, rm_buf *out)
{
    json_t *o = json_object(), *phases = json_object(), *routes = json_array();
    int rc = !o || !phases || !routes ? -1 : 0;
    if (!rc) rc = put_fields(o, st, token_fields, NFIELDS(token_fields));
    const char *kind = st->kind >= 0 && st->kind < NKINDS && kind_names[st->kind] ? kind_names[st->kind] : "token";
    if (!rc) rc = json_object_set_new(o, "kind", json_string(kind));
    for (int i = 0; !rc && i < RM_PHASE_COUNT; i++)
        rc = json_object_set_new(phases, rm_phase_name(i), real_or_null(st->phase_seconds[i]));
    if (!rc) rc = json_object_set(o, "phase_seconds", phases);
    if (!rc && st->kind != RM_REC_TOKEN) {
        json_t *p = json_object();
        rc = !p || put_fields(p, &st->prompt, prompt_fields, NFIELDS(prompt_fields)) ? -1 : 0;
        if (json_object_set_new(o, "prompt", p)) rc = -1;
    }
    const int layers = st->route_layers < RM_MAX_ROUTE_LAYERS ? st->route_layers : RM_MAX_ROUTE_LAYERS;
    const int k = st->route_k < RM_MAX_TOPK ? st->route_k : RM_MAX_TOPK;
    for (int l = 0; !rc && l < layers; l++) {
        json_t *ids = json_array();
        for (int i = 0; ids && i < k; i++)
            if (json_array_append_new(ids, json_integer(st->route_ids[l][i]))) { json_decref(ids); ids = NULL; }
        rc = !ids || json_array_append_new(routes, ids) ? -1 : 0;
    }
    if (!rc) rc = json_object_set(o, "route_ids", routes);
    /* per layer: the bytes its misses asked for, and how each choice was found */
    json_t *lb = json_array(), *rs = json_array();
    if (!lb || !rs) rc = -1;
    for (int l = 0; !rc && l < layers; l++) {
        json_t *row = json_array();
        rc = json_array_append_new(lb, json_integer((json_int_t)st->layer_bytes_read[l])) || !row ? -1 : 0;
        for (int i = 0; !rc && i < k; i++) rc = json_array_append_new(row, json_integer(st->route_state[l][i]));
        if (json_array_append_new(rs, row)) rc = -1;
    }
    if (!rc) rc = json_object_set_new(o, "layer_bytes_read", lb);
    else json_decref(lb);
    if (!rc) rc = json_object_set_new(o, "route_state", rs);
    else json_decref(rs);
    size_t len0 = out->len;
    if (!rc && json_dump_callback(o, dump_to_buf, out, JSON_COMPACT | JSON_REAL_PRECISION(17))) {
        out->len = len0;    /* a failed add left the buffer as it was; drop the part before it */
        if (out->p) out->p[len0] = 0;
        rc = -1;
    }
    json_decref(phases);
    json_decref(routes);
    json_decref(o);
    return rc;
}

/* ---- reading ------------------------------------------------------------ */

static int get_fields(const json_t *o, void *base, const field *f, size_t n, const char *where, rm_err *err)
{
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_object_get(o, f[i].name);
        if (!v || json_is_null(v)) continue;
        char *p = (char *)base + f[i].off;
        if (f[i].type == F_BOOL) {
            if (!json_is_boolean(v)) return rm_errf(err, "stats: %s%s must be true or false", where, f[i].name);
            int x = json_is_true(v);
            memcpy(p, &x, sizeof x);
        } else if (f[i].type == F_DBL) {
            if (!json_is_number(v)) return rm_errf(err, "stats: %s%s must be a number", where, f[i].name);
            double d = json_number_value(v);
            memcpy(p, &d, sizeof d);
        } else {
            json_int_t x = json_integer_value(v);
            int ok = json_is_integer(v) && (f[i].type == F_U64 ? x >= 0 : x >= INT_MIN && x <= INT_MAX);
            if (!ok)
                return rm_errf(err, "stats: %s%s must be an integer%s", where, f[i].name,
                               f[i].type == F_U64 ? " of at least 0" : " within the range of int");
            if (f[i].type == F_U64) {
                uint64_t u = (uint64_t)x;
                memcpy(p, &u, sizeof u);
            } else {
                int y = (int)x;
                memcpy(p, &y, sizeof y);
            }
        }
    }
    return 0;
}

static int get_routes(const json_t *r, rm_token_stats *st, rm_err *err)
{
    if (!r || json_is_null(r)) return 0;
    if (!json_is_array(r) || json_array_size(r) > RM_MAX_ROUTE_LAYERS)
        return rm_errf(err, "stats: route_ids must be an array of at most %d layers", RM_MAX_ROUTE_LAYERS);
    size_t l;
    json_t *ids;
    json_array_foreach(r, l, ids) {
        if (!json_is_array(ids) || json_array_size(ids) > RM_MAX_TOPK)
            return rm_errf(err, "stats: route_ids[%zu] must be an array of at most %d ids", l, RM_MAX_TOPK);
        size_t i;
        json_t *id;
        json_array_foreach(ids, i, id) {
            json_int_t x = json_integer_value(id);
            if (!json_is_integer(id) || x < INT16_MIN || x > INT16_MAX)
                return rm_errf(err, "stats: route_ids[%zu][%zu] must be an expert id", l, i);
            st->route_ids[l][i] = (int16_t)x;
        }
    }
    return 0;
}

/* layer_bytes_read: an array of byte counts; route_state: an array of
 * arrays of RM_ROUTE_* values. */
static int get_layer_figures(const json_t *o, rm_token_stats *st, rm_err *err)
{
    const json_t *lb = json_object_get(o, "layer_bytes_read"), *rs = json_object_get(o, "route_state");
    size_t l, i;
    json_t *v, *row;
    if (lb && !json_is_null(lb)) {
        if (!json_is_array(lb) || json_array_size(lb) > RM_MAX_ROUTE_LAYERS)
            return rm_errf(err, "stats: layer_bytes_read must be an array of at most %d layers", RM_MAX_ROUTE_LAYERS);
        json_array_foreach(lb, l, v) {
            if (!json_is_integer(v) || json_integer_value(v) < 0)
                return rm_errf(err, "stats: layer_bytes_read[%zu] must be an integer of at least 0", l);
            st->layer_bytes_read[l] = (uint64_t)json_integer_value(v);
        }
    }
    if (rs && !json_is_null(rs)) {
        if (!json_is_array(rs) || json_array_size(rs) > RM_MAX_ROUTE_LAYERS)
            return rm_errf(err, "stats: route_state must be an array of at most %d layers", RM_MAX_ROUTE_LAYERS);
        json_array_foreach(rs, l, row) {
            if (!json_is_array(row) || json_array_size(row) > RM_MAX_TOPK)
                return rm_errf(err, "stats: route_state[%zu] must be an array of at most %d states", l, RM_MAX_TOPK);
            json_array_foreach(row, i, v) {
                json_int_t x = json_integer_value(v);
                if (!json_is_integer(v) || x < RM_ROUTE_UNKNOWN || x > RM_ROUTE_READ)
                    return rm_errf(err, "stats: route_state[%zu][%zu] must be 0 to %d", l, i, RM_ROUTE_READ);
                st->route_state[l][i] = (uint8_t)x;
            }
        }
    }
    return 0;
}

int rm_token_stats_parse(const char *json, size_t len, rm_token_stats *st, rm_err *err)
{
    memset(st, 0, sizeof *st);
    json_error_t je;
    json_t *o = json_loadb(json, len, 0, &je);
    if (!o) return rm_errf(err, "stats: line %d column %d: %s", je.line, je.column, je.text);
    int rc = json_is_object(o) ? 0 : rm_errf(err, "stats: not a JSON object");
    if (!rc) rc = get_fields(o, st, token_fields, NFIELDS(token_fields), "", err);
    json_t *kind = json_object_get(o, "kind");
    if (!rc && kind && !json_is_null(kind)) {
        const char *k = json_string_value(kind);
        st->kind = -1;
        for (int i = 0; k && i < NKINDS; i++)
            if (kind_names[i] && !strcmp(k, kind_names[i])) st->kind = i;
        if (st->kind < 0) rc = rm_errf(err, "stats: kind must be \"token\", \"prompt\" or \"progress\"");
    }
    json_t *ph = json_object_get(o, "phase_seconds");
    if (!rc && ph && !json_is_null(ph)) {
        if (!json_is_object(ph)) rc = rm_errf(err, "stats: phase_seconds must be an object");
        for (int i = 0; !rc && i < RM_PHASE_COUNT; i++) {
            json_t *v = json_object_get(ph, rm_phase_name(i));
            if (!v || json_is_null(v)) continue;
            if (!json_is_number(v)) rc = rm_errf(err, "stats: phase_seconds.%s must be a number", rm_phase_name(i));
            else st->phase_seconds[i] = json_number_value(v);
        }
    }
    json_t *pr = json_object_get(o, "prompt");
    if (!rc && pr && !json_is_null(pr)) {
        if (!json_is_object(pr)) rc = rm_errf(err, "stats: prompt must be an object");
        else rc = get_fields(pr, &st->prompt, prompt_fields, NFIELDS(prompt_fields), "prompt.", err);
    }
    if (!rc) rc = get_routes(json_object_get(o, "route_ids"), st, err);
    if (!rc) rc = get_layer_figures(o, st, err);
    if (!rc && (st->route_layers < 0 || st->route_layers > RM_MAX_ROUTE_LAYERS || st->route_k < 0 ||
                st->route_k > RM_MAX_TOPK))
        rc = rm_errf(err, "stats: route_layers must be in [0, %d] and route_k in [0, %d]", RM_MAX_ROUTE_LAYERS,
                     RM_MAX_TOPK);
    json_decref(o);
    if (rc) memset(st, 0, sizeof *st);
    return rc;
}
