// The client: aeron_context_t + aeron_t (aeron_context_*, aeron_init, aeron_start, aeron_close)
// and the asynchronous adds of publications and subscriptions (aeron_async_add_*).
#include "common.hpp"
#include "context_init.hpp"

#include "guarded_class.hpp"
#include "client_events.hpp"

#include <algorithm>
#include <optional>

namespace aeron_py {

namespace {

// One template for the three aeron_async_add_* shapes: poll until the driver answers.
template <typename Async, typename Handle, int (*Poll)(Handle **, Async *),
          py::object (*Make)(const std::shared_ptr<ClientState> &, Handle *), int (*Cancel)(aeron_t *, Async *)>
class AsyncAdd {
public:
    AsyncAdd(std::shared_ptr<ClientState> client, Async *async, int64_t registration_id)
        : client_(std::move(client)), async_(async), registration_id_(registration_id) {}

    // Returns the new handle, or None while the driver has not answered yet.
    py::object poll() {
        if (async_ == nullptr) throw AeronCallError("this asynchronous add has already completed", EINVAL);
        client_->check_open();
        Handle *handle = nullptr;
        const int rc = Poll(&handle, async_);
        if (rc < 0) {
            async_ = nullptr;  // freed by the client on error
            client_->image_callbacks.erase(registration_id_);
            throw_aeron_error("aeron_async_add_poll");
        }
        if (rc == 0 || handle == nullptr) return py::none();
        async_ = nullptr;
        return Make(client_, handle);
    }

    int64_t registration_id() const { return registration_id_; }
    friend PyObject *section_lock(const AsyncAdd &add) { return add.client_->lock.get(); }

    // aeron_async_add_*_cancel: the client gives the add up, and has the driver remove the
    // resource if it makes it after all. False when it already completed (close the handle instead).
    bool cancel() {
        if (async_ == nullptr) return false;
        client_->check_open();
        if (Cancel(client_->aeron, async_) < 0) throw_aeron_error("aeron_async_add_cancel");
        async_ = nullptr;  // the client owns and frees it now
        client_->image_callbacks.erase(registration_id_);
        return true;
    }

private:
    std::shared_ptr<ClientState> client_;
    Async *async_;
    int64_t registration_id_;
};

using AsyncAddPublication = AsyncAdd<aeron_async_add_publication_t, aeron_publication_t,
                                     aeron_async_add_publication_poll, make_publication,
                                     aeron_async_add_publication_cancel>;
using AsyncAddExclusivePublication =
    AsyncAdd<aeron_async_add_exclusive_publication_t, aeron_exclusive_publication_t,
             aeron_async_add_exclusive_publication_poll, make_exclusive_publication,
             aeron_async_add_exclusive_publication_cancel>;
using AsyncAddSubscription = AsyncAdd<aeron_async_add_subscription_t, aeron_subscription_t,
                                      aeron_async_add_subscription_poll, make_subscription,
                                      aeron_async_add_subscription_cancel>;

using AsyncAddCounter = AsyncAdd<aeron_async_add_counter_t, aeron_counter_t, aeron_async_add_counter_poll,
                                 make_client_counter, aeron_async_add_counter_cancel>;

// aeron_async_next_session_id: a session id no publication of the stream uses in the driver.
class AsyncNextSessionId {
public:
    AsyncNextSessionId(std::shared_ptr<ClientState> client, aeron_async_get_next_available_session_id_t *async)
        : client_(std::move(client)), async_(async) {}

