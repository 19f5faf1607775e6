"""The server glue's collaborators, wired as :class:`~aeron_py.duologue.server.DuologueServer`
wires them but over stand-ins for Aeron (no driver): a HELLO goes one way, from the
poll set through the core and the dispatcher to the channel adds; and the glue's
shape (no mixins, no placeholder methods, no method called by a name looked up at run time).
"""
from __future__ import annotations

import ast
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from aeron_py.duologue.core.protocol import format_hello
from aeron_py.duologue.core.contract import ServerConfig
from aeron_py.duologue.core.server import DuologueServerCore
from aeron_py.duologue.server.application import ApplicationGlue
from aeron_py.duologue.server.broadcasts import Broadcasts
from aeron_py.duologue.server.channels import DuologueChannels
from aeron_py.duologue.server.dispatch import Dispatcher
from aeron_py.echo.server.echo_application import EchoApplication
from aeron_py.duologue.server.image_admission import ImageAdmission, ImageEvents
from aeron_py.duologue.server.message_polling import MessagePolling
from aeron_py.duologue.server.options import ServerOptions

pytestmark = pytest.mark.timeout(30)

SERVER = Path(__file__).resolve().parents[3] / "aeron_py" / "duologue" / "server"
BASE = 9010


class PollSet:
    """Hands out the messages a test queued; remembers the subscriptions added."""

    def __init__(self) -> None:
        self.messages: list[tuple[Any, int, bytes]] = []
        self.members: dict[Any, Any] = {}

    def poll(self, limit: int) -> list[tuple[Any, int, bytes]]:
        taken, self.messages = self.messages[:limit], self.messages[limit:]
        return taken

    def add(self, sub: Any, key: Any) -> None:
        self.members[key] = sub

    def remove(self, sub: Any) -> None:
        self.members = {k: s for k, s in self.members.items() if s is not sub}

    def end_of_stream(self) -> list[tuple[int, int]]:
        return []


class Unanswered:
    """An asynchronous add the driver has not answered yet."""

    def poll(self) -> None:
        return None


class Aeron:
    def __init__(self) -> None:
        self.adds: list[tuple[str, str]] = []

    def async_add_subscription(self, uri: str, stream_id: int, **callbacks: Any) -> Unanswered:
        self.adds.append(("subscription", str(uri)))
        return Unanswered()

    def async_add_exclusive_publication(self, uri: str, stream_id: int) -> Unanswered:
        self.adds.append(("publication", str(uri)))
        return Unanswered()


class Guard:
    def __init__(self) -> None:
        self.owners: dict[int, str | None] = {}

    def own_port(self, port: int, address: str | None) -> None:
        self.owners[port] = address


class Publication:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def offer(self, data: bytes) -> int:
        self.sent.append(data)
        return len(data)


@dataclass
class Image:
    correlation_id: int
    session_id: int
    source_identity: str
    term_buffer_length: int = 65536


def test_a_hello_goes_from_the_poll_set_through_the_dispatcher_to_the_channel_adds() -> None:
    core = DuologueServerCore(ServerConfig(max_clients=4, clients_base_port=BASE), rng=random.Random(7))
    aeron, guard, broadcast = Aeron(), Guard(), Publication()
    hello_set, poll_set, events = PollSet(), PollSet(), ImageEvents()
    broadcasts = Broadcasts(broadcast, ServerOptions().broadcast_cap)  # type: ignore[arg-type]
    channels = DuologueChannels(ServerOptions(), core.log_summary, aeron, guard, poll_set, broadcasts,  # type: ignore[arg-type]
                                events.callback)
    admission = ImageAdmission(core, events, object(), poll_set, channels)  # type: ignore[arg-type]
    polling = MessagePolling(core, admission, channels, hello_set, poll_set)  # type: ignore[arg-type]
    dispatch = Dispatcher(core, channels, admission, guard, None,  # type: ignore[arg-type]
                          ApplicationGlue(core, EchoApplication()))

    events.callback(None, True)(Image(1, 77, "10.0.0.2:40000"))  # the conductor's callback: enqueue only
    assert dispatch.drain(admission.to_core(0.0), 0.0) == 1
    hello_set.messages.append((None, 77, format_hello(0x611786D9)))
    assert dispatch.drain(polling.poll(0.0), 0.0) == 1

    (duologue,) = core.duologue_infos()
    assert channels.is_pending(duologue.session_id) and not channels.is_live(duologue.session_id)
    assert channels.count() == 1
    assert [kind for kind, _ in aeron.adds] == ["subscription", "publication"]
    assert str(duologue.data_port) in aeron.adds[0][1] and str(duologue.control_port) in aeron.adds[1][1]
    assert guard.owners == {duologue.data_port: "10.0.0.2"}  # only the client may send to its data port
    # the CONNECT waits for the duologue's channels: nothing is offered on the broadcast yet
    assert dispatch.drain(channels.flush(0.0), 0.0) == 0 and broadcast.sent == []


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def test_the_glue_has_no_mixins_placeholders_or_methods_called_by_name() -> None:
    files = sorted(SERVER.glob("*.py"))
    assert len(files) >= 15, "the server folder moved: update this test"
    for path in files:
        tree = _tree(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Server"):
                assert not node.bases, f"{node.name} inherits {ast.unparse(node.bases[0])}: compose instead"
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                defs = [n.name for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
                assert not defs, f"{path.name}: placeholder methods under TYPE_CHECKING: {defs}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and \
                    isinstance(node.func.func, ast.Name) and node.func.func.id == "getattr":
                pytest.fail(f"{path.name}:{node.lineno}: a method called by its name (getattr(...)(...))")
