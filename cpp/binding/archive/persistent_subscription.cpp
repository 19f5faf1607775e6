// _aeron.archive.PersistentSubscription: aeron_archive_persistent_subscription_t, a subscription
// that starts from a position in a recording (or its start, or live) and follows the live stream,
// replaying from the archive whenever it falls behind or loses the live image.
//
// Its poll calls the Python handler per message, so it runs with the GIL held on the caller's
// thread (the C poll never blocks: its archive requests are asynchronous). Like a Subscription's:
// a handler's exception stops the poll (that message counts as delivered) and is re-raised; a
// re-entrant poll raises; close() or the client's close from a handler waits until the poll
// returns. The listener's callbacks are queued and handed to Python after the poll.
#include "archive_state.hpp"

#include "../guarded_class.hpp"
#include "../header_view.hpp"

#include <cerrno>

namespace aeron_py {
namespace archive {

namespace {

struct ListenerEvent {
    enum Kind { LIVE_JOINED = 0, LIVE_LEFT = 1, ERROR = 2 } kind;
    int errcode = 0;
    std::string message;
};

struct PersistentState : ClientDependent {
    std::shared_ptr<ClientState> client;
    aeron_archive_context_t *archive_context = nullptr;  // ours; the subscription connects with it
    void *idle_state = nullptr;  // archive_context's loaded idle strategy: freed after it
    aeron_archive_persistent_subscription_t *subscription = nullptr;
    // The subscription's context (owned by it): its state counters, allocated at create.
    aeron_archive_persistent_subscription_context_t *context = nullptr;
    std::vector<ListenerEvent> events;
    bool polling = false;
    bool close_pending = false;

    ~PersistentState() override { close_now(); }
    void on_client_close() noexcept override { close_now(); }  // the client defers its close past our poll

    void close_now() noexcept {
        if (subscription != nullptr) aeron_archive_persistent_subscription_close(subscription);  // closes its context
        subscription = nullptr;
        context = nullptr;
        if (archive_context != nullptr) aeron_archive_context_close(archive_context);  // after: it borrows from it
        archive_context = nullptr;
        aeron_free(idle_state);
        idle_state = nullptr;
    }
};

void push_event(void *clientd, ListenerEvent &&event) noexcept {
    auto *state = static_cast<PersistentState *>(clientd);
    if (state->events.size() >= 4096) return;  // bounded: a stuck consumer loses events, not memory
    try {
        state->events.push_back(std::move(event));
    } catch (...) {
    }
}

void on_live_joined(void *clientd) { push_event(clientd, ListenerEvent{ListenerEvent::LIVE_JOINED, 0, {}}); }
void on_live_left(void *clientd) { push_event(clientd, ListenerEvent{ListenerEvent::LIVE_LEFT, 0, {}}); }
void on_error(void *clientd, int errcode, const char *message) {
    try {
        push_event(clientd, ListenerEvent{ListenerEvent::ERROR, errcode, message != nullptr ? message : ""});
    } catch (...) {
    }
}

// One poll's link between the C handler and Python.
struct PollCall {
    PyObject *handler = nullptr;
    PyObject *header_view = nullptr;  // owned by the PersistentSubscription, reused
    PyObject *lock = nullptr;         // the client's Section lock, for the views made
    bool failed = false;
    PyObject *error_type = nullptr, *error_value = nullptr, *error_tb = nullptr;
};

aeron_controlled_fragment_handler_action_t on_message(void *clientd, const uint8_t *buffer, size_t length,
                                                      aeron_header_t *header) {
    auto *call = static_cast<PollCall *>(clientd);
    if (call->failed) return AERON_ACTION_ABORT;
    PyObject *data = PyBytes_FromStringAndSize(reinterpret_cast<const char *>(buffer), static_cast<Py_ssize_t>(length));
    PyObject *view = data == nullptr ? nullptr : header_view_bind(call->header_view, header, call->lock);
    PyObject *result = view == nullptr ? nullptr : PyObject_CallFunctionObjArgs(call->handler, data, view, nullptr);
    Py_XDECREF(data);
    if (view != nullptr) header_view_unbind(call->header_view);
    if (result != nullptr) {
        Py_DECREF(result);
        return AERON_ACTION_CONTINUE;
    }
    call->failed = true;  // this message counts as delivered; the rest wait for the next poll
    PyErr_Fetch(&call->error_type, &call->error_value, &call->error_tb);
    return AERON_ACTION_BREAK;
}

class PersistentSubscription {
public:
    explicit PersistentSubscription(std::shared_ptr<PersistentState> state) : state_(std::move(state)) {}
    PersistentSubscription(PersistentSubscription &&) = default;
    ~PersistentSubscription() { Py_CLEAR(header_view_); }
    friend PyObject *section_lock(const PersistentSubscription &sub) { return sub.state_->client->lock.get(); }

