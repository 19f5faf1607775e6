// Subscriptions: aeron_subscription_t — polling (through aeron_subscription_controlled_poll so a
// raising handler can stop the poll without losing later fragments; poll, controlled_poll,
// poll_fragments and poll_batch are fast methods), image look-ups that retain images, and
// multi-destination (MDS) destinations.
#include "common.hpp"
#include "guarded_class.hpp"
#include "local_sockaddrs.hpp"

#include "block_poll.hpp"
#include "fastcall.hpp"
#include "instance.hpp"
#include "image.hpp"
#include "log_peek.hpp"

namespace aeron_py {

namespace {

PyObject *public_subscription_class = nullptr;  // strong, kept for the life of the process

class Subscription {
public:
    Subscription(const std::shared_ptr<ClientState> &client, aeron_subscription_t *subscription)
        : state_(std::make_shared<SubState>()) {
        state_->client = client;
        state_->subscription = subscription;
        try {
            if (aeron_subscription_constants(subscription, &constants_) < 0)
                throw_aeron_error("aeron_subscription_constants");
            channel_ = constants_.channel;
            poller_ = std::make_unique<Poller>();
        } catch (...) {
            aeron_subscription_close(subscription, nullptr, nullptr);
            throw;
        }
        state_->registration_id = constants_.registration_id;
        client->subscriptions[constants_.registration_id] = state_;
    }

    ~Subscription() {
        if (!python_alive()) return;  // the client's close frees it
        Section section(section_lock(*this));
        try {
            state_->close();
        } catch (...) {  // a destructor never throws; the C client frees it with the client
        }
    }

    PyObject *run(PollMode mode, bool reassemble, const char *function, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames) {
        PollArgs parsed;
        if (!parse_poll_args(function, args, nargs, kwnames, mode == PollMode::BATCH,
                             mode == PollMode::BATCH ? 100 : 10, parsed))
            return nullptr;
        if (state_->closed || state_->client->closed) state_->check_open();  // raises
        aeron_subscription_t *subscription = state_->subscription;
        // Nothing to read (and no new image list to acknowledge): done without Aeron's poll. A
        // poll from inside a handler still goes on to run_poll, which refuses it. Under
        // AERON_PY_NO_TRICKS every poll is Aeron's.
        if (tricks::on() && state_->polling == 0 && !log_peek::subscription_may_have_data(subscription))
            return empty_poll_result(mode);
        return run_poll(*state_, nullptr, *poller_, mode, parsed, reassemble, "aeron_subscription_controlled_poll",
                        [subscription](aeron_controlled_fragment_handler_t handler, void *clientd, size_t limit) {
                            return aeron_subscription_controlled_poll(subscription, handler, clientd, limit);
                        });
    }

    // Each image in turn with aeron_image_block_poll (aeron_subscription_for_each_image), so after a
    // raising handler no further image's block is consumed unseen (aeron_subscription_block_poll
    // would go on to the next images).
    long block_poll(const py::object &handler, long block_length_limit) {
        aeron_subscription_t *subscription = state_->subscription;
        return run_block_poll(*state_, handler, block_length_limit, "block_poll",
                              [subscription](BlockPoll &poll, size_t limit) -> long {
                                  struct Walk {
                                      BlockPoll *poll;
                                      size_t limit;
                                      long consumed;
                                      bool error;
                                  } walk{&poll, limit, 0, false};
                                  aeron_subscription_for_each_image(
                                      subscription,
                                      [](aeron_image_t *image, void *clientd) {
                                          auto *w = static_cast<Walk *>(clientd);
                                          if (w->poll->failed || w->error) return;
                                          const int rc = aeron_image_block_poll(image, on_block, w->poll, w->limit);
                                          if (rc < 0) w->error = true;
                                          else w->consumed += rc;
                                      },
                                      &walk);
                                  return walk.error ? -1 : walk.consumed;
                              });
    }

    bool is_connected() { return open() && aeron_subscription_is_connected(state_->subscription); }
    bool is_closed() { return !open() || aeron_subscription_is_closed(state_->subscription); }

    int image_count() {
        state_->check_open();
        const int count = aeron_subscription_image_count(state_->subscription);
        if (count < 0) throw_aeron_error("aeron_subscription_image_count");
        return count;
    }

    py::object image_by_session_id(int32_t session_id) {
        state_->check_open();
        aeron_image_t *image = aeron_subscription_image_by_session_id(state_->subscription, session_id);
        return image == nullptr ? py::none() : make_live_image(state_, image);
    }

    py::object image_at_index(size_t index) {
        state_->check_open();
        aeron_image_t *image = aeron_subscription_image_at_index(state_->subscription, index);
        return image == nullptr ? py::none() : make_live_image(state_, image);
    }

