// Images: aeron_image_t. An Image made by a subscription look-up is retained
// (aeron_subscription_image_at_index / _by_session_id) and released on close(); an Image
// handed to an available/unavailable callback is a snapshot of aeron_image_constants only.
// poll / controlled_poll / poll_batch are fast methods (no pybind11 dispatch).
#include "image.hpp"

#include "block_poll.hpp"
#include "guarded_class.hpp"
#include "fastcall.hpp"
#include "instance.hpp"
#include "log_peek.hpp"

namespace aeron_py {

namespace {
PyObject *public_image_class = nullptr;  // strong, kept for the life of the process
PyObject *snapshot_error_type = nullptr;  // raised by live operations on a callback snapshot
}

bool read_image_constants(aeron_image_t *image, ImageConstants &out) noexcept {
    aeron_image_constants_t constants{};
    if (aeron_image_constants(image, &constants) < 0) return false;
    try {
        out.source_identity = constants.source_identity != nullptr ? constants.source_identity : "";
    } catch (...) {
        return false;
    }
    out.correlation_id = constants.correlation_id;
    out.join_position = constants.join_position;
    out.term_buffer_length = constants.term_buffer_length;
    out.mtu_length = constants.mtu_length;
    out.session_id = constants.session_id;
    out.initial_term_id = constants.initial_term_id;
    out.publication_revoked = aeron_image_is_publication_revoked(image);
    return true;
}

Image::Image(std::shared_ptr<SubState> sub, std::shared_ptr<ImageHandle> handle, ImageConstants constants)
    : sub_(std::move(sub)), handle_(std::move(handle)), constants_(std::move(constants)) {}

Image::~Image() {
    if (!python_alive()) return;  // released with the subscription or client
    Section section(section_lock(*this));
    try {
        close();
    } catch (...) {
    }
}

aeron_image_t *Image::live() const {
    if (!handle_) {
        static const char *what = "aeron_image: this Image is a snapshot of aeron_image_constants";
        if (snapshot_error_type == nullptr) throw AeronCallError(what, EINVAL);
        PyErr_SetString(snapshot_error_type, what);
        throw py::error_already_set();
    }
    if (handle_->released) throw AeronCallError("aeron_image: the image was closed (released)", EPIPE);
    sub_->check_open();
    return handle_->image;
}

void Image::close() {
    if (handle_) sub_->release(handle_);
}

void Image::reject(const std::string &reason) {
    if (aeron_image_reject(live(), reason.c_str()) < 0) throw_aeron_error("aeron_image_reject");
}

PyObject *Image::run(PollMode mode, const char *function, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames) {
    PollArgs parsed;
    if (!parse_poll_args(function, args, nargs, kwnames, mode == PollMode::BATCH, mode == PollMode::BATCH ? 100 : 10,
                         parsed))
        return nullptr;
    aeron_image_t *image = live();
    // Nothing at the image's position: done without Aeron's poll (the image stays retained
    // by this object, so its log stays mapped). A poll from inside a handler still goes on
    // to run_poll, which refuses it. Under AERON_PY_NO_TRICKS every poll is Aeron's.
    if (tricks::on() && sub_->polling == 0 && !log_peek::image_may_have_data(image)) return empty_poll_result(mode);
    if (!poller_) poller_ = std::make_unique<Poller>();
    return run_poll(*sub_, handle_.get(), *poller_, mode, parsed, true, "aeron_image_controlled_poll",
                    [image](aeron_controlled_fragment_handler_t handler, void *clientd, size_t limit) {
                        return aeron_image_controlled_poll(image, handler, clientd, limit);
                    });
}

int Image::bounded(bool controlled, py::object handler, int64_t limit_position, long fragment_limit, bool zero_copy,
                   bool with_header) {
    const char *call = controlled ? "bounded_controlled_poll" : "bounded_poll";
    if (!PyCallable_Check(handler.ptr()))
        throw py::type_error(std::string(call) + "(): handler must be callable, not " +
                             Py_TYPE(handler.ptr())->tp_name);
    if (limit_position < 0)
        throw py::value_error(std::string(call) + "(): limit_position must be >= 0 (a stream position), got " +
                              std::to_string(limit_position));
    if (fragment_limit < 0 || fragment_limit > INT32_MAX)
        throw py::value_error(std::string(call) + "(): fragment_limit must be between 0 and 2147483647, got " +
                              std::to_string(fragment_limit));
    PollArgs args;
    args.handler = handler.ptr();
    args.fragment_limit = fragment_limit;
    args.zero_copy = zero_copy;
    args.with_header = with_header;
    aeron_image_t *image = live();
    if (!poller_) poller_ = std::make_unique<Poller>();
    PyObject *count = run_poll(*sub_, handle_.get(), *poller_, controlled ? PollMode::CONTROLLED : PollMode::HANDLER,
                               args, true, "aeron_image_bounded_controlled_poll",
                               [image, limit_position](aeron_controlled_fragment_handler_t on_fragment, void *clientd,
                                                       size_t limit) {
                                   return aeron_image_bounded_controlled_poll(image, on_fragment, clientd,
                                                                              limit_position, limit);
                               });
    if (count == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::int_>(count).cast<int>();
}

long Image::block_poll(const py::object &handler, long block_length_limit) {
    aeron_image_t *image = live();
    return run_block_poll(*sub_, handler, block_length_limit, "block_poll", [image](BlockPoll &poll, size_t limit) {
        return static_cast<long>(aeron_image_block_poll(image, on_block, &poll, limit));
    });
}

#define AERON_PY_IMAGE_FAST(name, mode)                                                                   \
    PyObject *Image::name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {  \
        AERON_PY_FAST_BEGIN                                                                               \
        Image *image = fast::self_as<Image>(self);                                                        \
        if (image == nullptr) return nullptr;                                                             \
        Section section(section_lock(*image));                                                            \
        py::object keep = py::reinterpret_borrow<py::object>(self);                                      \
        return image->run(mode, #name, args, nargs, kwnames);                                             \
        AERON_PY_FAST_END                                                                                 \
    }
AERON_PY_IMAGE_FAST(poll, PollMode::HANDLER)
AERON_PY_IMAGE_FAST(controlled_poll, PollMode::CONTROLLED)
AERON_PY_IMAGE_FAST(poll_batch, PollMode::BATCH)
#undef AERON_PY_IMAGE_FAST

void set_snapshot_error_type(py::object type) {
    Py_XDECREF(snapshot_error_type);
    snapshot_error_type = type.is_none() ? nullptr : type.release().ptr();
}

void set_public_image_class(py::object cls) {
    Py_XDECREF(public_image_class);
    public_image_class = cls.is_none() ? nullptr : cls.release().ptr();
}

namespace {

py::object as_public_image(std::unique_ptr<Image> image) {
    return instance::adopt(reinterpret_cast<PyTypeObject *>(public_image_class), std::move(image));
}

PyMethodDef poll_def = {
    "poll", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&Image::poll)), METH_FASTCALL | METH_KEYWORDS,
    "poll($self, /, handler, fragment_limit=10, zero_copy=False, with_header=True)\n--\n\n"
    "aeron_image_controlled_poll with reassembly: handler(data, header) per message. data is bytes, or with "
    "zero_copy a read-only memoryview dead after the call; header is a view valid during the call."};
PyMethodDef controlled_poll_def = {
    "controlled_poll", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&Image::controlled_poll)),
    METH_FASTCALL | METH_KEYWORDS,
    "controlled_poll($self, /, handler, fragment_limit=10, zero_copy=False, with_header=True)\n--\n\n"
    "aeron_image_controlled_poll; the handler returns an ACTION_* (None = CONTINUE)."};
