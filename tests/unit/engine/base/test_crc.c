/* test_crc.c — base/crc.c: the CRC-32 against known vectors and fed in
 * pieces. */
#include <stdint.h>
#include "tests/unit/test.h"
#include "base/crc.h"

TEST(crc32_vectors)
{
    CHECK(crc_update(0, "", 0) == 0);
    CHECK(crc_update(0, "123456789", 9) == 0xCBF43926u);
    CHECK(crc_update(0, "The quick brown fox jumps over the lazy dog", 43) == 0x414FA339u);
    uint8_t buf[1000];
    for (int i = 0; i < 1000; i++) buf[i] = (uint8_t)(i * 7 + 3);
    uint32_t whole = crc_update(0, buf, sizeof buf);
    CHECK(crc_update(crc_update(0, buf, 333), buf + 333, 667) == whole);    /* incremental */
}
