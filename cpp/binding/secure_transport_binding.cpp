// SecureTransport: the C secure transport (secure_transport.h) for an embedded driver.
// Keys cross as 32-byte bytes objects and are wiped from every buffer this file copies them to.
#include "secure_transport_binding.hpp"

#include <array>
#include <cerrno>
#include <cstring>

extern "C" {
#include <sodium.h>

#include "secure_transport/secure_frames.h"
}

namespace aeron_py {

SecureTransportHandle::SecureTransportHandle() {
    secure = aeron_py_secure_transport_create();
    if (secure == nullptr) {
        if (errno == ENOTSUP) throw AeronCallError("libsodium could not be initialised (sodium_init)", errno);
        throw std::bad_alloc();
    }
}

SecureTransportHandle::~SecureTransportHandle() {
    // Only reached once no driver can use it: the Driver holds a shared_ptr until detach.
    aeron_py_secure_transport_delete(secure);
}

void SecureTransportHandle::install(aeron_driver_context_t *context) {
    if (phase != Phase::created) throw AeronCallError("this secure transport belongs to a driver already", EINVAL);
    if (aeron_py_secure_transport_install(secure, context) < 0) {
        const int error = errno;
        throw AeronCallError(std::string("aeron_py_secure_transport_install: ") + std::strerror(error), error);
    }
    phase = Phase::installed;
}

void SecureTransportHandle::attach_counters(aeron_driver_context_t *context) {
    if (aeron_py_secure_transport_attach_counters(secure, context) < 0)
        throw AeronCallError("aeron_py_secure_transport_attach_counters: no room for counters in the CnC file", errno);
    phase = Phase::running;
}

void SecureTransportHandle::begin_close() noexcept {
    if (phase == Phase::installed || phase == Phase::running) phase = Phase::closing;
}

void SecureTransportHandle::detach() noexcept {
    aeron_py_secure_transport_detach(secure);
    phase = Phase::detached;
}

namespace {

// A session key copied out of a bytes object, wiped when it goes.
struct KeyCopy {
    std::array<uint8_t, 32> bytes{};
    explicit KeyCopy(const py::bytes &key) {
        char *data = nullptr;
        Py_ssize_t length = 0;
        if (PyBytes_AsStringAndSize(key.ptr(), &data, &length) < 0) throw py::error_already_set();
        if (length != 32)
            throw py::value_error("a session key must be exactly 32 bytes, got " + std::to_string(length));
        std::memcpy(bytes.data(), data, 32);
    }
    ~KeyCopy() { sodium_memzero(bytes.data(), bytes.size()); }
    KeyCopy(const KeyCopy &) = delete;
    KeyCopy &operator=(const KeyCopy &) = delete;
};

void check_identity(int role, int32_t port) {
    if (role != AERON_PY_SECURE_ROLE_SEND && role != AERON_PY_SECURE_ROLE_RECEIVE)
        throw py::value_error("role must be SECURE_ROLE_SEND (0) or SECURE_ROLE_RECEIVE (1)");
    if (port < 0 || port > 65535)
        throw py::value_error("a port must be in 0..65535 (0: any local port), got " + std::to_string(port));
}

class SecureTransport {
public:
    SecureTransport() : handle(std::make_shared<SecureTransportHandle>()) {}

    void add(int role, int32_t port, int32_t stream_id, int32_t session_id, const py::bytes &key) {
        check_identity(role, port);
        KeyCopy copy(key);
        int rc;
        int error;
        {
            ReleasedGil released;  // the publisher may wait (microseconds) for agents to leave the old table
            rc = aeron_py_secure_transport_add(secure(), role, port, stream_id, session_id, copy.bytes.data());
            error = errno;
        }
        if (rc < 0) raise_change_error("aeron_py_secure_transport_add", error);
    }

    void remove(int role, int32_t port, int32_t stream_id, int32_t session_id) {
        check_identity(role, port);
        change(aeron_py_secure_transport_remove, "aeron_py_secure_transport_remove", role, port, stream_id, session_id);
    }

    void forget_previous(int role, int32_t port, int32_t stream_id, int32_t session_id) {
        check_identity(role, port);
        change(aeron_py_secure_transport_forget_previous, "aeron_py_secure_transport_forget_previous", role, port,
               stream_id, session_id);
    }

    void set_port(int32_t port, bool secured) {
        if (port <= 0 || port > 65535) throw py::value_error("a port must be in 1..65535, got " + std::to_string(port));
        int rc;
        {
            ReleasedGil released;
            rc = aeron_py_secure_transport_set_port(secure(), port, secured);
        }
        if (rc < 0) throw std::bad_alloc();
    }

    size_t session_count() const { return aeron_py_secure_transport_session_count(secure()); }
    size_t port_count() const { return aeron_py_secure_transport_port_count(secure()); }

