/* The one clock of aeron_py's C parts: CLOCK_MONOTONIC in nanoseconds, the clock of
 * Python's time.monotonic_ns(), so times cross the binding unconverted. */
#ifndef AERON_PY_MONOTONIC_H
#define AERON_PY_MONOTONIC_H

#include <stdint.h>
#include <time.h>

static inline int64_t aeron_py_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * INT64_C(1000000000) + ts.tv_nsec;
}

#endif
