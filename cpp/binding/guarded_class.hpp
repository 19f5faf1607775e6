// guarded_class<T>: py::class_<T> whose every method and property runs in a Section (section.hpp)
// on the lock of its object: the client's for the client and everything it made, the object's
// own for a standalone one (a driver with its context, a CnC file). It offers only what wraps each
// call, so a def that would escape the Section does not compile. Fast methods (fastcall.hpp) are
// added to `unlocked()` and open the Section themselves. (An EndpointFilter, a SecureTransport and
// an IdleStrategy need none: their state is C's, atomic or serialised by a C mutex.)
#pragma once

#include "common.hpp"

#include <type_traits>
#include <utility>

namespace aeron_py {

namespace guarded_section {

template <typename T>
const T &object_of(const T &self) { return self; }
template <typename T>
const T &object_of(const T *self) { return *self; }
template <typename T>
const T &object_of(py::handle self) { return self.cast<const T &>(); }

// A callable taking the object first (T&, const T&, T* or the Python object), as its call in
// the section.
template <typename T, typename F, typename R, typename Self, typename... A>
auto wrap(F f, R (F::*)(Self, A...) const) {
    return [f](Self self, A... args) -> R {
        Section section(section_lock(object_of<T>(self)));
        return f(std::forward<Self>(self), std::forward<A>(args)...);
    };
}

}  // namespace guarded_section

template <typename T, typename R, typename C, typename... A>
auto in_section(R (C::*method)(A...)) {
    return [method](T &self, A... args) -> R {
        Section section(section_lock(self));
        return (self.*method)(std::forward<A>(args)...);
    };
}

template <typename T, typename R, typename C, typename... A>
auto in_section(R (C::*method)(A...) const) {
    return [method](const T &self, A... args) -> R {
        Section section(section_lock(self));
        return (self.*method)(std::forward<A>(args)...);
    };
}

template <typename T, typename F, typename = std::enable_if_t<!std::is_member_function_pointer_v<std::decay_t<F>>>>
auto in_section(F &&f) {
    using Fn = std::decay_t<F>;
    return guarded_section::wrap<T>(Fn(std::forward<F>(f)), &Fn::operator());
}

template <typename T>
class guarded_class {
public:
    template <typename... Extra>
    guarded_class(py::handle scope, const char *name, const Extra &...extra) : cls_(scope, name, extra...) {}

    template <typename F, typename... Extra>
    guarded_class &def(const char *name, F &&f, const Extra &...extra) {
        cls_.def(name, in_section<T>(std::forward<F>(f)), extra...);
        return *this;
    }
    template <typename... Args, typename... Extra>
    guarded_class &def(const py::detail::initimpl::constructor<Args...> &init, const Extra &...extra) {
        cls_.def(init, extra...);  // nothing shared yet
        return *this;
    }
    template <typename F, typename... Extra>
    guarded_class &def_property_readonly(const char *name, F &&getter, const Extra &...extra) {
        cls_.def_property_readonly(name, in_section<T>(std::forward<F>(getter)), extra...);
        return *this;
    }
    template <typename G, typename S, typename... Extra>
    guarded_class &def_property(const char *name, G &&getter, S &&setter, const Extra &...extra) {
        cls_.def_property(name, in_section<T>(std::forward<G>(getter)), in_section<T>(std::forward<S>(setter)),
                          extra...);
        return *this;
    }
    // A Python object member, read and written in the section (pybind11's def_readwrite would not be).
    template <typename... Extra>
    guarded_class &def_object_member(const char *name, py::object T::*member, const Extra &...extra) {
        cls_.def_property(
            name, in_section<T>([member](const T &self) { return self.*member; }),
            in_section<T>([member](T &self, py::object value) { self.*member = std::move(value); }), extra...);
        return *this;
    }

    py::class_<T> &unlocked() { return cls_; }

private:
    py::class_<T> cls_;
};

}  // namespace aeron_py
