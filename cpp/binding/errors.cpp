// Error translation: C error codes/messages (aeron_errcode, aeron_errmsg) -> _aeron.AeronError.
#include "common.hpp"

namespace aeron_py {

namespace {
PyObject *aeron_error_type = nullptr;
}

[[noreturn]] void throw_aeron_error(const char *call) {
    const int code = aeron_errcode();
    const char *message = aeron_errmsg();
    std::string text = std::string(call) + ": " + (message != nullptr && *message ? message : "unknown error");
    throw AeronCallError(text, code);
}

bool python_alive() {
#if PY_VERSION_HEX >= 0x030D0000
    return !Py_IsFinalizing();
#else
    return !_Py_IsFinalizing();
#endif
}

void init_errors(py::module_ &m) {
    aeron_error_type = PyErr_NewExceptionWithDoc(
        "aeron_py._aeron.AeronError",
        "A call into the Aeron C library failed. `errcode` is aeron_errcode(); the message is aeron_errmsg().",
        PyExc_RuntimeError, nullptr);
    m.add_object("AeronError", py::handle(aeron_error_type));
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const AeronCallError &e) {
            py::object exc = py::reinterpret_steal<py::object>(
                PyObject_CallFunction(aeron_error_type, "s", e.what()));
            if (!exc) return;  // the call itself raised: leave that error set
            exc.attr("errcode") = e.errcode;
            PyErr_SetObject(aeron_error_type, exc.ptr());
        }
    });
    m.def("errcode", &aeron_errcode, "aeron_errcode(): the last error code on this thread.");
    m.def("errmsg", [] { return std::string(aeron_errmsg()); }, "aeron_errmsg(): the last error message on this thread.");
}

}  // namespace aeron_py
