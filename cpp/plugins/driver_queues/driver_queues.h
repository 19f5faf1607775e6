/* The driver's command queues, sized for thousands of channels on one SHARED agent.
 *
 * Aeron's receiver and sender hand work to the conductor through an MPSC ring of 128 KiB
 * (AERON_COMMAND_RB_CAPACITY, a compile-time constant): a create-image command per new
 * session (about 320 bytes), a response-connected per publication that gains a receiver,
 * a release per closed resource. The conductor drains one command per duty cycle
 * (AERON_COMMAND_DRAIN_LIMIT) and an agent that finds the ring full yields until there is
 * room. In the SHARED threading mode the conductor is that same agent, so a full ring
 * never drains: the driver spins forever and aeron_driver_close waits for it forever.
 * A burst of new sessions while duty cycles are slow (2-10 ms each at thousands of
 * channels) fills 128 KiB in well under a second; aeron_py's load generator hung this way
 * at 1,100-1,550 held duologues.
 *
 * aeron_py_driver_context_set_conductor_queue_capacity replaces the ring with a larger one
 * before aeron_driver_init. The endpoint filter bounds admitted new sessions (max_pending),
 * so the commands in flight stay far below its capacity. No policy here: the size comes
 * from the caller.
 */
#ifndef AERON_PY_DRIVER_QUEUES_H
#define AERON_PY_DRIVER_QUEUES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aeron_driver_context_stct aeron_driver_context_t;
typedef struct aeron_driver_stct aeron_driver_t;

/* `capacity`: a power of two >= 128 KiB. 0, or -1 with errno set (EINVAL, ENOMEM). */
int aeron_py_driver_context_set_conductor_queue_capacity(aeron_driver_context_t *context, size_t capacity);

/* A bigger ring only postpones the hang when commands keep coming faster than one per duty
 * cycle (e.g. a re-resolve per stale manual-MDC destination every 5 s, at thousands of
 * publications). So the quiet idle strategy (traffic_bell.h), which runs on the SHARED
 * agent between duty cycles, i.e. on the conductor's own thread, also drains the ring, up
 * to `limit` commands, as the conductor does (one at a time, none while an asynchronous
 * command is in progress). Returns the number run. */
int aeron_py_conductor_drain(void *conductor, int limit);

/* The clients' commands (the CnC's to-driver ring), up to `limit`, as the conductor runs them
 * (none while an asynchronous one is in progress). Returns the number run. */
int aeron_py_client_commands_drain(void *conductor, int limit);

/* The clients' commands waiting now, up to `limit`, as aeron_py_client_commands_drain runs them;
 * returns how many were requests (anything but a keepalive, which every client sends twice a
 * second): the quiet idle strategy's requests function (traffic_bell.h), `driver` an aeron_driver_t. */
int aeron_py_client_requests_drain(void *driver, int limit);

/* Every command queue of a SHARED driver, up to `limit` commands each, in the order work flows:
 * the clients' commands, the native resource agent's (channel parsing, log buffer mapping and
 * freeing), the receiver's, the sender's, then the conductor's. Each agent reads its queue at
 * one command per duty cycle (AERON_COMMAND_DRAIN_LIMIT), and while the quiet idle strategy
 * sleeps, a duty cycle comes once per quiet period (50-200 ms): a flood's aftermath (hundreds
 * of image removals, endpoint closes and log frees) then took minutes to retire. Run from the
 * SHARED agent's idle strategy, on the thread that runs all four agents, so each command runs
 * exactly as its agent would run it. Returns the number run. */
int aeron_py_driver_drain(void *driver, int limit);

/* After aeron_driver_init, before aeron_driver_start: when the quiet idle strategy is the
 * driver's SHARED idle strategy, attaches aeron_py_driver_drain and
 * aeron_py_client_requests_drain of this driver to it
 * (aeron_py_quiet_idle_attach_drain: the strategy knows nothing of the driver, so this file
 * depends on traffic_bell.h and not the reverse). 1 if attached, else 0. */
int aeron_py_driver_attach_drain(aeron_driver_t *driver);

#ifdef __cplusplus
}
#endif

#endif
