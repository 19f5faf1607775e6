// Block polls (aeron_image_block_poll): the raw frames of one image, as far as they are
// contiguous in its term, handed to Python as one bytes per block. Guarded as run_poll
// guards a fragment poll (poll.hpp): no re-entry, closes requested meanwhile run after it,
// and a handler's exception is re-raised once nothing else is delivered (block_poll.cpp).
#pragma once

#include <functional>

#include "common.hpp"

namespace aeron_py {

// A block poll in progress: the Python handler and the error it raised, if it did.
struct BlockPoll {
    PyObject *handler = nullptr;  // borrowed for the duration of the poll
    bool failed = false;
    PyObject *error_type = nullptr, *error_value = nullptr, *error_tb = nullptr;
};

// aeron_block_handler_t: handler(bytes, session_id, term_id). After the handler raised,
// nothing more is delivered (the callers stop polling further images).
void on_block(void *clientd, const uint8_t *buffer, size_t length, int32_t session_id, int32_t term_id) noexcept;

// Checks `handler` and `block_length_limit`, then runs `poll(state, limit)` (bytes consumed,
// or < 0 with Aeron's error set) inside the poll guard of `sub`; returns the bytes consumed.
// Raises what the handler raised, AeronError for an Aeron failure, TypeError/ValueError for
// bad arguments and RuntimeError for a poll started from a handler of the same subscription.
long run_block_poll(SubState &sub, const py::object &handler, long block_length_limit, const char *call,
                    const std::function<long(BlockPoll &, size_t)> &poll);

}  // namespace aeron_py
