// Image class shared by image.cpp and subscription.cpp.
#pragma once

#include "common.hpp"

namespace aeron_py {

class Image {
public:
    // `sub` and `handle` are null for a callback snapshot.
    Image(aeron_image_t *image, std::shared_ptr<SubState> sub, std::shared_ptr<ImageHandle> handle);
    ~Image();
    Image(const Image &) = delete;
    Image &operator=(const Image &) = delete;

    aeron_image_t *live() const;
    bool is_live() const { return handle_ && !handle_->released && sub_ && !sub_->closed; }
    void close();
    int poll(py::object handler, int fragment_limit, FragmentAssembler *assembler, bool controlled, bool with_header);
    py::list poll_batch(int fragment_limit, FragmentAssembler *assembler);
    void reject(const std::string &reason);

    std::string source_identity;
    int64_t correlation_id = 0;
    int64_t join_position = 0;
    size_t term_buffer_length = 0;
    size_t mtu_length = 0;
    int32_t session_id = 0;
    int32_t initial_term_id = 0;

private:
    std::shared_ptr<SubState> sub_;
    std::shared_ptr<ImageHandle> handle_;
};

}  // namespace aeron_py
