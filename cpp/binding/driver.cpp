// The embedded C media driver: aeron_driver_context_t (setters named after
// aeron_driver_context_set_*) and aeron_driver_t (init, start, do_work, close).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common.hpp"
#include "driver_context.hpp"
#include "endpoint_filter_binding.hpp"
#include "secure_transport_binding.hpp"

extern "C" {
#include "aeronmd.h"
#include "driver_queues/driver_queues.h"
#include "keepalive_thinning/keepalive_thinning.h"
}

namespace aeron_py {

namespace {

// The Driver.idle call in flight (INVOKER mode: aeron_driver_main_idle_strategy with the GIL
// released). A close from another thread meanwhile must not free the driver, whose idle
// strategy state that call is using: the CloseJob waits here first. At most one idle at a
// time: Aeron's back-off state is not thread-safe (a second caller gets RuntimeError).
struct IdleGate {
    std::mutex mutex;
    std::condition_variable left;
    int idlers = 0;

    bool try_enter() {
        std::lock_guard<std::mutex> lock(mutex);
        if (idlers > 0) return false;
        idlers++;
        return true;
    }

    void leave() noexcept {
        std::lock_guard<std::mutex> lock(mutex);
        if (--idlers == 0) left.notify_all();
    }

    // Until no idle is in flight (bounded by the idle strategy's own wait).
    void wait_out() {
        std::unique_lock<std::mutex> lock(mutex);
        left.wait(lock, [this] { return idlers == 0; });
    }

    bool busy() {
        std::lock_guard<std::mutex> lock(mutex);
        return idlers > 0;
    }
};

// Closing a driver: aeron_driver_close joins its agent threads, which end at the end of
// their current duty cycle or idle, so a close waits as long as they take. The job owns
// what the close needs (the filter and secure transport handles included) and runs on a
// thread of its own, so a caller can stop waiting (Driver::close's timeout) and the
// close still finishes, and frees everything, whenever the agents end.
struct CloseJob {
    aeron_driver_t *driver = nullptr;
    aeron_driver_context_t *context = nullptr;
    std::shared_ptr<IdleGate> idle;  // an idle in flight ends before the driver is freed
    std::shared_ptr<EndpointFilterHandle> filter;
    std::shared_ptr<SecureTransportHandle> secure;
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;

    void run() noexcept {
        if (idle) idle->wait_out();
        if (driver != nullptr) aeron_driver_close(driver);
        // Agents have stopped; the counters still live in the CnC map until the context closes.
        if (filter) filter->detach();
        if (secure) secure->detach();
        if (context != nullptr) aeron_driver_context_close(context);
        {
            std::lock_guard<std::mutex> lock(mutex);
            done = true;
        }
        finished.notify_all();
    }

    // Whether the close finished within `seconds` (< 0: wait for it).
    bool wait(double seconds) {
        std::unique_lock<std::mutex> lock(mutex);
        if (seconds < 0) {
            finished.wait(lock, [this] { return done; });
            return true;
        }
        return finished.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done; });
    }

    bool is_done() {
        std::lock_guard<std::mutex> lock(mutex);
        return done;
    }
};

class Driver {
public:
    Driver(DriverContext &context, bool manual_main_loop, py::handle endpoint_filter, int64_t quiet_idle_hot_ns,
           int64_t quiet_idle_period_ns, int64_t quiet_idle_deep_ns, int64_t quiet_idle_deep_period_ns,
           py::handle secure_transport) {
        Section section(context.lock.get());
        aeron_driver_context_t *ctx = context.check();
        lock_ = context.lock.object();
        filter_ = endpoint_filter_handle(endpoint_filter);
        secure_ = secure_transport_handle(secure_transport);
        if (secure_) secure_->install(ctx);  // the tail of both interceptor chains, whatever comes before
        if (quiet_idle_period_ns > 0 && !filter_)
            throw py::value_error("the quiet idle strategy needs an endpoint filter (its traffic bell)");
        if (filter_) filter_->install(ctx);
        if (quiet_idle_period_ns > 0) {
            try {
                filter_->install_quiet_idle(ctx, quiet_idle_hot_ns, quiet_idle_period_ns, quiet_idle_deep_ns,
                                            quiet_idle_deep_period_ns);
            } catch (...) {
                filter_->detach();  // the context keeps (and frees) the inert bindings
                filter_.reset();
                throw;
            }
        }
        int rc;
        context.in_use = true;  // before the GIL is let go: no other thread changes it during the init
        {
            ReleasedGil released;
            rc = aeron_driver_init(&driver_, ctx);
        }
        if (rc < 0) {
            context.in_use = false;
            AeronCallError error(std::string("aeron_driver_init: ") + aeron_errmsg(), aeron_errcode());
            if (filter_) filter_->detach();  // the context keeps (and frees) the inert bindings
            filter_.reset();
            if (secure_) secure_->detach();
            secure_.reset();
            throw error;
        }
        context_ = ctx;
        owner_ = &context;
        aeron_py_driver_attach_drain(driver_);  // quiet idle drains the driver's command queues
        if (aeron_py_keepalive_thinning_attach_counter(ctx) < 0) {
            close();
            throw AeronCallError("no room in the CnC file for the keepalive thinning counter", ENOSPC);
        }
        try {
            if (filter_) filter_->attach_counters(ctx);
            if (secure_) secure_->attach_counters(ctx);
        } catch (...) {
            close();
            throw;
        }
        {
            ReleasedGil released;
            rc = aeron_driver_start(driver_, manual_main_loop);
        }
        if (rc < 0) {
            AeronCallError error(std::string("aeron_driver_start: ") + aeron_errmsg(), aeron_errcode());
            close();
            throw error;
        }
    }

