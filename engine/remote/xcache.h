/* xcache.h — the raw-span disk cache of stream mode: one file per routed
 * expert, DIR/.remora/experts/L{layer}/E{expert}.bin, holding the expert's
 * own bytes (the spans of its tensors in shard order, concatenated) and a
 * 16-byte trailer: "RMX1", the CRC-32 of the bytes (IEEE, as zlib's), the
 * byte count (u64). Bytes and checksum are published by one rename, so a
 * file under the final name is whole or absent (and survives a crash once
 * written: the folder is synced too); a file damaged afterwards
 * (wrong size, wrong checksum) is detected, removed and fetched again. */
#ifndef REMORA_XCACHE_H
#define REMORA_XCACHE_H
#include <stddef.h>
#include <stdint.h>
#include "engine.h"

#define XC_TRAILER 16

uint32_t xc_crc32(uint32_t crc, const void *p, size_t n);
void xc_path(char *buf, size_t cap, const char *dir, int layer, int expert);
/* 1 when path is there with the size of n bytes plus the trailer. */
int  xc_present(const char *path, uint64_t n);
/* Publishes the n bytes at raw as path through base/file's atomic commit
 * (temporary name, write, fsync, size check, rename, folder fsync); the
 * pages written are dropped from the page cache. */
int  xc_store(const char *path, const void *raw, uint64_t n, rm_err *err);
/* Reads the n bytes of path into dst; with verify, also checks the CRC.
 * Returns 0; 1 when the file is missing or damaged (a damaged one is
 * removed and *damaged set); -1 on an I/O error. Reads bypass the page cache
 * (O_DIRECT) when dst is 4 KiB-aligned and the file system allows it. */
int  xc_load(const char *path, void *dst, uint64_t n, int verify, int *damaged, rm_err *err);

#endif
