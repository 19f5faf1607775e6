/* The conductor's command queue, replaced by a larger one (see driver_queues.h). */
#include <errno.h>

#include "aeron_alloc.h"
#include "aeron_driver.h"
#include "aeron_driver_conductor.h"
#include "aeron_driver_context.h"
#include "concurrent/aeron_mpsc_rb.h"
#include "concurrent/aeron_rb.h"

#include "driver_queues.h"
#include "traffic_bell/traffic_bell.h"

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

static void run_command(int32_t msg_type_id, const void *message, size_t size, void *clientd)
{
    aeron_command_base_t *cmd = (aeron_command_base_t *)message;
    cmd->func(clientd, cmd);
}

int aeron_py_conductor_drain(void *conductor_ptr, int limit)
{
    aeron_driver_conductor_t *conductor = conductor_ptr;
    int count = 0;
    while (count < limit && NULL == conductor->driver_command)
    {
        if (0 == aeron_mpsc_rb_read(conductor->conductor_proxy.command_queue, run_command, conductor, 1))
        {
            break;
        }
        count++;
    }
    return count;
}

int aeron_py_driver_attach_conductor_drain(aeron_driver_t *driver)
{
    aeron_driver_context_t *context = driver->context;
    if (AERON_THREADING_MODE_SHARED != context->threading_mode || aeron_py_quiet_idle != context->shared_idle_strategy_func)
    {
        return 0;
    }
    aeron_py_quiet_idle_attach_drain(context->shared_idle_strategy_state, aeron_py_conductor_drain, &driver->conductor);
    return 1;
}