PyMethodDef poll_batch_def = {
    "poll_batch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&Image::poll_batch)),
    METH_FASTCALL | METH_KEYWORDS,
    "poll_batch($self, /, fragment_limit=100)\n--\n\n"
    "aeron_image_controlled_poll collecting reassembled payloads into a list of bytes."};

}  // namespace

py::object make_image_snapshot(const ImageConstants &constants) {
    return as_public_image(std::make_unique<Image>(constants));
}

py::object make_live_image(const std::shared_ptr<SubState> &sub, aeron_image_t *image) {
    ImageConstants constants;
    if (!read_image_constants(image, constants)) {
        AeronCallError error(std::string("aeron_image_constants: ") + aeron_errmsg(), aeron_errcode());
        aeron_subscription_image_release(sub->subscription, image);  // we retained it: give it back
        throw error;
    }
    auto handle = std::make_shared<ImageHandle>();
    handle->image = image;
    sub->retain(handle);  // from here on, Image::close (or the subscription's close) releases it
    return as_public_image(std::make_unique<Image>(sub, handle, std::move(constants)));
}

namespace {

// Image.bounded_poll / bounded_controlled_poll: one signature, `controlled` tells them apart.
void def_bounded(guarded_class<Image> &cls, const char *name, bool controlled, const char *doc) {
    cls.def(
        name,
        [controlled](Image &i, py::object handler, int64_t limit_position, long fragment_limit, bool zero_copy,
                     bool with_header) {
            return i.bounded(controlled, std::move(handler), limit_position, fragment_limit, zero_copy, with_header);
        },
        py::arg("handler"), py::arg("limit_position"), py::arg("fragment_limit") = 10, py::arg("zero_copy") = false,
        py::arg("with_header") = true, doc);
}

}  // namespace

