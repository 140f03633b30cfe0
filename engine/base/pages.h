/* pages.h — how the engine asks for the large anonymous buffers it reads
 * weights into (the spine store's buffers, the expert slots): in huge pages
 * where the kernel offers them, and faulted in up front when asked.
 *
 * Why: the first touch of a page is paid in the kernel (zeroing it) and, on
 * the virtual machines this runs on, in the hypervisor too. On the 2-core
 * development machine, populating 10 GB took 18.3 s in 4 KB pages and
 * 9.1 s in 2 MB pages; a default-budget prompt, which fills its 10.4 GB
 * expert cache as it goes, spent 23% of its CPU samples in clear_page.
 * A 17.5 MB expert in 2 MB pages also costs 9 TLB entries instead of 4300.
 */
#ifndef REMORA_PAGES_H
#define REMORA_PAGES_H
#include <stddef.h>

/* Asks for transparent huge pages over [p, p+n) (madvise MADV_HUGEPAGE);
 * a kernel without them, or set to "never", leaves 4 KB pages. */
void rm_pages_hint(void *p, size_t n);
/* Faults [p, p+n) in for writing now (MADV_POPULATE_WRITE, or one write per
 * page where the kernel lacks it). */
void rm_pages_populate(void *p, size_t n);

#endif
