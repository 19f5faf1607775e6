"""Echo 2.0's rule for a duologue's messages (docs/spec/echo2.md §3), sans-I/O.

The duologue layer hands every message of a duologue's client to its application
(:class:`~.contract.Deliver`); Echo's application answers ``ECHO <payload>`` with the
same bytes and anything else as a bad message (``ERROR bad message``, then close).
:func:`answer` applies the rule to a list of the core's actions, for the glue-free uses
of the core (tests, the sans-I/O tutorial); the server's Echo application
(:mod:`aeron_py.duologue.server.application`) applies it to each delivered message.
"""

from __future__ import annotations

from ...duologue.core.contract import Action, Deliver
from ...duologue.core.protocol import parse_echo
from ...duologue.core.server import DuologueServerCore

__all__ = ["answer", "is_echo"]


def is_echo(data: bytes) -> bool:
    """Whether ``data`` is an ``ECHO <payload>`` message, answered with itself."""
    return parse_echo(data) is not None


def answer(core: DuologueServerCore, actions: list[Action], now: float) -> list[Action]:
    """``actions`` with each :class:`Deliver` replaced by Echo's answer to it."""
    answered: list[Action] = []
    for action in actions:
        if not isinstance(action, Deliver):
            answered.append(action)
        elif is_echo(action.data):
            answered += core.reply(action.session_id, action.data, now)
        else:
            answered += core.bad_message(action.session_id, len(action.data), now)
    return answered
