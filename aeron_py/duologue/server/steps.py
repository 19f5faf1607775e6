"""How a collaborator of the server loop hands the core's actions back: :data:`Steps`.

A pass that feeds the core (image events, messages, a failed send, a blocklist
change...) may get actions back at any point, and each list must be executed before
the pass goes on: the next image event, message or outbox must see the duologues as
those actions left them (a duologue closed by one message ignores the rest of its
batch; the image events of a duologue being created wait).  So such a pass is a
generator: it *yields* each list of the core's actions as it gets it, and *returns*
its work count.  :meth:`~.dispatch.Dispatcher.drain` executes each yielded list at
once and resumes the pass, so no collaborator ever calls back up into the loop.
"""
from __future__ import annotations

from collections.abc import Generator

from ..core.contract import Action

__all__ = ["Steps"]

#: A pass that yields the core's actions as they come and returns its work count.
Steps = Generator[list[Action], None, int]
