/* test_threadpool.c — base/threadpool.c: pool_for covers every index of
 * the range exactly once for any length, a pool_for inside a task runs
 * inline, pool_init is idempotent, and after pool_free everything runs on
 * the caller. (That the kernels give the same bits with any thread count is
 * test_kernels.c's.) */
#include <string.h>
#include "tests/unit/test.h"
#include "base/threadpool.h"

static void mark_task(void *ud, int b, int e)
{
    int *hits = ud;
    for (int i = b; i < e; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
}

static void nested_task(void *ud, int b, int e)
{
    int *hits = ud;
    for (int i = b; i < e; i++)
        pool_for(10, mark_task, hits + 1000 + 10 * i);   /* runs inline */
    mark_task(hits, b, e);
}

TEST(threadpool_covers_range_and_nests)
{
    pool_free();        /* a test before may have opened it with the machine's cores (16 on the GPU machine) */
    REQUIRE(pool_init(2) == 0);
    CHECK(pool_threads() == 2);
    CHECK(pool_init(3) == 0 && pool_threads() == 2);   /* idempotent */
    static int hits[2000];
    static const int ns[] = { 0, 1, 2, 7, 100, 999 };
    for (int k = 0; k < 6; k++) {
        memset(hits, 0, sizeof hits);
        pool_for(ns[k], mark_task, hits);
        int ok = 1;
        for (int i = 0; i < 1000; i++) ok &= hits[i] == (i < ns[k]);
        CHECK(ok);
    }
    memset(hits, 0, sizeof hits);
    pool_for(100, nested_task, hits);
    int ok = 1;
    for (int i = 0; i < 2000; i++) ok &= hits[i] == (i < 100 || i >= 1000);
    CHECK(ok);
    pool_free();
    CHECK(pool_threads() == 1);
}
