// Images: aeron_image_t. An Image made by a subscription look-up is retained
// (aeron_subscription_image_retain semantics) and released on close(); an Image handed to an
// available/unavailable callback is a snapshot of aeron_image_constants only.
#include "common.hpp"

#include "image.hpp"

namespace aeron_py {

Image::Image(aeron_image_t *image, std::shared_ptr<SubState> sub, std::shared_ptr<ImageHandle> handle)
    : sub_(std::move(sub)), handle_(std::move(handle)) {
    aeron_image_constants_t constants{};
    if (aeron_image_constants(image, &constants) < 0) throw_aeron_error("aeron_image_constants");
    source_identity = constants.source_identity != nullptr ? constants.source_identity : "";
    correlation_id = constants.correlation_id;
    join_position = constants.join_position;
    term_buffer_length = constants.term_buffer_length;
    mtu_length = constants.mtu_length;
    session_id = constants.session_id;
    initial_term_id = constants.initial_term_id;
}

Image::~Image() {
    if (python_alive()) close();
}

aeron_image_t *Image::live() const {
    if (!handle_) {
        throw AeronCallError(
            "this Image is a snapshot passed to an image callback; use Subscription.image_by_session_id() "
            "or Subscription.images() for a live image",
            EINVAL);
    }
    if (handle_->released) throw AeronCallError("the image was closed (released)", EPIPE);
    sub_->check_open();
    return handle_->image;
}

void Image::close() {
    if (!handle_ || handle_->released) return;
    handle_->released = true;
    if (sub_->closed) return;  // released with its subscription
    aeron_subscription_image_release(sub_->subscription, handle_->image);
}

int Image::poll(py::object handler, int fragment_limit, FragmentAssembler *assembler, bool controlled,
                bool with_header) {
    aeron_image_t *image = live();
    PollContext context;
    context.handler = handler.ptr();
    context.controlled = controlled;
    context.with_header = with_header;
    return run_poll(context, assembler, [&](aeron_controlled_fragment_handler_t h, void *clientd) {
        return aeron_image_controlled_poll(image, h, clientd, static_cast<size_t>(fragment_limit));
    });
}

py::list Image::poll_batch(int fragment_limit, FragmentAssembler *assembler) {
    aeron_image_t *image = live();
    py::list batch;
    PollContext context;
    context.batch = batch.ptr();
    run_poll(context, assembler, [&](aeron_controlled_fragment_handler_t h, void *clientd) {
        return aeron_image_controlled_poll(image, h, clientd, static_cast<size_t>(fragment_limit));
    });
    return batch;
}

void Image::reject(const std::string &reason) {
    if (aeron_image_reject(live(), reason.c_str()) < 0) throw_aeron_error("aeron_image_reject");
}

py::object make_image_snapshot(aeron_image_t *image) {
    return py::cast(new Image(image, nullptr, nullptr), py::return_value_policy::take_ownership);
}

void init_image(py::module_ &m) {
    py::class_<Image>(m, "Image", "aeron_image_t: one publication's stream as seen by a subscription.")
        .def_readonly("session_id", &Image::session_id)
        .def_readonly("source_identity", &Image::source_identity)
        .def_readonly("correlation_id", &Image::correlation_id)
        .def_readonly("join_position", &Image::join_position)
        .def_readonly("term_buffer_length", &Image::term_buffer_length)
        .def_readonly("mtu_length", &Image::mtu_length)
        .def_readonly("initial_term_id", &Image::initial_term_id)
        .def_property_readonly("is_live", [](const Image &i) { return i.is_live(); },
                               "False for a callback snapshot or a released image.")
        .def_property_readonly("position", [](Image &i) { return aeron_image_position(i.live()); },
                               "aeron_image_position")
        .def_property_readonly("is_end_of_stream", [](Image &i) { return aeron_image_is_end_of_stream(i.live()); },
                               "aeron_image_is_end_of_stream")
        .def_property_readonly("end_of_stream_position",
                               [](Image &i) { return aeron_image_end_of_stream_position(i.live()); },
                               "aeron_image_end_of_stream_position")
        .def_property_readonly("is_closed", [](Image &i) { return aeron_image_is_closed(i.live()); },
                               "aeron_image_is_closed")
        .def_property_readonly("active_transport_count",
                               [](Image &i) { return aeron_image_active_transport_count(i.live()); },
                               "aeron_image_active_transport_count")
        .def("poll", [](Image &i, py::object handler, int limit, FragmentAssembler *assembler, bool with_header) {
                 return i.poll(handler, limit, assembler, false, with_header);
             },
             py::arg("handler"), py::arg("fragment_limit"), py::arg("assembler") = nullptr,
             py::arg("with_header") = true, "aeron_image_controlled_poll, handler(data: bytes, header).")
        .def("controlled_poll",
             [](Image &i, py::object handler, int limit, FragmentAssembler *assembler, bool with_header) {
                 return i.poll(handler, limit, assembler, true, with_header);
             },
             py::arg("handler"), py::arg("fragment_limit"), py::arg("assembler") = nullptr,
             py::arg("with_header") = true, "aeron_image_controlled_poll; the handler returns an ACTION_*.")
        .def("poll_batch", &Image::poll_batch, py::arg("fragment_limit"), py::arg("assembler") = nullptr,
             "aeron_image_controlled_poll collecting payloads into a list of bytes.")
        .def("reject", &Image::reject, py::arg("reason"), "aeron_image_reject")
        .def("close", &Image::close, "aeron_subscription_image_release; idempotent.");
}

}  // namespace aeron_py
