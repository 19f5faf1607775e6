// The C callbacks the client conductor thread calls; they only queue (client_events.cpp).
#pragma once

#include "common.hpp"

namespace aeron_py {

// `clientd` is the client's EventQueue.
void on_error_event(void *clientd, int errcode, const char *message) noexcept;
void on_available_image_event(void *clientd, aeron_subscription_t *subscription, aeron_image_t *image) noexcept;
void on_unavailable_image_event(void *clientd, aeron_subscription_t *subscription, aeron_image_t *image) noexcept;
void on_publication_error_event(void *clientd, aeron_publication_error_values_t *frame) noexcept;

}  // namespace aeron_py
