/* The driver's command queues (cpp/plugins/driver_queues/driver_queues.c): the conductor
 * ring's replacement and its checks, the drain the quiet idle strategy runs (bounded, one
 * command at a time, none while an asynchronous command is in progress), the drain of every
 * queue of a driver (receiver, sender, native resource agent, clients, conductor), and when
 * the drain is attached (SHARED threading with the quiet idle strategy only). */
#include <errno.h>
#include <stdlib.h>

#include "aeron_alloc.h"
#include "aeron_driver.h"
#include "aeron_driver_conductor.h"
#include "aeron_driver_context.h"
#include "concurrent/aeron_mpsc_rb.h"
#include "concurrent/aeron_rb.h"
#include "concurrent/aeron_spsc_rb.h"

#include "driver_queues/driver_queues.h"
#include "traffic_bell/traffic_bell.h"

#include "check.h"

#define KIB ((size_t)1024)

static void queue_capacity_must_be_a_power_of_two_of_128_kib_or_more(void)
{
    aeron_driver_context_t *context = NULL;
    CHECK(0 == aeron_driver_context_init(&context), "aeron_driver_context_init");
    const size_t bad[] = { 0, 64 * KIB, 100000, 128 * KIB + 1, 3 * 128 * KIB };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    {
        errno = 0;
        const int rc = aeron_py_driver_context_set_conductor_queue_capacity(context, bad[i]);
        CHECK(rc < 0 && EINVAL == errno, "capacity %zu accepted (rc %d, errno %d)", bad[i], rc, errno);
    }
    errno = 0;
    CHECK(aeron_py_driver_context_set_conductor_queue_capacity(NULL, 1024 * KIB) < 0 && EINVAL == errno, "NULL context");
    CHECK(0 == aeron_py_driver_context_set_conductor_queue_capacity(context, 1024 * KIB), "1 MiB: errno %d", errno);
    CHECK(1024 * KIB == context->conductor_command_queue.capacity, "the ring holds %zu bytes, expected 1 MiB",
          context->conductor_command_queue.capacity);
    CHECK(0 == aeron_py_driver_context_set_conductor_queue_capacity(context, 128 * KIB), "128 KiB: errno %d", errno);
    aeron_driver_context_close(context);  /* frees the replaced ring (LeakSanitizer checks) */
}

/* ---- the drain, on a conductor whose only live part is its command queue ---- */

static int commands_run;
static void *command_clientd;

static void count_command(void *clientd, void *command)
{
    commands_run++;
    command_clientd = clientd;
}

typedef struct
{
    aeron_driver_conductor_t *conductor;
    aeron_mpsc_rb_t queue;
    void *buffer;
}
queue_rig_t;

static void queue_rig_open(queue_rig_t *rig, int commands)
{
    const size_t length = 64 * KIB + AERON_RB_TRAILER_LENGTH;
    rig->conductor = calloc(1, sizeof(aeron_driver_conductor_t));
    rig->buffer = calloc(1, length);
    aeron_mpsc_rb_init(&rig->queue, rig->buffer, length);
    rig->conductor->conductor_proxy.command_queue = &rig->queue;
    for (int i = 0; i < commands; i++)
    {
        aeron_command_base_t command = { .func = count_command, .item = NULL };
        aeron_mpsc_rb_write(&rig->queue, 1, &command, sizeof(command));
    }
    commands_run = 0;
    command_clientd = NULL;
}

static void queue_rig_close(queue_rig_t *rig)
{
    free(rig->buffer);
    free(rig->conductor);
}

static void drain_runs_at_most_limit_commands(void)
{
    queue_rig_t rig;
    queue_rig_open(&rig, 3);
    CHECK(2 == aeron_py_conductor_drain(rig.conductor, 2), "limit 2 of 3 queued");
    CHECK(2 == commands_run, "%d commands ran, expected 2", commands_run);
    CHECK(rig.conductor == command_clientd, "a command ran with a clientd other than the conductor");
    CHECK(1 == aeron_py_conductor_drain(rig.conductor, 256), "the last queued command");
    CHECK(0 == aeron_py_conductor_drain(rig.conductor, 256), "an empty queue");
    CHECK(3 == commands_run, "%d commands ran in all, expected 3", commands_run);
    queue_rig_close(&rig);
}

static void drain_waits_for_an_asynchronous_command(void)
{
    queue_rig_t rig;
    queue_rig_open(&rig, 1);
    aeron_driver_conductor_driver_command_t in_progress = { 0 };
    rig.conductor->driver_command = &in_progress;
    CHECK(0 == aeron_py_conductor_drain(rig.conductor, 256), "drained while an asynchronous command was in progress");
    CHECK(0 == commands_run, "a command ran while an asynchronous command was in progress");
    rig.conductor->driver_command = NULL;
    CHECK(1 == aeron_py_conductor_drain(rig.conductor, 256), "the queued command after the asynchronous one");
    queue_rig_close(&rig);
}

/* ---- the driver-wide drain, on a driver whose only live parts are its command queues ---- */

typedef struct
{
    aeron_driver_t *driver;
    aeron_spsc_rb_t receiver_queue, sender_queue, native_queue;
    aeron_mpsc_rb_t conductor_queue;
    void *buffers[5];
}
driver_rig_t;

static void *ring_buffer(driver_rig_t *rig, int index)
{
    rig->buffers[index] = calloc(1, 64 * KIB + AERON_RB_TRAILER_LENGTH);
    return rig->buffers[index];
}

