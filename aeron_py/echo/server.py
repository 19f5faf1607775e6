"""Echo 2.0 server glue: moves bytes between Aeron and :class:`~.server_core.EchoServerCore`.

One thread owns everything: the Aeron client runs with the conductor agent invoker,
so image callbacks fire inside :meth:`EchoServer.run`'s own loop, where they only
enqueue.  Each loop iteration:

1. ``aeron.do_work()`` (callbacks enqueue image events);
2. image events go to the core *before* any fragment of that image is read (every
   image in a subscription's list had its callback in the same duty cycle);
3. every subscription is polled (its own poll, fragments routed by session id: see
   :mod:`.images` for why no image handle is ever kept) and the messages go to the
   core; its actions are executed in order;
4. replies are offered without blocking: every outbox (bounded, :mod:`.outbox`) is
   retried each iteration until a deadline, then ``core.send_failed`` (closes that
   duologue only) or, for the broadcast, the expired replies are dropped;
5. ``core.tick`` every 100 ms; the blocklist file checked for a new version (and
   re-read when asked: SIGHUP), see :mod:`.blocklist_watch`; telemetry;
   the client losing its driver ends :meth:`EchoServer.run` with
   :class:`DriverLostError`.

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
from dataclasses import dataclass
from typing import Any

from ..blocklist import Blocklist
from ..channel import ChannelUri
from ..client import Aeron
from ..driver import MediaDriver
from ..errors import AeronError
from ..idle import BackoffIdleStrategy
from ..publication import Publication
from ..subscription import Image, Subscription
from .blocklist_watch import BlocklistChange, BlocklistWatch
from .channels import DuologueChannels, Duologue
from .creation import Attempt, Pending, aeron_cause
from .endpoint_guard import EndpointGuard, FilterLimits
from .images import ImageBook, TrackedImage, reject_image
from .outbox import Outbox
from .protocol import STREAM_ID, split_source_identity
from .server_core import (
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
from .server_options import DEFAULT_TERM_LENGTH, ServerOptions
from .server_telemetry import SNAPSHOT_COUNTERS, ServerTelemetry

__all__ = ["DEFAULT_TERM_LENGTH", "SNAPSHOT_COUNTERS", "DriverLostError", "EchoServer", "ServerOptions",
           "aeron_cause"]

logger = logging.getLogger(__name__)

_TICK_INTERVAL = 0.1
_TIMER_INTERVAL_NS = 100_000_000  # driver timer: how soon lingering resources are freed
_POLL_LIMIT = 10  # fragments per duologue subscription per iteration (fairness)
_POLL_LIMIT_ALL_CLIENTS = 64


# ------------------------------------------------------------------ state


class DriverLostError(RuntimeError):
    """The Aeron client lost its media driver (keepalive timeout, or the client closed)."""


@dataclass(frozen=True)
class _ImageEvent:
    up: bool
    key: int | None
    image_id: int
    session_id: int
    source: str
    term_length: int


# ------------------------------------------------------------------ server


class EchoServer(DuologueChannels):
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
        self.config = config
        self._core = EchoServerCore(config)
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._reload = False
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._stats: ServerStats = self._core.stats
        self._infos: tuple[DuologueInfo, ...] = ()
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
        self._pending: dict[int, Pending] = {}
        self._orphans: list[Attempt] = []  # attempts of duologues already gone, still in flight
        self._images = ImageBook()
        self._image_events: deque[_ImageEvent] = deque()
        self._released: dict[int, tuple[float, str]] = {}  # port -> (bindable again at, "data"/"control")
        self._telemetry: ServerTelemetry | None = None

    # ---- thread-safe views and controls

    @property
    def stats(self) -> ServerStats:
        """The core's resources and counters as of the last loop iteration."""
        return self._stats

    @property
    def duologues(self) -> tuple[DuologueInfo, ...]:
        """Snapshots of the live duologues, refreshed every 100 ms."""
        return self._infos

    @property
    def channel_count(self) -> int:
        """Duologues whose Aeron channels are open, pending or still flushing."""
        return self._channels

    @property
    def blocklist_version(self) -> int:
        """1 for the blocklist read at start, +1 per new version put in force (0: none)."""
        return 0 if self._watch is None else self._watch.version

    @property
    def is_serving(self) -> bool:
        return self._ready.is_set() and not self._stop.is_set()

    def stop(self) -> None:
        """Ask the loop to shut down (closes every duologue first)."""
        self._stop.set()

    def reload_blocklist(self) -> None:
        """Ask the loop to re-read the blocklist file (what SIGHUP does)."""
        self._reload = True

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
            next_tick = time.monotonic()
            while not self._stop.is_set():
                now = time.monotonic()
                work = self._iterate(now)
                if now >= next_tick:
                    next_tick = now + _TICK_INTERVAL
                    work += self._housekeeping(now)
                if work:
                    self._publish()
                idle.idle(work)
        finally:
            self._stop.set()
            if on_stopping is not None:
                on_stopping(self)
            self._teardown()

    def _setup(self) -> None:
        o = self.options
        driver_options: dict[str, Any] = dict(
            publication_reserved_session_id_low=1, publication_reserved_session_id_high=2**31 - 1,
            publication_linger_timeout_ns=int(o.linger * 1e9), timer_interval_ns=_TIMER_INTERVAL_NS)
        if o.image_liveness_timeout is not None:
            driver_options["image_liveness_timeout_ns"] = int(o.image_liveness_timeout * 1e9)
        if o.dir is not None:
            driver_options.update(dir_delete_on_start=True, dir_delete_on_shutdown=True)
        if o.endpoint_filter:
            c = self.config
            driver_options.update(FilterLimits(
                max_term_length=c.max_image_term_length, setup_rate=o.setup_rate, setup_burst=o.setup_burst,
                max_images_per_source=o.max_images_per_source, max_images_total=o.max_images_total,
                ipv6_prefix=c.ipv6_prefix).driver_option())
        else:
            driver_options["endpoint_filter"] = None  # no interceptor at all
        self._driver = MediaDriver(o.dir, threading_mode="SHARED", idle_strategy="backoff", **driver_options)
        self.driver_dir = self._driver.dir
        self._guard = EndpointGuard(self._driver)
        self._guard.set_blocklist(self._blocklist)
        self._aeron = Aeron(driver=self._driver, use_conductor_agent_invoker=True, client_name="echo-server",
                            timeout=o.driver_timeout, error_handler=self._on_client_error)
        try:
            self._broadcast = self._aeron.add_publication(ChannelUri.udp(
                control=(o.address, o.control_port), control_mode="dynamic", reliable=True,
                term_length=o.term_length), STREAM_ID)
        except AeronError as exc:
            raise type(exc)(f"cannot open the all-clients publication (control {o.address}:{o.control_port}): "
                            f"{aeron_cause(exc)}") from exc
        try:
            self._all_clients = self._aeron.add_subscription(
                ChannelUri.udp(endpoint=(o.address, o.port), reliable=True), STREAM_ID,
                on_available_image=self._on_image(None, True), on_unavailable_image=self._on_image(None, False))
        except AeronError as exc:
            raise type(exc)(f"cannot open the all-clients subscription ({o.address}:{o.port}): "
                            f"{aeron_cause(exc)}") from exc
        if o.events is not None:
            server_id = o.server_id or f"{o.address}:{o.port}"
            self._telemetry = ServerTelemetry(
                o.events, server_id, self._driver.dir, o.snapshot_interval, event_rate=o.event_rate,
                max_files=o.events_max_files, max_total_bytes=o.events_max_bytes, extra_counters=self._counters)
        logger.info("echo server on %s port %d control %d, duologue ports [%d, %d), driver %s",
                    o.address, o.port, o.control_port, self.config.clients_base_port,
                    self.config.clients_base_port + 2 * self.config.max_clients, self._driver.dir)

    def _on_client_error(self, errcode: int, message: str) -> None:
        """The client's error handler (runs in the loop thread: agent invoker)."""
        self._client_errors.append(f"({errcode}) {message}")
        self._core.log_summary.log(logging.ERROR, f"client_error:{errcode}", time.monotonic(),
                                   "aeron client error %d: %s", errcode, message)

    def _check_driver(self) -> None:
        """Raise :class:`DriverLostError` once the client has given up on its driver."""
        assert self._aeron is not None
        if self._aeron.is_closed:
            why = self._client_errors[-1] if self._client_errors else "the Aeron client closed"
            raise DriverLostError(f"lost the media driver: {why}")

    def filter_counters(self) -> dict[str, int]:
        """Drops by the driver's endpoint filter, per reason (empty when it is off)."""
        return {} if self._guard is None else self._guard.counters()

    def _counters(self) -> dict[str, int]:
        """The glue's cumulative drop counters (telemetry ``driver_snapshot``)."""
        stats = self._core.stats
        counters = {
            "outbox drops": self._broadcast_out.dropped + self._outbox_drops
            + sum(d.outbox.dropped for d in (*self._duologues.values(), *self._closing.values())),
            "refusals coalesced": stats.refusals_coalesced,
            "log lines folded": sum(self._core.log_summary.suppressed.values()),
            "ports retired": stats.ports_retired,
        }
        if self._guard is not None:
            counters.update(self._guard.counters())
        return counters

    def _on_image(self, key: int | None, up: bool) -> Callable[[Image], None]:
        events = self._image_events

        def callback(image: Image) -> None:  # conductor callback: enqueue only
            events.append(_ImageEvent(up, key, image.correlation_id, image.session_id,
                                      image.source_identity, image.term_buffer_length))
        return callback

    def _iterate(self, now: float) -> int:
        assert self._aeron is not None
        try:
            work = self._aeron.do_work()
        except AeronError:
            self._check_driver()
            raise
        work += self._image_events_to_core(now)
        work += self._poll_images(now)
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
        self._acknowledge_image_lists()
        self._execute(self._core.tick(now), now)
        self._check_blocklist(now)
        if self._guard is not None:
            self._guard.refresh()
        self._released = {p: r for p, r in self._released.items() if r[0] > now}
        if self._telemetry is not None:
            self._telemetry.snapshot_if_due(now)
        infos = (self._core.duologue_info(session) for session in (*self._duologues, *self._pending))
        self._infos = tuple(info for info in infos if info is not None)
        return 1

    def _acknowledge_image_lists(self) -> None:
        """Let the C client free the logs of images that went away.

        The client unmaps a removed image only once the application has read its
        subscription's image list again (``aeron_subscription_image_count``, ``poll``
        ... record the list's change number; ``aeron_client_conductor.c``,
        check_lingering_resources).  The glue polls images one by one and never polls
        a subscription, so without this every departed image stayed mapped (issue 7,
        item 3)."""
        if self._all_clients is not None:
            self._all_clients.image_count
        for d in self._duologues.values():
            d.sub.image_count

    def _publish(self) -> None:
        self._stats = self._core.stats
        self._channels = len(self._duologues) + len(self._closing) + len(self._pending) + len(self._orphans)

    # ---- images

    def _subscription(self, key: int | None) -> Subscription | None:
        if key is None:
            return self._all_clients
        d = self._duologues.get(key)
        return None if d is None else d.sub

    def _image_events_to_core(self, now: float) -> int:
        if not self._image_events:
            return 0
        events = list(self._image_events)
        self._image_events.clear()
        done = 0
        for ev in events:
            if ev.key in self._pending:  # its duologue is still being created: keep for later
                self._image_events.append(ev)
                continue
            done += 1
            if ev.up:
                self._image_up(ev, now)
            else:
                self._image_down(ev, now)
        return done

    def _image_up(self, ev: _ImageEvent, now: float) -> None:
        if ev.key is not None and ev.key not in self._duologues:
            return  # the duologue is already closed (its subscription with it)
        if ev.image_id in self._images:
            return
        try:
            split_source_identity(ev.source)
        except ValueError as exc:
            logger.error("image %d has an unusable source: %s; rejecting it", ev.image_id, exc)
            reject_image(self._subscription(ev.key), ev.session_id, "bad source identity")
            return
        self._images.add(TrackedImage(ev.image_id, ev.key, ev.session_id, ev.source))
        if ev.key is None:
            actions = self._core.initial_image_available(ev.image_id, ev.session_id, ev.source, ev.term_length, now)
        else:
            actions = self._core.duologue_image_available(
                ev.key, ev.image_id, ev.source, ev.term_length, now)
        self._execute(actions, now)

    def _image_down(self, ev: _ImageEvent, now: float) -> None:
        if self._images.remove(ev.image_id) is None:
            return  # never announced (its duologue was already gone)
        if ev.key is None:
            actions = self._core.initial_image_unavailable(ev.image_id, now)
        else:
            actions = self._core.duologue_image_unavailable(ev.key, ev.image_id, now)
        self._execute(actions, now)

    def _poll_images(self, now: float) -> int:
        """Read every subscription (its own poll: see :mod:`.images`) and feed the core."""
        work = 0
        if self._all_clients is not None:
            work += self._poll_subscription(None, self._all_clients, _POLL_LIMIT_ALL_CLIENTS, now)
        for session, d in list(self._duologues.items()):
            if self._duologues.get(session) is d:
                work += self._poll_subscription(session, d.sub, _POLL_LIMIT, now)
        return work

    def _poll_subscription(self, key: int | None, sub: Subscription, limit: int, now: float) -> int:
        received: list[tuple[bytes, int]] = []
        sub.poll(lambda data, header: received.append((data, header.session_id)), limit)
        for data, session_id in received:
            image_id = self._images.image_for(key, session_id)
            if image_id is None:  # cannot happen: image events are handled before polling
                self._core.log_summary.log(logging.WARNING, "message:unknown_image", now,
                                           "message from unannounced session %d dropped", session_id)
                continue
            if key is None:
                actions = self._core.hello_received(image_id, data, now)
            elif key in self._duologues:
                actions = self._core.duologue_message(key, image_id, data, now)
            else:
                continue  # closed by an earlier message of this batch
            self._execute(actions, now)
        return len(received)

    def _source_port(self, image_id: int | None) -> int:
        tracked = self._images.get(image_id)
        return split_source_identity(tracked.source)[1] if tracked is not None else 0

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
                if d is not None and not d.outbox.push(action.data, now + self.options.send_timeout):
                    logger.warning("duologue %d: %d replies waiting; closing it", action.session_id, len(d.outbox))
                    self._execute(self._core.send_failed(action.session_id, now), now)
            elif isinstance(action, CloseDuologue):
                self._close_duologue(action.session_id, now)
            elif isinstance(action, RejectImage):
                self._reject(action)
            elif not isinstance(action, Event):
                raise TypeError(f"unknown core action {action!r}")

    # ---- blocklist

    @property
    def _blocklist(self) -> Blocklist | None:
        return None if self._watch is None else self._watch.blocklist

    def _is_blocked(self, ip: str) -> str | None:
        blocklist = self._blocklist
        entry = blocklist.match(ip, time.time()) if blocklist is not None else None
        return None if entry is None else entry.target

    def _check_blocklist(self, now: float) -> None:
        """Each tick: a new version of the file (one ``stat``), or the re-read asked for."""
        requested, self._reload = self._reload, False
        if self._watch is None:
            if requested:
                logger.info("blocklist reload requested but no blocklist file is configured")
            return
        change = self._watch.reload() if requested else self._watch.poll()
        if change is not None:
            self._apply_blocklist(change, now)

    def _apply_blocklist(self, change: BlocklistChange, now: float) -> None:
        """Put a new blocklist in force: the driver's filter, then (``close_blocked``) the
        duologues of owners it now blocks; new HELLOs see it through ``_is_blocked``."""
        if self._guard is not None:
            self._guard.set_blocklist(change.blocklist)
        closed = 0
        if self.options.close_blocked:
            actions = self._core.close_blocked(now)
            closed = sum(1 for a in actions if isinstance(a, CloseDuologue))
            self._execute(actions, now)
        if closed:
            logger.warning("blocklist version %d: closed %d duologue(s) of newly blocked owners",
                           change.version, closed)
        if self._telemetry is not None:
            wall = time.time()
            self._telemetry.blocklist_reload(change, active=sum(1 for e in change.blocklist if e.active(wall)),
                                             duologues_closed=closed)

    # ---- shutdown

    def _teardown(self) -> None:
        """Close every duologue (flushing briefly), then channels, client, driver and dir."""
        try:
            if self._aeron is not None and not self._aeron.is_closed:
                now = time.monotonic()
                self._execute(self._core.shutdown(now), now)
                for session in list(self._pending):
                    self._drop_pending(session, now)
                self._drain(now + min(self.options.send_timeout, 1.0))
                if self._orphans:
                    logger.warning("%d duologue channel adds still unanswered at shutdown; the client's "
                                   "close frees them", len(self._orphans))
                    self._orphans.clear()
                for d in self._closing.values():
                    d.pub.close()
                self._closing.clear()
                self._images.clear()
                self._infos = ()
                self._publish()
        finally:
            self._core.log_summary.flush(time.monotonic(), force=True)
            try:
                if self._telemetry is not None:
                    self._telemetry.close()
            finally:
                if self._aeron is not None:
                    self._aeron.close()
                if self._driver is not None:
                    self._driver.close()
                logger.info("echo server stopped; driver directory %s removed", self.driver_dir)

    def _drain(self, deadline: float) -> None:
        """Give queued replies and broadcasts a bounded chance to leave, and orphaned
        attempts to be answered (the client's close frees what is left)."""
        assert self._aeron is not None
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)
        while (self._closing or self._broadcast_out or self._orphans) and time.monotonic() < deadline:
            now = time.monotonic()
            idle.idle(self._aeron.do_work() + self._flush(now) + self._reap_orphans(now))