    // The session id, or None while the driver has not answered.
    py::object poll() {
        if (async_ == nullptr) throw AeronCallError("this session id request has already completed", EINVAL);
        client_->check_open();
        int32_t session_id = 0;
        const int rc = aeron_async_next_session_id_poll(&session_id, async_);
        if (rc < 0) {
            async_ = nullptr;  // freed by the client on error
            throw_aeron_error("aeron_async_next_session_id_poll");
        }
        if (rc == 0) return py::none();
        async_ = nullptr;
        return py::int_(session_id);
    }
    friend PyObject *section_lock(const AsyncNextSessionId &async) { return async.client_->lock.get(); }

private:
    std::shared_ptr<ClientState> client_;
    aeron_async_get_next_available_session_id_t *async_;
};

template <typename T>
void bind_async(py::module_ &m, const char *name, const char *doc) {
    guarded_class<T>(m, name, doc)
        .def("poll", &T::poll, "The new handle, or None while the driver has not answered (aeron_async_add_*_poll).")
        .def_property_readonly("registration_id", &T::registration_id)
        .def("cancel", &T::cancel,
             "aeron_async_add_*_cancel: give the add up (the driver removes what it makes for it); False when "
             "it already completed.");
}

class Client {
public:
    Client(std::optional<std::string> dir, std::optional<uint64_t> driver_timeout_ms,
           std::optional<uint64_t> keepalive_interval_ns, std::optional<uint64_t> resource_linger_duration_ns,
           std::optional<uint64_t> idle_sleep_duration_ns, std::optional<bool> pre_touch_mapped_memory,
           bool use_conductor_agent_invoker, std::optional<std::string> client_name, py::object error_handler,
           py::object publication_error_handler, py::object counter_handler, py::object resource_handler)
        : state_(std::make_shared<ClientState>()) {
        if (init_context_in_turn([&] { return aeron_context_init(&state_->context); }) < 0)
            throw_aeron_error("aeron_context_init");
        auto *ctx = state_->context;
        auto check = [](int rc, const char *call) {
            if (rc < 0) throw_aeron_error(call);
        };
        if (dir) check(aeron_context_set_dir(ctx, dir->c_str()), "aeron_context_set_dir");
        if (driver_timeout_ms)
            check(aeron_context_set_driver_timeout_ms(ctx, *driver_timeout_ms), "aeron_context_set_driver_timeout_ms");
        if (keepalive_interval_ns)
            check(aeron_context_set_keepalive_interval_ns(ctx, *keepalive_interval_ns),
                  "aeron_context_set_keepalive_interval_ns");
        if (resource_linger_duration_ns)
            check(aeron_context_set_resource_linger_duration_ns(ctx, *resource_linger_duration_ns),
                  "aeron_context_set_resource_linger_duration_ns");
        if (idle_sleep_duration_ns)
            check(aeron_context_set_idle_sleep_duration_ns(ctx, *idle_sleep_duration_ns),
                  "aeron_context_set_idle_sleep_duration_ns");
        if (pre_touch_mapped_memory)
            check(aeron_context_set_pre_touch_mapped_memory(ctx, *pre_touch_mapped_memory),
                  "aeron_context_set_pre_touch_mapped_memory");
        if (client_name) check(aeron_context_set_client_name(ctx, client_name->c_str()), "aeron_context_set_client_name");
        check(aeron_context_set_use_conductor_agent_invoker(ctx, use_conductor_agent_invoker),
              "aeron_context_set_use_conductor_agent_invoker");
        if (!error_handler.is_none()) {
            state_->error_handler = error_handler;
            check(aeron_context_set_error_handler(ctx, on_error_event, &state_->events),
                  "aeron_context_set_error_handler");
        }
        if (!publication_error_handler.is_none()) {
            state_->publication_error_handler = publication_error_handler;
            check(aeron_context_set_publication_error_frame_handler(ctx, on_publication_error_event, &state_->events),
                  "aeron_context_set_publication_error_frame_handler");
        }
        if (!counter_handler.is_none()) {
            state_->counter_handler = counter_handler;
            check(aeron_context_set_on_available_counter(ctx, on_available_counter_event, &state_->events),
                  "aeron_context_set_on_available_counter");
            check(aeron_context_set_on_unavailable_counter(ctx, on_unavailable_counter_event, &state_->events),
                  "aeron_context_set_on_unavailable_counter");
        }
        if (!resource_handler.is_none()) {
            state_->resource_handler = resource_handler;
            check(aeron_context_set_on_new_publication(ctx, on_new_publication_event, &state_->events),
                  "aeron_context_set_on_new_publication");
            check(aeron_context_set_on_new_exclusive_publication(ctx, on_new_exclusive_publication_event,
                                                                 &state_->events),
                  "aeron_context_set_on_new_exclusive_publication");
            check(aeron_context_set_on_new_subscription(ctx, on_new_subscription_event, &state_->events),
                  "aeron_context_set_on_new_subscription");
        }
        int rc;
        {
            ReleasedGil released;  // aeron_init waits for the driver's CnC file
            rc = aeron_init(&state_->aeron, ctx);
        }
        if (rc < 0) {
            AeronCallError error(std::string("aeron_init: ") + aeron_errmsg(), aeron_errcode());
            aeron_context_close(ctx);
            state_->context = nullptr;
            state_->closed = true;
            throw error;
        }
        {
            ReleasedGil released;
            rc = aeron_start(state_->aeron);
        }
        if (rc < 0) {
            AeronCallError error(std::string("aeron_start: ") + aeron_errmsg(), aeron_errcode());
            state_->close();
            throw error;
        }
    }

