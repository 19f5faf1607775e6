"""The server's life: media driver, client and all-clients channels up; everything down.

:meth:`ServerLifecycle._setup` starts the embedded driver (SHARED threading, the
endpoint filter unless turned off, a short publication linger and a 100 ms timer so
released ports come back quickly, session ids ``[1, 2**31-1]`` reserved for the
duologues), the Aeron client with the conductor agent invoker (image callbacks run
on the loop thread), the all-clients publication and subscription, and telemetry.
:meth:`ServerLifecycle._teardown` closes every duologue (flushing briefly), then the
channels, client, driver and its directory, and never leaves one of them open when a
step fails.  :meth:`ServerLifecycle._check_driver` turns a client that gave up on its
driver into :class:`DriverLostError`.
"""
from __future__ import annotations

import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from ...channel import ChannelUri
from ...client import Aeron
from ...driver import MediaDriver
from ...errors import AeronError, aeron_cause
from ...idle import BackoffIdleStrategy
from ...traffic import QuietIdle
from ...poll_set import PollSet
from ..core.capacity import counters_buffer_length
from .endpoint_guard import EndpointGuard, FilterLimits
from .file_limit import ensure_file_limit
from ..core.protocol import STREAM_ID
from .telemetry import ServerTelemetry

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..blocklist import Blocklist
    from ...publication import Publication
    from ...subscription import Image, Subscription
    from .channels import Duologue
    from .creation import Attempt, Pending
    from .images import ImageBook
    from .outbox import Outbox
    from ..core.server import Action, EchoServerCore, ServerConfig
    from .options import ServerOptions

__all__ = ["DriverLostError", "ServerLifecycle"]

logger = logging.getLogger("aeron_py.echo.server")

_TIMER_INTERVAL_NS = 100_000_000  # driver timer: how soon lingering resources are freed


class DriverLostError(RuntimeError):
    """The Aeron client lost its media driver (keepalive timeout, or the client closed)."""


class ServerLifecycle:
    """Setup and teardown half of the server (a mixin: the state lives on the server)."""

    options: ServerOptions
    config: ServerConfig
    driver_dir: str | None
    _core: EchoServerCore
    _driver: MediaDriver | None
    _aeron: Aeron | None
    _broadcast: Publication | None
    _broadcast_out: Outbox
    _outbox_drops: int
    _all_clients: Subscription | None
    _guard: EndpointGuard | None
    _client_errors: deque[str]
    _duologues: dict[int, Duologue]
    _closing: dict[int, Duologue]
    _pending: dict[int, Pending]
    _orphans: list[Attempt]
    _images: ImageBook
    _telemetry: ServerTelemetry | None
    _hello_set: PollSet[None] | None
    _poll_set: PollSet[int] | None

    if TYPE_CHECKING:
        @property
        def _blocklist(self) -> Blocklist | None: ...

        def _execute(self, actions: list[Action], now: float) -> None: ...
        def _on_image(self, key: int | None, up: bool) -> Callable[[Image], None]: ...
        def _drop_pending(self, session: int, now: float) -> bool: ...
        def _flush(self, now: float) -> int: ...
        def _reap_orphans(self, now: float) -> int: ...
        def _publish(self) -> None: ...

    def _setup(self) -> None:
        o = self.options
        driver_options: dict[str, Any] = dict(
            publication_reserved_session_id_low=1, publication_reserved_session_id_high=2**31 - 1,
            publication_linger_timeout_ns=int(o.linger * 1e9), timer_interval_ns=_TIMER_INTERVAL_NS,
            term_buffer_sparse_file=o.sparse_logs,
            counters_buffer_length=counters_buffer_length(self.config.max_clients))
        ensure_file_limit(2 * self.config.max_clients + 64)
        if o.image_liveness_timeout is not None:
            driver_options["image_liveness_timeout_ns"] = int(o.image_liveness_timeout * 1e9)
        if o.dir is not None:
            driver_options.update(dir_delete_on_start=True, dir_delete_on_shutdown=True)
        if o.endpoint_filter:
            c = self.config
            driver_options.update(FilterLimits(
                max_term_length=c.max_image_term_length, setup_rate=o.setup_rate, setup_burst=o.setup_burst,
                max_images_per_source=o.max_images_per_source,
                max_images_total=o.max_images_total or 2 * c.max_clients + 64,
                ipv6_prefix=c.ipv6_prefix).driver_option())
        else:
            driver_options["endpoint_filter"] = None  # no interceptor at all
        if o.keepalive_interval is not None:
            driver_options["keepalive_interval_ns"] = round(o.keepalive_interval * 1e9)
            # duologue channels only: the broadcast gains late joiners (clients sharing one
            # driver reuse its endpoint) that need a heartbeat to ask for SETUP
            c = self.config
            driver_options["keepalive_ports"] = (c.clients_base_port, c.clients_base_port + 2 * c.max_clients - 1)
        quiet = None
        if o.quiet_after is not None and o.endpoint_filter:
            deep_after = None if o.deep_quiet_after is None else o.quiet_after + o.deep_quiet_after
            quiet = QuietIdle(o.quiet_after, o.quiet_period, deep_after, o.deep_quiet_period)
        self._driver = MediaDriver(o.dir, threading_mode="SHARED", idle_strategy="backoff", quiet_idle=quiet,
                                   **driver_options)
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
        self._hello_set, self._poll_set = PollSet(), PollSet()
        self._hello_set.add(self._all_clients, None)
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
                self._publish()
        finally:
            self._core.log_summary.flush(time.monotonic(), force=True)
            try:
                if self._telemetry is not None:
                    self._telemetry.close()
            finally:
                for poll_set in (self._hello_set, self._poll_set):
                    if poll_set is not None:
                        poll_set.clear()  # drops its references to the subscriptions
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
