// Raw METH_FASTCALL methods on pybind11 types, for the few hottest calls only (offer,
// poll, try_claim and their batch forms). pybind11's dispatcher (argument loaders,
// overload resolution, a std::function-like thunk) costs on the order of 100 ns per
// call; a fast-call function costs a type check and a pointer load. Everything else in
// the extension stays ordinary pybind11. See benchmarks/README.md for the measurement.
//
// Rules for a fast function:
//  * it never lets a C++ exception escape (wrap the body in AERON_PY_FAST_BEGIN/END);
//  * it gets its C++ object with `self_as<T>()`, which also accepts instances of Python
//    subclasses of the pybind11 type (aeron_py's public classes subclass them);
//  * it parses arguments with `FastArgs` (positional and keyword, like a def).
#pragma once

#include "common.hpp"
#include "tricks.hpp"

#include <pybind11/detail/exception_translation.h>

namespace aeron_py::fast {

// The PyTypeObject pybind11 registered for T (valid after its py::class_ was created).
template <typename T>
PyTypeObject *type_of() {
    static PyTypeObject *type = reinterpret_cast<PyTypeObject *>(py::type::of<T>().ptr());
    return type;
}

// The types self_as<T> accepts without a check: T's own type and the first subclass seen
// (aeron_py's public class, in practice). Both are held by strong references, so a type
// object can never be freed and its address reused by another type. Null until seen.
template <typename T>
struct KnownTypes {
    // Atomic: on a free-threaded build two threads may see a type first at once (the one that
    // loses the exchange drops its reference). Relaxed loads are plain loads.
    static inline std::atomic<PyTypeObject *> own{nullptr};
    static inline std::atomic<PyTypeObject *> subclass{nullptr};

    static void remember(std::atomic<PyTypeObject *> &slot, PyTypeObject *type) {
        PyTypeObject *expected = nullptr;
        PyTypeObject *held = reinterpret_cast<PyTypeObject *>(Py_NewRef(type));
        if (!slot.compare_exchange_strong(expected, held)) Py_DECREF(held);
    }
};

// self_as<T> for an object whose type is not known yet, or that is not a simple pybind11
// instance: the full checks, with their TypeErrors.
template <typename T>
[[gnu::noinline]] T *self_as_checked(PyObject *self) {
    PyTypeObject *type = type_of<T>();
    PyTypeObject *actual = Py_TYPE(self);
    if (!PyObject_TypeCheck(self, type)) {
        PyErr_Format(PyExc_TypeError, "expected a %s, got %s", type->tp_name, actual->tp_name);
        return nullptr;
    }
    if (KnownTypes<T>::own.load(std::memory_order_acquire) == nullptr) KnownTypes<T>::remember(KnownTypes<T>::own, type);
    if (actual != type && KnownTypes<T>::subclass.load(std::memory_order_acquire) == nullptr)
        KnownTypes<T>::remember(KnownTypes<T>::subclass, actual);
    auto *inst = reinterpret_cast<py::detail::instance *>(self);
    if (inst->simple_layout) {
        if (!inst->simple_holder_constructed || inst->simple_value_holder[0] == nullptr) {
            PyErr_Format(PyExc_TypeError, "%s object is not initialised", type->tp_name);
            return nullptr;
        }
        return static_cast<T *>(inst->simple_value_holder[0]);
    }
    try {
        return py::handle(self).cast<T *>();
    } catch (...) {
        py::detail::try_translate_exceptions();
        return nullptr;
    }
}

// The C++ object behind `self`, or nullptr with TypeError set. The hot call (a known type,
// a constructed simple instance) is two comparisons and a load.
template <typename T>
inline T *self_as(PyObject *self) {
    PyTypeObject *actual = Py_TYPE(self);
    if (actual == KnownTypes<T>::subclass.load(std::memory_order_relaxed) ||
        actual == KnownTypes<T>::own.load(std::memory_order_relaxed)) {
        auto *inst = reinterpret_cast<py::detail::instance *>(self);
        if (inst->simple_layout && inst->simple_holder_constructed && inst->simple_value_holder[0] != nullptr)
            return static_cast<T *>(inst->simple_value_holder[0]);
    }
    return self_as_checked<T>(self);
}

// Attach `def` (static storage) to the pybind11 type as a method, and remember it as a fast
// method for adopt_fast_methods (fastcall.cpp).
void add_method(py::handle type, PyMethodDef *def);

// Give the Python subclass `cls` its own descriptor of every fast method it inherits. CPython
// 3.12+ specialises a call of a method descriptor only while `type(self)` is exactly the
// descriptor's type; inherited from the pybind11 base, every call through aeron_py's public
// class missed that check and took the generic call path (about 10 ns more per call, measured
// with benchmarks/fast_calls.py). Names `cls` defines itself are left alone. Under
// AERON_PY_NO_TRICKS it does nothing (after checking `cls`): the inherited descriptors stay,
// the calls take the generic path.
void adopt_fast_methods(py::handle cls);

// The value of an exact int that fits a machine word without a call into CPython (3.12+:
// the compact representation, an unstable-tier API); false for anything else, so the caller
// takes the general path with its error messages. Always false under AERON_PY_NO_TRICKS.
inline bool small_int(PyObject *object, long &out) {
#if PY_VERSION_HEX >= 0x030C0000
    if (tricks::on() && PyLong_CheckExact(object) && PyUnstable_Long_IsCompact(reinterpret_cast<PyLongObject *>(object))) {
        out = static_cast<long>(PyUnstable_Long_CompactValue(reinterpret_cast<PyLongObject *>(object)));
        return true;
    }
#else
    (void)object;
    (void)out;
#endif
    return false;
}

// Positional + keyword arguments of a METH_FASTCALL | METH_KEYWORDS function, matched to
// names in order. `get(i)` is the argument or nullptr when not given (borrowed).
template <size_t N>
class FastArgs {
public:
    FastArgs(const char *function, const char *const (&names)[N]) : function_(function), names_(names) {}

