// The endpoint filter (endpoint_filter.h) as seen by the driver binding: who owns the C
// filter and in which phase of its driver's life it is.
#pragma once

#include "common.hpp"

extern "C" {
#include "aeronmd.h"
#include "endpoint_filter/endpoint_filter.h"
#include "monotonic.h"
#include "traffic_bell/traffic_bell.h"
}

namespace aeron_py {

// Owner of an aeron_py_endpoint_filter_t. The driver binding moves it through its phases:
// created -> installed (on a context) -> running (counters in the CnC file) -> detached.
struct EndpointFilterHandle {
    enum class Phase { created, installed, running, closing, detached };

    aeron_py_endpoint_filter_t *filter = nullptr;
    // Atomic: detach() runs on the CloseJob's thread, without the GIL, while Python threads
    // read the phase (check_readable). Its release store publishes the plug-in's counter
    // swap to a reader that sees `detached`. (No deterministic test: the race is a plain data
    // race, benign on x86, that only a thread sanitizer would report.)
    std::atomic<Phase> phase{Phase::created};

    explicit EndpointFilterHandle(const aeron_py_endpoint_filter_config_t &config);
    ~EndpointFilterHandle();
    EndpointFilterHandle(const EndpointFilterHandle &) = delete;
    EndpointFilterHandle &operator=(const EndpointFilterHandle &) = delete;

    // aeron_py_endpoint_filter_install; before aeron_driver_init.
    void install(aeron_driver_context_t *context);
    // aeron_py_endpoint_filter_install_quiet_idle; after install, before aeron_driver_init.
    void install_quiet_idle(aeron_driver_context_t *context, int64_t hot_ns, int64_t period_ns, int64_t deep_ns,
                            int64_t deep_period_ns);
    // aeron_py_endpoint_filter_attach_counters; after aeron_driver_init, before aeron_driver_start.
    void attach_counters(aeron_driver_context_t *context);
    // Before aeron_driver_close releases the GIL: counter reads must wait for detach.
    void begin_close() noexcept;
    // aeron_py_endpoint_filter_detach; after aeron_driver_close.
    void detach() noexcept;
};

// The handle of a Python EndpointFilter (nullptr for None); raises TypeError otherwise.
std::shared_ptr<EndpointFilterHandle> endpoint_filter_handle(py::handle filter);

// Registers the EndpointFilter class; called by init_driver.
void init_endpoint_filter(py::module_ &m);

}  // namespace aeron_py
