// One client's calls, one at a time, on free-threaded CPython.
//
// Every guard of docs/safety.md (a poll's owner, a close deferred while a poll runs, a handle
// never freed under another call, dead views) was argued under the GIL: between two points
// where a thread may let go of the GIL (a wait in ReleasedGil, Python code that blocks), no
// other thread touches the client's state. On a free-threaded build (Py_GIL_DISABLED) each
// client has a lock object (ClientState::lock, a SectionLock of common.hpp), and every call on
// the client or on anything it made (publications, claims, subscriptions, images, counters,
// views) runs in a critical section on it. CPython suspends a critical section exactly where a GIL would be let go: when
// the thread detaches (PyEval_SaveThread, so every ReleasedGil) or blocks on another lock. So
// each guard's argument holds per client, and threads on different clients run in parallel.
// Critical sections cannot deadlock: a thread that would wait suspends the sections it holds.
//
// On builds with the GIL, Section compiles to nothing.
//
// A Section inside another on the same lock (a claim dropped by the commit of another, an object
// of the client freed by a handler during a poll) holds it already. CPython 3.13 would lock the
// mutex again through its slow path (it suspends the outer section, then waits: about 20 µs);
// 3.14 sees that the thread's innermost section holds it and does nothing. held_here() is that
// check, for 3.13t (docs/development.md, "CPython and Aeron internals").
#pragma once

#include <Python.h>

#include "tricks.hpp"

namespace aeron_py {

class Section {
public:
#ifdef Py_GIL_DISABLED
    // `lock` null: nothing to guard (an object of no client, such as an image snapshot).
    explicit Section(PyObject *lock) noexcept : held_(lock != nullptr && !held_here(lock)) {
        if (held_) PyCriticalSection_Begin(&section_, lock);
    }
    ~Section() {
        if (held_) PyCriticalSection_End(&section_);
    }
#else
    explicit Section(PyObject *) noexcept {}
#endif
    Section(const Section &) = delete;
    Section &operator=(const Section &) = delete;

private:
#ifdef Py_GIL_DISABLED
    // Whether this thread's innermost critical section is active and holds `lock`'s mutex. A free
    // mutex (one byte read) goes straight to PyCriticalSection_Begin's fast path.
    static bool held_here(PyObject *lock) noexcept {
#if PY_VERSION_HEX < 0x030E0000
        if (_Py_atomic_load_uint8_relaxed(&lock->ob_mutex._bits) == 0 || !tricks::on()) return false;
        constexpr uintptr_t kInactive = 0x1, kTagBits = 0x3;  // CPython's pycore_critical_section.h
        const uintptr_t top = PyThreadState_GET()->critical_section;
        if (top == 0 || (top & kInactive) != 0) return false;
        return reinterpret_cast<const PyCriticalSection *>(top & ~kTagBits)->_cs_mutex == &lock->ob_mutex;
#else
        (void)lock;
        return false;
#endif
    }

    PyCriticalSection section_;
    bool held_;
#endif
};

}  // namespace aeron_py
