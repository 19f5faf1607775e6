// Error translation: C error codes/messages (aeron_errcode, aeron_errmsg) -> _aeron.AeronError,
// or the subclass its codes select (AddressInUseError, DriverTimeoutError, RetryLaterError).
#include "common.hpp"

#include <cerrno>
#include <cstring>

namespace aeron_py {

namespace {
PyObject *aeron_error_type = nullptr;
PyObject *address_in_use_type = nullptr;
PyObject *driver_timeout_type = nullptr;
PyObject *retry_later_type = nullptr;

// Aeron's wire error codes (aeron_client_error.h, not a public header; ErrorCode in Java):
// the driver refused an add for now (an endpoint of that channel is still CLOSING), and its
// catch-all, whose message then holds the driver's own error (errno) as "(98) ...".
constexpr int RESOURCE_TEMPORARILY_UNAVAILABLE = 10;  // AERON_ERROR_CODE_RESOURCE_TEMPORARILY_UNAVAILABLE
constexpr int GENERIC_ERROR = 11;                     // AERON_ERROR_CODE_GENERIC_ERROR
static_assert(AERON_CLIENT_ERROR_DRIVER_TIMEOUT == 1000, "aeronc.h: AERON_CLIENT_ERROR_DRIVER_TIMEOUT");

// The "(code)" a line of an Aeron error message starts with (aeron_err_set writes
// "(%d) %s\n" first); false if the line does not start so.
bool leading_code(const char *line, const char *end, int &code) {
    if (line >= end || *line != '(') return false;
    const char *p = line + 1;
    const bool negative = p < end && *p == '-';
    if (negative) ++p;
    long value = 0;
    const char *digits = p;
    while (p < end && *p >= '0' && *p <= '9' && p - digits < 9) value = value * 10 + (*p++ - '0');
    if (p == digits || p >= end || *p != ')') return false;
    code = static_cast<int>(negative ? -value : value);
    return true;
}

// The failure's most specific code. The one place that reads an error's text: an error the
// driver reported reaches the client as the generic -AERON_ERROR_CODE_GENERIC_ERROR, the
// driver's own code (an errno: 98 for EADDRINUSE) only in the message it forwarded, the
// first "(code) ..." line after the client's own first line. Otherwise: `errcode`.
int cause_code_of(int errcode, const char *message) {
    if (errcode != -GENERIC_ERROR || message == nullptr) return errcode;
    const char *line = std::strchr(message, '\n');
    while (line != nullptr) {
        ++line;
        const char *end = std::strchr(line, '\n');
        int code = 0;
        if (leading_code(line, end != nullptr ? end : line + std::strlen(line), code)) return code;
        line = end;
    }
    return errcode;
}

// The class an error is raised as: by its cause (EADDRINUSE), else by aeron_errcode()
// (either sign: Aeron sets them negative, its error handlers get them positive).
PyObject *error_type_for(int errcode, int cause) {
    if (cause == EADDRINUSE) return address_in_use_type;
    if (errcode == -AERON_CLIENT_ERROR_DRIVER_TIMEOUT || errcode == AERON_CLIENT_ERROR_DRIVER_TIMEOUT)
        return driver_timeout_type;
    if (errcode == -RESOURCE_TEMPORARILY_UNAVAILABLE || errcode == RESOURCE_TEMPORARILY_UNAVAILABLE)
        return retry_later_type;
    return aeron_error_type;
}

// Sets the Python error for `e` (GIL held). Only CPython calls, no C++ exception: it runs
// inside pybind11's translator (which the fast functions' catch blocks call too).
void set_python_error(const AeronCallError &e) {
    const int cause = e.has_cause ? e.cause : cause_code_of(e.errcode, e.what());
    PyObject *type = error_type_for(e.errcode, cause);
    const char *what = e.what();
    // "replace": a message with bytes that are not UTF-8 (a path) still raises its class
    PyObject *text = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "replace");
    if (text == nullptr) return;
    PyObject *exc = PyObject_CallOneArg(type, text);
    Py_DECREF(text);
    if (exc == nullptr) return;  // the call itself raised: leave that error set
    PyObject *errcode = PyLong_FromLong(e.errcode);
    PyObject *cause_code = errcode != nullptr ? PyLong_FromLong(cause) : nullptr;
    if (cause_code != nullptr && PyObject_SetAttrString(exc, "errcode", errcode) == 0 &&
        PyObject_SetAttrString(exc, "cause_code", cause_code) == 0)
        PyErr_SetObject(type, exc);
    Py_XDECREF(cause_code);
    Py_XDECREF(errcode);
    Py_DECREF(exc);
}

// A new exception type aeron_py._aeron.<name> deriving from `base`, added to `m` (module
// init: error_already_set if it could not be made).
PyObject *new_error_type(py::module_ &m, const char *name, const char *doc, PyObject *base,
                         PyObject *attributes) {
    std::string qualified = std::string("aeron_py._aeron.") + name;
    PyObject *type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, attributes);
    if (type == nullptr) throw py::error_already_set();
    m.add_object(name, py::handle(type));
    return type;
}
}  // namespace

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
    // errcode/cause_code: None on the class (an AeronError made in Python has neither), ints
    // on every instance the extension raises.
    py::dict attributes;
    attributes["errcode"] = py::none();
    attributes["cause_code"] = py::none();
    aeron_error_type = new_error_type(
        m, "AeronError",
        "A call into the Aeron C library failed. `errcode` is aeron_errcode(); the message is aeron_errmsg().\n"
        "`cause_code` is the failure's most specific code: for an error the media driver reported (errcode\n"
        "-11, 'generic error') the driver's own code from its message, e.g. 98 (EADDRINUSE); ETIMEDOUT for\n"
        "an archive connect that timed out (errcode -1); otherwise errcode. Both are None on an AeronError\n"
        "made in Python. The subclasses name the failures code acts on.",
        PyExc_RuntimeError, attributes.ptr());
    address_in_use_type = new_error_type(
        m, "AddressInUseError",
        "The media driver could not bind the channel's address: another socket holds it (EADDRINUSE;\n"
        "`cause_code` 98 on Linux; errcode is -11, the driver's 'generic error'). Use another port, or\n"
        "retry once whoever holds it (possibly an endpoint of this driver still closing) lets go.",
        aeron_error_type, nullptr);
    driver_timeout_type = new_error_type(
        m, "DriverTimeoutError",
        "No answer from the media driver in the client's driver timeout (errcode\n"
        "-AERON_CLIENT_ERROR_DRIVER_TIMEOUT, -1000): no driver at the directory, a driver whose\n"
        "heartbeat stopped, or an add the client gave up waiting for (the driver may still make it).",
        aeron_error_type, nullptr);
    retry_later_type = new_error_type(
        m, "RetryLaterError",
        "The media driver refused an add for now (errcode -AERON_ERROR_CODE_RESOURCE_TEMPORARILY_UNAVAILABLE,\n"
        "-10): an endpoint of the same channel is still closing ('... found in CLOSING state, please\n"
        "retry'). The same add succeeds once it is gone; Aeron.add_* retries it until its timeout.",
        aeron_error_type, nullptr);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const AeronCallError &e) {
            set_python_error(e);
        }
    });
    m.def("errcode", &aeron_errcode, "aeron_errcode(): the last error code on this thread.");
    m.def("errmsg", [] { return std::string(aeron_errmsg()); }, "aeron_errmsg(): the last error message on this thread.");
}

}  // namespace aeron_py
