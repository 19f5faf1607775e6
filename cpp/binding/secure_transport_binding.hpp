// The secure transport (secure_transport.h) as seen by the driver binding: who owns the C
// state and in which phase of its driver's life it is.
#pragma once

#include "common.hpp"

extern "C" {
#include "aeronmd.h"
#include "secure_transport/secure_transport.h"
}

namespace aeron_py {

// Owner of an aeron_py_secure_transport_t: created -> installed (on a context) -> running
// (counters in the CnC file) -> closing -> detached. Keys can change in every phase.
struct SecureTransportHandle {
    enum class Phase { created, installed, running, closing, detached };

    aeron_py_secure_transport_t *secure = nullptr;
    // Atomic: detach() runs on the CloseJob's thread, without the GIL, while Python threads
    // read the phase (check_readable). Its release store publishes the plug-in's counter
    // swap to a reader that sees `detached`. (No deterministic test: the race is a plain data
    // race, benign on x86, that only a thread sanitizer would report.)
    std::atomic<Phase> phase{Phase::created};

    SecureTransportHandle();
    ~SecureTransportHandle();
    SecureTransportHandle(const SecureTransportHandle &) = delete;
    SecureTransportHandle &operator=(const SecureTransportHandle &) = delete;

    // aeron_py_secure_transport_install; before aeron_driver_init.
    void install(aeron_driver_context_t *context);
    // aeron_py_secure_transport_attach_counters; after aeron_driver_init, before aeron_driver_start.
    void attach_counters(aeron_driver_context_t *context);
    // Before aeron_driver_close releases the GIL: counter reads must wait for detach.
    void begin_close() noexcept;
    // aeron_py_secure_transport_detach; after aeron_driver_close.
    void detach() noexcept;
};

// The handle of a Python SecureTransport (nullptr for None); raises TypeError otherwise.
std::shared_ptr<SecureTransportHandle> secure_transport_handle(py::handle secure);

// Registers the SecureTransport class; called by init_driver.
void init_secure_transport(py::module_ &m);

}  // namespace aeron_py
