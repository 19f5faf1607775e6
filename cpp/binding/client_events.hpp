// The C callbacks the client conductor thread calls; they only queue (client_events.cpp).
#pragma once

#include "common.hpp"

namespace aeron_py {

// `clientd` is the client's EventQueue.
void on_error_event(void *clientd, int errcode, const char *message) noexcept;
void on_available_image_event(void *clientd, aeron_subscription_t *subscription, aeron_image_t *image) noexcept;
void on_unavailable_image_event(void *clientd, aeron_subscription_t *subscription, aeron_image_t *image) noexcept;
void on_publication_error_event(void *clientd, aeron_publication_error_values_t *frame) noexcept;
void on_available_counter_event(void *clientd, aeron_counters_reader_t *reader, int64_t registration_id,
                                int32_t counter_id) noexcept;
void on_unavailable_counter_event(void *clientd, aeron_counters_reader_t *reader, int64_t registration_id,
                                  int32_t counter_id) noexcept;
void on_new_publication_event(void *clientd, const char *channel, int32_t stream_id, int32_t session_id,
                              int64_t correlation_id) noexcept;
void on_new_exclusive_publication_event(void *clientd, const char *channel, int32_t stream_id, int32_t session_id,
                                        int64_t correlation_id) noexcept;
void on_new_subscription_event(void *clientd, const char *channel, int32_t stream_id,
                               int64_t correlation_id) noexcept;

}  // namespace aeron_py
