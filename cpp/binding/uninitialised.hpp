// Instances made by T.__new__(T) without __init__ (or without the C++ factory that
// normally makes them) have no C++ value.  When a pybind11-bound method is called on one,
// pybind11 lazily allocates *uninitialised* storage for the value (type_info::operator_new,
// see pybind11's type_caster_generic::load_value) and runs the method on garbage: a segfault
// at best.  refuse_uninitialised() replaces that allocator, for every type of this module,
// with one that throws: the call ends in TypeError.  Nothing else uses the allocator:
// py::init constructs with `new T(...)`, instance::adopt sets the value pointer itself, and
// the raw fast-call methods check is_holder_constructed (fastcall.hpp).
#pragma once

#include "common.hpp"

#include <cstring>

namespace aeron_py {

[[noreturn]] inline void *refuse_lazy_value(size_t) {
    throw py::type_error(
        "this aeron_py object is not initialised (made with __new__ without __init__, or not by its "
        "factory such as Aeron.add_subscription)");
}

// Call once, after every class of the module is registered.
inline void refuse_uninitialised(const py::module_ &m) {
    const std::string prefix = py::cast<std::string>(m.attr("__name__")) + ".";
    for (auto &entry : py::detail::get_internals().registered_types_cpp) {
        py::detail::type_info *info = entry.second;
        if (info != nullptr && info->type != nullptr &&
            std::strncmp(info->type->tp_name, prefix.c_str(), prefix.size()) == 0)
            info->operator_new = &refuse_lazy_value;
    }
}

}  // namespace aeron_py
