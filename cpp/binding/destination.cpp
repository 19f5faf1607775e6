// AsyncDestination (destination.hpp): polling a pending MDC destination change.
#include "common.hpp"

namespace aeron_py {

bool AsyncDestination::poll() {
    if (async_ == nullptr) return true;
    client_->check_open();
    const int rc = poll_fn_(async_);
    if (rc == 0) return false;
    async_ = nullptr;  // completed, or freed by the client on error
    if (rc < 0) throw_aeron_error("aeron_async_destination_poll");
    return true;
}

void init_destination(py::module_ &m) {
    py::class_<AsyncDestination>(m, "AsyncDestination", "aeron_async_destination_t")
        .def("poll", &AsyncDestination::poll, "aeron_*_async_destination_poll: True when done.");
}

}  // namespace aeron_py
