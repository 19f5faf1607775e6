"""The one place that executes the core's actions, in order.

Each action goes to the collaborator that owns what it is about:

* ``Broadcast``, ``CreateDuologue``, ``SendDuologue``: the duologues' channels and
  outboxes (:mod:`.channels`);
* ``CloseDuologue``: the images of the duologue are forgotten (:mod:`.image_admission`),
  then its channels closed (:mod:`.channels`: how soon its data port is free depends on
  whether it had images), then the application told (:mod:`.application`);
* ``Deliver``: the application (:mod:`.application`), whose answers run at once;
* ``RejectImage``: :mod:`.image_admission`;
* ``BlockSource``: the driver's endpoint filter (:mod:`.endpoint_guard`);
* ``Event``: telemetry, for the whole list before any action runs (:mod:`.telemetry`).

A collaborator that finds something the core must decide (a send that failed, channels
not made, a port still bound or lost) yields that fact (:mod:`.steps`); :meth:`Dispatcher.drain`
tells the core and executes its answer at once, before the rest of the list, as the core
expects. This is the only place of the glue, besides the passes that feed it events and
messages, that calls the core.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .application import ApplicationGlue
from .channels import DuologueChannels
from .image_admission import ImageAdmission
from .steps import CreateFailed, GlueFact, PortsTaken, RetirePort, SendFailed, Steps
from ..core.contract import (BlockSource, Broadcast, CloseDuologue, CreateDuologue, Deliver, Event, RejectImage,
                             SendDuologue)

if TYPE_CHECKING:
    from ..core.contract import Action
    from ..core.server import DuologueServerCore
    from .endpoint_guard import EndpointGuard
    from .telemetry import ServerTelemetry

__all__ = ["Dispatcher"]


class Dispatcher:
    """Executes the core's actions by handing each to its owner."""

    def __init__(self, core: DuologueServerCore, channels: DuologueChannels, admission: ImageAdmission,
                 guard: EndpointGuard, telemetry: ServerTelemetry | None, application: ApplicationGlue) -> None:
        self._core = core
        self._application = application
        self._channels = channels
        self._admission = admission
        self._guard = guard
        self._telemetry = telemetry

    def execute(self, actions: list[Action], now: float) -> None:
        """Execute ``actions`` in order (and the core's answers to them, depth first)."""
        if self._telemetry is not None and actions:
            self._telemetry.record(actions, self._admission.source_port)
        for action in actions:
            if isinstance(action, Event):
                continue  # recorded above
            if isinstance(action, Broadcast):
                self._channels.broadcast(action, now)
            elif isinstance(action, CreateDuologue):
                self.drain(self._channels.create(action, now), now)
            elif isinstance(action, SendDuologue):
                self.drain(self._channels.send(action, now), now)
            elif isinstance(action, Deliver):
                self.drain(self._application.deliver(action, now), now)
            elif isinstance(action, CloseDuologue):
                session = action.session_id
                had_images = self._channels.is_live(session) and self._admission.forget_duologue(session)
                self.drain(self._channels.close(session, had_images, now), now)
                self._application.closed(session, action.reason)
            elif isinstance(action, RejectImage):
                self._admission.reject(action)
            elif isinstance(action, BlockSource):
                self._guard.block(action.ip, action.seconds)
            else:
                raise TypeError(f"unknown core action {action!r}")

    def drain(self, steps: Steps, now: float) -> int:
        """Run a collaborator's pass, executing each list of actions it yields as it comes; its work count."""
        while True:
            try:
                step = next(steps)
            except StopIteration as done:
                return int(done.value)
            self.execute(step if isinstance(step, list) else self._tell_core(step, now), now)

    def _tell_core(self, fact: GlueFact, now: float) -> list[Action]:
        """A glue collaborator's fact to the core; the core's answer."""
        if isinstance(fact, SendFailed):
            return self._core.send_failed(fact.session_id, now)
        if isinstance(fact, CreateFailed):
            return self._core.create_failed(fact.session_id, now)
        if isinstance(fact, PortsTaken):
            return self._core.ports_taken(fact.session_id, now, fact.busy_ports)
        if isinstance(fact, RetirePort):
            self._core.retire_port(fact.port)
            return []
        raise TypeError(f"unknown glue fact {fact!r}")
