/* align.h — the one block alignment of the engine's storage I/O: O_DIRECT
 * reads (the spine store, the expert slots, the disk cache) need offsets,
 * lengths and buffers aligned to the device's logical block, and 4 KiB
 * covers every device we meet. */
#ifndef REMORA_ALIGN_H
#define REMORA_ALIGN_H
#include <stdint.h>

#define RM_ALIGN 4096u

static inline uint64_t rm_align_down(uint64_t x) { return x & ~(uint64_t)(RM_ALIGN - 1); }
static inline uint64_t rm_align_up(uint64_t x) { return (x + RM_ALIGN - 1) & ~(uint64_t)(RM_ALIGN - 1); }

#endif
