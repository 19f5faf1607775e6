// The registry of fast methods (fastcall.hpp) and their adoption by Python subclasses.
#include "fastcall.hpp"

#include <algorithm>
#include <vector>

namespace aeron_py::fast {

namespace {

// Every PyMethodDef given to add_method (static storage, so the pointers stay valid).
std::vector<PyMethodDef *> &fast_defs() {
    static std::vector<PyMethodDef *> defs;
    return defs;
}

bool is_fast_def(PyMethodDef *def) {
    const auto &defs = fast_defs();
    return std::find(defs.begin(), defs.end(), def) != defs.end();
}

}  // namespace

void add_method(py::handle type, PyMethodDef *def) {
    PyObject *descr = PyDescr_NewMethod(reinterpret_cast<PyTypeObject *>(type.ptr()), def);
    if (descr == nullptr) throw py::error_already_set();
    const int rc = PyObject_SetAttrString(type.ptr(), def->ml_name, descr);
    Py_DECREF(descr);
    if (rc < 0) throw py::error_already_set();
    if (!is_fast_def(def)) fast_defs().push_back(def);
}

void adopt_fast_methods(py::handle cls) {
    // A class statement makes a heap type, whose tp_dict is always its own dict (a static
    // built-in type's may be NULL on CPython 3.12+).
    if (!PyType_Check(cls.ptr()) || !PyType_HasFeature(reinterpret_cast<PyTypeObject *>(cls.ptr()), Py_TPFLAGS_HEAPTYPE))
        throw py::type_error("_adopt_fast_methods() expects a class made by a class statement (a heap type)");
    auto *type = reinterpret_cast<PyTypeObject *>(cls.ptr());
    if (type->tp_dict == nullptr) throw py::type_error("_adopt_fast_methods(): the class has no dict");
    if (!tricks::on()) return;  // AERON_PY_NO_TRICKS: inherited descriptors, unspecialised calls
    py::dict own = py::reinterpret_borrow<py::dict>(type->tp_dict);
    for (PyMethodDef *def : fast_defs()) {
        py::str name(def->ml_name);
        if (own.contains(name)) continue;  // defined (or adopted) by the class itself
        PyObject *found = PyObject_GetAttr(cls.ptr(), name.ptr());  // a descriptor looked up on a class is itself
        if (found == nullptr) {
            PyErr_Clear();
            continue;
        }
        const bool inherited = Py_IS_TYPE(found, &PyMethodDescr_Type) &&
                               reinterpret_cast<PyMethodDescrObject *>(found)->d_method == def;
        Py_DECREF(found);
        if (!inherited) continue;  // another class of the MRO overrides it, or cls does not have it
        PyObject *descr = PyDescr_NewMethod(type, def);
        if (descr == nullptr) throw py::error_already_set();
        const int rc = PyObject_SetAttr(cls.ptr(), name.ptr(), descr);
        Py_DECREF(descr);
        if (rc < 0) throw py::error_already_set();
    }
}

}  // namespace aeron_py::fast
