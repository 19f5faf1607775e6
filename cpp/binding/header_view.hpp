// Headers of received fragments. A HeaderView reads the aeron_header_t of the fragment being
// handled and is valid only during the handler call: one view per poller is reused for every
// fragment unless the handler kept it (its refcount stayed above ours), in which case that
// view is invalidated (its attributes raise ValueError) and a new one is made. `copy()`
// returns a detached Header holding aeron_header_values + aeron_header_position.
#pragma once

#include "common.hpp"

namespace aeron_py {

// Copy of aeron_header_values_t + aeron_header_position for one fragment.
struct Header {
    aeron_header_values_t values{};
    int64_t position = 0;
    int32_t next_term_offset = 0;       // aeron_header_next_term_offset
    size_t position_bits_to_shift = 0;  // aeron_header_position_bits_to_shift
};

// Points `*slot` (made on first use) at `header`; returns it (borrowed) or nullptr with an error set.
// A view made here reads its header in a Section on `lock` (the polled client's; may be null).
PyObject *header_view_bind(PyObject *&slot, aeron_header_t *header, PyObject *lock) noexcept;

// After the handler returned: detaches the view; if someone kept it, it is left invalid and
// dropped from the slot (the next fragment gets a fresh one).
void header_view_unbind(PyObject *&slot) noexcept;

void init_header(py::module_ &m);

}  // namespace aeron_py
