/* crc.h — the CRC-32 every checked file of the engine carries (stream-mode
 * expert files, snapshots): IEEE 802.3, the one zlib, gzip and `crc32`
 * compute, fed in pieces of any size. */
#ifndef REMORA_CRC_H
#define REMORA_CRC_H
#include <stddef.h>
#include <stdint.h>

/* The CRC of the bytes after those `crc` was computed over (0 to start). */
uint32_t crc_update(uint32_t crc, const void *p, size_t n);

#endif
