// Subscriptions: aeron_subscription_t — polling (through aeron_subscription_controlled_poll so a
// raising handler can stop the poll without losing later fragments), image look-ups that
// retain images, and multi-destination (MDS) destinations.
#include "common.hpp"

#include "image.hpp"

namespace aeron_py {

void SubState::release_images() {
    for (auto &weak : retained) {
        if (auto handle = weak.lock()) {
            if (!handle->released) {
                handle->released = true;
                aeron_subscription_image_release(subscription, handle->image);
            }
        }
    }
    retained.clear();
}

void SubState::check_open() const {
    if (closed) throw AeronCallError("the subscription is closed", EPIPE);
    client->check_open();
}

namespace {

class Subscription {
public:
    Subscription(const std::shared_ptr<ClientState> &client, aeron_subscription_t *subscription)
        : state_(std::make_shared<SubState>()) {
        state_->client = client;
        state_->subscription = subscription;
        if (aeron_subscription_constants(subscription, &constants_) < 0)
            throw_aeron_error("aeron_subscription_constants");
        channel_ = constants_.channel;
        client->subscriptions.push_back(state_);
    }

    ~Subscription() {
        if (python_alive()) close();
    }

    int poll(py::object handler, int fragment_limit, FragmentAssembler *assembler, bool controlled, bool with_header) {
        state_->check_open();
        PollContext context;
        context.handler = handler.ptr();
        context.controlled = controlled;
        context.with_header = with_header;
        return run_poll(context, assembler, [&](aeron_controlled_fragment_handler_t h, void *clientd) {
            return aeron_subscription_controlled_poll(state_->subscription, h, clientd,
                                                      static_cast<size_t>(fragment_limit));
        });
    }

    py::list poll_batch(int fragment_limit, FragmentAssembler *assembler) {
        state_->check_open();
        py::list batch;
        PollContext context;
        context.batch = batch.ptr();
        run_poll(context, assembler, [&](aeron_controlled_fragment_handler_t h, void *clientd) {
            return aeron_subscription_controlled_poll(state_->subscription, h, clientd,
                                                      static_cast<size_t>(fragment_limit));
        });
        return batch;
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
        return wrap(aeron_subscription_image_by_session_id(state_->subscription, session_id));
    }

    py::object image_at_index(size_t index) {
        state_->check_open();
        return wrap(aeron_subscription_image_at_index(state_->subscription, index));
    }

    py::list images() {
        state_->check_open();
        py::list result;
        const int count = aeron_subscription_image_count(state_->subscription);
        for (int i = 0; i < count; i++) {
            py::object image = wrap(aeron_subscription_image_at_index(state_->subscription, static_cast<size_t>(i)));
            if (!image.is_none()) result.append(image);
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

    void close() {
        if (state_->closed) return;
        state_->release_images();
        state_->closed = true;
        if (state_->client->closed) return;
        if (aeron_subscription_close(state_->subscription, nullptr, nullptr) < 0)
            throw_aeron_error("aeron_subscription_close");
    }

    const aeron_subscription_constants_t &constants() const { return constants_; }
    const std::string &channel() const { return channel_; }

private:
    bool open() const { return !state_->closed && !state_->client->closed; }

    py::object wrap(aeron_image_t *image) {
        if (image == nullptr) return py::none();
        auto handle = std::make_shared<ImageHandle>();
        handle->image = image;
        state_->retained.push_back(handle);
        // Drop bookkeeping of images already released, so `retained` stays small.
        if (state_->retained.size() > 64) {
            auto &r = state_->retained;
            r.erase(std::remove_if(r.begin(), r.end(),
                                   [](const std::weak_ptr<ImageHandle> &w) {
                                       auto h = w.lock();
                                       return !h || h->released;
                                   }),
                    r.end());
        }
        return py::cast(new Image(image, state_, handle), py::return_value_policy::take_ownership);
    }

    std::shared_ptr<SubState> state_;
    aeron_subscription_constants_t constants_{};
    std::string channel_;
};

}  // namespace

py::object make_subscription(const std::shared_ptr<ClientState> &client, aeron_subscription_t *subscription) {
    return py::cast(new Subscription(client, subscription), py::return_value_policy::take_ownership);
}

void init_subscription(py::module_ &m) {
    py::class_<Subscription>(m, "Subscription", "aeron_subscription_t (not thread-safe).")
        .def("poll",
             [](Subscription &s, py::object handler, int limit, FragmentAssembler *assembler, bool with_header) {
                 return s.poll(handler, limit, assembler, false, with_header);
             },
             py::arg("handler"), py::arg("fragment_limit"), py::arg("assembler") = nullptr,
             py::arg("with_header") = true, "aeron_subscription_controlled_poll, handler(data: bytes, header).")
        .def("controlled_poll",
             [](Subscription &s, py::object handler, int limit, FragmentAssembler *assembler, bool with_header) {
                 return s.poll(handler, limit, assembler, true, with_header);
             },
             py::arg("handler"), py::arg("fragment_limit"), py::arg("assembler") = nullptr,
             py::arg("with_header") = true, "aeron_subscription_controlled_poll; the handler returns an ACTION_*.")
        .def("poll_batch", &Subscription::poll_batch, py::arg("fragment_limit"), py::arg("assembler") = nullptr,
             "aeron_subscription_controlled_poll collecting payloads into a list of bytes.")
        .def_property_readonly("is_connected", &Subscription::is_connected, "aeron_subscription_is_connected")
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
        .def_property_readonly("channel", &Subscription::channel)
        .def_property_readonly("stream_id", [](const Subscription &s) { return s.constants().stream_id; })
        .def_property_readonly("registration_id", [](const Subscription &s) { return s.constants().registration_id; })
        .def("close", &Subscription::close, "aeron_subscription_close; idempotent.");
}

}  // namespace aeron_py
