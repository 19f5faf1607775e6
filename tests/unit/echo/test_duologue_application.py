"""The application glue (aeron_py/echo/server/application.py) on a real core, no driver:
each delivered message reaches the application with its duologue's handle, the handle's
answers reach the core, and misuse is refused with a clear error."""
from __future__ import annotations

import random
from typing import Any

import pytest

from aeron_py.duologue.core.contract import (Action, CloseDuologue, CloseReason, CreateDuologue, Deliver, SendDuologue,
                                         ServerConfig)
from aeron_py.duologue.core.protocol import format_hello
from aeron_py.duologue.core.server import DuologueServerCore
from aeron_py.duologue.errors import DuologueClosed
from aeron_py.duologue.server.application import ApplicationGlue, Duologue

pytestmark = pytest.mark.timeout(60)


class Recorder:
    """An application that runs ``answer(duologue, data)`` and records what it saw."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.seen: list[tuple[Duologue, bytes]] = []
        self.closed_with: list[tuple[Duologue, CloseReason]] = []

    def received(self, duologue: Duologue, data: bytes) -> None:
        self.seen.append((duologue, data))
        self.answer(duologue, data)

    def closed(self, duologue: Duologue, reason: CloseReason) -> None:
        self.closed_with.append((duologue, reason))


def opened(core: DuologueServerCore, ip: str = "192.0.2.1", image: int = 1) -> int:
    """A joined duologue's session id."""
    core.initial_image_available(image, 40 + image, f"{ip}:4000", 65536, 0.0)
    (create,) = [a for a in core.hello_received(image, format_hello(0x1234), 0.0) if isinstance(a, CreateDuologue)]
    core.duologue_image_available(create.session_id, 100 + image, f"{ip}:4001", 65536, 0.1)
    return create.session_id


def deliver(glue: ApplicationGlue, core: DuologueServerCore, session: int, data: bytes, now: float = 1.0) -> list[Action]:
    """The core's actions for one message, with the application's answers run like the dispatcher runs them."""
    out: list[Action] = []
    for action in core.duologue_message(session, 101, data, now):
        if isinstance(action, Deliver):
            steps = glue.deliver(action, now)
            out += [a for answers in steps for a in answers]
        else:
            out.append(action)
    for action in out:
        if isinstance(action, CloseDuologue):
            glue.closed(action.session_id, action.reason)
    return out


def setup(answer: Any) -> tuple[DuologueServerCore, ApplicationGlue, Recorder, int]:
    core = DuologueServerCore(ServerConfig(max_clients=4, clients_base_port=9100), rng=random.Random(1))
    app = Recorder(answer)
    return core, ApplicationGlue(core, app), app, opened(core)


def test_a_message_reaches_the_application_and_its_reply_the_core() -> None:
    core, glue, app, session = setup(lambda d, data: d.send(data.upper()))
    assert deliver(glue, core, session, b"hi") == [SendDuologue(session, b"HI")]
    (duologue, data), = app.seen
    assert (duologue.session_id, duologue.peer_ip, duologue.secure, data) == (session, "192.0.2.1", False, b"hi")
    info = duologue.info()
    assert info is not None and (info.msgs_in, info.msgs_out) == (1, 1)
    deliver(glue, core, session, b"again")
    assert app.seen[1][0] is duologue  # one handle per duologue


def test_reject_answers_bad_message_closes_and_tells_the_application() -> None:
    core, glue, app, session = setup(lambda d, data: d.reject())
    actions = deliver(glue, core, session, b"nonsense")
    assert actions[0] == SendDuologue(session, b"ERROR bad message")
    assert CloseDuologue(session, CloseReason.BAD_MESSAGE) in actions
    (duologue, reason), = app.closed_with
    assert reason is CloseReason.BAD_MESSAGE and duologue.closed and duologue.info() is None


def test_send_after_close_in_the_same_callback_raises_closed() -> None:
    errors: list[BaseException] = []

    def answer(d: Duologue, data: bytes) -> None:
        d.close()
        try:
            d.send(b"late")
        except DuologueClosed as exc:
            errors.append(exc)

    core, glue, app, session = setup(answer)
    actions = deliver(glue, core, session, b"bye")
    assert CloseDuologue(session, CloseReason.APPLICATION) in actions
    assert not any(isinstance(a, SendDuologue) for a in actions)
    assert len(errors) == 1 and str(session) in str(errors[0])
    assert app.closed_with[0][1] is CloseReason.APPLICATION


def test_a_handle_used_outside_a_callback_raises() -> None:
    core, glue, app, session = setup(lambda d, data: None)
    deliver(glue, core, session, b"x")
    duologue = app.seen[0][0]
    with pytest.raises(RuntimeError, match="callbacks"):
        duologue.send(b"from elsewhere")


def test_an_exception_in_the_application_closes_only_that_duologue() -> None:
    def answer(d: Duologue, data: bytes) -> None:
        if data == b"boom":
            raise ValueError("application bug")
        d.send(data)

    core, glue, app, session = setup(answer)
    other = opened(core, "192.0.2.2", image=2)
    assert CloseDuologue(session, CloseReason.APPLICATION) in deliver(glue, core, session, b"boom")
    assert core.duologue_info(session) is None
    for action in core.duologue_message(other, 102, b"fine", 2.0):  # the other is served on
        assert isinstance(action, Deliver)
        assert [a for answers in glue.deliver(action, 2.0) for a in answers] == [SendDuologue(other, b"fine")]


def test_an_oversize_message_never_reaches_the_application() -> None:
    core, glue, app, session = setup(lambda d, data: d.send(data))
    actions = deliver(glue, core, session, b"x" * 1025)
    assert actions[0] == SendDuologue(session, b"ERROR bad message") and app.seen == []
    assert app.closed_with == []  # it never saw the duologue: nothing to tell


def test_the_handle_names_the_peers_source_key() -> None:
    core = DuologueServerCore(ServerConfig(max_clients=4, clients_base_port=9100), rng=random.Random(1))
    app = Recorder(lambda d, data: None)
    glue = ApplicationGlue(core, app)
    session = opened(core, "[2001:db8:1:2::7]")
    deliver(glue, core, session, b"hi")
    (duologue, _), = app.seen
    assert duologue.peer_ip == "2001:db8:1:2::7" and duologue.source_key == "2001:db8:1:2::/64"
