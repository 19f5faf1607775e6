// Aeron's context initialisers (aeron_context_init, aeron_driver_context_init,
// aeron_archive_context_init) compute the default Aeron directory from the user's name. When
// USER is unset, Aeron's username() lets getpwuid_r fill one static buffer of its own, and
// returns a pointer into it: two threads initialising contexts at once write that buffer
// together (found by .ci/tsan, free-threaded; with the GIL the calls never overlap). So every
// context initialisation takes this process-wide lock: they are rare and take microseconds.
#pragma once

#include <mutex>

namespace aeron_py {

// The one lock of every context initialisation (an inline function: one static in the module).
inline std::mutex &context_init_mutex() {
    static std::mutex mutex;
    return mutex;
}

// `init()` (one of the initialisers above), its result; one thread at a time. (The lock is not
// a static of this template: each instantiation, one per caller's lambda, would have its own.)
template <typename Init>
int init_context_in_turn(Init init) {
    std::lock_guard<std::mutex> turn(context_init_mutex());
    return init();
}

}  // namespace aeron_py
