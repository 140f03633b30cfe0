/* xcache.h — the raw-span disk cache of stream mode: one file per routed
 * expert, DIR/.remora/experts/L{layer}/E{expert}.bin, holding the expert's
 * own bytes (the spans of its tensors in shard order, concatenated) and a
 * 40-byte trailer, little-endian: "RMX2", the CRC-32 of the bytes (IEEE, as
 * zlib's), the byte count (u64), the layer and expert (u32 each), the
 * expert's first byte in its shard (u64) and the revision it came from
 * (u64: a hash of the shard's ETag at setup, 0 when the server sent none).
 * Bytes and checksum are published by one rename, so a file under the final
 * name is whole or absent (and survives a crash once written: the folder is
 * synced too). Every read checks the trailer names the expert, span and
 * revision asked for, so a file copied or renamed over another's, or left
 * from another revision of the checkpoint, is never used; a file damaged
 * afterwards (wrong size, identity or checksum) is removed and fetched
 * again. */
#ifndef REMORA_XCACHE_H
#define REMORA_XCACHE_H
#include <stddef.h>
#include <stdint.h>
#include "engine.h"

#define XC_TRAILER 40

/* What a cache file must hold. */
typedef struct xc_id {
    int layer, expert;
    uint64_t off;           /* the expert's first byte in its shard */
    uint64_t rev;           /* xc_revision of the shard's ETag */
} xc_id;

/* The revision number of an ETag (FNV-1a, 64 bits); 0 for NULL or "". */
uint64_t xc_revision(const char *etag);
void xc_path(char *buf, size_t cap, const char *dir, int layer, int expert);
/* 1 when path is there with the size of n bytes plus the trailer. */
int  xc_present(const char *path, uint64_t n);
/* Publishes the n bytes at raw as path through base/file's atomic commit
 * (temporary name, write, fsync, size check, rename, folder fsync); the
 * pages written are dropped from the page cache. */
int  xc_store(const char *path, const void *raw, uint64_t n, const xc_id *id, rm_err *err);
/* Reads the n bytes of path into dst and checks its trailer names id; with
 * verify, also checks the CRC. Returns 0; 1 when the file is missing,
 * damaged or another expert's or revision's (such a file is removed and
 * *damaged set); -1 on an I/O error. Reads bypass the page cache
 * (O_DIRECT) when dst is 4 KiB-aligned and the file system allows it. */
int  xc_load(const char *path, void *dst, uint64_t n, const xc_id *id, int verify, int *damaged, rm_err *err);

#endif
