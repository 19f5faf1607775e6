// EndpointFilter: the C endpoint filter (endpoint_filter.h) for an embedded driver.
// Addresses cross as 16-byte strings (IPv4 as ::ffff:a.b.c.d); parsing lives in Python.
#include "endpoint_filter_binding.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>

namespace aeron_py {

EndpointFilterHandle::EndpointFilterHandle(const aeron_py_endpoint_filter_config_t &config) {
    filter = aeron_py_endpoint_filter_create(&config);
    if (filter == nullptr) {
        if (errno == EINVAL) throw py::value_error("aeron_py_endpoint_filter_create: invalid configuration");
        throw std::bad_alloc();
    }
}

EndpointFilterHandle::~EndpointFilterHandle() {
    // Only reached once no driver can use it: the Driver holds a shared_ptr until detach.
    aeron_py_endpoint_filter_delete(filter);
}

void EndpointFilterHandle::install(aeron_driver_context_t *context) {
    if (phase != Phase::created) throw AeronCallError("this endpoint filter belongs to a driver already", EINVAL);
    if (aeron_py_endpoint_filter_install(filter, context) < 0) {
        const int error = errno;
        if (error == EMFILE) throw AeronCallError("aeron_py_endpoint_filter_install: more than 64 filtered drivers in one process", error);
        throw AeronCallError(std::string("aeron_py_endpoint_filter_install: ") + std::strerror(error), error);
    }
    phase = Phase::installed;
}

void EndpointFilterHandle::install_quiet_idle(aeron_driver_context_t *context, int64_t hot_ns, int64_t period_ns,
                                              int64_t deep_ns, int64_t deep_period_ns) {
    if (aeron_py_endpoint_filter_install_quiet_idle(filter, context, hot_ns, period_ns, deep_ns, deep_period_ns) < 0) {
        const int error = errno;
        if (error == ENOTSUP) throw AeronCallError("the quiet idle strategy needs the SHARED threading mode", error);
        if (error == EINVAL)
            throw py::value_error("quiet idle: hot_ns must be >= 0, period_ns in (0, 1 s], and deep_ns (when > 0) "
                                  ">= hot_ns with deep_period_ns in (0, 1 s]");
        throw std::bad_alloc();
    }
}

void EndpointFilterHandle::attach_counters(aeron_driver_context_t *context) {
    if (aeron_py_endpoint_filter_attach_counters(filter, context) < 0)
        throw AeronCallError("aeron_py_endpoint_filter_attach_counters: no room for counters in the CnC file", errno);
    phase = Phase::running;
}

void EndpointFilterHandle::begin_close() noexcept {
    if (phase == Phase::installed || phase == Phase::running) phase = Phase::closing;
}

void EndpointFilterHandle::detach() noexcept {
    aeron_py_endpoint_filter_detach(filter);
    phase = Phase::detached;
}

namespace {

void copy_address(const py::bytes &value, uint8_t out[16], const char *what) {
    const std::string text = value;
    if (text.size() != 16) throw py::value_error(std::string(what) + ": an address must be 16 bytes");
    std::memcpy(out, text.data(), 16);
}

class EndpointFilter {
public:
    EndpointFilter(int64_t max_setup_term_length, double setup_rate, double setup_burst, int32_t max_images_per_source,
                   int32_t max_images_total, int32_t ipv4_prefix, int32_t ipv6_prefix, int32_t max_sources,
                   int32_t max_pending, int64_t pending_timeout_ns, int32_t large_term_length,
                   int32_t max_large_images_per_source, int32_t max_large_images_total) {
        aeron_py_endpoint_filter_config_t config{};
        config.max_setup_term_length = max_setup_term_length;
        config.setup_rate = setup_rate;
        config.setup_burst = setup_burst;
        config.max_images_per_source = max_images_per_source;
        config.max_images_total = max_images_total;
        config.ipv4_prefix = ipv4_prefix;
        config.ipv6_prefix = ipv6_prefix;
        config.max_sources = max_sources;
        config.max_pending = max_pending;
        config.pending_timeout_ns = pending_timeout_ns;
        config.large_term_length = large_term_length;
        config.max_large_images_per_source = max_large_images_per_source;
        config.max_large_images_total = max_large_images_total;
        handle = std::make_shared<EndpointFilterHandle>(config);
    }