    int poll(py::object handler, int fragment_limit) {
        if (fragment_limit < 0) throw py::value_error("fragment_limit must be >= 0");
        if (!PyCallable_Check(handler.ptr())) throw py::type_error("handler must be callable: handler(data, header)");
        check_open();
        if (state_->polling) throw std::runtime_error("PersistentSubscription.poll is already running (a re-entrant or concurrent poll)");
        PollCall call;
        call.handler = handler.ptr();
        call.header_view = header_view_;
        call.lock = state_->client->lock.get();
        state_->polling = true;
        state_->client->polling++;  // a close of the client from the handler waits for us
        const int rc = aeron_archive_persistent_subscription_controlled_poll(state_->subscription, on_message, &call,
                                                                             static_cast<size_t>(fragment_limit));
        state_->client->polling--;
        state_->polling = false;
        header_view_ = call.header_view;
        const bool closing = state_->close_pending;
        if (closing) {
            state_->close_pending = false;
            state_->close_now();
        }
        state_->client->finish_deferred();
        if (call.failed) {
            PyErr_Restore(call.error_type, call.error_value, call.error_tb);
            throw py::error_already_set();
        }
        if (rc < 0 && !closing) throw_aeron_error("aeron_archive_persistent_subscription_controlled_poll");
        return rc < 0 ? 0 : rc;
    }

    bool is_live() { return check_open(), aeron_archive_persistent_subscription_is_live(state_->subscription); }
    bool is_replaying() { return check_open(), aeron_archive_persistent_subscription_is_replaying(state_->subscription); }
    bool has_failed() { return check_open(), aeron_archive_persistent_subscription_has_failed(state_->subscription); }

    py::object failure() {
        check_open();
        int errcode = 0;
        const char *message = nullptr;
        if (!aeron_archive_persistent_subscription_failure_reason(state_->subscription, &errcode, &message))
            return py::none();
        return py::make_tuple(errcode, std::string(message != nullptr ? message : ""));
    }

    bool is_closed() const { return state_->subscription == nullptr || state_->close_pending || state_->client->closed; }

    void close() {
        if (state_->polling) {
            state_->close_pending = true;  // from the handler: after the poll returns
            return;
        }
        state_->close_now();
    }

    // The ids of its counters in the client's counters: (state, join difference, live left,
    // live joined); the subscription allocated them and closes them with itself.
    py::tuple counter_ids() {
        check_open();
        aeron_archive_persistent_subscription_context_t *ctx = state_->context;
        return py::make_tuple(counter_id(aeron_archive_persistent_subscription_context_get_state_counter(ctx)),
                              counter_id(aeron_archive_persistent_subscription_context_get_join_difference_counter(ctx)),
                              counter_id(aeron_archive_persistent_subscription_context_get_live_left_counter(ctx)),
                              counter_id(aeron_archive_persistent_subscription_context_get_live_joined_counter(ctx)));
    }

    // (kind, errcode, message) per listener callback since the last take: 0 live joined, 1 live left, 2 error.
    py::list take_events() {
        py::list out;
        for (const auto &e : state_->events) out.append(py::make_tuple(static_cast<int>(e.kind), e.errcode, e.message));
        state_->events.clear();
        return out;
    }

private:
    static int32_t counter_id(aeron_counter_t *counter) {
        aeron_counter_constants_t constants;
        if (counter == nullptr || aeron_counter_constants(counter, &constants) < 0) return -1;
        return constants.counter_id;
    }

    void check_open() const {
        state_->client->check_open();
        if (state_->subscription == nullptr || state_->close_pending)
            throw AeronCallError("the persistent subscription is closed", EPIPE);
    }