void init_image(py::module_ &m) {
    guarded_class<Image> cls(m, "Image", "aeron_image_t: one publication's stream as seen by a subscription.");
    cls.def_property_readonly("session_id", [](const Image &i) { return i.constants().session_id; })
        .def_property_readonly("source_identity", [](const Image &i) { return i.constants().source_identity; })
        .def_property_readonly("correlation_id", [](const Image &i) { return i.constants().correlation_id; })
        .def_property_readonly("join_position", [](const Image &i) { return i.constants().join_position; })
        .def_property_readonly("term_buffer_length", [](const Image &i) { return i.constants().term_buffer_length; })
        .def_property_readonly("mtu_length", [](const Image &i) { return i.constants().mtu_length; })
        .def_property_readonly("initial_term_id", [](const Image &i) { return i.constants().initial_term_id; })
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
        .def_property_readonly(
            "is_publication_revoked",
            [](Image &i) {
                return i.is_live() ? aeron_image_is_publication_revoked(i.live()) : i.constants().publication_revoked;
            },
            "aeron_image_is_publication_revoked: its publication was revoked, not closed (a callback snapshot: "
            "as it was when the callback was called, e.g. in on_unavailable_image)")
        .def("reject", &Image::reject, py::arg("reason"), "aeron_image_reject")
        .def("block_poll", &Image::block_poll, py::arg("handler"), py::arg("block_length_limit"),
             "aeron_image_block_poll: handler(data, session_id, term_id) with the raw frames (headers included) "
             "as far as they are contiguous, up to block_length_limit bytes within one term; returns the bytes "
             "consumed.")
        .def("close", &Image::close,
             "aeron_subscription_image_release; idempotent. Deferred until a poll in progress returns.");
    def_bounded(cls, "bounded_poll", false,
                "aeron_image_bounded_controlled_poll: poll(), delivering only messages that end at or before "
                "limit_position (a stream position, e.g. a recording's stop or another stream's position). Returns "
                "the fragment count.");
    def_bounded(cls, "bounded_controlled_poll", true,
                "aeron_image_bounded_controlled_poll: controlled_poll() up to limit_position; the handler returns an "
                "ACTION_* (None = CONTINUE).");
    fast::add_method(cls.unlocked(), &poll_def);
    fast::add_method(cls.unlocked(), &controlled_poll_def);
    fast::add_method(cls.unlocked(), &poll_batch_def);
}

}  // namespace aeron_py
