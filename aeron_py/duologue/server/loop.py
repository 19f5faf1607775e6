"""Echo 2.0 server glue: moves bytes between Aeron and :class:`~aeron_py.duologue.core.server.DuologueServerCore`.

One thread owns everything: the Aeron client runs with the conductor agent invoker,
so image callbacks fire inside :meth:`DuologueServer.run`'s own loop, where they only
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
   losing its driver ends :meth:`DuologueServer.run` with
   :class:`DriverLostError`.

Each rule has one home, an object that owns its state: image admission
(:class:`~.image_admission.ImageAdmission`: the image events and the announced
images), message polling (:class:`~.message_polling.MessagePolling`), the duologues'
channels, outboxes and port timing (:class:`~.channels.DuologueChannels`,
:mod:`.creation`), the blocklist (:mod:`.blocklist_watch`,
:class:`~.blocklist_enforcement.BlocklistEnforcement`), the driver, client and
all-clients channels (:class:`~.lifecycle.ServerLifecycle`).  They never call back
up: a pass that feeds the core yields the core's actions (:mod:`.steps`) and the one
:class:`~.dispatch.Dispatcher` executes them, in order, handing each to its owner.
A HELLO goes one way: ``PollSet.poll`` (:mod:`.message_polling`) -> the core ->
:mod:`.dispatch` -> :mod:`.channels` (``async_add_*``).  This module is the public
:class:`DuologueServer`, the loop, and the composition of those objects.

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

import functools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...client import Aeron
from ...driver import MediaDriver
from ...errors import AeronError, aeron_cause
from ...idle import BackoffIdleStrategy
from ...secure import SecureTransport
from .blocklist_enforcement import BlocklistEnforcement
from .application import Application, ApplicationGlue
from .blocklist_watch import BlocklistWatch
from .broadcasts import Broadcasts
from .channels import DuologueChannels
from .dispatch import Dispatcher
from .endpoint_guard import EndpointGuard
from .image_admission import ImageAdmission, ImageEvents
from .message_polling import MessagePolling
from ..core.contract import DuologueInfo, ServerConfig, ServerStats
from ..core.server import DuologueServerCore
from .lifecycle import DriverLostError, ServerLifecycle, glue_counters
from .options import DEFAULT_TERM_LENGTH, ServerOptions
from .telemetry import SNAPSHOT_COUNTERS, ServerTelemetry

__all__ = ["DEFAULT_TERM_LENGTH", "SNAPSHOT_COUNTERS", "DriverLostError", "DuologueServer", "ServerOptions",
           "aeron_cause"]

logger = logging.getLogger("aeron_py.duologue.server")

_TICK_INTERVAL = 0.1
_END_OF_STREAM_INTERVAL = 0.05  # how often cleanly closed client images are looked for
_END_OF_STREAM_LINGER = 0.15  # s the driver stays up at shutdown for the duologues' end of stream


@dataclass(frozen=True)
class _Serving:
    """The collaborators of one run, made once the driver, client and all-clients channels exist."""

    aeron: Aeron
    guard: EndpointGuard
    channels: DuologueChannels
    admission: ImageAdmission
    polling: MessagePolling
    dispatch: Dispatcher
    enforcement: BlocklistEnforcement
    telemetry: ServerTelemetry | None
    application: ApplicationGlue


class DuologueServer:
    """A duologue server: media driver, Aeron client, channels, the core, and the
    ``application`` that answers each duologue's messages (:mod:`.application`).

    >>> with DuologueServer(MyApplication(), ServerConfig(max_clients=4, clients_base_port=9010)) as server:
    ...     ...  # serving on a background thread

    :meth:`run` serves in the calling thread until :meth:`stop`; :meth:`start`
    runs it on a thread and returns once serving.  :meth:`stop`,
    :meth:`reload_blocklist` and the read-only views are safe from any thread (and
    from signal handlers).
    """

    def __init__(self, application: Application, config: ServerConfig, options: ServerOptions | None = None) -> None:
        self.options = options if options is not None else ServerOptions()
        #: Each duologue's messages go to it, on the server's thread.
        self.application = application
        self._watch: BlocklistWatch | None = None
        if self.options.blocklist is not None:
            self._watch = BlocklistWatch(self.options.blocklist)  # bad file: fail at once
        self.config = config
        self._core = DuologueServerCore(config)
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._reload = False
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._stats: ServerStats = self._core.stats
        self._channel_count = 0
        # loop-thread state
        self._lifecycle = ServerLifecycle(self.options, config, self._core.log_summary)
        self._image_events = ImageEvents()
        self._posted: deque[Callable[[], object]] = deque()  # call_soon_threadsafe's, run by the loop
        self._serving: _Serving | None = None
        # quiet mode: the traffic bell's sequence read before this pass, and before the last
        # poll pass that found nothing (None: poll; see _poll_due)
        self._bell_seen: int | None = None
        self._polled_at: int | None = None
        self._empty_pass_at: int | None = None  # the sequence read before the last empty pass
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
        return self._channel_count

    @property
    def is_serving(self) -> bool:
        return self._ready.is_set() and not self._stop.is_set()

    @property
    def driver_dir(self) -> str | None:
        """The media driver's directory (None until it started)."""
        return self._lifecycle.driver_dir

    @property
    def _driver(self) -> MediaDriver | None:
        return self._lifecycle.driver

    def filter_counters(self) -> dict[str, int]:
        """Drops by the driver's endpoint filter, per reason (empty when it is off)."""
        guard = self._lifecycle.guard
        return {} if guard is None else guard.counters()

    @property
    def secure_transport(self) -> SecureTransport | None:
        """Secure mode: the driver's secure transport (keys installed, counters); else None."""
        return self._lifecycle.secure_transport

    @property
    def blocklist_version(self) -> int:
        """1 for the blocklist read at start, +1 per new version put in force (0: none)."""
        return 0 if self._watch is None else self._watch.version

    def call_soon_threadsafe(self, call: Callable[[], object]) -> None:
        """Run ``call()`` on the server's thread at its next loop iteration, where the
        application's :class:`~.application.Duologue` handles may be used as inside its
        ``received`` (what an asyncio application does: :mod:`.async_application`). Safe
        from any thread; calls run in order; one that raises is logged. With the quiet idle
        on, a sleeping loop runs it at its next tick (at most 0.1 s later)."""
        self._posted.append(call)

    def reload_blocklist(self) -> None:
        """Ask the loop to re-read the blocklist file now (what SIGHUP does)."""
        self._reload = True

    def stop(self) -> None:
        """Ask the loop to shut down (closes every duologue first)."""
        self._stop.set()

    def start(self, timeout: float = 10.0) -> "DuologueServer":
        """Serve on a background thread; returns once serving (raises what startup raised)."""
        if self._thread is not None:
            raise RuntimeError(f"{type(self).__name__}.start() called twice")
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

    def __enter__(self) -> "DuologueServer":
        return self if self._thread is not None else self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _run_catching(self) -> None:
        try:
            self.run()
        except BaseException as exc:  # handed to start()/close()
            self._error = exc

    # ---- the loop

    def run(self, on_ready: Callable[["DuologueServer"], Any] | None = None,
            on_stopping: Callable[["DuologueServer"], Any] | None = None) -> None:
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
            assert self._driver is not None and self._serving is not None
            channels = self._serving.channels
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
                if (bell is not None and quiet is not None and not work and channels.settled()
                        and not self._posted and bell.quiet_for() >= quiet.after):
                    # quiet: sleep until traffic rings the driver's bell or the next tick
                    bell.wait(seen, max(0.0, next_tick - time.monotonic()))
                else:
                    idle.idle(work)
        finally:
            self._stop.set()
            if on_stopping is not None:
                on_stopping(self)
            self._teardown()

    def _settle_poll(self, polled: int) -> None:
        """Record a poll pass: settled (no pass until the bell rings) after two empty passes
        in a row at the same bell sequence.

        One empty pass is not enough: a poll stops at the end of a term, so a pass that
        consumed only the padding closing a term found no message while the next term may
        already hold one (its datagram rang before this pass); the next pass reads it.  A
        pass consumes at most one term's padding per image, so a second empty pass at the
        same sequence leaves nothing unread.  A busy pass may have left more."""
        if polled:
            self._polled_at = self._empty_pass_at = None
        elif self._empty_pass_at is not None and self._empty_pass_at == self._bell_seen:
            self._polled_at = self._bell_seen
        else:
            self._empty_pass_at, self._polled_at = self._bell_seen, None

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

    def _iterate(self, now: float) -> int:
        s = self._serving
        assert s is not None
        try:
            work = s.aeron.do_work()
        except AeronError:
            self._lifecycle.check_driver()
            raise
        # a pass is a generator (steps.py): made only when it has something to do, since
        # this runs thousands of times a second while clients echo
        events = s.dispatch.drain(s.admission.to_core(now), now) if s.admission.has_events() else 0
        work += events  # the image events go before any message of their images
        if events or self._poll_due():
            polled = self._poll_images(now)
            self._settle_poll(polled)
            work += polled
        if s.channels.has_flush_work():
            work += s.dispatch.drain(s.channels.flush(now), now)
        if s.channels.has_pending():
            work += s.dispatch.drain(s.channels.advance(now), now)
        if s.channels.has_orphans():
            work += s.dispatch.drain(s.channels.reap_orphans(now), now)
        if self._posted:
            for _ in range(len(self._posted)):  # what was posted before this pass; later ones wait a pass
                work += s.dispatch.drain(s.application.posted(self._posted.popleft(), now), now)
        return work

    def _poll_images(self, now: float) -> int:
        """One poll pass over every subscription; the number of messages."""
        assert self._serving is not None
        return self._serving.dispatch.drain(self._serving.polling.poll(now), now)

    def _ends_of_stream(self, now: float) -> int:
        """Duologue images at their end of stream leave the core; the number found."""
        assert self._serving is not None
        return self._serving.dispatch.drain(self._serving.admission.ends_of_stream(now), now)

    def _housekeeping(self, now: float) -> int:
        s = self._serving
        assert s is not None
        self._lifecycle.check_driver()
        s.dispatch.execute(self._core.tick(now), now)
        requested, self._reload = self._reload, False
        s.dispatch.drain(s.enforcement.check(now, requested), now)
        s.guard.refresh()
        s.guard.report_term_drops(now)
        s.channels.forget_released(now)
        if s.telemetry is not None:
            s.telemetry.snapshot_if_due(now)
        return 1

    def _publish(self) -> None:
        self._stats = self._core.stats
        if self._serving is not None:
            self._channel_count = self._serving.channels.count()

    # ---- setup and teardown

    def _setup(self) -> None:
        """The driver, client and all-clients channels, then the collaborators that use them."""
        life = self._lifecycle
        life.setup(None if self._watch is None else self._watch.blocklist, self._image_events.callback)
        assert life.aeron is not None and life.guard is not None and life.broadcast is not None
        assert life.all_clients is not None and life.hello_set is not None and life.poll_set is not None
        broadcasts = Broadcasts(life.broadcast, self.options.broadcast_cap, life.ipc_broadcast)
        channels = DuologueChannels(self.options, self._core.log_summary, life.aeron, life.guard, life.poll_set,
                                    broadcasts, self._image_events.callback, life.keyring())
        admission = ImageAdmission(self._core, self._image_events, life.all_clients, life.poll_set, channels,
                                   life.ipc_all_clients)
        polling = MessagePolling(self._core, admission, channels, life.hello_set, life.poll_set, self._watch)
        telemetry = life.open_telemetry(functools.partial(glue_counters, self._core, channels, life.guard, life.secure_transport))
        glue = ApplicationGlue(self._core, self.application)
        dispatch = Dispatcher(self._core, channels, admission, life.guard, telemetry, glue)
        self._serving = _Serving(
            life.aeron, life.guard, channels, admission, polling, dispatch,
            BlocklistEnforcement(self._watch, self.options, self._core, life.guard, telemetry), telemetry, glue)

    def _teardown(self) -> None:
        """Close every duologue (flushing briefly), then channels, client, driver and dir."""
        s = self._serving
        try:
            if s is not None and not s.aeron.is_closed:
                now = time.monotonic()
                s.guard.disown_all()  # first: then freeing each duologue's ports costs no table publication
                s.dispatch.execute(self._core.shutdown(now), now)
                s.dispatch.drain(s.channels.drop_all_pending(now), now)
                closed = time.monotonic()
                self._drain(s, closed + min(self.options.send_timeout, 1.0))
                s.channels.abandon()
                if self._core.stats.closes.get("shutdown"):
                    self._linger(s, _END_OF_STREAM_LINGER)
                s.admission.clear()
                self._publish()
                logger.info("shutdown: duologues closed in %.1f s, then drained and released in %.1f s",
                            closed - now, time.monotonic() - closed)
        finally:
            self._core.log_summary.flush(time.monotonic(), force=True)
            self._lifecycle.close()

    @staticmethod
    def _linger(s: _Serving, seconds: float) -> None:
        """Keep the driver up ``seconds`` (running the client's duty cycle) so the closed
        duologue publications send their end of stream: clients then see the close at once
        instead of after their image liveness timeout."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            s.aeron.do_work()
            time.sleep(min(0.005, left))

    @staticmethod
    def _drain(s: _Serving, deadline: float) -> None:
        """Give queued replies and broadcasts a bounded chance to leave, and orphaned
        attempts to be answered (the client's close frees what is left)."""
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)
        while s.channels.draining() and time.monotonic() < deadline:
            now = time.monotonic()
            idle.idle(s.aeron.do_work() + s.dispatch.drain(s.channels.flush(now), now) + s.dispatch.drain(s.channels.reap_orphans(now), now))
