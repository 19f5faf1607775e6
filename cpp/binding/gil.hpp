// Letting go of the GIL around a call that may wait, and taking it back safely at exit.
//
// CPython 3.11-3.13 end a thread that takes the GIL back while the interpreter finalizes (a
// daemon thread still at work when the program exits) with pthread_exit: a "forced unwind" of
// its stack. It must meet no noexcept frame (pybind11's gil_scoped_release takes the GIL back in
// its destructor: std::terminate) and, in a libc++ build (the zig wheels), no catch (...) on its
// way out (pybind11's dispatcher has one: "uncaught foreign exception", fastcall.hpp).
//
// So the GIL is taken back only here, where a catch-all meets that unwind first and parks the
// thread for good, as CPython 3.14 does itself (PyThread_hang_thread): the process is exiting
// and nobody joins a daemon thread. Nothing above is unwound, so no Python reference is dropped
// without the GIL. Callers hold no lock of theirs when the GIL comes back (a lock_guard declared
// after a ReleasedGil is destroyed first), so a parked thread blocks no one.
#pragma once

#include <Python.h>

#include <unistd.h>

namespace aeron_py {

// The interpreter is finalizing and has ended this thread's right to run Python: wait for the
// process to exit.
[[noreturn]] inline void park_until_exit() {
    for (;;) pause();
}

// PyEval_RestoreThread(saved), or parked for good when the interpreter ends this thread.
inline void restore_gil(PyThreadState *saved) {
    try {
        PyEval_RestoreThread(saved);
    } catch (...) {  // pthread_exit's forced unwind, from CPython's take_gil
        park_until_exit();
    }
}

// The GIL released for this scope (PyEval_SaveThread); taken back by restore_gil.
class ReleasedGil {
public:
    ReleasedGil() : saved_(PyEval_SaveThread()) {}
    ~ReleasedGil() { restore_gil(saved_); }
    ReleasedGil(const ReleasedGil &) = delete;
    ReleasedGil &operator=(const ReleasedGil &) = delete;

private:
    PyThreadState *saved_;
};

// The GIL held for this scope by a thread that released it earlier in the same call (a C
// callback that runs Python during a wait), or parked for good at exit (as restore_gil).
class HeldGil {
public:
    HeldGil() {
        try {
            state_ = PyGILState_Ensure();
        } catch (...) {
            park_until_exit();
        }
    }
    ~HeldGil() { PyGILState_Release(state_); }
    HeldGil(const HeldGil &) = delete;
    HeldGil &operator=(const HeldGil &) = delete;

private:
    PyGILState_STATE state_{};
};

}  // namespace aeron_py
