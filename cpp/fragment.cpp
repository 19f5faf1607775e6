// Fragments: the header of a received frame (aeron_header_values), the fragment handler that
// calls Python, and reassembly (aeron_controlled_fragment_assembler_*). Payloads reach Python
// as `bytes` copies: a handler can keep them, so no view of the log buffer ever escapes.
#include "common.hpp"

namespace aeron_py {

namespace {

// Copy of aeron_header_values_t + aeron_header_position for one fragment.
struct Header {
    aeron_header_values_t values{};
    int64_t position = 0;
};

// Moves the pending Python exception into the context (re-raised by run_poll).
void capture_error(PollContext *context) {
    context->failed = true;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    context->error_type = py::reinterpret_steal<py::object>(type);
    context->error_value = py::reinterpret_steal<py::object>(value);
    context->error_tb = py::reinterpret_steal<py::object>(tb);
}

}  // namespace

aeron_controlled_fragment_handler_action_t on_fragment(void *clientd, const uint8_t *buffer, size_t length,
                                                       aeron_header_t *header) {
    auto *context = static_cast<PollContext *>(clientd);
    if (context->failed) return AERON_ACTION_ABORT;
    PyObject *data = PyBytes_FromStringAndSize(reinterpret_cast<const char *>(buffer), static_cast<Py_ssize_t>(length));
    if (data == nullptr) {
        capture_error(context);
        return AERON_ACTION_ABORT;
    }
    if (context->batch != nullptr) {
        const int rc = PyList_Append(context->batch, data);
        Py_DECREF(data);
        if (rc == 0) return AERON_ACTION_CONTINUE;
    } else {
        PyObject *result;
        if (context->with_header) {
            auto *copy = new Header();
            aeron_header_values(header, &copy->values);
            copy->position = aeron_header_position(header);
            py::object header_object = py::cast(copy, py::return_value_policy::take_ownership);
            result = PyObject_CallFunctionObjArgs(context->handler, data, header_object.ptr(), nullptr);
        } else {
            result = PyObject_CallOneArg(context->handler, data);
        }
        Py_DECREF(data);
        if (result != nullptr) {
            aeron_controlled_fragment_handler_action_t action = AERON_ACTION_CONTINUE;
            if (context->controlled && result != Py_None) {
                const long value = PyLong_AsLong(result);
                if (value >= AERON_ACTION_ABORT && value <= AERON_ACTION_CONTINUE) {
                    action = static_cast<aeron_controlled_fragment_handler_action_t>(value);
                } else {
                    if (!PyErr_Occurred())
                        PyErr_Format(PyExc_ValueError, "controlled fragment handler returned %ld, not an Action", value);
                    Py_DECREF(result);
                    result = nullptr;
                }
            }
            if (result != nullptr) {
                Py_DECREF(result);
                return action;
            }
        }
    }
    // The handler raised: this fragment counts as delivered, polling stops (BREAK), and the
    // exception is re-raised by run_poll. Later fragments stay in the log for the next poll.
    capture_error(context);
    return AERON_ACTION_BREAK;
}

FragmentAssembler::FragmentAssembler() {
    if (aeron_controlled_fragment_assembler_create(&assembler, on_fragment, &context) < 0)
        throw_aeron_error("aeron_controlled_fragment_assembler_create");
}

FragmentAssembler::~FragmentAssembler() {
    if (assembler != nullptr) aeron_controlled_fragment_assembler_delete(assembler);
}

int run_poll(PollContext &context, FragmentAssembler *assembler,
             const std::function<int(aeron_controlled_fragment_handler_t, void *)> &poll) {
    int count;
    if (assembler != nullptr) {
        auto &shared = assembler->context;
        shared.handler = context.handler;
        shared.batch = context.batch;
        shared.controlled = context.controlled;
        shared.with_header = context.with_header;
        shared.failed = false;
        count = poll(aeron_controlled_fragment_assembler_handler, assembler->assembler);
        shared.handler = nullptr;
        shared.batch = nullptr;
        if (shared.failed) {
            context.failed = true;
            context.error_type = std::move(shared.error_type);
            context.error_value = std::move(shared.error_value);
            context.error_tb = std::move(shared.error_tb);
        }
    } else {
        count = poll(on_fragment, &context);
    }
    if (context.failed) {
        PyErr_Restore(context.error_type.release().ptr(), context.error_value.release().ptr(),
                      context.error_tb.release().ptr());
        throw py::error_already_set();
    }
    if (count < 0) throw_aeron_error("aeron_controlled_poll");
    return count;
}

void init_fragment(py::module_ &m) {
    py::class_<Header>(m, "Header", "A copy of aeron_header_values_t for one fragment (aeron_header_values).")
        .def_property_readonly("session_id", [](const Header &h) { return h.values.frame.session_id; })
        .def_property_readonly("stream_id", [](const Header &h) { return h.values.frame.stream_id; })
        .def_property_readonly("term_id", [](const Header &h) { return h.values.frame.term_id; })
        .def_property_readonly("term_offset", [](const Header &h) { return h.values.frame.term_offset; })
        .def_property_readonly("frame_length", [](const Header &h) { return h.values.frame.frame_length; })
        .def_property_readonly("flags", [](const Header &h) { return h.values.frame.flags; })
        .def_property_readonly("type", [](const Header &h) { return h.values.frame.type; })
        .def_property_readonly("reserved_value", [](const Header &h) { return h.values.frame.reserved_value; })
        .def_property_readonly("initial_term_id", [](const Header &h) { return h.values.initial_term_id; })
        .def_property_readonly("position", [](const Header &h) { return h.position; }, "aeron_header_position")
        .def("__repr__", [](const Header &h) {
            return "<Header session_id=" + std::to_string(h.values.frame.session_id) +
                   " stream_id=" + std::to_string(h.values.frame.stream_id) +
                   " position=" + std::to_string(h.position) + ">";
        });

    py::class_<FragmentAssembler>(m, "FragmentAssembler",
                                  "aeron_controlled_fragment_assembler_t: reassembles messages larger than the MTU.")
        .def(py::init<>());

    m.attr("ACTION_ABORT") = static_cast<int>(AERON_ACTION_ABORT);
    m.attr("ACTION_BREAK") = static_cast<int>(AERON_ACTION_BREAK);
    m.attr("ACTION_COMMIT") = static_cast<int>(AERON_ACTION_COMMIT);
    m.attr("ACTION_CONTINUE") = static_cast<int>(AERON_ACTION_CONTINUE);
}

}  // namespace aeron_py
