// Block polls: see block_poll.hpp.
#include "block_poll.hpp"

#include "poll.hpp"

namespace aeron_py {

void on_block(void *clientd, const uint8_t *buffer, size_t length, int32_t session_id, int32_t term_id) noexcept {
    auto *state = static_cast<BlockPoll *>(clientd);
    if (state->failed) return;
    PyObject *result = nullptr;
    PyObject *data = PyBytes_FromStringAndSize(reinterpret_cast<const char *>(buffer), static_cast<Py_ssize_t>(length));
    PyObject *session = PyLong_FromLong(session_id);
    PyObject *term = PyLong_FromLong(term_id);
    if (data != nullptr && session != nullptr && term != nullptr) {
        PyObject *args[] = {data, session, term};
        result = PyObject_Vectorcall(state->handler, args, 3, nullptr);
    }
    Py_XDECREF(data);
    Py_XDECREF(session);
    Py_XDECREF(term);
    if (result == nullptr) {
        state->failed = true;
        PyErr_Fetch(&state->error_type, &state->error_value, &state->error_tb);
        return;
    }
    Py_DECREF(result);
}

long run_block_poll(SubState &sub, const py::object &handler, long block_length_limit, const char *call,
                    const std::function<long(BlockPoll &, size_t)> &poll) {
    if (!PyCallable_Check(handler.ptr()))
        throw py::type_error(std::string(call) + "(): handler must be callable, not " + Py_TYPE(handler.ptr())->tp_name);
    if (block_length_limit <= 0 || block_length_limit > INT32_MAX)
        throw py::value_error(std::string(call) + "(): block_length_limit must be between 1 and 2147483647 bytes, got " +
                              std::to_string(block_length_limit));
    sub.check_open();
    if (sub.polling > 0) throw_reentrant_poll(call);
    BlockPoll state;
    state.handler = handler.ptr();
    sub.polling++;
    sub.client->polling++;
    const long consumed = poll(state, static_cast<size_t>(block_length_limit));  // C calls only: no throw
    sub.polling--;
    sub.client->polling--;
    finish_poll(sub);
    if (state.failed) {
        PyErr_Restore(state.error_type, state.error_value, state.error_tb);
        throw py::error_already_set();
    }
    if (consumed < 0) throw_aeron_error(call);
    return consumed;
}

}  // namespace aeron_py
