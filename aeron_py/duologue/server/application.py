"""The application's side of the duologue layer (glue).

The core hands each message of a duologue's client to the application as a
:class:`~..core.contract.Deliver`; :class:`ApplicationGlue` calls the application's
``received(duologue, data)`` with that duologue's :class:`Duologue` handle. What the
application does with handles during the call (:meth:`Duologue.send`,
:meth:`Duologue.reject`, :meth:`Duologue.close`, on this duologue or any other) goes to
the core, and the core's answers are yielded to the dispatcher, which executes them
before the next message. When a duologue closes, for any reason, the application's
``closed(duologue, reason)`` is called (if it has one) and the handle is dead.

Handles are for the application's callbacks, on the server's thread: a call outside
one raises :class:`RuntimeError`, a call on a closed duologue
:class:`~aeron_py.duologue.errors.DuologueClosed`.
An exception escaping ``received`` closes that duologue (``application``) and is logged;
the server goes on serving.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ..core.contract import CloseDuologue
from ..errors import DuologueClosed
from .steps import Steps

if TYPE_CHECKING:
    from ..core.contract import Action, CloseReason, Deliver, DuologueInfo
    from ..core.server import DuologueServerCore

__all__ = ["Application", "ApplicationGlue", "Duologue"]

logger = logging.getLogger(__name__)


class Application(Protocol):
    """What a duologue server's application supplies: its answer to each message.

    ``received`` runs on the server's thread, once per message of a client, in order;
    it should not block (the server serves every duologue on that thread). An
    application may also define ``closed(duologue, reason)``: called once when a
    duologue it has seen closes (the client left, it expired, a bad message, ...).
    """

    def received(self, duologue: Duologue, data: bytes) -> None: ...


class Duologue:
    """One duologue as the server's application sees it: send, reject, close, and who
    the client is. Valid inside the application's callbacks."""

    __slots__ = ("session_id", "peer_ip", "source_key", "secure", "_glue", "_closed")

    def __init__(self, glue: ApplicationGlue, session_id: int, peer_ip: str, source_key: str, secure: bool) -> None:
        self.session_id = session_id
        #: The client's address (the duologue's owner; ``"ipc"``: a same-host client over IPC).
        self.peer_ip = peer_ip
        #: What the per-source limits count it under (``peer_ip``, or its IPv6 prefix).
        self.source_key = source_key
        #: Opened by a secure handshake: its traffic is sealed in the media driver.
        self.secure = secure
        self._glue = glue
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def send(self, data: bytes) -> None:
        """Queue ``data`` for the client (it leaves with the server's next flush)."""
        self._glue.answer(self, lambda core, now: core.reply(self.session_id, bytes(data), now))

    def reject(self) -> None:
        """The message was not understood: ``ERROR bad message``, then close."""
        self._glue.answer(self, lambda core, now: core.bad_message(self.session_id, 0, now))

    def close(self) -> None:
        """Close the duologue (replies already sent are flushed first)."""
        self._glue.answer(self, lambda core, now: core.close(self.session_id, now))

    def info(self) -> DuologueInfo | None:
        """Its counters and ports now (None once closed)."""
        return self._glue.info(self.session_id)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<Duologue {self.session_id} {self.peer_ip}{' secure' if self.secure else ''} {state}>"


class ApplicationGlue:
    """Delivers the core's messages to the application, and the application's answers to the core."""

    def __init__(self, core: DuologueServerCore, application: Application) -> None:
        self._core = core
        self._application = application
        self._on_closed = getattr(application, "closed", None)
        self._handles: dict[int, Duologue] = {}
        self._answers: list[Action] | None = None  # collecting, while a callback runs
        self._now = 0.0

    def deliver(self, action: Deliver, now: float) -> Steps:
        """Run the application's ``received`` for one message; yield the core's answers."""
        handle = self._handles.get(action.session_id)
        if handle is None:
            info = self._core.duologue_info(action.session_id)
            if info is None:
                return 0  # closed by an earlier action of the same batch
            handle = self._handles[action.session_id] = Duologue(self, info.session_id, info.owner_ip,
                                                                 self._core.source_key(info.owner_ip), info.secure)
        self._answers, self._now = [], now
        try:
            self._application.received(handle, action.data)
        except Exception:  # noqa: BLE001 - the application's bug closes its duologue, not the server
            logger.exception("application failed on a message of duologue %d: closing it", action.session_id)
            self._answers += self._core.close(action.session_id, now)
        finally:
            answers, self._answers = self._answers, None
        if answers:
            yield answers
        return 1

    def posted(self, call: Callable[[], object], now: float) -> Steps:
        """Run a call posted to the server's thread (``DuologueServer.call_soon_threadsafe``)
        with the handles usable, as inside ``received``; yield the core's answers. A call on
        a duologue closed meanwhile is dropped (logged); one that raises otherwise is logged."""
        self._answers, self._now = [], now
        try:
            call()
        except DuologueClosed as closed:
            logger.debug("a posted call found its duologue closed: %s", closed)
        except Exception:  # noqa: BLE001 - the caller's bug must not stop the server
            logger.exception("a call posted to the server's thread failed")
        finally:
            answers, self._answers = self._answers, None
        if answers:
            yield answers
        return 1

    def closed(self, session_id: int, reason: CloseReason) -> None:
        """Duologue ``session_id`` closed: its handle dies; the application hears of it."""
        handle = self._handles.pop(session_id, None)
        if handle is None:
            return
        handle._closed = True
        if self._on_closed is not None:
            try:
                self._on_closed(handle, reason)
            except Exception:  # noqa: BLE001 - as in deliver
                logger.exception("application failed on the close of duologue %d", session_id)

    def answer(self, handle: Duologue, call: _CoreCall) -> None:
        """A handle's call: to the core now, its actions executed after the callback."""
        if self._answers is None:
            raise RuntimeError("a Duologue is used inside the application's callbacks or a call posted with "
                               "DuologueServer.call_soon_threadsafe (the server's thread)")
        if handle._closed:
            raise DuologueClosed(f"duologue {handle.session_id} is closed here")
        actions = call(self._core, self._now)
        if any(isinstance(a, CloseDuologue) and a.session_id == handle.session_id for a in actions):
            handle._closed = True  # closed in the core now; the application hears of it once executed
        self._answers += actions

    def info(self, session_id: int) -> DuologueInfo | None:
        return self._core.duologue_info(session_id)


class _CoreCall(Protocol):
    def __call__(self, core: DuologueServerCore, now: float) -> list[Action]: ...
