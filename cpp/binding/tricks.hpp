// The one switch for every speed trick that leans on CPython or Aeron internals
// (docs/development.md, "CPython and Aeron internals"): AERON_PY_NO_TRICKS=1 in the
// environment when aeron_py._aeron is imported turns them all off, for the life of the
// process; _aeron.TRICKS says which way it went. With the tricks off every such site takes
// its public-API fallback: a new object where one would be recycled, Aeron's own poll
// where its structures would be peeked at. The contract of docs/safety.md holds either way.
//
// Read once, by init_module, before any other code of the extension runs, and never
// written again: the import lock orders that write before every later read.
#pragma once

#include <Python.h>

namespace aeron_py::tricks {

// False when AERON_PY_NO_TRICKS asked for the public-API fallbacks (module.cpp).
extern bool enabled;

// Whether the tricks are on: one well-predicted load of a global at each site.
inline bool on() noexcept { return enabled; }

// Parses AERON_PY_NO_TRICKS (unset, "", 0, false, no, off: tricks on; 1, true, yes, on: off;
// case-insensitive) into `enabled`; false with ImportError set for any other value.
bool read_environment() noexcept;

}  // namespace aeron_py::tricks

// The CPython object layouts the layout tricks (dead_view.hpp's memoryviews, fragment.cpp's
// bytes rewrite, recycled_int.hpp) were checked on: CPython 3.11 to 3.13, and for the bytes and
// ints (AERON_PY_CPYTHON_RECYCLING) the free-threaded 3.13t too. Elsewhere they are compiled out
// and their sites take the fallbacks, whatever AERON_PY_NO_TRICKS says.
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000 && !defined(Py_LIMITED_API)
#define AERON_PY_CPYTHON_RECYCLING 1
#else
#define AERON_PY_CPYTHON_RECYCLING 0
#endif
#if AERON_PY_CPYTHON_RECYCLING && !defined(Py_GIL_DISABLED)
#define AERON_PY_CPYTHON_LAYOUTS 1
#else
#define AERON_PY_CPYTHON_LAYOUTS 0
#endif

namespace aeron_py::tricks {

// Whether the memoryview tricks run (dead_view.hpp): the switch, on a checked CPython.
inline bool layouts_on() noexcept { return AERON_PY_CPYTHON_LAYOUTS && enabled; }

// Whether bytes and ints are rewritten in place (fragment.cpp, recycled_int.hpp).
inline bool recycling_on() noexcept { return AERON_PY_CPYTHON_RECYCLING && enabled; }

// Whether the caller's reference to `object` is its only one, so that no other code can see it
// change (a cache about to rewrite or reuse it; docs/safety.md). With the GIL: a refcount of 1.
// Free-threaded, the count is split: the owning thread's `ob_ref_local`, which only that thread
// writes, and `ob_ref_shared`, which the others change atomically. So: owned by this thread
// (its local count is not racing), 1 local, and a shared count of 0, neither queued nor merged.
// Another thread can only hold a reference it counted in `ob_ref_shared`, and its last decrement
// there is a sequentially consistent read-modify-write: reading it back with acquire orders that
// thread's every use of the object before the caller's rewrite. The shared word's flag "maybe
// weakly referenced" (CPython sets it on many objects) is allowed: as with the GIL, weak
// references are each site's to check (bytes and ints have none; claims and views check theirs).
inline bool sole_reference(PyObject *object) noexcept {
#ifdef Py_GIL_DISABLED
    if (!_Py_IsOwnedByCurrentThread(object) || _Py_atomic_load_uint32_relaxed(&object->ob_ref_local) != 1)
        return false;
    const Py_ssize_t shared = _Py_atomic_load_ssize_acquire(&object->ob_ref_shared);
    return shared == 0 || shared == _Py_REF_MAYBE_WEAKREF;
#else
    return Py_REFCNT(object) == 1;
#endif
}

}  // namespace aeron_py::tricks
