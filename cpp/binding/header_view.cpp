// Header (a detached copy) and HeaderView (a view of the aeron_header_t of the fragment being
// handled; aeron_header_values, aeron_header_position, aeron_header_next_term_offset,
// aeron_header_position_bits_to_shift). See header_view.hpp.
#include "header_view.hpp"

#include <structmember.h>

#include "tricks.hpp"

namespace aeron_py {

namespace {

struct HeaderViewObject {
    PyObject_HEAD
    aeron_header_t *header;  // nullptr outside the handler call
    PyObject *lock;          // owned: the Section lock of the client whose polls bind it (or null)
};

PyObject *lock_of(PyObject *self) { return reinterpret_cast<HeaderViewObject *>(self)->lock; }

PyTypeObject *header_view_type = nullptr;

bool values_of(PyObject *self, aeron_header_values_t &values) {
    aeron_header_t *header = reinterpret_cast<HeaderViewObject *>(self)->header;
    if (header == nullptr) {
        PyErr_SetString(PyExc_ValueError,
                        "aeron_header_t view used after its fragment handler returned (it is valid only "
                        "during the call; copy() detaches one)");
        return false;
    }
    if (aeron_header_values(header, &values) < 0) {
        PyErr_SetString(PyExc_RuntimeError, "aeron_header_values failed");
        return false;
    }
    return true;
}

#define AERON_PY_HEADER_FIELD(name, expr)                         \
    PyObject *get_##name(PyObject *self, void *) {                \
        Section section(lock_of(self));                           \
        aeron_header_values_t v;                                  \
        if (!values_of(self, v)) return nullptr;                  \
        return PyLong_FromLongLong(static_cast<long long>(expr)); \
    }
AERON_PY_HEADER_FIELD(session_id, v.frame.session_id)
AERON_PY_HEADER_FIELD(stream_id, v.frame.stream_id)
AERON_PY_HEADER_FIELD(term_id, v.frame.term_id)
AERON_PY_HEADER_FIELD(term_offset, v.frame.term_offset)
AERON_PY_HEADER_FIELD(frame_length, v.frame.frame_length)
AERON_PY_HEADER_FIELD(flags, v.frame.flags)
AERON_PY_HEADER_FIELD(type, v.frame.type)
AERON_PY_HEADER_FIELD(reserved_value, v.frame.reserved_value)
AERON_PY_HEADER_FIELD(initial_term_id, v.initial_term_id)
#undef AERON_PY_HEADER_FIELD

PyObject *get_position(PyObject *self, void *) {
    Section section(lock_of(self));
    aeron_header_values_t v;
    if (!values_of(self, v)) return nullptr;
    return PyLong_FromLongLong(aeron_header_position(reinterpret_cast<HeaderViewObject *>(self)->header));
}

PyObject *get_next_term_offset(PyObject *self, void *) {
    Section section(lock_of(self));
    aeron_header_values_t v;
    if (!values_of(self, v)) return nullptr;
    return PyLong_FromLong(aeron_header_next_term_offset(reinterpret_cast<HeaderViewObject *>(self)->header));
}

PyObject *get_position_bits_to_shift(PyObject *self, void *) {
    Section section(lock_of(self));
    aeron_header_values_t v;
    if (!values_of(self, v)) return nullptr;
    return PyLong_FromSize_t(aeron_header_position_bits_to_shift(reinterpret_cast<HeaderViewObject *>(self)->header));
}

PyObject *get_is_valid(PyObject *self, void *) {
    Section section(lock_of(self));
    return PyBool_FromLong(reinterpret_cast<HeaderViewObject *>(self)->header != nullptr);
}

PyObject *view_copy(PyObject *self, PyObject *) {
    Section section(lock_of(self));
    aeron_header_values_t v;
    if (!values_of(self, v)) return nullptr;
    try {
        auto copy = std::make_unique<Header>();
        copy->values = v;
        aeron_header_t *header = reinterpret_cast<HeaderViewObject *>(self)->header;
        copy->position = aeron_header_position(header);
        copy->next_term_offset = aeron_header_next_term_offset(header);
        copy->position_bits_to_shift = aeron_header_position_bits_to_shift(header);
        return py::cast(copy.release(), py::return_value_policy::take_ownership).release().ptr();
    } catch (...) {
        py::detail::try_translate_exceptions();
        return nullptr;
    }
}

PyObject *view_repr(PyObject *self) {
    Section section(lock_of(self));
    aeron_header_t *header = reinterpret_cast<HeaderViewObject *>(self)->header;
    if (header == nullptr) return PyUnicode_FromString("<HeaderView (handler returned)>");
    aeron_header_values_t v;
    if (!values_of(self, v)) return nullptr;
    return PyUnicode_FromFormat("<HeaderView session_id=%d stream_id=%d position=%lld>", v.frame.session_id,
                                v.frame.stream_id, static_cast<long long>(aeron_header_position(header)));
}

PyGetSetDef view_getset[] = {
    {"session_id", get_session_id, nullptr, nullptr, nullptr},
    {"stream_id", get_stream_id, nullptr, nullptr, nullptr},
    {"term_id", get_term_id, nullptr, nullptr, nullptr},
    {"term_offset", get_term_offset, nullptr, nullptr, nullptr},
    {"frame_length", get_frame_length, nullptr, nullptr, nullptr},
    {"flags", get_flags, nullptr, nullptr, nullptr},
    {"type", get_type, nullptr, nullptr, nullptr},
    {"reserved_value", get_reserved_value, nullptr, nullptr, nullptr},
    {"initial_term_id", get_initial_term_id, nullptr, nullptr, nullptr},
    {"position", get_position, nullptr, const_cast<char *>("aeron_header_position"), nullptr},
    {"next_term_offset", get_next_term_offset, nullptr,
     const_cast<char *>("aeron_header_next_term_offset: the term offset of the frame after this one"), nullptr},
    {"position_bits_to_shift", get_position_bits_to_shift, nullptr,
     const_cast<char *>("aeron_header_position_bits_to_shift: log2 of the term length"), nullptr},
    {"is_valid", get_is_valid, nullptr, const_cast<char *>("True during the handler call only."), nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMethodDef view_methods[] = {
    {"copy", view_copy, METH_NOARGS,
     "copy($self, /)\n--\n\nA detached Header (aeron_header_values + aeron_header_position)."},
    {nullptr, nullptr, 0, nullptr},
};

void view_dealloc(PyObject *self) {
    PyTypeObject *type = Py_TYPE(self);
    Py_CLEAR(reinterpret_cast<HeaderViewObject *>(self)->lock);
    type->tp_free(self);
    Py_DECREF(type);
}

PyType_Slot view_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void *>(view_dealloc)},
    {Py_tp_repr, reinterpret_cast<void *>(view_repr)},
    {Py_tp_getset, view_getset},
    {Py_tp_methods, view_methods},
    {Py_tp_doc, const_cast<char *>("The header of the fragment being handled (aeron_header_t); valid only "
                                   "during the handler call.")},
    {0, nullptr},
};

PyType_Spec view_spec = {
    "aeron_py._aeron.HeaderView",
    sizeof(HeaderViewObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    view_slots,
};

}  // namespace

PyObject *header_view_bind(PyObject *&slot, aeron_header_t *header, PyObject *lock) noexcept {
    if (slot == nullptr) {
        slot = PyType_GenericAlloc(header_view_type, 0);
        if (slot == nullptr) return nullptr;
        reinterpret_cast<HeaderViewObject *>(slot)->lock = Py_XNewRef(lock);
    }
    reinterpret_cast<HeaderViewObject *>(slot)->header = header;
    return slot;
}

void header_view_unbind(PyObject *&slot) noexcept {
    if (slot == nullptr) return;
    reinterpret_cast<HeaderViewObject *>(slot)->header = nullptr;
    // The handler kept it: it stays invalid, the next fragment gets a new one. Under
    // AERON_PY_NO_TRICKS (tricks.hpp) never reused: a new view per fragment.
    if (!tricks::on() || !tricks::sole_reference(slot)) {
        Py_DECREF(slot);
        slot = nullptr;
    }
}

void init_header(py::module_ &m) {
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
        .def_property_readonly("next_term_offset", [](const Header &h) { return h.next_term_offset; },
                               "aeron_header_next_term_offset: the term offset of the frame after this one")
        .def_property_readonly("position_bits_to_shift", [](const Header &h) { return h.position_bits_to_shift; },
                               "aeron_header_position_bits_to_shift: log2 of the term length")
        .def("copy", [](const Header &h) { return Header(h); }, "Another detached Header.")
        .def("__repr__", [](const Header &h) {
            return "<Header session_id=" + std::to_string(h.values.frame.session_id) +
                   " stream_id=" + std::to_string(h.values.frame.stream_id) +
                   " position=" + std::to_string(h.position) + ">";
        });

    header_view_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&view_spec));
    if (header_view_type == nullptr) throw py::error_already_set();
    m.add_object("HeaderView", py::handle(reinterpret_cast<PyObject *>(header_view_type)));
}

}  // namespace aeron_py
