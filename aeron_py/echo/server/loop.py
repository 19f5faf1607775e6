"""Echo 2.0 server glue: moves bytes between Aeron and :class:`~.server_core.EchoServerCore`.

One thread owns everything: the Aeron client runs with the conductor agent invoker,
so image callbacks fire inside :meth:`EchoServer.run`'s own loop, where they only
enqueue.  Each loop iteration:

1. ``aeron.do_work()`` (callbacks enqueue image events);
2. image events go to the core *before* any fragment of that image is read (every
   image in a subscription's list had its callback in the same duty cycle);
3. every subscription is polled by two calls into C (a :class:`~aeron_py.PollSet` of
   the duologues, one of the all-clients subscription; messages routed by session id:
   see :mod:`.images` for why no image handle is ever kept) and the messages go to
   the core; its actions are executed in order;
4. replies are offered without blocking: the outboxes that hold replies (bounded,
   :mod:`.outbox`) are retried each iteration until a deadline, then
   ``core.send_failed`` (closes that duologue only) or, for the broadcast, the
   expired replies are dropped;
5. every 50 ms, duologue client images at their end of stream (a clean close) leave
   the core, which frees their slots at once;
6. ``core.tick`` every 100 ms (it visits only what is due); the blocklist file
   checked for a new version (and re-read when asked: SIGHUP), see
   :mod:`.blocklist_watch`; telemetry (written by its own thread); the client
   losing its driver ends :meth:`EchoServer.run` with
   :class:`DriverLostError`.

Each rule has one home: image admission (:mod:`.image_admission`), message polling
(:mod:`.message_polling`), the duologues' channels, outboxes and port timing
(:mod:`.channels`, :mod:`.creation`), the blocklist (:mod:`.blocklist_watch`,
:mod:`.blocklist_enforcement`), setup and teardown (:mod:`.server_lifecycle`); this
module is the loop and the dispatch of the core's actions.

Ports (lesson from the Java peer): a closed duologue publication keeps its control
socket bound while it lingers, and a closed subscription keeps its socket while an
image drains (~1 s), so reusing such a port in the other role (or a data port at
all) fails with "Address already in use".  The driver gets a short linger and a
100 ms timer; the glue remembers when each released port is bindable again and
opens a duologue whose port is still held a little later, holding its CONNECT
back until the channels exist (bounded by ``create_timeout``, then
``core.create_failed``).  A failed attempt is retried the same way.

No call blocks the loop: a duologue's two channels are asked of the driver with
the asynchronous adds and the answers are polled once per iteration (an
:class:`~.creation.Attempt`).  An attempt whose duologue is closed or given up while the
driver has not answered yet is kept as an orphan: its ports count as held, and
whatever the driver makes for it is closed as soon as it arrives.  At most
``max_creating`` adds are in flight (orphans included), so a flood cannot make the
shared driver fall seconds behind (see :mod:`.creation` for what happens when the
client gives an add up).  Image events of a duologue still being created wait until
it is live (or gone).
"""
from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from ...client import Aeron
from ...driver import MediaDriver
from ...errors import AeronError, aeron_cause
from ...idle import BackoffIdleStrategy
from ...poll_set import PollSet
from ...publication import Publication
from ...subscription import Subscription
from .blocklist_enforcement import BlocklistEnforcement
from .blocklist_watch import BlocklistWatch
from .channels import DuologueChannels, Duologue
from .creation import Attempt, Pending
from .endpoint_guard import EndpointGuard
from .image_admission import ImageAdmission, ImageEvent
from .images import ImageBook
from .message_polling import MessagePolling
from .outbox import Outbox
from ..core.server import (
    Action,
    Broadcast,
    CloseDuologue,
    CreateDuologue,
    DuologueInfo,
    EchoServerCore,
    Event,
    RejectImage,
    SendDuologue,
    ServerConfig,
    ServerStats,
)
from .lifecycle import DriverLostError, ServerLifecycle
from .options import DEFAULT_TERM_LENGTH, ServerOptions
from .telemetry import SNAPSHOT_COUNTERS, ServerTelemetry

__all__ = ["DEFAULT_TERM_LENGTH", "SNAPSHOT_COUNTERS", "DriverLostError", "EchoServer", "ServerOptions",
           "aeron_cause"]

logger = logging.getLogger(__name__)

_TICK_INTERVAL = 0.1
_END_OF_STREAM_INTERVAL = 0.05  # how often cleanly closed client images are looked for


