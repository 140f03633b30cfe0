/* manifest.h — which byte spans of a stream-mode model's local shards hold
 * downloaded bytes. A shard starts as a sparse file of its full size; every
 * span whose bytes are written and synced is added here and the manifest is
 * saved atomically, so an interrupted download resumes exactly where it
 * stopped and nothing reads a hole as data. Stored as
 * DIR/.remora/manifest.json: {"shards": {NAME: {"size": N, "spans": [[lo, hi], ...]}}}
 * with half-open, sorted, disjoint spans. Not thread-safe: callers lock. */
#ifndef REMORA_MANIFEST_H
#define REMORA_MANIFEST_H
#include <stdint.h>
#include "engine.h"

typedef struct mf_span { uint64_t lo, hi; } mf_span;

typedef struct mf_shard {
    char *name;
    uint64_t size;
    mf_span *spans;
    int n, cap;
} mf_shard;

typedef struct manifest {
    char *path;
    mf_shard *shards;
    int nshards, cap;
} manifest;

/* Reads path (a missing file is an empty manifest). */
int  manifest_load(manifest *m, const char *path, rm_err *err);
void manifest_free(manifest *m);
/* The index of shard `name`, added if new. When the recorded size differs
 * (the remote file changed) its spans are dropped. -1 when out of memory. */
int  manifest_shard(manifest *m, const char *name, uint64_t size);
/* The index of shard `name`, or -1. */
int  manifest_find(const manifest *m, const char *name);
/* Adds [lo, hi), merging with touching spans. */
int  manifest_add(manifest *m, int shard, uint64_t lo, uint64_t hi, rm_err *err);
int  manifest_covers(const manifest *m, int shard, uint64_t lo, uint64_t hi);
uint64_t manifest_bytes(const manifest *m, int shard);
/* The parts of [lo, hi) not covered, appended to *out (count in *n). */
int  manifest_gaps(const manifest *m, int shard, uint64_t lo, uint64_t hi, mf_span **out, int *n, int *cap);
int  manifest_save(const manifest *m, rm_err *err);

#endif
