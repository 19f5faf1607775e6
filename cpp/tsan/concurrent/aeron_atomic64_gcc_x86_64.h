/*
 * aeron_py's stand-in for Aeron's x86-64 atomics header, in ThreadSanitizer builds only
 * (AERON_PY_SANITIZE=thread, .ci/tsan): CMakeLists.txt puts this folder first on the include
 * path, so Aeron's `#include "concurrent/aeron_atomic64_gcc_x86_64.h"` (its aeron_atomic.h)
 * finds this file instead, in Aeron's C code and ours alike.
 *
 * Why: on x86-64 Aeron orders its lock-free structures (ring buffers, log buffers, counters,
 * the image lists) with plain volatile accesses, compiler barriers and inline assembly, which
 * the processor's ordering makes correct but which ThreadSanitizer cannot see: every hand-off
 * would be reported as a race. Here the same operations, with the same names and the same
 * semantics, are GCC's __atomic builtins, which TSan understands: an acquire load, a release
 * store, sequentially consistent read-modify-writes. Fences stay fences (TSan ignores them;
 * Aeron's fences sit next to one of these accesses, which now carries the ordering).
 */
#ifndef AERON_ATOMIC64_GCC_X86_64_H
#define AERON_ATOMIC64_GCC_X86_64_H

#include <stdbool.h>
#include <stdint.h>

#define AERON_GET_ACQUIRE(dst, src)                                                     \
    do                                                                                  \
    {                                                                                   \
        AERON_ATOMIC_ASSERT_VOLATILE_LVALUE(src, "AERON_GET_ACQUIRE: src must be a volatile lvalue"); \
        (dst) = __atomic_load_n(&(src), __ATOMIC_ACQUIRE);                              \
    }                                                                                   \
    while (false)

#define AERON_SET_RELEASE(dst, src)                                                     \
    do                                                                                  \
    {                                                                                   \
        AERON_ATOMIC_ASSERT_VOLATILE_LVALUE(dst, "AERON_SET_RELEASE: dst must be a volatile lvalue"); \
        __atomic_store_n(&(dst), (src), __ATOMIC_RELEASE);                              \
    }                                                                                   \
    while (false)

#define AERON_GET_AND_ADD_INT64(original, dst, value)                                   \
    do                                                                                  \
    {                                                                                   \
        (original) = __atomic_fetch_add(&(dst), (int64_t)(value), __ATOMIC_SEQ_CST);    \
    }                                                                                   \
    while (false)

#define AERON_GET_AND_ADD_INT32(original, dst, value)                                   \
    do                                                                                  \
    {                                                                                   \
        (original) = __atomic_fetch_add(&(dst), (int32_t)(value), __ATOMIC_SEQ_CST);    \
    }                                                                                   \
    while (false)

inline bool aeron_cas_int64(volatile int64_t *dst, int64_t expected, int64_t desired)
{
    return __atomic_compare_exchange_n(dst, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

inline bool aeron_cas_uint64(volatile uint64_t *dst, uint64_t expected, uint64_t desired)
{
    return __atomic_compare_exchange_n(dst, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

inline bool aeron_cas_int32(volatile int32_t *dst, int32_t expected, int32_t desired)
{
    return __atomic_compare_exchange_n(dst, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

inline void aeron_acquire(void)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

inline void aeron_release(void)
{
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

#define AERON_DECL_ALIGNED(declaration, amt) declaration __attribute__((aligned(amt)))

#endif /* AERON_ATOMIC64_GCC_X86_64_H */