    py::list images() {
        state_->check_open();
        py::list result;
        const int count = aeron_subscription_image_count(state_->subscription);
        for (int i = 0; i < count; i++) {
            aeron_image_t *image = aeron_subscription_image_at_index(state_->subscription, static_cast<size_t>(i));
            if (image != nullptr) result.append(make_live_image(state_, image));
        }
        return result;
    }

    AsyncDestination add_destination(const std::string &uri) {
        state_->check_open();
        aeron_async_destination_t *async = nullptr;
        if (aeron_subscription_async_add_destination(&async, state_->client->aeron, state_->subscription,
                                                     uri.c_str()) < 0)
            throw_aeron_error("aeron_subscription_async_add_destination");
        return {state_->client, async, aeron_subscription_async_destination_poll};
    }

    AsyncDestination remove_destination(const std::string &uri) {
        state_->check_open();
        aeron_async_destination_t *async = nullptr;
        if (aeron_subscription_async_remove_destination(&async, state_->client->aeron, state_->subscription,
                                                        uri.c_str()) < 0)
            throw_aeron_error("aeron_subscription_async_remove_destination");
        return {state_->client, async, aeron_subscription_async_destination_poll};
    }

    int64_t channel_status() {
        state_->check_open();
        return aeron_subscription_channel_status(state_->subscription);
    }

    std::string resolved_endpoint() {
        state_->check_open();
        char buffer[AERON_CLIENT_MAX_LOCAL_ADDRESS_STR_LEN] = {0};
        const int rc = aeron_subscription_resolved_endpoint(state_->subscription, buffer, sizeof buffer);
        if (rc < 0) throw_aeron_error("aeron_subscription_resolved_endpoint");
        return rc == 0 ? std::string() : std::string(buffer);
    }

    std::vector<std::string> local_sockaddrs() {
        state_->check_open();
        return read_local_sockaddrs(
            [&](aeron_iovec_t *addresses, size_t capacity) {
                return aeron_subscription_local_sockaddrs(state_->subscription, addresses, capacity);
            },
            "aeron_subscription_local_sockaddrs");
    }

    // The channel with its wildcard endpoint port replaced by the port bound (None until bound).
    std::optional<std::string> resolved_channel() {
        state_->check_open();
        std::vector<char> buffer(4096);  // AERON_URI_MAX_LENGTH (uri/aeron_uri.h); grown if the answer is longer
        for (;;) {
            const int rc = aeron_subscription_try_resolve_channel_endpoint_port(state_->subscription, buffer.data(),
                                                                               buffer.size());
            if (rc < 0) throw_aeron_error("aeron_subscription_try_resolve_channel_endpoint_port");
            if (static_cast<size_t>(rc) < buffer.size()) {
                if (rc == 0) return std::nullopt;
                return std::string(buffer.data(), static_cast<size_t>(rc));
            }
            buffer.resize(static_cast<size_t>(rc) + 1);
        }
    }

    void close() { state_->close(); }

    const std::shared_ptr<SubState> &state() const { return state_; }
    const aeron_subscription_constants_t &constants() const { return constants_; }
    const std::string &channel() const { return channel_; }
    py::object work;  // the client's conductor duty cycle in invoker mode (used by the Python layer)
    friend PyObject *section_lock(const Subscription &sub) { return sub.state_->client->lock.get(); }

private:
    bool open() const { return !state_->closed && !state_->client->closed; }

