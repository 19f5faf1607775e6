// EventQueue (common.hpp): the client conductor thread pushes, a Python thread takes. No
// Python here and no exception out of push: the conductor thread calls it.
#include "common.hpp"

#include <chrono>

namespace aeron_py {

void EventQueue::push(ClientEvent &&event) noexcept {
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        if (closed_) return;
        events_.push_back(std::move(event));
    } catch (...) {
        lost_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    ready_.notify_one();
}

bool EventQueue::wait_and_take(double timeout_s, std::vector<ClientEvent> &out) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (timeout_s > 0 && events_.empty() && !closed_) {
        ready_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                        [this] { return !events_.empty() || closed_; });
    }
    out.swap(events_);
    return !(closed_ && out.empty());
}

void EventQueue::close() noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
        events_.clear();
    }
    ready_.notify_all();
}

}  // namespace aeron_py