    ~Driver() {
        Section section(lock_.ptr());
        close();
    }

    int do_work() {
        check();
        const int work = aeron_driver_main_do_work(driver_);
        if (work < 0) throw_aeron_error("aeron_driver_main_do_work");
        return work;
    }

    // Counted in idle_ (a close meanwhile waits for it, within its timeout); a second
    // thread's idle while one is in flight raises RuntimeError.
    void idle(int work_count) {
        check();
        if (!idle_->try_enter())
            throw std::runtime_error(
                "Driver.idle: another thread is in this driver's idle right now (its idle strategy belongs to one "
                "thread at a time)");
        aeron_driver_t *driver = driver_;  // a close from another thread meanwhile waits for leave()
        ReleasedGil released;
        aeron_driver_main_idle_strategy(driver, work_count);
        idle_->leave();  // before the GIL is taken back: a close waiting for us holds no GIL
    }

    // Whether an idle() is in flight (GIL released).
    bool idling() { return idle_->busy(); }

    // True when the driver stopped within `timeout_s` (< 0: wait as long as it takes);
    // False: its agents have not ended yet, and the close finishes in the background.
    bool close(double timeout_s = -1.0) {
        if (closed_) return job_ == nullptr || job_->is_done();
        auto job = std::make_shared<CloseJob>();  // before any change: bad_alloc leaves the driver open
        closed_ = true;
        if (owner_ != nullptr) {  // kept alive by keep_alive<1, 2>; its getters must not read freed memory
            owner_->closed = true;
            owner_->context = nullptr;
            owner_ = nullptr;
        }
        if (filter_) filter_->begin_close();
        if (secure_) secure_->begin_close();
        job_ = std::move(job);
        job_->driver = driver_;
        job_->context = context_;
        job_->idle = idle_;
        job_->filter = std::move(filter_);
        job_->secure = std::move(secure_);
        driver_ = nullptr;
        context_ = nullptr;
        ReleasedGil released;
        if (std::isnan(timeout_s) || timeout_s < 0) {
            job_->run();
            return true;
        }
        timeout_s = std::min(timeout_s, 1e7);  // an infinite wait_for overflows the clock
        try {
            std::thread([job = job_] { job->run(); }).detach();
        } catch (const std::system_error &) {  // no thread to spare: close here, unbounded
            job_->run();
            return true;
        }
        return job_->wait(timeout_s);
    }

    // Whether a close has finished (False before close, and while one runs in the background).
    bool stopped() { return closed_ && (job_ == nullptr || job_->is_done()); }

    bool closed() const { return closed_; }
    friend PyObject *section_lock(const Driver &driver) { return driver.lock_.ptr(); }

private:
    void check() const {
        if (closed_) throw AeronCallError("the media driver is closed", EPIPE);
    }

    py::object lock_;  // its context's: a close changes both
    aeron_driver_t *driver_ = nullptr;
    aeron_driver_context_t *context_ = nullptr;
    DriverContext *owner_ = nullptr;
    std::shared_ptr<EndpointFilterHandle> filter_;
    std::shared_ptr<SecureTransportHandle> secure_;
    std::shared_ptr<CloseJob> job_;  // the close, once started
    std::shared_ptr<IdleGate> idle_ = std::make_shared<IdleGate>();
    bool closed_ = false;
};

}  // namespace

