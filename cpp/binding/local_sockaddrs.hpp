// The local socket addresses of a publication or subscription (aeron_*_local_sockaddrs),
// read into strings. The C call fills at most the slots it is given and says how many it
// filled: a full answer may mean more, so it is asked again with twice the room (bounded:
// a channel has few).
#pragma once

#include <string>
#include <vector>

#include "common.hpp"

namespace aeron_py {

// `fill(addresses, capacity)` is the C call for one handle; `call` names it in errors.
template <typename Fill>
std::vector<std::string> read_local_sockaddrs(Fill &&fill, const char *call) {
    for (size_t capacity = 16;; capacity *= 2) {
        std::vector<std::vector<char>> storage(capacity, std::vector<char>(AERON_CLIENT_MAX_LOCAL_ADDRESS_STR_LEN));
        std::vector<aeron_iovec_t> addresses(capacity);
        for (size_t i = 0; i < capacity; i++) {
            addresses[i].iov_base = reinterpret_cast<uint8_t *>(storage[i].data());
            addresses[i].iov_len = storage[i].size();
        }
        const int count = fill(addresses.data(), capacity);
        if (count < 0) throw_aeron_error(call);
        if (static_cast<size_t>(count) < capacity || capacity >= 65536) {
            std::vector<std::string> result;
            for (int i = 0; i < count; i++) result.emplace_back(storage[i].data());
            return result;
        }
    }
}

}  // namespace aeron_py
