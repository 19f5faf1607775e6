// AsyncDestination (destination.hpp): polling a pending MDC destination change.
#include "common.hpp"
#include "guarded_class.hpp"

namespace aeron_py {

PyObject *section_lock(const AsyncDestination &async) { return async.client_->lock.get(); }

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
    guarded_class<AsyncDestination>(m, "AsyncDestination", "aeron_async_destination_t")
        .def("poll", &AsyncDestination::poll, "aeron_*_async_destination_poll: True when done.")
        .def_property_readonly("registration_id", &AsyncDestination::registration_id,
                               "aeron_async_destination_get_registration_id: the id the driver registers the "
                               "destination under (for remove_destination_by_id).");
}

}  // namespace aeron_py