    void close() { state_->close(); }

    bool deliver_events(double timeout_s) {
        if (state_->closed) return false;
        return state_->deliver_events(timeout_s);
    }

    uint64_t lost_events() const { return state_->events.lost(); }
    bool is_closed() const { return state_->closed || aeron_is_closed(state_->aeron); }

    AsyncAddPublication async_add_publication(const std::string &channel, int32_t stream_id) {
        state_->check_open();
        aeron_async_add_publication_t *async = nullptr;
        if (aeron_async_add_publication(&async, state_->aeron, channel.c_str(), stream_id) < 0)
            throw_aeron_error("aeron_async_add_publication");
        return {state_, async, aeron_async_add_publication_get_registration_id(async)};
    }

    AsyncAddExclusivePublication async_add_exclusive_publication(const std::string &channel, int32_t stream_id) {
        state_->check_open();
        aeron_async_add_exclusive_publication_t *async = nullptr;
        if (aeron_async_add_exclusive_publication(&async, state_->aeron, channel.c_str(), stream_id) < 0)
            throw_aeron_error("aeron_async_add_exclusive_publication");
        return {state_, async, aeron_async_add_exclusive_publication_get_registration_id(async)};
    }

    AsyncAddSubscription async_add_subscription(const std::string &channel, int32_t stream_id,
                                                py::object on_available, py::object on_unavailable) {
        state_->check_open();
        void *clientd = &state_->events;
        aeron_async_add_subscription_t *async = nullptr;
        if (aeron_async_add_subscription(&async, state_->aeron, channel.c_str(), stream_id, on_available_image_event,
                                         clientd, on_unavailable_image_event, clientd) < 0)
            throw_aeron_error("aeron_async_add_subscription");
        const int64_t registration_id = aeron_async_add_subscription_get_registration_id(async);
        if (!on_available.is_none() || !on_unavailable.is_none())
            state_->image_callbacks[registration_id] = ImageCallbacks{on_available, on_unavailable};
        return {state_, async, registration_id};
    }

    // aeron_async_add_counter, or with a registration id aeron_async_add_static_counter (one counter
    // per (type id, registration id), shared by every client that asks for it).
    AsyncAddCounter async_add_counter(int32_t type_id, const py::bytes &key, const std::string &label,
                                      std::optional<int64_t> registration_id) {
        state_->check_open();
        const std::string key_bytes = key;
        const auto *key_data = reinterpret_cast<const uint8_t *>(key_bytes.data());
        aeron_async_add_counter_t *async = nullptr;
        const int rc = registration_id
            ? aeron_async_add_static_counter(&async, state_->aeron, type_id, key_data, key_bytes.size(), label.data(),
                                             label.size(), *registration_id)
            : aeron_async_add_counter(&async, state_->aeron, type_id, key_data, key_bytes.size(), label.data(),
                                      label.size());
        if (rc < 0) throw_aeron_error(registration_id ? "aeron_async_add_static_counter" : "aeron_async_add_counter");
        return {state_, async, aeron_async_add_counter_get_registration_id(async)};
    }

    AsyncNextSessionId async_next_session_id(int32_t stream_id) {
        state_->check_open();
        aeron_async_get_next_available_session_id_t *async = nullptr;
        if (aeron_async_next_session_id(&async, state_->aeron, stream_id) < 0)
            throw_aeron_error("aeron_async_next_session_id");
        return {state_, async};
    }

