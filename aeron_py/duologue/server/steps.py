"""How a collaborator of the server loop hands back the core's actions, or its own facts: :data:`Steps`.

A pass that feeds the core (image events, messages, a failed send, a blocklist
change...) may get actions back at any point, and each list must be executed before
the pass goes on: the next image event, message or outbox must see the duologues as
those actions left them (a duologue closed by one message ignores the rest of its
batch; the image events of a duologue being created wait).  So such a pass is a
generator: it *yields* each list of the core's actions as it gets it, and *returns*
its work count.  :meth:`~.dispatch.Dispatcher.drain` executes each yielded list at
once and resumes the pass, so no collaborator ever calls back up into the loop.

A collaborator that finds something the core must decide about (a reply that missed its
deadline, channels that could not be made, a port still bound, a port lost for good)
yields that fact instead (:data:`GlueFact`): the dispatcher tells the core and executes
its answer before the pass resumes; the collaborator never holds the core.
"""
from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

from ..core.contract import Action

__all__ = ["CreateFailed", "GlueFact", "PortsTaken", "RetirePort", "SendFailed", "Steps"]


@dataclass(frozen=True)
class SendFailed:
    """A reply of duologue ``session_id`` could not be sent in time (``core.send_failed``)."""

    session_id: int


@dataclass(frozen=True)
class CreateFailed:
    """Duologue ``session_id``'s channels could not be made in time (``core.create_failed``)."""

    session_id: int


@dataclass(frozen=True)
class PortsTaken:
    """The driver still binds a port of pending duologue ``session_id`` (``core.ports_taken``);
    ``busy_ports``: the ports the new pair should avoid."""

    session_id: int
    busy_ports: frozenset[int]


@dataclass(frozen=True)
class RetirePort:
    """``port`` may be bound by a channel nobody can close: never hand it out (``core.retire_port``)."""

    port: int


GlueFact = SendFailed | CreateFailed | PortsTaken | RetirePort

#: A pass that yields the core's actions (or a fact for the core) as they come and returns its work count.
Steps = Generator[list[Action] | GlueFact, None, int]