    // blocklist: [(16-byte address, prefix length 0..128)]; owners: [(port, 16-byte address)].
    void publish(const std::vector<std::pair<py::bytes, int>> &blocklist,
                 const std::vector<std::pair<int, py::bytes>> &owners) {
        check_readable();
        std::vector<aeron_py_filter_prefix_t> prefixes(blocklist.size());
        for (size_t i = 0; i < blocklist.size(); i++) {
            copy_address(blocklist[i].first, prefixes[i].address, "blocklist");
            if (blocklist[i].second < 0 || blocklist[i].second > 128)
                throw py::value_error("blocklist: a prefix length must be in 0..128");
            prefixes[i].prefix_length = blocklist[i].second;
        }
        std::vector<aeron_py_filter_port_owner_t> table(owners.size());
        for (size_t i = 0; i < owners.size(); i++) {
            if (owners[i].first < 0 || owners[i].first > 65535) throw py::value_error("port owners: a port must be in 0..65535");
            table[i].port = static_cast<uint16_t>(owners[i].first);
            copy_address(owners[i].second, table[i].address, "port owners");
        }
        int rc;
        {
            ReleasedGil released;  // the publisher may wait (microseconds) for agents to leave the old table
            rc = aeron_py_endpoint_filter_publish(filter(), prefixes.data(), prefixes.size(), table.data(), table.size());
        }
        if (rc < 0) throw std::bad_alloc();
    }

    py::dict dropped() const {
        check_readable();
        py::dict result;
        for (int reason = 0; reason < AERON_PY_FILTER_REASON_COUNT; reason++) {
            const auto r = static_cast<aeron_py_filter_reason_t>(reason);
            result[py::str(aeron_py_endpoint_filter_reason_name(r))] = aeron_py_endpoint_filter_dropped(filter(), r);
        }
        return result;
    }

    // None, or (16-byte address, term length, reason name) of the last SETUP dropped for its term length.
    py::object last_term_drop() const {
        check_readable();
        aeron_py_filter_term_drop_t drop{};
        if (0 == aeron_py_endpoint_filter_last_term_drop(filter(), &drop)) return py::none();
        const auto reason = static_cast<aeron_py_filter_reason_t>(drop.reason);
        return py::make_tuple(py::bytes(reinterpret_cast<const char *>(drop.address), 16), drop.term_length,
                              py::str(aeron_py_endpoint_filter_reason_name(reason)));
    }

    py::dict counter_ids() const {
        check_readable();
        py::dict result;
        for (int reason = 0; reason < AERON_PY_FILTER_REASON_COUNT; reason++) {
            const auto r = static_cast<aeron_py_filter_reason_t>(reason);
            result[py::str(aeron_py_endpoint_filter_reason_name(r))] = aeron_py_endpoint_filter_counter_id(filter(), r);
        }
        return result;
    }

    // ---- the traffic bell (traffic_bell.h): valid for the filter's whole life, driver or not

    int64_t traffic_sequence() const { return aeron_py_traffic_bell_sequence(bell()); }

    int64_t last_traffic_ns() const { return aeron_py_traffic_bell_last_ns(bell()); }

    void touch_traffic() const { aeron_py_traffic_bell_touch(bell(), aeron_py_monotonic_ns()); }

    int traffic_fd() const { return aeron_py_traffic_bell_fd(bell()); }

    bool wait_for_traffic(int64_t seen, int64_t timeout_ns) const {
        std::shared_ptr<EndpointFilterHandle> keep = handle;  // the bell outlives this call
        int rc;
        int error;
        {
            ReleasedGil released;
            rc = aeron_py_traffic_bell_wait(aeron_py_endpoint_filter_bell(keep->filter), seen, timeout_ns);
            error = errno;
        }
        if (rc < 0) {
            if (error == EINTR) {
                if (PyErr_CheckSignals() != 0) throw py::error_already_set();
                return aeron_py_traffic_bell_sequence(bell()) != seen;
            }
            throw AeronCallError(std::string("aeron_py_traffic_bell_wait: ") + std::strerror(error), error);
        }
        return rc == 1;
    }

