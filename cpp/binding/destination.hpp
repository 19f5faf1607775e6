// aeron_async_destination_t: the pending add/remove of an MDC destination of a publication
// or a subscription (aeron_*_async_add_destination / _remove_destination).
#pragma once

#include <memory>

#include <Python.h>

extern "C" {
#include "aeronc.h"
}

namespace aeron_py {

struct ClientState;

// `poll_fn` is the matching aeron_*_async_destination_poll. Bound in destination.cpp.
class AsyncDestination {
public:
    using PollFn = int (*)(aeron_async_destination_t *);
    AsyncDestination(std::shared_ptr<ClientState> client, aeron_async_destination_t *async, PollFn poll_fn)
        : client_(std::move(client)),
          async_(async),
          poll_fn_(poll_fn),
          registration_id_(async != nullptr ? aeron_async_destination_get_registration_id(async) : 0) {}

    // True once the driver acknowledged; raises AeronError when it refused.
    bool poll();
    // The id the driver registers the destination under (read at the start: the client frees
    // `async_` when the command completes).
    int64_t registration_id() const { return registration_id_; }
    friend PyObject *section_lock(const AsyncDestination &async);  // destination.cpp

private:
    std::shared_ptr<ClientState> client_;
    aeron_async_destination_t *async_;
    PollFn poll_fn_;
    int64_t registration_id_;
};

}  // namespace aeron_py