class EchoServer(ImageAdmission, MessagePolling, BlocklistEnforcement, ServerLifecycle, DuologueChannels):
    """An Echo 2.0 server: media driver, Aeron client, channels, and the core.

    >>> with EchoServer(ServerConfig(max_clients=4, clients_base_port=9010)) as server:
    ...     ...  # serving on a background thread

    :meth:`run` serves in the calling thread until :meth:`stop`; :meth:`start`
    runs it on a thread and returns once serving.  :meth:`stop`,
    :meth:`reload_blocklist` and the read-only views are safe from any thread (and
    from signal handlers).
    """

    def __init__(self, config: ServerConfig, options: ServerOptions | None = None) -> None:
        self.options = options if options is not None else ServerOptions()
        self._watch: BlocklistWatch | None = None
        if self.options.blocklist is not None:
            self._watch = BlocklistWatch(self.options.blocklist)  # bad file: fail at once
            config = dataclasses.replace(config, is_blocked=self._is_blocked)
        self.config = config = dataclasses.replace(config, port_busy=self._port_busy)
        self._core = EchoServerCore(config)
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._reload = False
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._stats: ServerStats = self._core.stats
        self._channels = 0
        self.driver_dir: str | None = None
        # loop-thread state
        self._driver: MediaDriver | None = None
        self._aeron: Aeron | None = None
        self._broadcast: Publication | None = None
        self._all_clients: Subscription | None = None
        self._broadcast_out = Outbox(self.options.broadcast_cap)
        self._outbox_drops = 0  # replies dropped from duologue outboxes already gone
        self._guard: EndpointGuard | None = None
        self._client_errors: deque[str] = deque(maxlen=8)
        self._duologues: dict[int, Duologue] = {}
        self._closing: dict[int, Duologue] = {}
        self._dirty: set[int] = set()  # live duologues whose outbox holds replies
        self._pending: dict[int, Pending] = {}
        self._orphans: list[Attempt] = []  # attempts of duologues already gone, still in flight
        self._images = ImageBook()
        self._image_events: deque[ImageEvent] = deque()
        self._released: dict[int, tuple[float, str]] = {}  # port -> (bindable again at, "data"/"control")
        self._telemetry: ServerTelemetry | None = None
        self._hello_set: PollSet[None] | None = None  # the all-clients subscription
        self._poll_set: PollSet[int] | None = None  # every live duologue's subscription, keyed by session
        # quiet mode: the traffic bell's sequence read before this pass, and before the last
        # poll pass that found nothing (None: poll; see _poll_due)
        self._bell_seen: int | None = None
        self._polled_at: int | None = None
        self._eos_walked_at: int | None = None  # ... and before the last settled end-of-stream walk

    # ---- thread-safe views and controls

    @property
    def stats(self) -> ServerStats:
        """The core's resources and counters as of the last loop iteration."""
        return self._stats

    @property
    def duologues(self) -> tuple[DuologueInfo, ...]:
        """Snapshots of the live duologues (pending ones included), computed on each call."""
        return self._core.duologue_infos()

    @property
    def channel_count(self) -> int:
        """Duologues whose Aeron channels are open, pending or still flushing."""
        return self._channels

    @property
    def is_serving(self) -> bool:
        return self._ready.is_set() and not self._stop.is_set()

    def stop(self) -> None:
        """Ask the loop to shut down (closes every duologue first)."""
        self._stop.set()

    def start(self, timeout: float = 10.0) -> "EchoServer":
        """Serve on a background thread; returns once serving (raises what startup raised)."""
        if self._thread is not None:
            raise RuntimeError("EchoServer.start() called twice")
        self._thread = threading.Thread(target=self._run_catching, name="echo-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.05):
            if self._error is not None or not self._thread.is_alive():
                self._thread.join(timeout)
                error, self._error = self._error, None
                raise error or RuntimeError("echo server thread ended during startup")
            if time.monotonic() >= deadline:
                self.stop()
                raise TimeoutError(f"echo server did not start within {timeout} s")
        return self

    def close(self, timeout: float = 15.0) -> None:
        """Stop and wait for the loop thread; re-raise an error that ended it."""
        self.stop()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise TimeoutError(f"echo server did not stop within {timeout} s")
        error, self._error = self._error, None
        if error is not None:
            raise error

    def __enter__(self) -> "EchoServer":
        return self if self._thread is not None else self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _run_catching(self) -> None:
        try:
            self.run()
        except BaseException as exc:  # handed to start()/close()
            self._error = exc

    # ---- the loop

    def run(self, on_ready: Callable[["EchoServer"], Any] | None = None,
            on_stopping: Callable[["EchoServer"], Any] | None = None) -> None:
        """Set up, serve until :meth:`stop`, shut down cleanly (also after an error).

        ``on_stopping`` runs when serving ends, before the teardown (e.g. to arm a
        watchdog that bounds it); it raises :class:`DriverLostError` when the client
        lost its media driver."""
        try:
            self._setup()
            self._ready.set()
            if on_ready is not None:
                on_ready(self)
            idle = BackoffIdleStrategy(max_park_ns=1_000_000)
            assert self._driver is not None
            quiet = self._driver.quiet_idle
            bell = self._driver.traffic if quiet is not None else None
            next_tick = next_eos = time.monotonic()
            while not self._stop.is_set():
                seen = bell.sequence() if bell is not None else 0  # before the polls: no ring is lost
                self._bell_seen = seen if bell is not None else None
                now = time.monotonic()
                work = self._iterate(now)
                if now >= next_eos and self._eos_due():
                    next_eos = now + _END_OF_STREAM_INTERVAL
                    # settled only when the pass before it left nothing unread
                    self._eos_walked_at = self._bell_seen if self._polled_at == self._bell_seen else None
                    work += self._ends_of_stream(now)
                if now >= next_tick:
                    next_tick = now + _TICK_INTERVAL
                    work += self._housekeeping(now)
                if work:
                    self._publish()
                if (bell is not None and quiet is not None and not work and self._settled()
                        and bell.quiet_for() >= quiet.after):
                    # quiet: sleep until traffic rings the driver's bell or the next tick
                    bell.wait(seen, max(0.0, next_tick - time.monotonic()))
                else:
                    idle.idle(work)
        finally:
            self._stop.set()
            if on_stopping is not None:
                on_stopping(self)
            self._teardown()

    def _settled(self) -> bool:
        """Nothing queued or in flight that needs the loop before traffic comes (quiet mode)."""
        return not (self._dirty or self._pending or self._closing or self._orphans or self._broadcast_out)

    def _poll_due(self) -> bool:
        """Whether a poll pass can find anything (quiet mode skips it otherwise).

        The driver's traffic bell rings after it wrote data or end of stream into a log, so
        when its sequence is the one read before the last pass that found nothing, there
        is nothing new to read; an image event forces a pass (a new image may hold data
        that rang before it was announced; a gone one is freed only by a poll)."""
        return self._bell_seen is None or self._bell_seen != self._polled_at

    def _eos_due(self) -> bool:
        """Whether the end-of-stream walk (one C call over every duologue image) can find
        anything: an end of stream rings the bell, so not while its sequence is the one
        read before the last walk that followed a pass which left nothing unread."""
        return self._bell_seen is None or self._bell_seen != self._eos_walked_at

    def filter_counters(self) -> dict[str, int]:
        """Drops by the driver's endpoint filter, per reason (empty when it is off)."""
        return {} if self._guard is None else self._guard.counters()

    def _iterate(self, now: float) -> int:
        assert self._aeron is not None
        try:
            work = self._aeron.do_work()
        except AeronError:
            self._check_driver()
            raise
        events = self._image_events_to_core(now)
        work += events
        if events or self._poll_due():
            polled = self._poll_images(now)
            self._polled_at = None if polled else self._bell_seen  # a busy pass may have left more
            work += polled
        work += self._flush(now)
        for session, pending in list(self._pending.items()):
            if self._pending.get(session) is not pending:
                continue  # gone meanwhile
            if pending.attempt is not None:
                work += self._advance(pending, now)
            elif now >= min(pending.next_attempt, pending.deadline):
                work += self._try_create(pending, now)
        return work + self._reap_orphans(now)

    def _housekeeping(self, now: float) -> int:
        self._check_driver()
        self._execute(self._core.tick(now), now)
        self._check_blocklist(now)
        if self._guard is not None:
            self._guard.refresh()
        self._released = {p: r for p, r in self._released.items() if r[0] > now}
        if self._telemetry is not None:
            self._telemetry.snapshot_if_due(now)
        return 1

    def _publish(self) -> None:
        self._stats = self._core.stats
        self._channels = len(self._duologues) + len(self._closing) + len(self._pending) + len(self._orphans)

    # ---- actions

    def _execute(self, actions: list[Action], now: float) -> None:
        if self._telemetry is not None and actions:
            self._telemetry.record(actions, self._source_port)
        for action in actions:
            if isinstance(action, Broadcast):
                session = action.duologue_session
                pending = self._pending.get(session) if session is not None else None
                if pending is not None:
                    pending.held.append(action.data)
                else:
                    self._push_broadcast(action.data, now)
            elif isinstance(action, CreateDuologue):
                pending = Pending(action, now + self.options.create_timeout)
                self._pending[action.session_id] = pending
                self._try_create(pending, now)
            elif isinstance(action, SendDuologue):
                d = self._duologues.get(action.session_id)
                if d is None:
                    continue
                self._dirty.add(action.session_id)
                if not d.outbox.push(action.data, now + self.options.send_timeout):
                    logger.warning("duologue %d: %d replies waiting; closing it", action.session_id, len(d.outbox))
                    self._execute(self._core.send_failed(action.session_id, now), now)
            elif isinstance(action, CloseDuologue):
                self._close_duologue(action.session_id, now)
            elif isinstance(action, RejectImage):
                self._reject(action)
            elif not isinstance(action, Event):
                raise TypeError(f"unknown core action {action!r}")