    std::shared_ptr<PersistentState> state_;
    PyObject *header_view_ = nullptr;
};

}  // namespace

py::object make_persistent_subscription(py::handle client, const PersistentOptions &options) {
    auto state = std::make_shared<PersistentState>();
    state->client = client_state_of(client);
    Section section(state->client->lock.get());
    check_stream_text(options.live_channel, "live_channel");
    check_stream_text(options.replay_channel, "replay_channel");
    state->archive_context = new_archive_context(*state->client, options.connect, &state->idle_state);
    aeron_archive_persistent_subscription_context_t *ctx = nullptr;
    if (aeron_archive_persistent_subscription_context_init(&ctx) < 0)
        throw_aeron_error("aeron_archive_persistent_subscription_context_init");
    aeron_archive_persistent_subscription_listener_t listener{on_live_joined, on_live_left, on_error, state.get()};
    if (aeron_archive_persistent_subscription_context_set_aeron(ctx, state->client->aeron) < 0 ||
        aeron_archive_persistent_subscription_context_set_archive_context(ctx, state->archive_context) < 0 ||
        aeron_archive_persistent_subscription_context_set_recording_id(ctx, options.recording_id) < 0 ||
        aeron_archive_persistent_subscription_context_set_live_channel(ctx, options.live_channel.c_str()) < 0 ||
        aeron_archive_persistent_subscription_context_set_live_stream_id(ctx, options.live_stream_id) < 0 ||
        aeron_archive_persistent_subscription_context_set_replay_channel(ctx, options.replay_channel.c_str()) < 0 ||
        aeron_archive_persistent_subscription_context_set_replay_stream_id(ctx, options.replay_stream_id) < 0 ||
        aeron_archive_persistent_subscription_context_set_start_position(ctx, options.start_position) < 0 ||
        aeron_archive_persistent_subscription_context_set_listener(ctx, &listener) < 0 ||
        aeron_archive_persistent_subscription_create(&state->subscription, ctx) < 0) {  // owns ctx from here
        AeronCallError error(std::string("aeron_archive_persistent_subscription_create: ") + aeron_errmsg(),
                             aeron_errcode());
        if (state->subscription == nullptr) aeron_archive_persistent_subscription_context_close(ctx);
        throw error;
    }
    state->context = ctx;
    state->client->add_dependent(state);
    return py::cast(PersistentSubscription(state));
}

void init_persistent_subscription(py::module_ &m) {
    guarded_class<PersistentSubscription>(m, "PersistentSubscription",
                                       "aeron_archive_persistent_subscription_t: replay, then live, then replay "
                                       "again when it falls behind.")
        .def("poll", &PersistentSubscription::poll, py::arg("handler"), py::arg("fragment_limit") = 10,
             "aeron_archive_persistent_subscription_controlled_poll: handler(data, header) per message.")
        .def_property_readonly("is_live", &PersistentSubscription::is_live)
        .def_property_readonly("is_replaying", &PersistentSubscription::is_replaying)
        .def_property_readonly("has_failed", &PersistentSubscription::has_failed)
        .def("failure", &PersistentSubscription::failure, "(errcode, message) once failed, else None.")
        .def_property_readonly("is_closed", &PersistentSubscription::is_closed)
        .def("close", &PersistentSubscription::close, "Idempotent; from a handler, after the poll returns.")
        .def("counter_ids", &PersistentSubscription::counter_ids,
             "aeron_archive_persistent_subscription_context_get_{state,join_difference,live_left,live_joined}"
             "_counter: their counter ids (-1: none).")
        .def("take_events", &PersistentSubscription::take_events);
    m.def(
        "persistent_subscription",
        [](py::handle client, const std::string &control_request_channel, int32_t control_request_stream_id,
           const std::string &control_response_channel, int32_t control_response_stream_id,
           uint64_t message_timeout_ns, const std::string &client_name, int64_t recording_id,
           const std::string &live_channel, int32_t live_stream_id, const std::string &replay_channel,
           int32_t replay_stream_id, int64_t start_position) {
            return make_persistent_subscription(
                client, PersistentOptions{ConnectOptions{control_request_channel, control_request_stream_id,
                                                         control_response_channel, control_response_stream_id, "", 0,
                                                         message_timeout_ns, client_name},
                                          recording_id, live_channel, live_stream_id, replay_channel,
                                          replay_stream_id, start_position});
        },
        py::arg("client"), py::arg("control_request_channel"), py::arg("control_request_stream_id"),
        py::arg("control_response_channel"), py::arg("control_response_stream_id"), py::arg("message_timeout_ns"),
        py::arg("client_name"), py::arg("recording_id"), py::arg("live_channel"), py::arg("live_stream_id"),
        py::arg("replay_channel"), py::arg("replay_stream_id"), py::arg("start_position"),
        "aeron_archive_persistent_subscription_create over the client's aeron_t (its own archive connection).");
    m.attr("PERSISTENT_FROM_START") = py::int_(static_cast<int64_t>(AERON_ARCHIVE_PERSISTENT_SUBSCRIPTION_FROM_START));
    m.attr("PERSISTENT_FROM_LIVE") = py::int_(static_cast<int64_t>(AERON_ARCHIVE_PERSISTENT_SUBSCRIPTION_FROM_LIVE));
}

}  // namespace archive
}  // namespace aeron_py
