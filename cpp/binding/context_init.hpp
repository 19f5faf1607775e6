// Aeron's context initialisers (aeron_context_init, aeron_driver_context_init,
// aeron_archive_context_init) compute the default Aeron directory from the user's name. When
// USER is unset, Aeron's username() lets getpwuid_r fill one static buffer of its own, and
// returns a pointer into it: two threads initialising contexts at once write that buffer
// together (found by .ci/tsan, free-threaded; with the GIL the calls never overlap). So every
// context initialisation takes this process-wide lock: they are rare and take microseconds.
#pragma once

#include <mutex>

namespace aeron_py {

// `init()` (one of the initialisers above), its result; one thread at a time.
template <typename Init>
int init_context_in_turn(Init init) {
    static std::mutex mutex;  // one for every caller: the function is inline, so is its static
    std::lock_guard<std::mutex> turn(mutex);
    return init();
}

}  // namespace aeron_py
