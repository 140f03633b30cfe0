/* crc.c — zlib's CRC-32 (crc.h), fed in pieces of at most 1 GiB because
 * zlib's length argument is 32 bits wide. zlib computes it slicing-by-8,
 * about 8 bytes per step, cheap next to the read or write it checks. */
#include <zlib.h>
#include "base/crc.h"

uint32_t crc_update(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    uLong c = crc;
    while (n) {
        uInt part = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, part);
        p += part;
        n -= part;
    }
    return (uint32_t)c;
}
