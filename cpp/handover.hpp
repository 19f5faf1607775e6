// Making instances of aeron_py's public Python subclasses from C++. CPython refuses
// `obj.__class__ = Subclass` for pybind11 instances (the deallocators differ), so the
// extension calls the registered class instead: the C++ object is parked here and the
// pybind11 __init__ (inherited by the subclass) takes it. Called directly, __init__ raises.
#pragma once

#include "common.hpp"

namespace aeron_py {

template <typename T>
class Handover {
public:
    // An instance of `cls` (or of T's own pybind11 type when `cls` is null) owning `object`.
    static py::object make(std::unique_ptr<T> object, PyObject *cls) {
        pending() = std::move(object);
        py::object type = cls != nullptr ? py::reinterpret_borrow<py::object>(cls) : py::object(py::type::of<T>());
        try {
            py::object instance = type();
            pending().reset();
            return instance;
        } catch (...) {
            pending().reset();
            throw;
        }
    }

    // The pybind11 __init__ factory.
    static std::unique_ptr<T> take() {
        if (!pending()) throw py::type_error("this type cannot be instantiated directly");
        return std::move(pending());
    }

private:
    static std::unique_ptr<T> &pending() {
        static std::unique_ptr<T> parked;  // only ever non-empty during make(), under the GIL
        return parked;
    }
};

}  // namespace aeron_py
