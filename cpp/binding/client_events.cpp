// Client events: what the client conductor thread reports (aeron_error_handler_t,
// aeron_on_available_image_t, aeron_on_unavailable_image_t, aeron_publication_error_frame_handler_t,
// aeron_on_available_counter_t, aeron_on_unavailable_counter_t, aeron_on_new_publication_t,
// aeron_on_new_subscription_t) is copied into the client's
// EventQueue without the GIL; ClientState::deliver_events calls the Python callbacks
// later, on a Python thread (see aeron_py/client.py for which one).
#include <arpa/inet.h>
#include <sys/socket.h>

#include <string>

#include "common.hpp"

#include "client_events.hpp"
#include "image.hpp"

namespace aeron_py {

namespace {

// Conductor thread: no Python, no exceptions out.
void on_image_event(ClientEvent::Kind kind, void *clientd, aeron_subscription_t *subscription,
                    aeron_image_t *image) noexcept {
    auto *queue = static_cast<EventQueue *>(clientd);
    try {
        ClientEvent event;
        event.kind = kind;
        aeron_subscription_constants_t constants{};
        if (aeron_subscription_constants(subscription, &constants) < 0) {
            queue->lose();  // cannot tell whose image
            return;
        }
        event.subscription_id = constants.registration_id;
        if (!read_image_constants(image, event.image)) {
            queue->lose();
            return;
        }
        queue->push(std::move(event));
    } catch (...) {
        queue->lose();
    }
}

void on_counter_event(ClientEvent::Kind kind, void *clientd, int64_t registration_id, int32_t counter_id) noexcept {
    auto *queue = static_cast<EventQueue *>(clientd);
    ClientEvent event;
    event.kind = kind;
    event.registration_id = registration_id;
    event.counter_id = counter_id;
    queue->push(std::move(event));
}

void on_resource_event(ClientEvent::Kind kind, void *clientd, const char *channel, int32_t stream_id,
                       int32_t session_id, int64_t correlation_id) noexcept {
    auto *queue = static_cast<EventQueue *>(clientd);
    try {
        ClientEvent event;
        event.kind = kind;
        event.message = channel != nullptr ? channel : "";
        event.stream_id = stream_id;
        event.session_id = session_id;
        event.registration_id = correlation_id;
        queue->push(std::move(event));
    } catch (...) {  // the channel's copy
        queue->lose();
    }
}

}  // namespace

void on_available_counter_event(void *clientd, aeron_counters_reader_t *, int64_t registration_id,
                                int32_t counter_id) noexcept {
    on_counter_event(ClientEvent::COUNTER_AVAILABLE, clientd, registration_id, counter_id);
}

void on_unavailable_counter_event(void *clientd, aeron_counters_reader_t *, int64_t registration_id,
                                  int32_t counter_id) noexcept {
    on_counter_event(ClientEvent::COUNTER_UNAVAILABLE, clientd, registration_id, counter_id);
}

void on_new_publication_event(void *clientd, const char *channel, int32_t stream_id, int32_t session_id,
                              int64_t correlation_id) noexcept {
    on_resource_event(ClientEvent::NEW_PUBLICATION, clientd, channel, stream_id, session_id, correlation_id);
}

void on_new_exclusive_publication_event(void *clientd, const char *channel, int32_t stream_id, int32_t session_id,
                                        int64_t correlation_id) noexcept {
    on_resource_event(ClientEvent::NEW_EXCLUSIVE_PUBLICATION, clientd, channel, stream_id, session_id,
                      correlation_id);
}

void on_new_subscription_event(void *clientd, const char *channel, int32_t stream_id,
                               int64_t correlation_id) noexcept {
    on_resource_event(ClientEvent::NEW_SUBSCRIPTION, clientd, channel, stream_id, 0, correlation_id);
}

void on_error_event(void *clientd, int errcode, const char *message) noexcept {
    auto *queue = static_cast<EventQueue *>(clientd);
    try {
        ClientEvent event;
        event.kind = ClientEvent::ERROR;
        event.errcode = errcode;
        event.message = message != nullptr ? message : "";
        queue->push(std::move(event));
    } catch (...) {
        queue->lose();
    }
}

void on_available_image_event(void *clientd, aeron_subscription_t *subscription, aeron_image_t *image) noexcept {
    on_image_event(ClientEvent::IMAGE_AVAILABLE, clientd, subscription, image);
}

void on_unavailable_image_event(void *clientd, aeron_subscription_t *subscription, aeron_image_t *image) noexcept {
    on_image_event(ClientEvent::IMAGE_UNAVAILABLE, clientd, subscription, image);
}

void on_publication_error_event(void *clientd, aeron_publication_error_values_t *frame) noexcept {
    auto *queue = static_cast<EventQueue *>(clientd);
    try {
        ClientEvent event;
        event.kind = ClientEvent::PUBLICATION_ERROR;
        PublicationErrorFrame &out = event.frame;
        out.registration_id = frame->registration_id;
        out.destination_registration_id = frame->destination_registration_id;
        out.session_id = frame->session_id;
        out.stream_id = frame->stream_id;
        out.receiver_id = frame->receiver_id;
        out.group_tag = frame->group_tag;
        out.error_code = frame->error_code;
        char text[INET6_ADDRSTRLEN] = "";
        const int family = frame->address_type == AERON_RESPONSE_ADDRESS_TYPE_IPV6 ? AF_INET6
                           : frame->address_type == AERON_RESPONSE_ADDRESS_TYPE_IPV4 ? AF_INET : 0;
        if (family != 0 && inet_ntop(family, frame->source_address, text, sizeof text) != nullptr)
            out.source = family == AF_INET6 ? "[" + std::string(text) + "]:" + std::to_string(frame->source_port)
                                            : std::string(text) + ":" + std::to_string(frame->source_port);
        const int32_t length = frame->error_message_length;
        if (length > 0) event.message.assign(reinterpret_cast<const char *>(frame->error_message), length);
        queue->push(std::move(event));
    } catch (...) {
        queue->lose();
    }
}

bool ClientState::deliver_events(double timeout_s) {
    std::vector<ClientEvent> batch;
    bool open;
    if (timeout_s > 0) {
        ReleasedGil released;
        open = events.wait_and_take(timeout_s, batch);
    } else {
        open = events.wait_and_take(0, batch);  // never blocks: the mutex is only held for a push
    }
    for (auto &event : batch) {
        if (closed) break;  // nothing is delivered after close()
        py::object callback;
        const char *what = "aeron_py error handler";
        const bool counter = event.kind == ClientEvent::COUNTER_AVAILABLE || event.kind == ClientEvent::COUNTER_UNAVAILABLE;
        const bool resource = event.kind == ClientEvent::NEW_PUBLICATION ||
                              event.kind == ClientEvent::NEW_EXCLUSIVE_PUBLICATION ||
                              event.kind == ClientEvent::NEW_SUBSCRIPTION;
        if (event.kind == ClientEvent::ERROR) {
            callback = error_handler;
        } else if (event.kind == ClientEvent::PUBLICATION_ERROR) {
            callback = publication_error_handler;
            what = "aeron_py on_publication_error";
        } else if (counter) {
            callback = counter_handler;
            what = "aeron_py counter callback";
        } else if (resource) {
            callback = resource_handler;
            what = "aeron_py on_new_publication/on_new_subscription";
        } else if (event.subscription_id != 0) {
            auto found = image_callbacks.find(event.subscription_id);
            if (found == image_callbacks.end()) continue;  // subscription closed since
            const bool available = event.kind == ClientEvent::IMAGE_AVAILABLE;
            callback = available ? found->second.on_available : found->second.on_unavailable;
            what = available ? "aeron_py on_available_image" : "aeron_py on_unavailable_image";
        }
        if (!callback || callback.is_none()) continue;
        try {
            if (event.kind == ClientEvent::ERROR) {
                py::object text = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
                    event.message.data(), static_cast<Py_ssize_t>(event.message.size()), "replace"));
                if (!text) throw py::error_already_set();
                callback(event.errcode, text);
            } else if (event.kind == ClientEvent::PUBLICATION_ERROR) {
                const PublicationErrorFrame &f = event.frame;
                py::object text = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
                    event.message.data(), static_cast<Py_ssize_t>(event.message.size()), "replace"));
                if (!text) throw py::error_already_set();
                callback(py::dict(py::arg("registration_id") = f.registration_id,
                                  py::arg("destination_registration_id") = f.destination_registration_id,
                                  py::arg("session_id") = f.session_id, py::arg("stream_id") = f.stream_id,
                                  py::arg("receiver_id") = f.receiver_id, py::arg("group_tag") = f.group_tag,
                                  py::arg("source") = f.source, py::arg("error_code") = f.error_code,
                                  py::arg("message") = text));
            } else if (counter) {
                callback(event.kind == ClientEvent::COUNTER_AVAILABLE, event.registration_id, event.counter_id);
            } else if (resource) {
                py::object channel = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
                    event.message.data(), static_cast<Py_ssize_t>(event.message.size()), "replace"));
                if (!channel) throw py::error_already_set();
                const char *kind = event.kind == ClientEvent::NEW_SUBSCRIPTION ? "subscription"
                                   : event.kind == ClientEvent::NEW_PUBLICATION ? "publication"
                                                                                  : "exclusive_publication";
                callback(kind, channel, event.stream_id, event.session_id, event.registration_id);
            } else {
                callback(make_image_snapshot(event.image));
            }
        } catch (py::error_already_set &e) {
            e.discard_as_unraisable(what);
        }
    }
    return open && !closed && !aeron_is_closed(aeron);
}

}  // namespace aeron_py