    std::string phase() const {
        switch (handle->phase.load()) {
            case EndpointFilterHandle::Phase::created: return "created";
            case EndpointFilterHandle::Phase::installed: return "installed";
            case EndpointFilterHandle::Phase::running: return "running";
            case EndpointFilterHandle::Phase::closing: return "closing";
            case EndpointFilterHandle::Phase::detached: return "detached";
        }
        return "unknown";
    }

    std::shared_ptr<EndpointFilterHandle> handle;

private:
    aeron_py_endpoint_filter_t *filter() const { return handle->filter; }
    aeron_py_traffic_bell_t *bell() const { return aeron_py_endpoint_filter_bell(handle->filter); }

    void check_readable() const {
        if (handle->phase == EndpointFilterHandle::Phase::closing)
            throw AeronCallError("the endpoint filter's media driver is closing", EPIPE);
    }
};

}  // namespace

std::shared_ptr<EndpointFilterHandle> endpoint_filter_handle(py::handle filter) {
    if (filter.is_none()) return nullptr;
    return filter.cast<EndpointFilter &>().handle;
}

void init_endpoint_filter(py::module_ &m) {
    py::class_<EndpointFilter>(m, "EndpointFilter",
                               "aeron_py_endpoint_filter_t: a receive-side UDP channel interceptor for the embedded driver.")
        .def(py::init<int64_t, double, double, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int64_t, int32_t,
                      int32_t, int32_t>(),
             py::arg("max_setup_term_length"), py::arg("setup_rate"), py::arg("setup_burst"),
             py::arg("max_images_per_source"), py::arg("max_images_total"), py::arg("ipv4_prefix"),
             py::arg("ipv6_prefix"), py::arg("max_sources"), py::arg("max_pending"), py::arg("pending_timeout_ns"),
             py::arg("large_term_length") = 0, py::arg("max_large_images_per_source") = 0,
             py::arg("max_large_images_total") = 0,
             "aeron_py_endpoint_filter_create (0 or less: no limit; large_term_length 0: no large-term budget).")
        .def("publish", &EndpointFilter::publish, py::arg("blocklist"), py::arg("owners"),
             "aeron_py_endpoint_filter_publish: replace the rule table atomically (GIL released).")
        .def("dropped", &EndpointFilter::dropped, "aeron_py_endpoint_filter_dropped for every reason.")
        .def("last_term_drop", &EndpointFilter::last_term_drop,
             "aeron_py_endpoint_filter_last_term_drop: None, or (16-byte address, term length, reason) of the last "
             "SETUP dropped for its term length (the cap or the large-term budget).")
        .def("counter_ids", &EndpointFilter::counter_ids,
             "aeron_py_endpoint_filter_counter_id for every reason (-1: not in a CnC file).")
        .def("traffic_sequence", &EndpointFilter::traffic_sequence,
             "aeron_py_traffic_bell_sequence: datagrams with application traffic (data, end of stream, SETUP) so far.")
        .def("last_traffic_ns", &EndpointFilter::last_traffic_ns,
             "aeron_py_traffic_bell_last_ns: CLOCK_MONOTONIC ns (time.monotonic_ns) of the latest traffic or touch.")
        .def("touch_traffic", &EndpointFilter::touch_traffic,
             "aeron_py_traffic_bell_touch: count now as traffic for the quiet idle strategy (no wake-up).")
        .def("traffic_fd", &EndpointFilter::traffic_fd,
             "aeron_py_traffic_bell_fd: the eventfd a waiter sleeps on (readable after a ring while armed).")
        .def("wait_for_traffic", &EndpointFilter::wait_for_traffic, py::arg("seen"), py::arg("timeout_ns"),
             "aeron_py_traffic_bell_wait: block (GIL released) until the traffic sequence differs from `seen` or "
             "`timeout_ns` passes (< 0: no limit); True when it rang. One waiter at a time.")
        .def_property_readonly("phase", &EndpointFilter::phase);
    m.attr("ENDPOINT_FILTER_COUNTER_TYPE_ID") = AERON_PY_FILTER_DROP_COUNTER_TYPE_ID;
}

}  // namespace aeron_py