    std::shared_ptr<SubState> state_;
    aeron_subscription_constants_t constants_{};
    std::string channel_;
    std::unique_ptr<Poller> poller_;
};

#define AERON_PY_SUB_FAST(name, mode, reassemble)                                                \
    PyObject *fast_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) { \
        AERON_PY_FAST_BEGIN                                                                      \
        Subscription *sub = fast::self_as<Subscription>(self);                                   \
        if (sub == nullptr) return nullptr;                                                      \
        Section section(section_lock(*sub));                                                     \
        /* `self` stays alive: the caller holds its arguments for the call */                  \
        return sub->run(mode, reassemble, #name, args, nargs, kw);                               \
        AERON_PY_FAST_END                                                                        \
    }
AERON_PY_SUB_FAST(poll, PollMode::HANDLER, true)
AERON_PY_SUB_FAST(controlled_poll, PollMode::CONTROLLED, true)
AERON_PY_SUB_FAST(poll_fragments, PollMode::HANDLER, false)
AERON_PY_SUB_FAST(poll_batch, PollMode::BATCH, true)
#undef AERON_PY_SUB_FAST

#define AERON_PY_FAST_DEF(name, doc) \
    {#name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fast_##name)), METH_FASTCALL | METH_KEYWORDS, doc}

PyMethodDef poll_def = AERON_PY_FAST_DEF(
    poll,
    "poll($self, /, handler, fragment_limit=10, zero_copy=False, with_header=True)\n--\n\n"
    "aeron_subscription_controlled_poll with reassembly: handler(data, header) per message. data is bytes, or "
    "with zero_copy a read-only memoryview dead after the call; header is a view valid during the call.");
PyMethodDef controlled_poll_def = AERON_PY_FAST_DEF(
    controlled_poll,
    "controlled_poll($self, /, handler, fragment_limit=10, zero_copy=False, with_header=True)\n--\n\n"
    "aeron_subscription_controlled_poll with reassembly; the handler returns an ACTION_* (None = CONTINUE).");
PyMethodDef poll_fragments_def = AERON_PY_FAST_DEF(
    poll_fragments,
    "poll_fragments($self, /, handler, fragment_limit=10, zero_copy=False, with_header=True)\n--\n\n"
    "aeron_subscription_controlled_poll without reassembly: the handler sees raw fragments.");
PyMethodDef poll_batch_def = AERON_PY_FAST_DEF(
    poll_batch,
    "poll_batch($self, /, fragment_limit=100)\n--\n\n"
    "aeron_subscription_controlled_poll collecting reassembled payloads into a list of bytes.");
#undef AERON_PY_FAST_DEF

}  // namespace

void set_public_subscription_class(py::object cls) {
    Py_XDECREF(public_subscription_class);
    public_subscription_class = cls.is_none() ? nullptr : cls.release().ptr();
}

bool subscription_state(PyObject *object, std::shared_ptr<SubState> &out) {
    if (!PyObject_TypeCheck(object, fast::type_of<Subscription>())) return false;
    out = py::handle(object).cast<Subscription *>()->state();
    return true;
}

py::object make_subscription(const std::shared_ptr<ClientState> &client, aeron_subscription_t *subscription) {
    return instance::adopt(reinterpret_cast<PyTypeObject *>(public_subscription_class),
                           std::make_unique<Subscription>(client, subscription));
}

void init_subscription(py::module_ &m) {
    guarded_class<Subscription> cls(m, "Subscription", "aeron_subscription_t (not thread-safe).");
    cls.def_property_readonly("is_connected", &Subscription::is_connected, "aeron_subscription_is_connected")
        .def_property_readonly("is_closed", &Subscription::is_closed, "aeron_subscription_is_closed")
        .def_property_readonly("image_count", &Subscription::image_count, "aeron_subscription_image_count")
        .def("image_by_session_id", &Subscription::image_by_session_id, py::arg("session_id"),
             "aeron_subscription_image_by_session_id: a retained Image or None.")
        .def("image_at_index", &Subscription::image_at_index, py::arg("index"),
             "aeron_subscription_image_at_index: a retained Image or None.")
        .def("images", &Subscription::images, "Retained Images, one per aeron_subscription_image_at_index.")
        .def("async_add_destination", &Subscription::add_destination, py::arg("uri"),
             "aeron_subscription_async_add_destination (MDS).")
        .def("async_remove_destination", &Subscription::remove_destination, py::arg("uri"),
             "aeron_subscription_async_remove_destination")
        .def_property_readonly("channel_status", &Subscription::channel_status, "aeron_subscription_channel_status")
        .def("resolved_endpoint", &Subscription::resolved_endpoint, "aeron_subscription_resolved_endpoint")
        .def("local_sockaddrs", &Subscription::local_sockaddrs,
             "aeron_subscription_local_sockaddrs (every bound address).")
        .def("resolved_channel", &Subscription::resolved_channel,
             "aeron_subscription_try_resolve_channel_endpoint_port: the channel with an endpoint port 0 replaced "
             "by the port bound, or None while not bound yet.")
        .def_property_readonly("channel", &Subscription::channel)
        .def_property_readonly("stream_id", [](const Subscription &s) { return s.constants().stream_id; })
        .def_property_readonly("registration_id", [](const Subscription &s) { return s.constants().registration_id; })
        .def("block_poll", &Subscription::block_poll, py::arg("handler"), py::arg("block_length_limit"),
             "aeron_image_block_poll of each image: handler(data, session_id, term_id) per block of raw frames "
             "(headers included, up to block_length_limit bytes, within one term); returns the bytes consumed.")
        .def_object_member("_work", &Subscription::work)
        .def("close", &Subscription::close,
             "aeron_subscription_close; idempotent. Deferred until a poll in progress returns.");
    fast::add_method(cls.unlocked(), &poll_def);
    fast::add_method(cls.unlocked(), &controlled_poll_def);
    fast::add_method(cls.unlocked(), &poll_fragments_def);
    fast::add_method(cls.unlocked(), &poll_batch_def);
}

}  // namespace aeron_py