    int main_do_work() {
        state_->check_open();
        const int work = aeron_main_do_work(state_->aeron);
        if (work < 0) throw_aeron_error("aeron_main_do_work");
        return work;
    }

    void main_idle_strategy(int work_count) {
        state_->check_open();
        // Counted like a poll: a close from another thread meanwhile waits until we are out.
        state_->polling++;
        {
            ReleasedGil released;
            aeron_main_idle_strategy(state_->aeron, work_count);
        }
        state_->polling--;
        state_->finish_deferred();
    }

    int64_t client_id() {
        state_->check_open();
        return aeron_client_id(state_->aeron);
    }

    int64_t next_correlation_id() {
        state_->check_open();
        return aeron_next_correlation_id(state_->aeron);
    }

    std::string dir() {
        state_->check_open();
        return aeron_context_get_dir(state_->context);
    }

    uint64_t driver_timeout_ms() {
        state_->check_open();
        return aeron_context_get_driver_timeout_ms(state_->context);
    }

    // The context's settings as the client runs with them (aeron_context_get_*).
    py::dict settings() {
        state_->check_open();
        aeron_context_t *ctx = state_->context;
        const char *name = aeron_context_get_client_name(ctx);
        py::dict out;
        out["dir"] = std::string(aeron_context_get_dir(ctx));
        out["client_name"] = name == nullptr ? py::object(py::none()) : py::object(py::str(name));
        out["driver_timeout_ms"] = aeron_context_get_driver_timeout_ms(ctx);
        out["keepalive_interval_ns"] = aeron_context_get_keepalive_interval_ns(ctx);
        out["resource_linger_duration_ns"] = aeron_context_get_resource_linger_duration_ns(ctx);
        out["idle_sleep_duration_ns"] = aeron_context_get_idle_sleep_duration_ns(ctx);
        out["pre_touch_mapped_memory"] = aeron_context_get_pre_touch_mapped_memory(ctx);
        out["use_conductor_agent_invoker"] = aeron_context_get_use_conductor_agent_invoker(ctx);
        return out;
    }

    const std::shared_ptr<ClientState> &state() const { return state_; }
    friend PyObject *section_lock(const Client &client) { return client.state_->lock.get(); }

