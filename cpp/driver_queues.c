/* The conductor's command queue, replaced by a larger one (see driver_queues.h). */
#include <errno.h>

#include "aeron_alloc.h"
#include "aeron_driver_context.h"
#include "concurrent/aeron_mpsc_rb.h"
#include "concurrent/aeron_rb.h"

#include "driver_queues.h"

int aeron_py_driver_context_set_conductor_queue_capacity(aeron_driver_context_t *context, size_t capacity)
{
    if (NULL == context || capacity < AERON_COMMAND_RB_CAPACITY || 0 != (capacity & (capacity - 1)))
    {
        errno = EINVAL;
        return -1;
    }
    const size_t length = capacity + AERON_RB_TRAILER_LENGTH;
    void *buffer = NULL;
    if (aeron_alloc(&buffer, length) < 0)
    {
        errno = ENOMEM;
        return -1;
    }
    aeron_mpsc_rb_t replacement;
    if (aeron_mpsc_rb_init(&replacement, buffer, length) < 0)
    {
        aeron_free(buffer);
        errno = EINVAL;
        return -1;
    }
    /* nothing uses the queue before aeron_driver_init; the context frees the new buffer */
    aeron_free(context->conductor_command_queue.buffer);
    context->conductor_command_queue = replacement;
    return 0;
}
