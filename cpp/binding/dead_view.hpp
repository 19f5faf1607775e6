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
#pragma once

#include <Python.h>

#ifdef Py_LIMITED_API
#error "dead_view.hpp needs CPython's non-limited memoryview layout"
#endif

namespace aeron_py::dead_view {

// A new memoryview over [data, data+length), writable or read-only; nullptr with an error set.
inline PyObject *make(void *data, Py_ssize_t length, bool writable) {
    return PyMemoryView_FromMemory(static_cast<char *>(data), length, writable ? PyBUF_WRITE : PyBUF_READ);
}

// Makes `view` (a memoryview from make()) and every view sharing its managed buffer raise
// ValueError on any further access. Never fails; `view` may be nullptr.
// Inlined: a zero-copy poll calls it once per message.
[[gnu::always_inline]] inline void kill(PyObject *view) noexcept {
    if (view == nullptr || !PyMemoryView_Check(view)) return;
    _PyManagedBufferObject *mbuf = reinterpret_cast<PyMemoryViewObject *>(view)->mbuf;
    if (mbuf == nullptr) return;
    // Our views have no exporter (master.obj == NULL); if one ever had, release it once here.
    if (mbuf->master.obj != nullptr && !(mbuf->flags & _Py_MANAGED_BUFFER_RELEASED))
        PyBuffer_Release(&mbuf->master);
    mbuf->flags |= _Py_MANAGED_BUFFER_RELEASED;
}

// Makes `view` (a read-only view from make(), since killed) usable again over
// [data, data+length) when nothing but the caller can reach it: one reference, no weak
// reference, no derived view (slice, cast, memoryview(view)) alive, no export, not
// released by its user. Returns false and leaves it untouched otherwise. Lets a poll reuse
// one view object for every fragment whose handler let go of it.
inline bool revive(PyObject *view, void *data, Py_ssize_t length) noexcept {
    auto *mv = reinterpret_cast<PyMemoryViewObject *>(view);
    _PyManagedBufferObject *mbuf = mv->mbuf;
    if (Py_REFCNT(view) != 1 || mv->weakreflist != nullptr || mv->exports != 0 ||
        (mv->flags & _Py_MEMORYVIEW_RELEASED) || mv->view.ndim != 1 || mbuf == nullptr || Py_REFCNT(mbuf) != 1 ||
        mbuf->exports != 1 || mbuf->master.obj != nullptr)
        return false;
    mbuf->master.buf = data;
    mbuf->master.len = length;
    mv->view.buf = data;
    mv->view.len = length;
    mv->view.shape[0] = length;
    mv->hash = -1;
    mbuf->flags &= ~_Py_MANAGED_BUFFER_RELEASED;
    return true;
}

// True when some consumer holds a raw buffer export of the view itself (its own exports
// count); exports taken from slices are not visible here.
inline bool exported(PyObject *view) noexcept {
    if (view == nullptr || !PyMemoryView_Check(view)) return false;
    return reinterpret_cast<PyMemoryViewObject *>(view)->exports > 0;
}

}  // namespace aeron_py::dead_view
