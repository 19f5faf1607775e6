// Image class shared by image.cpp and subscription.cpp.
#pragma once

#include "common.hpp"
#include "poll.hpp"

namespace aeron_py {

// aeron_image_constants copied into `out`; false with aeron_errcode/aeron_errmsg set.
bool read_image_constants(aeron_image_t *image, ImageConstants &out) noexcept;

class Image {
public:
    // A live image retained through `sub`.
    Image(std::shared_ptr<SubState> sub, std::shared_ptr<ImageHandle> handle, ImageConstants constants);
    // A snapshot handed to an image callback: constants only.
    explicit Image(ImageConstants constants) : constants_(std::move(constants)) {}
    ~Image();
    Image(const Image &) = delete;
    Image &operator=(const Image &) = delete;

    aeron_image_t *live() const;
    bool is_live() const { return handle_ && !handle_->released && sub_ && !sub_->closed; }
    void close();
    void reject(const std::string &reason);
    const ImageConstants &constants() const { return constants_; }
    // For PollSet: the subscription state and handle of a live image (null for a snapshot).
    const std::shared_ptr<SubState> &sub_state() const { return sub_; }
    const std::shared_ptr<ImageHandle> &handle() const { return handle_; }
    // A snapshot belongs to no client: nothing to guard.
    friend PyObject *section_lock(const Image &image) { return image.sub_ ? image.sub_->client->lock.get() : nullptr; }

    // The fast poll methods (METH_FASTCALL | METH_KEYWORDS), attached in init_image.
    static PyObject *poll(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
    static PyObject *controlled_poll(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
    static PyObject *poll_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

    // aeron_image_block_poll (block_poll.hpp): the bytes consumed.
    long block_poll(const py::object &handler, long block_length_limit);
    // aeron_image_bounded_controlled_poll: poll (or controlled_poll) that stops before
    // `limit_position`. Returns the fragment count; raises the handler's exception.
    int bounded(bool controlled, py::object handler, int64_t limit_position, long fragment_limit, bool zero_copy,
                bool with_header);

private:
    PyObject *run(PollMode mode, const char *function, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

    std::shared_ptr<SubState> sub_;
    std::shared_ptr<ImageHandle> handle_;
    ImageConstants constants_;
    std::unique_ptr<Poller> poller_;  // made on the first poll
};

// Wraps an image retained by aeron_subscription_image_at_index / _by_session_id; releases it
// again if aeron_image_constants fails.
py::object make_live_image(const std::shared_ptr<SubState> &sub, aeron_image_t *image);

// Sets the Python subclass that Image objects made by the extension become (module.cpp).
void set_public_image_class(py::object cls);
// Sets the exception type raised by live operations on a callback snapshot (module.cpp).
void set_snapshot_error_type(py::object type);

}  // namespace aeron_py
