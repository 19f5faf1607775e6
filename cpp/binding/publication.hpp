// Publications: aeron_publication_t (concurrent) and aeron_exclusive_publication_t behind one
// C++ class (a flag picks the C function: a predictable branch, and one pybind11 base so the
// public aeron_py.ExclusivePublication can subclass aeron_py.Publication). Results are the C
// library's (policy is Python's); offers are zero-copy.
#pragma once

#include "claim.hpp"

namespace aeron_py {

struct ConcurrentTraits {
    using Handle = aeron_publication_t;
    static constexpr auto offer = aeron_publication_offer;
    static constexpr auto try_claim = aeron_publication_try_claim;
    static constexpr auto is_connected = aeron_publication_is_connected;
    static constexpr auto is_closed = aeron_publication_is_closed;
    static constexpr auto constants = aeron_publication_constants;
    static constexpr auto position = aeron_publication_position;
    static constexpr auto position_limit = aeron_publication_position_limit;
    static constexpr auto channel_status = aeron_publication_channel_status;
    static constexpr auto close = aeron_publication_close;
    static constexpr auto add_destination = aeron_publication_async_add_destination;
    static constexpr auto remove_destination = aeron_publication_async_remove_destination;
    static constexpr auto remove_destination_by_id = aeron_publication_async_remove_destination_by_id;
    static constexpr auto local_sockaddrs = aeron_publication_local_sockaddrs;
    static constexpr auto destination_poll = aeron_publication_async_destination_poll;
};

struct ExclusiveTraits {
    using Handle = aeron_exclusive_publication_t;
    static constexpr auto offer = aeron_exclusive_publication_offer;
    static constexpr auto try_claim = aeron_exclusive_publication_try_claim;
    static constexpr auto is_connected = aeron_exclusive_publication_is_connected;
    static constexpr auto is_closed = aeron_exclusive_publication_is_closed;
    static constexpr auto constants = aeron_exclusive_publication_constants;
    static constexpr auto position = aeron_exclusive_publication_position;
    static constexpr auto position_limit = aeron_exclusive_publication_position_limit;
    static constexpr auto channel_status = aeron_exclusive_publication_channel_status;
    static constexpr auto close = aeron_exclusive_publication_close;
    static constexpr auto add_destination = aeron_exclusive_publication_async_add_destination;
    static constexpr auto remove_destination = aeron_exclusive_publication_async_remove_destination;
    static constexpr auto remove_destination_by_id = aeron_exclusive_publication_async_remove_destination_by_id;
    static constexpr auto local_sockaddrs = aeron_exclusive_publication_local_sockaddrs;
    static constexpr auto destination_poll = aeron_exclusive_publication_async_destination_poll;
};

class Publication {
public:
    Publication(std::shared_ptr<ClientState> client, aeron_publication_t *handle);
    Publication(std::shared_ptr<ClientState> client, aeron_exclusive_publication_t *handle);
    ~Publication();  // closes; never throws (errors go to sys.unraisablehook)
    Publication(const Publication &) = delete;
    Publication &operator=(const Publication &) = delete;

    // f(Traits{}, handle) with the traits of this publication's kind.
    template <typename F>
    decltype(auto) visit(F &&f) const {
        if (exclusive_) return f(ExclusiveTraits{}, exclusive_handle_);
        return f(ConcurrentTraits{}, concurrent_handle_);
    }

    bool open() const noexcept { return !closed_ && !client_->closed; }
    int64_t offer(const uint8_t *data, size_t length) const noexcept {
        return exclusive_ ? aeron_exclusive_publication_offer(exclusive_handle_, data, length, nullptr, nullptr)
                          : aeron_publication_offer(concurrent_handle_, data, length, nullptr, nullptr);
    }
    int64_t offerv(aeron_iovec_t *parts, size_t count) const noexcept {
        return exclusive_ ? aeron_exclusive_publication_offerv(exclusive_handle_, parts, count, nullptr, nullptr)
                          : aeron_publication_offerv(concurrent_handle_, parts, count, nullptr, nullptr);
    }
    int64_t append_padding(size_t length) const noexcept {  // exclusive only (checked by the caller)
        return aeron_exclusive_publication_append_padding(exclusive_handle_, length);
    }
    int64_t try_claim(size_t length, aeron_buffer_claim_t *claim) const noexcept {
        return exclusive_ ? aeron_exclusive_publication_try_claim(exclusive_handle_, length, claim)
                          : aeron_publication_try_claim(concurrent_handle_, length, claim);
    }

    bool is_connected() const;
    bool is_closed() const;
    int64_t position() const;
    int64_t position_limit() const;
    int64_t channel_status() const;
    AsyncDestination add_destination(const std::string &uri);
    AsyncDestination remove_destination(const std::string &uri);
    AsyncDestination remove_destination_by_id(int64_t destination_registration_id);
    // aeron_*_local_sockaddrs, asking again with room for more until every address fits.
    std::vector<std::string> local_sockaddrs() const;
    void close();  // aborts pending claims first; idempotent
    void revoke();  // exclusive only: close now, ending the stream for its subscribers at once
    void revoke_on_close();  // exclusive only: a later close() revokes

    bool exclusive() const { return exclusive_; }
    const aeron_publication_constants_t &constants() const { return constants_; }
    const std::string &channel() const { return channel_; }
    ClaimOwner &claims() { return claims_; }

    py::object work;  // the client's do_work in conductor-invoker mode (kept for Python)
    friend PyObject *section_lock(const Publication &publication) { return publication.client_->lock.get(); }

private:
    void check() const;
    void init_constants();

    std::shared_ptr<ClientState> client_;
    bool exclusive_;
    aeron_publication_t *concurrent_handle_ = nullptr;
    aeron_exclusive_publication_t *exclusive_handle_ = nullptr;
    aeron_publication_constants_t constants_{};
    std::string channel_;
    bool closed_ = false;
    ClaimOwner claims_;
};

void init_publication_fast(py::handle publication_type);

}  // namespace aeron_py