namespace {


// The plug-ins' settings (cpp/plugins/): driver_queues.h, keepalive_thinning.h.
void def_context_plugin_settings(DriverContextClass &cls) {
    cls.def(
        "set_conductor_queue_capacity",
        [](DriverContext &c, size_t capacity) {
            if (aeron_py_driver_context_set_conductor_queue_capacity(c.check(), capacity) < 0) {
                if (errno == EINVAL)
                    throw py::value_error("conductor_queue_capacity must be a power of two >= 131072 bytes");
                throw std::bad_alloc();
            }
        },
        py::arg("value"),
        "aeron_py_driver_context_set_conductor_queue_capacity (driver_queues.h): the conductor's command ring, "
        "larger than Aeron's fixed 128 KiB so that a SHARED driver with thousands of channels cannot fill it "
        "and spin forever.");
    cls.def(
        "set_keepalive_interval_ns",
        [](DriverContext &c, int64_t interval_ns) {
            if (aeron_py_driver_context_set_keepalive_interval(c.check(), interval_ns) < 0) {
                if (errno == EINVAL) throw py::value_error("keepalive_interval_ns must be > 0");
                throw std::bad_alloc();
            }
        },
        py::arg("value"),
        "aeron_py_driver_context_set_keepalive_interval (keepalive_thinning.h): an idle stream's heartbeats "
        "(every 100 ms in Aeron) and unchanged status messages (every status_message_timeout) reach the socket "
        "at most once per interval per destination; the rest are counted in 'aeron_py keepalives thinned'.");
    cls.def(
        "set_keepalive_ports",
        [](DriverContext &c, std::pair<int32_t, int32_t> ports) {
            if (aeron_py_driver_context_set_keepalive_ports(c.check(), ports.first, ports.second) < 0) {
                if (errno == EINVAL) throw py::value_error("keepalive_ports must be (low, high) with 0 <= low <= high <= 65535");
                throw std::bad_alloc();
            }
        },
        py::arg("value"),
        "aeron_py_driver_context_set_keepalive_ports (keepalive_thinning.h): thin only the keepalives of channels "
        "bound to a local port in [low, high] (default: all).");
    cls.def(
        "get_keepalive_interval_ns",
        [](const DriverContext &c) { return aeron_py_driver_context_keepalive_interval(c.readable()); },
        "aeron_py_driver_context_keepalive_interval: 0 when keepalives are not thinned.");
}

// aeron_driver_context_get_*: readable while the driver runs, never after it closed.
void def_driver(py::module_ &m) {
    guarded_class<Driver>(m, "Driver", "aeron_driver_t (aeron_driver_init + aeron_driver_start).")
        .def(py::init<DriverContext &, bool, py::handle, int64_t, int64_t, int64_t, int64_t, py::handle>(),
             py::arg("context"), py::arg("manual_main_loop") = false, py::arg("endpoint_filter") = py::none(),
             py::arg("quiet_idle_hot_ns") = 0, py::arg("quiet_idle_period_ns") = 0, py::arg("quiet_idle_deep_ns") = 0,
             py::arg("quiet_idle_deep_period_ns") = 0, py::arg("secure_transport") = py::none(), py::keep_alive<1, 2>(),
             "endpoint_filter: an EndpointFilter installed on the context before aeron_driver_init, its counters "
             "allocated before aeron_driver_start. quiet_idle_period_ns > 0 makes the SHARED idle strategy "
             "aeron_py_quiet_idle (traffic_bell.h): backoff while the filter's bell rang or was touched within "
             "quiet_idle_hot_ns, then one duty cycle per period; after quiet_idle_deep_ns (> 0) of silence one per "
             "quiet_idle_deep_period_ns. It adds the longest period to the context's cycle thresholds. "
             "secure_transport: a SecureTransport appended to the context's interceptors before aeron_driver_init, "
             "its counters allocated before aeron_driver_start.")
        .def("do_work", &Driver::do_work, "aeron_driver_main_do_work (INVOKER threading mode).")
        .def("idle", &Driver::idle, py::arg("work_count"),
             "aeron_driver_main_idle_strategy (releases the GIL). One thread at a time: a second thread's idle while "
             "one is in flight raises RuntimeError.")
        .def("close", &Driver::close, py::arg("timeout") = -1.0,
             "aeron_driver_close + aeron_driver_context_close, idempotent. aeron_driver_close waits for the agent "
             "threads to end their duty cycle or idle (and for an idle() in flight on another thread); timeout >= 0 waits at most that many seconds and returns False "
             "if they had not ended (the close then finishes, and frees everything, on a thread of its own). "
             "timeout < 0 waits as long as it takes. True once the driver is closed.")
        .def_property_readonly("is_closed", &Driver::closed)
        .def_property_readonly("idling", &Driver::idling,
                               "True while an idle() call is in flight (GIL released); a close waits for it.")
        .def_property_readonly("is_stopped", &Driver::stopped,
                               "True once a close has finished (agents ended, everything freed).");
}

}  // namespace

void init_driver(py::module_ &m) {
    init_endpoint_filter(m);
    init_secure_transport(m);
    DriverContextClass cls(m, "DriverContext", "aeron_driver_context_t (aeron_driver_context_init).");
    cls.def(py::init<>());
    def_context_settings(cls);
    def_context_plugin_settings(cls);
    def_driver(m);
    m.attr("THREADING_MODE_DEDICATED") = static_cast<int>(AERON_THREADING_MODE_DEDICATED);
    m.attr("THREADING_MODE_SHARED_NETWORK") = static_cast<int>(AERON_THREADING_MODE_SHARED_NETWORK);
    m.attr("THREADING_MODE_SHARED") = static_cast<int>(AERON_THREADING_MODE_SHARED);
    m.attr("THREADING_MODE_INVOKER") = static_cast<int>(AERON_THREADING_MODE_INVOKER);
}

}  // namespace aeron_py