    py::object counters_reader(py::object self) {
        state_->check_open();
        auto state = state_;
        return make_counters_reader(self, state_->lock.object(), [state] { state->check_open(); },
                                    aeron_counters_reader(state_->aeron));
    }

private:
    std::shared_ptr<ClientState> state_;
};

}  // namespace

std::shared_ptr<ClientState> client_state_of(py::handle client) { return client.cast<Client &>().state(); }

void init_client(py::module_ &m) {
    bind_async<AsyncAddPublication>(m, "AsyncAddPublication", "aeron_async_add_publication_t");
    bind_async<AsyncAddExclusivePublication>(m, "AsyncAddExclusivePublication",
                                             "aeron_async_add_exclusive_publication_t");
    bind_async<AsyncAddSubscription>(m, "AsyncAddSubscription", "aeron_async_add_subscription_t");
    bind_async<AsyncAddCounter>(m, "AsyncAddCounter", "aeron_async_add_counter_t");
    guarded_class<AsyncNextSessionId>(m, "AsyncNextSessionId", "aeron_async_get_next_available_session_id_t")
        .def("poll", &AsyncNextSessionId::poll, "The session id, or None while the driver has not answered.");

    guarded_class<Client>(m, "Client", "aeron_t with its aeron_context_t (aeron_init + aeron_start).")
        .def(py::init<std::optional<std::string>, std::optional<uint64_t>, std::optional<uint64_t>,
                      std::optional<uint64_t>, std::optional<uint64_t>, std::optional<bool>, bool,
                      std::optional<std::string>, py::object, py::object, py::object, py::object>(),
             py::kw_only(), py::arg("dir") = py::none(), py::arg("driver_timeout_ms") = py::none(),
             py::arg("keepalive_interval_ns") = py::none(), py::arg("resource_linger_duration_ns") = py::none(),
             py::arg("idle_sleep_duration_ns") = py::none(), py::arg("pre_touch_mapped_memory") = py::none(),
             py::arg("use_conductor_agent_invoker") = false, py::arg("client_name") = py::none(),
             py::arg("error_handler") = py::none(), py::arg("publication_error_handler") = py::none(),
             py::arg("counter_handler") = py::none(), py::arg("resource_handler") = py::none())
        .def("close", &Client::close,
             "aeron_close + aeron_context_close; idempotent. Deferred until a poll in progress returns.")
        .def("deliver_events", &Client::deliver_events, py::arg("timeout"),
             "Calls the error/image callbacks for events the conductor queued, waiting up to `timeout` s "
             "(GIL released) for some. False once the client is closed.")
        .def_property_readonly("lost_events", &Client::lost_events,
                               "Conductor events dropped because they could not be queued (out of memory).")
        .def_property_readonly("is_closed", &Client::is_closed, "aeron_is_closed")
        .def("async_add_publication", &Client::async_add_publication, py::arg("channel"), py::arg("stream_id"),
             "aeron_async_add_publication")
        .def("async_add_exclusive_publication", &Client::async_add_exclusive_publication, py::arg("channel"),
             py::arg("stream_id"), "aeron_async_add_exclusive_publication")
        .def("async_add_subscription", &Client::async_add_subscription, py::arg("channel"), py::arg("stream_id"),
             py::arg("on_available_image") = py::none(), py::arg("on_unavailable_image") = py::none(),
             "aeron_async_add_subscription")
        .def("async_add_counter", &Client::async_add_counter, py::arg("type_id"), py::arg("key"), py::arg("label"),
             py::arg("registration_id") = py::none(),
             "aeron_async_add_counter, or aeron_async_add_static_counter with a registration_id.")
        .def("async_next_session_id", &Client::async_next_session_id, py::arg("stream_id"),
             "aeron_async_next_session_id")
        .def("main_do_work", &Client::main_do_work, "aeron_main_do_work (conductor agent invoker mode).")
        .def("main_idle_strategy", &Client::main_idle_strategy, py::arg("work_count"),
             "aeron_main_idle_strategy (releases the GIL).")
        .def_property_readonly("client_id", &Client::client_id, "aeron_client_id")
        .def("next_correlation_id", &Client::next_correlation_id, "aeron_next_correlation_id")
        .def_property_readonly("dir", &Client::dir, "aeron_context_get_dir")
        .def_property_readonly("driver_timeout_ms", &Client::driver_timeout_ms, "aeron_context_get_driver_timeout_ms")
        .def("settings", &Client::settings,
             "The client context's settings: dir, client_name, driver_timeout_ms, keepalive_interval_ns, "
             "resource_linger_duration_ns, idle_sleep_duration_ns, pre_touch_mapped_memory, "
             "use_conductor_agent_invoker (aeron_context_get_*).")
        .def("counters_reader", [](py::object self) { return self.cast<Client &>().counters_reader(self); },
             "aeron_counters_reader");

    m.def(
        "is_driver_active",
        [](const std::string &dir, int64_t timeout_ms) {
            ReleasedGil released;
            // The C function calls its log function unconditionally: give it one that drops the text.
            return aeron_is_driver_active(dir.c_str(), timeout_ms, [](const char *) {});
        },
        py::arg("dir"), py::arg("timeout_ms"), "aeron_is_driver_active (releases the GIL).");
    // Aeron's properties (name=value, e.g. aeron.term.buffer.length=65536) become AERON_* environment
    // variables of the process, read by every context made afterwards. Under the GIL: one setenv at a time.
    m.def(
        "properties_file_load",
        [](const std::string &path) {
            if (aeron_properties_file_load(path.c_str()) < 0) throw_aeron_error("aeron_properties_file_load");
        },
        py::arg("path"), "aeron_properties_file_load");
    m.def(
        "properties_buffer_load",
        [](const std::string &text) {
            if (aeron_properties_buffer_load(text.c_str()) < 0) throw_aeron_error("aeron_properties_buffer_load");
        },
        py::arg("text"), "aeron_properties_buffer_load");
    m.def("default_path", [] {
        char buffer[1024];
        if (aeron_default_path(buffer, sizeof buffer) < 0) throw_aeron_error("aeron_default_path");
        return std::string(buffer);
    }, "aeron_default_path");
}

}  // namespace aeron_py
