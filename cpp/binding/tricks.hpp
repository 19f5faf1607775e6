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

// The CPython object layouts the layout tricks (dead_view.hpp, fragment.cpp's bytes
// rewrite, recycled_int.hpp) were checked on: CPython 3.11 to 3.13 with the GIL. Elsewhere
// they are compiled out and their sites take the fallbacks, whatever AERON_PY_NO_TRICKS says.
#if !defined(Py_GIL_DISABLED) && PY_VERSION_HEX < 0x030E0000 && !defined(Py_LIMITED_API)
#define AERON_PY_CPYTHON_LAYOUTS 1
#else
#define AERON_PY_CPYTHON_LAYOUTS 0
#endif

namespace aeron_py::tricks {

// Whether the tricks on CPython object layouts run: the switch, on a checked CPython.
inline bool layouts_on() noexcept { return AERON_PY_CPYTHON_LAYOUTS && enabled; }

}  // namespace aeron_py::tricks
