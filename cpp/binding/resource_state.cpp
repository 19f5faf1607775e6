// The lifecycle of the client's and each subscription's C resources (ClientState and SubState,
// common.hpp): open, closed, or closed while a poll runs (the close is deferred until the poll
// returns), and the images a subscription retained. Shared by the Python classes (client.cpp,
// subscription.cpp, image.cpp) and the polls (fragment.cpp, poll_set.cpp); depends on none of them.
#include "common.hpp"

#include <algorithm>

namespace aeron_py {

// ---- ClientState ----

void ClientState::check_open() const {
    if (closed || aeron == nullptr) throw AeronCallError("the Aeron client is closed", EPIPE);
}

void ClientState::add_dependent(const std::shared_ptr<ClientDependent> &dependent) {
    // Amortised clean-up: compact when the list has doubled since the last compaction.
    if (dependents.size() >= dependents_compact_at) {
        dependents.erase(std::remove_if(dependents.begin(), dependents.end(),
                                        [](const std::weak_ptr<ClientDependent> &w) { return w.expired(); }),
                         dependents.end());
        dependents_compact_at = 2 * dependents.size() + 8;
    }
    dependents.push_back(dependent);
}

void ClientState::close() {
    if (closed) return;
    closed = true;
    if (polling > 0) {
        close_pending = true;  // a handler (or another thread) closed us mid-poll
        events.close();        // nothing is delivered after close(): wake the event thread now
        return;
    }
    close_now();
}

void ClientState::finish_deferred() noexcept {
    if (!close_pending || polling > 0) return;
    close_pending = false;
    close_now();
}

void ClientState::close_now() noexcept {
    closed = true;
    close_pending = false;
    const bool python = python_alive();
    for (auto &weak : dependents) {
        if (auto dependent = weak.lock()) dependent->on_client_close();
    }
    dependents.clear();
    for (auto &entry : subscriptions) {
        if (auto sub = entry.second.lock()) {
            sub->release_images();
            sub->closed = true;  // aeron_close frees it
            sub->close_pending = false;
        }
    }
    subscriptions.clear();
    // aeron_close joins the conductor thread, which never waits for the GIL: keeping the GIL
    // here is safe, and avoids re-taking it in a destructor while the interpreter finalizes.
    if (aeron != nullptr) aeron_close(aeron);
    if (context != nullptr) aeron_context_close(context);
    aeron = nullptr;
    context = nullptr;
    events.close();  // no thread can push any more
    if (python) {
        // Move out first: a callback's __del__ may run Python that looks at this state.
        auto callbacks = std::move(image_callbacks);
        image_callbacks.clear();
        py::object handlers[] = {std::move(error_handler), std::move(publication_error_handler),
                                 std::move(counter_handler), std::move(resource_handler)};
    } else {
        for (auto &entry : image_callbacks) {  // leaked: Python objects must not be touched now
            entry.second.on_available.release();
            entry.second.on_unavailable.release();
        }
        error_handler.release();
        publication_error_handler.release();
        counter_handler.release();
        resource_handler.release();
    }
}

ClientState::~ClientState() {
    if (aeron != nullptr || context != nullptr) close_now();
}

// ---- SubState ----

void SubState::check_open() const {
    if (closed) throw AeronCallError("the subscription is closed", EPIPE);
    client->check_open();
}

void SubState::retain(const std::shared_ptr<ImageHandle> &handle) { retained.insert(handle); }

void SubState::release(const std::shared_ptr<ImageHandle> &handle) {
    if (handle->released) return;
    handle->released = true;
    if (retained.find(handle) == retained.end()) return;  // already released with the subscription
    if (polling > 0) {
        release_pending.push_back(handle);  // a poll may be reading it: release when it returns
        return;
    }
    retained.erase(handle);
    aeron_subscription_image_release(subscription, handle->image);
}

void SubState::release_images() noexcept {
    for (const auto &handle : retained) {
        handle->released = true;
        aeron_subscription_image_release(subscription, handle->image);
    }
    retained.clear();
    release_pending.clear();
}

void SubState::close() {
    if (closed) return;
    closed = true;
    if (client->closed) return;  // aeron_close frees it (now, or when the client's deferred close runs)
    client->image_callbacks.erase(registration_id);
    client->subscriptions.erase(registration_id);
    if (polling > 0) {
        close_pending = true;
        return;
    }
    release_images();
    if (aeron_subscription_close(subscription, nullptr, nullptr) < 0) throw_aeron_error("aeron_subscription_close");
}

void SubState::finish_deferred() noexcept {
    if (polling > 0 || client->closed) return;  // a closed client released everything
    for (const auto &handle : release_pending) {
        if (retained.erase(handle) > 0) aeron_subscription_image_release(subscription, handle->image);
    }
    release_pending.clear();
    if (!close_pending) return;
    close_pending = false;
    release_images();
    if (aeron_subscription_close(subscription, nullptr, nullptr) < 0 && python_alive()) {
        PyErr_Format(PyExc_RuntimeError, "aeron_subscription_close: %s", aeron_errmsg());
        PyErr_WriteUnraisable(nullptr);
    }
}

}  // namespace aeron_py
