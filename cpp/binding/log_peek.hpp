// Whether a poll could find anything, decided without polling: the first step of
// aeron_image_controlled_poll (the frame length at the subscriber's position, read with
// acquire) for each open image of the subscription's current image list. A poll that would
// read nothing then skips Aeron's poll calls and the handler machinery: the empty poll of a
// spinning loop is the call a subscriber makes most.
//
// Reads the pinned client's own structures (aeron_subscription.h, aeron_image.h), as its
// poll does: the image list the client conductor publishes with release, never freed while
// it is the subscription's newest; each image's mapped log, kept mapped while the image is
// in a list the subscription has not moved past. Nothing is written, so every outcome of
// Aeron's poll stays its own: "true" only means "call Aeron's poll", which then decides (a
// padding frame, an image closing meanwhile, data arriving between the two reads).
//
// Aeron's poll also tells the conductor which image list the subscription has seen, and
// only then may the conductor free older lists and the images they alone held. So a new
// list always means "call Aeron's poll": a subscription that only ever polls empty still
// lets removed images go.
#pragma once

#include <cstdint>

extern "C" {
#include "aeron_image.h"
#include "aeron_log_buffer.h"
#include "aeron_subscription.h"
#include "concurrent/aeron_logbuffer_descriptor.h"
#include "protocol/aeron_udp_protocol.h"
}

namespace aeron_py::log_peek {

// False when the image is closed or no frame has been written at its subscriber position.
inline bool image_may_have_data(const aeron_image_t *image) noexcept {
    if (__atomic_load_n(&image->is_closed, __ATOMIC_ACQUIRE)) return false;
    const int64_t position = *image->subscriber_position;
    const size_t partition =
        static_cast<size_t>(position >> image->position_bits_to_shift) % AERON_LOGBUFFER_PARTITION_COUNT;
    const uint8_t *term = image->log_buffer->mapped_raw_log.term_buffers[partition].addr;
    const auto offset = static_cast<int32_t>(position) & image->term_length_mask;
    const auto *frame = reinterpret_cast<const aeron_frame_header_t *>(term + offset);
    return __atomic_load_n(&frame->frame_length, __ATOMIC_ACQUIRE) > 0;
}

// False when the subscription has seen its newest image list (Aeron's poll acknowledged it)
// and no image in it may have data.
inline bool subscription_may_have_data(const aeron_subscription_t *subscription) noexcept {
    const aeron_image_list_t *list =
        __atomic_load_n(&subscription->conductor_fields.image_lists_head.next_list, __ATOMIC_ACQUIRE);
    if (list->change_number > __atomic_load_n(&subscription->last_image_list_change_number, __ATOMIC_RELAXED))
        return true;
    for (uint32_t i = 0; i < list->length; i++) {
        const aeron_image_t *image = list->array[i];
        if (image != nullptr && image_may_have_data(image)) return true;
    }
    return false;
}

}  // namespace aeron_py::log_peek
