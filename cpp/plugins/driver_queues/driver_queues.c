/* The conductor's command queue, replaced by a larger one, and the drains of the driver's
 * command queues that the quiet idle strategy runs (see driver_queues.h). */
#include <errno.h>

#include "aeron_alloc.h"
#include "command/aeron_control_protocol.h"
#include "aeron_driver.h"
#include "aeron_driver_conductor.h"
#include "aeron_driver_context.h"
#include "aeron_driver_native_resource_agent.h"
#include "concurrent/aeron_mpsc_rb.h"
#include "concurrent/aeron_rb.h"
#include "concurrent/aeron_spsc_rb.h"

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

/* Client commands run as the conductor runs them, the requests among them counted. */
typedef struct
{
    aeron_driver_conductor_t *conductor;
    int requests;
}
client_commands_t;

static aeron_rb_read_action_t run_client_command(int32_t msg_type_id, const void *message, size_t length, void *clientd)
{
    client_commands_t *commands = clientd;
    const aeron_rb_read_action_t action = aeron_driver_conductor_on_command(msg_type_id, message, length, commands->conductor);
    if (AERON_RB_ABORT != action && AERON_COMMAND_CLIENT_KEEPALIVE != msg_type_id)
    {
        commands->requests++;
    }
    return action;
}

static int drain_client_commands(aeron_driver_conductor_t *conductor, int limit, int *requests)
{
    client_commands_t commands = { .conductor = conductor, .requests = 0 };
    int count = 0;
    /* the conductor refuses (aborts) a command while an asynchronous one is in progress */
    while (count < limit && NULL == conductor->client_command)
    {
        if (0 == aeron_mpsc_rb_controlled_read(&conductor->to_driver_commands, run_client_command, &commands, 1))
        {
            break;
        }
        count++;
    }
    *requests = commands.requests;
    return count;
}

int aeron_py_client_commands_drain(void *conductor_ptr, int limit)
{
    int requests = 0;
    return drain_client_commands(conductor_ptr, limit, &requests);
}

int aeron_py_client_requests_drain(void *driver_ptr, int limit)
{
    aeron_driver_t *driver = driver_ptr;
    int requests = 0;
    drain_client_commands(&driver->conductor, limit, &requests);
    return requests;
}

/* The native resource agent's commands, by type, to the agent's own handlers. */
static void run_native_command(int32_t msg_type_id, const void *message, size_t size, void *clientd)
{
    aeron_driver_native_resource_agent_t *agent = clientd;
    switch (msg_type_id)
    {
        case AERON_DRIVER_NATIVE_RESOURCE_AGENT_COMMAND_TYPE_RESOLVE_ADDRESS:
            aeron_driver_native_resource_agent_on_resolve_address(
                agent, (aeron_driver_native_resource_agent_proxy_cmd_resolve_address_t *)message);
            break;
        case AERON_DRIVER_NATIVE_RESOURCE_AGENT_COMMAND_TYPE_PARSE_CHANNEL:
            aeron_driver_native_resource_agent_on_parse_udp_channel(
                agent, (aeron_driver_native_resource_agent_proxy_cmd_parse_channel_t *)message);
            break;
        case AERON_DRIVER_NATIVE_RESOURCE_AGENT_COMMAND_TYPE_FREE_LOG_BUFFER:
            aeron_driver_native_resource_agent_on_free_log_buffer(
                agent, (aeron_driver_native_resource_agent_proxy_cmd_free_log_buffer_t *)message);
            break;
        case AERON_DRIVER_NATIVE_RESOURCE_AGENT_COMMAND_TYPE_MAP_LOG_BUFFER:
            aeron_driver_native_resource_agent_on_map_log_buffer(
                agent, (aeron_driver_native_resource_agent_proxy_cmd_map_log_buffer_t *)message);
            break;
        default:
            break;  /* a type this pinned version does not send */
    }
}

int aeron_py_driver_drain(void *driver_ptr, int limit)
{
    aeron_driver_t *driver = driver_ptr;
    const size_t each = (size_t)limit;
    /* in the order work flows: clients -> conductor -> its agents -> back to the conductor */
    int count = aeron_py_client_commands_drain(&driver->conductor, limit);
    count += (int)aeron_spsc_rb_read(
        driver->native_resource_agent.native_resource_agent_proxy.command_queue, run_native_command,
        &driver->native_resource_agent, each);
    count += (int)aeron_spsc_rb_read(driver->receiver.receiver_proxy.command_queue, run_command, &driver->receiver, each);
    count += (int)aeron_spsc_rb_read(driver->sender.sender_proxy.command_queue, run_command, &driver->sender, each);
    count += aeron_py_conductor_drain(&driver->conductor, limit);
    return count;
}

int aeron_py_driver_attach_drain(aeron_driver_t *driver)
{
    aeron_driver_context_t *context = driver->context;
    if (AERON_THREADING_MODE_SHARED != context->threading_mode || aeron_py_quiet_idle != context->shared_idle_strategy_func)
    {
        return 0;
    }
    aeron_py_quiet_idle_attach_drain(
        context->shared_idle_strategy_state, aeron_py_driver_drain, aeron_py_client_requests_drain, driver);
    return 1;
}