    py::dict counters() const {
        check_readable();
        py::dict result;
        for (int i = 0; i < AERON_PY_SECURE_COUNTER_COUNT; i++) {
            const auto c = static_cast<aeron_py_secure_counter_t>(i);
            result[py::str(aeron_py_secure_transport_counter_name(c))] = aeron_py_secure_transport_count(secure(), c);
        }
        return result;
    }

    py::dict counter_ids() const {
        check_readable();
        py::dict result;
        for (int i = 0; i < AERON_PY_SECURE_COUNTER_COUNT; i++) {
            const auto c = static_cast<aeron_py_secure_counter_t>(i);
            result[py::str(aeron_py_secure_transport_counter_name(c))] = aeron_py_secure_transport_counter_id(secure(), c);
        }
        return result;
    }

    std::string phase() const {
        switch (handle->phase.load()) {
            case SecureTransportHandle::Phase::created: return "created";
            case SecureTransportHandle::Phase::installed: return "installed";
            case SecureTransportHandle::Phase::running: return "running";
            case SecureTransportHandle::Phase::closing: return "closing";
            case SecureTransportHandle::Phase::detached: return "detached";
        }
        return "unknown";
    }

    std::shared_ptr<SecureTransportHandle> handle;

private:
    aeron_py_secure_transport_t *secure() const { return handle->secure; }

    void check_readable() const {
        if (handle->phase == SecureTransportHandle::Phase::closing)
            throw AeronCallError("the secure transport's media driver is closing", EPIPE);
    }

    using ChangeFunc = int (*)(aeron_py_secure_transport_t *, int, int32_t, int32_t, int32_t);

    void change(ChangeFunc func, const char *name, int role, int32_t port, int32_t stream_id, int32_t session_id) {
        int rc;
        int error;
        {
            ReleasedGil released;
            rc = func(secure(), role, port, stream_id, session_id);
            error = errno;
        }
        if (rc < 0) raise_change_error(name, error);
    }

    [[noreturn]] static void raise_change_error(const char *name, int error) {
        if (error == ENOENT) throw py::key_error(std::string(name) + ": no such secured session");
        if (error == EINVAL) throw py::value_error(std::string(name) + ": invalid role, port or key");
        throw std::bad_alloc();
    }
};

}  // namespace

std::shared_ptr<SecureTransportHandle> secure_transport_handle(py::handle secure) {
    if (secure.is_none()) return nullptr;
    return secure.cast<SecureTransport &>().handle;
}

void init_secure_transport(py::module_ &m) {
    py::class_<SecureTransport>(m, "SecureTransport",
                                "aeron_py_secure_transport_t: per-datagram authenticated encryption of chosen "
                                "UDP sessions inside the embedded driver.")
        .def(py::init<>(), "aeron_py_secure_transport_create (no keys).")
        .def("add", &SecureTransport::add, py::arg("role"), py::arg("port"), py::arg("stream_id"),
             py::arg("session_id"), py::arg("key"),
             "aeron_py_secure_transport_add: install (or rotate) a session's 32-byte key (GIL released).")
        .def("remove", &SecureTransport::remove, py::arg("role"), py::arg("port"), py::arg("stream_id"),
             py::arg("session_id"), "aeron_py_secure_transport_remove: KeyError when absent.")
        .def("forget_previous", &SecureTransport::forget_previous, py::arg("role"), py::arg("port"),
             py::arg("stream_id"), py::arg("session_id"),
             "aeron_py_secure_transport_forget_previous: stop opening with the key before the last rotation.")
        .def("set_port", &SecureTransport::set_port, py::arg("port"), py::arg("secured"),
             "aeron_py_secure_transport_set_port: drop every datagram to this local port that no session opens.")
        .def("session_count", &SecureTransport::session_count)
        .def("port_count", &SecureTransport::port_count)
        .def("counters", &SecureTransport::counters, "aeron_py_secure_transport_count for every counter.")
        .def("counter_ids", &SecureTransport::counter_ids,
             "aeron_py_secure_transport_counter_id for every counter (-1: not in a CnC file).")
        .def_property_readonly("phase", &SecureTransport::phase);
    m.attr("SECURE_TRANSPORT_COUNTER_TYPE_ID") = AERON_PY_SECURE_COUNTER_TYPE_ID;
    m.attr("SECURE_ROLE_SEND") = AERON_PY_SECURE_ROLE_SEND;
    m.attr("SECURE_ROLE_RECEIVE") = AERON_PY_SECURE_ROLE_RECEIVE;
    m.attr("SECURE_OVERHEAD") = AERON_PY_SECURE_OVERHEAD;
}

}  // namespace aeron_py
