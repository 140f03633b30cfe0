/* pages.c — huge-page hints and up-front faulting of weight buffers (see
 * pages.h). */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#include "base/pages.h"

void rm_pages_hint(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    (void)madvise(p, n, MADV_HUGEPAGE);   /* a hint: refusal leaves 4 KB pages */
#else
    (void)p; (void)n;
#endif
}

void rm_pages_populate(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    /* only a kernel without it (EINVAL) is done by hand: out of memory
     * (a cgroup's limit) leaves the pages to fault later, as MAP_POPULATE did */
    if (madvise(p, n, MADV_POPULATE_WRITE) == 0 || errno != EINVAL) return;
#endif
    const long pg = sysconf(_SC_PAGESIZE);
    volatile char *c = p;
    for (size_t o = 0; o < n; o += pg > 0 ? (size_t)pg : 4096) c[o] = 0;
}
