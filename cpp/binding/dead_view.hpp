// Memoryviews over memory this extension does not own for long (a try_claim window in a
// publication's log, a fragment in an image's log), and a way to make such a view AND
// every view derived from it (slices, memoryview(view), casts) unusable at once.
//
// How: every memoryview derived from another shares its managed buffer
// (_PyManagedBufferObject, Include/cpython/memoryobject.h on 3.12+, memoryobject.h on
// 3.11). CPython checks the managed buffer's _Py_MANAGED_BUFFER_RELEASED flag before any
// access (its BASE_INACCESSIBLE / CHECK_RELEASED macros), so setting that flag makes every
// read, write, slice, tobytes() or export of any of those views raise ValueError
// ("operation forbidden on released memoryview object"). Views made by
// PyMemoryView_FromMemory have no exporter object (master.obj is NULL), so there is
// nothing else to release; releasing or deallocating the views later is a no-op on a
// released managed buffer. Verified on CPython 3.11, 3.12 and 3.13 (same struct, same flag).
//
// What it cannot protect: a consumer that already took the raw pointer through the buffer
// protocol (numpy.frombuffer, ctypes from_buffer, a C extension holding a Py_buffer) keeps
// that pointer; only Python-level memoryview access is guarded.
//
// Under AERON_PY_NO_TRICKS (tricks.hpp) none of the private parts run: views are made over
// a private copy (make_copy) and ended with the public memoryview.release() (release). The
// view itself then raises ValueError; its slices stay usable, but they only ever reach the
// copy, never the log.
#pragma once

#include <Python.h>

#ifdef Py_LIMITED_API
#error "dead_view.hpp needs CPython's non-limited memoryview layout"
#endif

#include "tricks.hpp"

namespace aeron_py::dead_view {

// A new memoryview over [data, data+length), writable or read-only; nullptr with an error set.
inline PyObject *make(void *data, Py_ssize_t length, bool writable) {
    return PyMemoryView_FromMemory(static_cast<char *>(data), length, writable ? PyBUF_WRITE : PyBUF_READ);
}

// A new memoryview over a private copy of [data, data+length): a bytes object (read-only)
// or a bytearray (writable) that only the view and its slices hold. nullptr with an error set.
inline PyObject *make_copy(const void *data, Py_ssize_t length, bool writable) {
    const auto *bytes = static_cast<const char *>(data);
    PyObject *copy = writable ? PyByteArray_FromStringAndSize(bytes, length) : PyBytes_FromStringAndSize(bytes, length);
    if (copy == nullptr) return nullptr;
    PyObject *view = PyMemoryView_FromObject(copy);
    Py_DECREF(copy);
    return view;
}

// memoryview.release() on `view` (public API): it raises ValueError on any later use.
// False with the error set: BufferError when a raw buffer export of the view itself is
// still held (the view then stays as it was), or whatever the call raised.
inline bool release(PyObject *view) noexcept {
    static PyObject *const name = PyUnicode_InternFromString("release");  // immortal enough: never freed
    if (name == nullptr) return false;
    PyObject *result = PyObject_CallMethodNoArgs(view, name);
    if (result == nullptr) return false;
    Py_DECREF(result);
    return true;
}

// Makes `view` (a memoryview from make()) and every view sharing its managed buffer raise
// ValueError on any further access. Never fails; `view` may be nullptr.
// Inlined: a zero-copy poll calls it once per message.
// Compiled only for the checked layouts (AERON_PY_CPYTHON_LAYOUTS); its callers use
// make_copy/release where tricks::layouts_on() is false.
[[gnu::always_inline]] inline void kill(PyObject *view) noexcept {
#if !AERON_PY_CPYTHON_LAYOUTS
    (void)view;
#else
    if (view == nullptr || !PyMemoryView_Check(view)) return;
    _PyManagedBufferObject *mbuf = reinterpret_cast<PyMemoryViewObject *>(view)->mbuf;
    if (mbuf == nullptr) return;
    // Our views have no exporter (master.obj == NULL); if one ever had, release it once here.
    if (mbuf->master.obj != nullptr && !(mbuf->flags & _Py_MANAGED_BUFFER_RELEASED))
        PyBuffer_Release(&mbuf->master);
    mbuf->flags |= _Py_MANAGED_BUFFER_RELEASED;
#endif
}

// Makes `view` (a read-only view from make(), since killed) usable again over
// [data, data+length) when nothing but the caller can reach it: one reference, no weak
// reference, no derived view (slice, cast, memoryview(view)) alive, no export, not
// released by its user. Returns false and leaves it untouched otherwise. Lets a poll reuse
// one view object for every fragment whose handler let go of it.
inline bool revive(PyObject *view, void *data, Py_ssize_t length) noexcept {
#if !AERON_PY_CPYTHON_LAYOUTS
    (void)view;
    (void)data;
    (void)length;
    return false;
#else
    auto *mv = reinterpret_cast<PyMemoryViewObject *>(view);
    _PyManagedBufferObject *mbuf = mv->mbuf;
    if (!tricks::sole_reference(view) || mv->weakreflist != nullptr || mv->exports != 0 ||
        (mv->flags & _Py_MEMORYVIEW_RELEASED) || mv->view.ndim != 1 || mbuf == nullptr ||
        !tricks::sole_reference(reinterpret_cast<PyObject *>(mbuf)) || mbuf->exports != 1 || mbuf->master.obj != nullptr)
        return false;
    mbuf->master.buf = data;
    mbuf->master.len = length;
    mv->view.buf = data;
    mv->view.len = length;
    mv->view.shape[0] = length;
    mv->hash = -1;
    mbuf->flags &= ~_Py_MANAGED_BUFFER_RELEASED;
    return true;
#endif
}

// True when some consumer holds a raw buffer export of the view itself (its own exports
// count); exports taken from slices are not visible here.
inline bool exported(PyObject *view) noexcept {
#if !AERON_PY_CPYTHON_LAYOUTS
    (void)view;
    return false;
#else
    if (view == nullptr || !PyMemoryView_Check(view)) return false;
    return reinterpret_cast<PyMemoryViewObject *>(view)->exports > 0;
#endif
}

}  // namespace aeron_py::dead_view
