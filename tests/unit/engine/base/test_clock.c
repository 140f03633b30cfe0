/* test_clock.c — base/clock.c: rm_now() is a monotonic clock in seconds
 * (a sleep of 20 ms reads as at least that, never as a step back). */
#include <time.h>
#include "tests/unit/test.h"
#include "engine.h"

TEST(clock_is_monotonic)
{
    double a = rm_now(), b = rm_now();
    CHECK(a > 0 && b >= a);
    nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
    double c = rm_now();
    CHECKF(c - b >= 0.019 && c - b < 5, "%.4f s", c - b);
}