    // False with TypeError set on a bad call (too many, unknown or repeated names, or a
    // missing required argument among the first `required`).
    bool parse(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, size_t required) {
        for (auto &v : values_) v = nullptr;
        const Py_ssize_t npos = PyVectorcall_NARGS(nargs);
        if (npos > static_cast<Py_ssize_t>(N)) {
            PyErr_Format(PyExc_TypeError, "%s() takes at most %zu arguments (%zd given)", function_, N, npos);
            return false;
        }
        for (Py_ssize_t i = 0; i < npos; i++) values_[i] = args[i];
        if (kwnames != nullptr) {
            const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
            for (Py_ssize_t k = 0; k < nkw; k++) {
                PyObject *key = PyTuple_GET_ITEM(kwnames, k);
                size_t slot = N;
                for (size_t i = 0; i < N; i++) {
                    if (PyUnicode_CompareWithASCIIString(key, names_[i]) == 0) {
                        slot = i;
                        break;
                    }
                }
                if (slot == N) {
                    PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", function_, key);
                    return false;
                }
                if (values_[slot] != nullptr) {
                    PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", function_,
                                 names_[slot]);
                    return false;
                }
                values_[slot] = args[npos + k];
            }
        }
        for (size_t i = 0; i < required; i++) {
            if (values_[i] == nullptr) {
                PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", function_, names_[i]);
                return false;
            }
        }
        return true;
    }

    PyObject *get(size_t i) const { return values_[i]; }

    // An int argument (or `fallback` when not given); false with an error set otherwise.
    bool get_long(size_t i, long fallback, long &out) const {
        if (values_[i] == nullptr) {
            out = fallback;
            return true;
        }
        out = PyLong_AsLong(values_[i]);
        if (out == -1 && PyErr_Occurred()) {
            if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "%s(): %s must be an int, not %s", function_, names_[i],
                             Py_TYPE(values_[i])->tp_name);
            }
            return false;
        }
        return true;
    }

private:
    const char *function_;
    const char *const (&names_)[N];
    PyObject *values_[N]{};
};

}  // namespace aeron_py::fast

// A thread that takes the GIL back while the interpreter finalizes (a daemon thread at exit) is
// ended by CPython 3.11-3.13 with pthread_exit, which unwinds its stack as a "forced unwind".
// libstdc++ hands it to a catch (...) as abi::__forced_unwind, which must be rethrown, or the
// process aborts ("FATAL: exception not rethrown"). libc++abi (zig's, linked into the manylinux
// wheels) enters a catch (...) with it as a foreign exception that can be neither swallowed nor
// rethrown. So no fast function takes the GIL back but through gil.hpp, which parks the thread
// before that unwind reaches a frame of ours; the rethrow below lets through any other.
#if defined(__GLIBCXX__)
#include <cxxabi.h>
#define AERON_PY_RETHROW_FORCED_UNWIND \
    catch (abi::__forced_unwind &) {   \
        throw;                         \
    }
#else
#define AERON_PY_RETHROW_FORCED_UNWIND
#endif

// Body guards of a fast function: any C++ exception becomes the Python exception the
// registered translators make of it (AeronCallError -> AeronError, std::bad_alloc ->
// MemoryError, ...). Nothing propagates into CPython's C frames but a forced unwind (above).
#define AERON_PY_FAST_BEGIN try {
#define AERON_PY_FAST_END                        \
    }                                            \
    AERON_PY_RETHROW_FORCED_UNWIND               \
    catch (...) {                                \
        pybind11::detail::try_translate_exceptions(); \
        return nullptr;                          \
    }
