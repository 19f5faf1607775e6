/* The last SETUP the endpoint filter dropped for its term length, kept so that the owner can
 * name the source and the term length in one summarised log line (endpoint_filter.h).
 *
 * A sequence lock with lock-free writers: a writer makes the sequence odd with a compare-and-swap
 * (if another writer holds it, this sample is skipped: it is only a sample), stores the fields,
 * then makes the sequence even again. A reader retries a bounded number of times while the
 * sequence is odd or changes under it. Every field is accessed atomically. */
#include "endpoint_filter_internal.h"

#define READ_ATTEMPTS (64)

static void split(const uint8_t address[16], uint64_t *hi, uint64_t *lo)
{
    *hi = 0;
    *lo = 0;
    for (int i = 0; i < 8; i++)
    {
        *hi = (*hi << 8) | address[i];
        *lo = (*lo << 8) | address[8 + i];
    }
}

static void join(uint64_t hi, uint64_t lo, uint8_t address[16])
{
    for (int i = 7; i >= 0; i--)
    {
        address[i] = (uint8_t)(hi & 0xFF);
        address[8 + i] = (uint8_t)(lo & 0xFF);
        hi >>= 8;
        lo >>= 8;
    }
}

void aeron_py_term_drop_sample_write(
    aeron_py_term_drop_sample_t *sample, const uint8_t address[16], int32_t term_length, int32_t reason)
{
    uint64_t sequence = __atomic_load_n(&sample->sequence, __ATOMIC_RELAXED);
    if ((sequence & 1) || !__atomic_compare_exchange_n(
        &sample->sequence, &sequence, sequence + 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    {
        return;
    }
    uint64_t hi, lo;
    split(address, &hi, &lo);
    __atomic_store_n(&sample->address_hi, hi, __ATOMIC_RELAXED);
    __atomic_store_n(&sample->address_lo, lo, __ATOMIC_RELAXED);
    __atomic_store_n(&sample->term_and_reason, ((uint64_t)(uint32_t)term_length << 32) | (uint32_t)reason,
        __ATOMIC_RELAXED);
    __atomic_store_n(&sample->sequence, sequence + 2, __ATOMIC_RELEASE);
}

int aeron_py_term_drop_sample_read(const aeron_py_term_drop_sample_t *sample, aeron_py_filter_term_drop_t *drop)
{
    for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++)
    {
        const uint64_t before = __atomic_load_n(&sample->sequence, __ATOMIC_ACQUIRE);
        if (0 == before)
        {
            return 0;
        }
        if (before & 1)
        {
            continue;
        }
        const uint64_t hi = __atomic_load_n(&sample->address_hi, __ATOMIC_RELAXED);
        const uint64_t lo = __atomic_load_n(&sample->address_lo, __ATOMIC_RELAXED);
        const uint64_t term_and_reason = __atomic_load_n(&sample->term_and_reason, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&sample->sequence, __ATOMIC_RELAXED) == before)
        {
            join(hi, lo, drop->address);
            drop->term_length = (int32_t)(uint32_t)(term_and_reason >> 32);
            drop->reason = (int32_t)(uint32_t)(term_and_reason & 0xFFFFFFFFu);
            return 1;
        }
    }
    return 0;
}