static void driver_rig_open(driver_rig_t *rig)
{
    const size_t length = 64 * KIB + AERON_RB_TRAILER_LENGTH;
    rig->driver = calloc(1, sizeof(aeron_driver_t));
    aeron_spsc_rb_init(&rig->receiver_queue, ring_buffer(rig, 0), length);
    aeron_spsc_rb_init(&rig->sender_queue, ring_buffer(rig, 1), length);
    aeron_spsc_rb_init(&rig->native_queue, ring_buffer(rig, 2), length);
    aeron_mpsc_rb_init(&rig->conductor_queue, ring_buffer(rig, 3), length);
    aeron_mpsc_rb_init(&rig->driver->conductor.to_driver_commands, ring_buffer(rig, 4), length);
    rig->driver->receiver.receiver_proxy.command_queue = &rig->receiver_queue;
    rig->driver->sender.sender_proxy.command_queue = &rig->sender_queue;
    rig->driver->native_resource_agent.native_resource_agent_proxy.command_queue = &rig->native_queue;
    rig->driver->conductor.conductor_proxy.command_queue = &rig->conductor_queue;
    commands_run = 0;
}

static void driver_rig_close(driver_rig_t *rig)
{
    for (int i = 0; i < 5; i++)
    {
        free(rig->buffers[i]);
    }
    free(rig->driver);
}

static void queue_commands(aeron_spsc_rb_t *queue, int commands)
{
    for (int i = 0; i < commands; i++)
    {
        aeron_command_base_t command = { .func = count_command, .item = NULL };
        aeron_spsc_rb_write(queue, 1, &command, sizeof(command));
    }
}

static void driver_drain_runs_every_agents_queue(void)
{
    driver_rig_t rig;
    driver_rig_open(&rig);
    queue_commands(&rig.receiver_queue, 5);
    queue_commands(&rig.sender_queue, 2);
    aeron_command_base_t command = { .func = count_command, .item = NULL };
    aeron_mpsc_rb_write(&rig.conductor_queue, 1, &command, sizeof(command));
    CHECK(3 + 2 + 1 == aeron_py_driver_drain(rig.driver, 3), "limit 3 per queue: 3 + 2 + 1 expected");
    CHECK(6 == commands_run, "%d commands ran, expected 6", commands_run);
    CHECK(2 == aeron_py_driver_drain(rig.driver, 3), "the receiver's last 2");
    CHECK(&rig.driver->receiver == command_clientd, "a receiver command ran with a clientd other than the receiver");
    CHECK(0 == aeron_py_driver_drain(rig.driver, 256), "empty queues");
    driver_rig_close(&rig);
}

static void client_commands_wait_for_an_asynchronous_command(void)
{
    driver_rig_t rig;
    driver_rig_open(&rig);
    int32_t keepalive[8] = { 0 };
    aeron_mpsc_rb_write(&rig.driver->conductor.to_driver_commands, AERON_COMMAND_CLIENT_KEEPALIVE, keepalive,
        sizeof(keepalive));
    aeron_driver_conductor_client_command_t in_progress = { 0 };
    rig.driver->conductor.client_command = &in_progress;
    CHECK(0 == aeron_py_client_commands_drain(&rig.driver->conductor, 256), "ran a client command while one was in progress");
    CHECK(aeron_mpsc_rb_size(&rig.driver->conductor.to_driver_commands) > 0, "the queued client command was consumed");
    rig.driver->conductor.client_command = NULL;
    driver_rig_close(&rig);
}

/* ---- attaching the drain to the quiet idle strategy ---- */

static void drain_attaches_to_a_shared_quiet_idle_only(void)
{
    aeron_driver_t *driver = calloc(1, sizeof(aeron_driver_t));
    aeron_driver_context_init(&driver->context);
    aeron_driver_context_t *context = driver->context;
    context->threading_mode = AERON_THREADING_MODE_DEDICATED;
    CHECK(0 == aeron_py_driver_attach_drain(driver), "attached in DEDICATED threading");
    context->threading_mode = AERON_THREADING_MODE_SHARED;
    CHECK(0 == aeron_py_driver_attach_drain(driver), "attached to Aeron's own idle strategy");

    aeron_py_traffic_bell_t *bell = aeron_py_traffic_bell_create();
    aeron_py_quiet_idle_t *state = aeron_py_quiet_idle_create(bell, 0, INT64_C(10000000), 0, 0);
    aeron_free(context->shared_idle_strategy_state);  /* as aeron_py_endpoint_filter_install_quiet_idle does */
    context->shared_idle_strategy_state = state;
    context->shared_idle_strategy_func = aeron_py_quiet_idle;
    CHECK(1 == aeron_py_driver_attach_drain(driver), "not attached to the SHARED quiet idle strategy");
    CHECK(aeron_py_driver_drain == state->drain, "the attached drain is not the driver's");
    CHECK(aeron_py_client_requests_drain == state->requests, "the attached requests are not the driver's clients'");
    CHECK(driver == state->drain_clientd, "the drain does not drain this driver");
    aeron_driver_context_close(context);  /* frees the quiet idle state */
    aeron_py_traffic_bell_delete(bell);
    free(driver);
}

int main(void)
{
    check_program = "test_driver_queues";
    RUN(queue_capacity_must_be_a_power_of_two_of_128_kib_or_more);
    RUN(drain_runs_at_most_limit_commands);
    RUN(drain_waits_for_an_asynchronous_command);
    RUN(driver_drain_runs_every_agents_queue);
    RUN(client_commands_wait_for_an_asynchronous_command);
    RUN(drain_attaches_to_a_shared_quiet_idle_only);
    return check_summary();
}
