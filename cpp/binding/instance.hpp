// Making pybind11 instances of a Python subclass from C++ (aeron_py's public classes, e.g.
// aeron_py.Claim, subclass the extension's types with __slots__ = ()), and attaching raw
// getters. `obj.__class__ = Subclass` is refused by CPython here: a Python subclass is a GC
// type and the pybind11 base is not, so the instance must be allocated as the subclass.
#pragma once

#include "common.hpp"

namespace aeron_py::instance {

// A new instance of `type` (the pybind11 type of T or a Python subclass of it, with one
// pybind11 base) owning `value` (deleted by the instance). Throws on error; `value` is
// deleted if the instance cannot be made.
template <typename T>
py::object adopt(PyTypeObject *type, std::unique_ptr<T> value) {
    // pybind11's type_info for T lives as long as the module: looked up once, not per instance.
    static const py::detail::type_info *const tinfo = py::detail::get_type_info(typeid(T), /*throw_if_missing=*/true);
    if (type == nullptr) type = tinfo->type;
    auto object = py::reinterpret_steal<py::object>(py::detail::make_new_instance(type));
    if (!object) throw py::error_already_set();
    auto *inst = reinterpret_cast<py::detail::instance *>(object.ptr());
    inst->owned = true;
    py::detail::values_and_holders(inst).begin()->value_ptr() = value.release();
    tinfo->init_instance(inst, nullptr);  // registers it and builds the unique_ptr holder
    return object;
}

// Attach a getter (`def` has static storage) to a pybind11 type as a property.
inline void add_getter(py::handle type, PyGetSetDef *def) {
    PyObject *descr = PyDescr_NewGetSet(reinterpret_cast<PyTypeObject *>(type.ptr()), def);
    if (descr == nullptr) throw py::error_already_set();
    const int rc = PyObject_SetAttrString(type.ptr(), def->name, descr);
    Py_DECREF(descr);
    if (rc < 0) throw py::error_already_set();
}

}  // namespace aeron_py::instance
