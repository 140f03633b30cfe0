/* source.h — stream mode for an open model: routed experts whose bytes are
 * not in the local shards come from the disk cache (xcache.h) or, on a miss
 * there, from the model's source URL (http.h), and land in the disk cache
 * on the way to the expert slot.
 *
 * A model directory is in stream mode when DIR/.remora/source.json exists
 * (written by rm_setup): {"source": URL, "mode": "stream" | "full",
 * "etags": {FILE: ETAG}}, the ETag of each file at setup: every expert
 * download asks for that revision, so bytes of another are never used.
 * DIR/.remora/manifest.json (manifest.h) says which shard bytes are local.
 */
#ifndef REMORA_REMOTE_H
#define REMORA_REMOTE_H
#include <jansson.h>
#include "format/st.h"
#include "format/config.h"
#include "io/experts.h"

typedef struct remote remote;

/* Opens stream mode for DIR: *out is NULL (and 0 returned) when DIR has no
 * source file. Fails when setup has not finished (a non-expert tensor is not
 * downloaded) or the manifest does not match the shards. */
int  remote_open(const char *dir, const st_set *st, const rm_config *cfg, int connections, remote **out,
                 rm_err *err);
void remote_free(remote *x);
/* The reader hooks for the expert cache. */
expert_remote remote_hooks(remote *x);
/* Since the last call: bytes downloaded, bytes of expert reads served from
 * a download (not from storage), and seconds with a download running. */
void remote_take_counters(remote *x, uint64_t *net_bytes, uint64_t *served_net, double *busy_s);
/* The pool over layers [first, last] (-1: open end). */
void remote_pool_status(const remote *x, int first, int last, rm_pool_status *st);

/* DIR/.remora/source.json: reads it (1 when missing; a damaged one is bad
 * input whose message says how setup rebuilds it), writes it atomically.
 * etags (may be NULL): {shard name: its ETag at setup}; a read gives a new
 * reference (an empty object when the file has none). */
int  remote_read_source(const char *dir, char *url, size_t cap, int *full, json_t **etags, rm_err *err);
int  remote_write_source(const char *dir, const char *url, int full, json_t *etags, rm_err *err);
/* Whether a tensor is a routed expert's ("...layers.L.block_sparse_moe.experts.E...");
 * layer and expert (may be NULL) receive its numbers. */
int  remote_expert_tensor(const char *name, int *layer, int *expert);

#endif
