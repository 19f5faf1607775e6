"""The server's life: media driver, client and all-clients channels up; all of them down.

:meth:`ServerLifecycle.setup` starts the embedded driver (SHARED threading, the
endpoint filter unless turned off, a short publication linger and a 100 ms timer so
released ports come back quickly, session ids ``[1, 2**31-1]`` reserved for the
duologues), the Aeron client with the conductor agent invoker (image callbacks run
on the loop thread), the all-clients publication and subscription and the two poll
sets; :meth:`ServerLifecycle.open_telemetry` then the telemetry.  It holds what it
made (None until made).  :meth:`ServerLifecycle.close` closes telemetry, client,
driver and its directory, and never leaves one of them open when a step fails (the
duologues are closed before, by the loop).  :meth:`ServerLifecycle.check_driver`
turns a client that gave up on its driver into :class:`DriverLostError`.
"""
from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...channel import ChannelUri
from ...client import Aeron
from ...driver import MediaDriver
from ...errors import AeronError, aeron_cause
from ...traffic import QuietIdle
from ...poll_set import PollSet
from ..core.capacity import counters_buffer_length
from .channels import DuologueChannels
from .creation import OnImage
from .duologue_keys import DuologueKeyring
from .endpoint_guard import EndpointGuard, FilterLimits
from .ephemeral_ports import warn_if_ephemeral
from .file_limit import ensure_file_limit
from ..core.protocol import IPC_BROADCAST_STREAM, IPC_HELLO_STREAM, STREAM_ID
from .images import IPC_HELLOS
from .telemetry import ServerTelemetry
from .telemetry_recording import TelemetryRecording

if TYPE_CHECKING:
    from ..blocklist import Blocklist
    from ...publication import Publication
    from ...secure import SecureTransport
    from ...subscription import Subscription
    from ..core.log_summary import LogSummary
    from ..core.contract import ServerConfig
    from ..core.server import DuologueServerCore
    from .options import ServerOptions

__all__ = ["DriverLostError", "ServerLifecycle", "glue_counters"]

logger = logging.getLogger("aeron_py.duologue.server")

_TIMER_INTERVAL_NS = 100_000_000  # driver timer: how soon lingering resources are freed
_KEYS_RELEASE_EXTRA = 2.0  # s after a closed duologue's linger until its keys go (image drain: ~1.3 s)


class DriverLostError(RuntimeError):
    """The Aeron client lost its media driver (keepalive timeout, or the client closed)."""


class ServerLifecycle:
    """Makes, holds and closes the driver, the client, the all-clients channels and telemetry."""

    def __init__(self, options: ServerOptions, config: ServerConfig, log_summary: LogSummary) -> None:
        self._options = options
        self._config = config
        self._log_summary = log_summary
        self._client_errors: deque[str] = deque(maxlen=8)
        self.driver: MediaDriver | None = None
        self.driver_dir: str | None = None
        self.aeron: Aeron | None = None
        self.guard: EndpointGuard | None = None
        self.broadcast: Publication | None = None
        self.all_clients: Subscription | None = None
        self.ipc_broadcast: Publication | None = None  # max_ipc_clients: the IPC all-clients channels
        self.ipc_all_clients: Subscription | None = None
        self.hello_set: PollSet[int | None] | None = None  # the all-clients subscriptions (IPC: key IPC_HELLOS)
        self.poll_set: PollSet[int] | None = None  # every live duologue's subscription, keyed by session
        self.telemetry: ServerTelemetry | None = None
        self.recording: TelemetryRecording | None = None  # --record

    def setup(self, blocklist: Blocklist | None, on_image: OnImage) -> None:
        """Driver, endpoint guard (with ``blocklist``), client, all-clients channels, poll sets."""
        o = self._options
        driver_options = self._driver_options()
        self.driver = MediaDriver(o.dir, threading_mode="SHARED", idle_strategy="backoff",
                                  quiet_idle=self._quiet_idle(), secure_transport=self._config.secure is not None,
                                  **driver_options)
        self.driver_dir = self.driver.dir
        self.guard = EndpointGuard(self.driver, self._config)
        self.guard.set_blocklist(blocklist)
        self.aeron = Aeron(driver=self.driver, use_conductor_agent_invoker=True, client_name="echo-server",
                           timeout=o.driver_timeout, error_handler=self._on_client_error)
        try:
            self.broadcast = self.aeron.add_publication(ChannelUri.udp(
                control=(o.address, o.control_port), control_mode="dynamic", reliable=True,
                term_length=o.term_length), STREAM_ID)
        except AeronError as exc:
            raise type(exc)(f"cannot open the all-clients publication (control {o.address}:{o.control_port}): "
                            f"{aeron_cause(exc)}") from exc
        try:
            self.all_clients = self.aeron.add_subscription(
                ChannelUri.udp(endpoint=(o.address, o.port), reliable=True), STREAM_ID,
                on_available_image=on_image(None, True), on_unavailable_image=on_image(None, False))
        except AeronError as exc:
            raise type(exc)(f"cannot open the all-clients subscription ({o.address}:{o.port}): "
                            f"{aeron_cause(exc)}") from exc
        self.hello_set, self.poll_set = PollSet(), PollSet()
        self.hello_set.add(self.all_clients, None)
        if self._config.max_ipc_clients:
            self._setup_ipc(on_image)

    def _setup_ipc(self, on_image: OnImage) -> None:
        """The IPC all-clients channels: same-host clients' HELLOs in, the replies out."""
        assert self.aeron is not None and self.hello_set is not None
        self.ipc_broadcast = self.aeron.add_publication(
            ChannelUri.ipc(term_length=self._options.term_length), IPC_BROADCAST_STREAM)
        self.ipc_all_clients = self.aeron.add_subscription(
            ChannelUri.ipc(), IPC_HELLO_STREAM, on_available_image=on_image(IPC_HELLOS, True),
            on_unavailable_image=on_image(IPC_HELLOS, False))
        self.hello_set.add(self.ipc_all_clients, IPC_HELLOS)

    def keyring(self) -> DuologueKeyring | None:
        """Secure mode: the keyring of the duologues' keys in this driver (None: plain mode)."""
        if self._config.secure is None:
            return None
        assert self.secure_transport is not None
        # a closed duologue's channels are gone after its last replies (send_timeout), the
        # publication's linger and the driver's release of both (see channels.py)
        hold = self._options.send_timeout + self._options.linger + _KEYS_RELEASE_EXTRA
        return DuologueKeyring(self.secure_transport, hold)

    @property
    def secure_transport(self) -> SecureTransport | None:
        """The driver's secure transport in secure mode, else None."""
        return self.driver.secure_transport if self.driver is not None and self._config.secure is not None else None

    def _driver_options(self) -> dict[str, Any]:
        o, c = self._options, self._config
        driver_options: dict[str, Any] = dict(
            publication_reserved_session_id_low=1, publication_reserved_session_id_high=2**31 - 1,
            publication_linger_timeout_ns=int(o.linger * 1e9), timer_interval_ns=_TIMER_INTERVAL_NS,
            term_buffer_sparse_file=o.sparse_logs,
            counters_buffer_length=counters_buffer_length(c.max_clients))
        ensure_file_limit(2 * c.max_clients + 64)
        warn_if_ephemeral(c.clients_base_port, 2 * c.max_clients)
        if o.image_liveness_timeout is not None:
            driver_options["image_liveness_timeout_ns"] = int(o.image_liveness_timeout * 1e9)
        if o.dir is not None:
            driver_options.update(dir_delete_on_start=True, dir_delete_on_shutdown=True)
        if o.endpoint_filter:
            large_total, large_per_ip = c.large_term_limits()
            driver_options.update(FilterLimits(
                max_term_length=c.max_image_term_length, large_term_length=c.large_term_length,
                max_large_images=large_total, max_large_images_per_source=large_per_ip,
                setup_rate=o.setup_rate, setup_burst=o.setup_burst,
                max_images_per_source=o.max_images_per_source,
                max_images_total=o.max_images_total or 2 * c.max_clients + 64,
                ipv6_prefix=c.ipv6_prefix).driver_option())
        else:
            driver_options["endpoint_filter"] = None  # no interceptor at all
        if o.keepalive_interval is not None:
            driver_options["keepalive_interval_ns"] = round(o.keepalive_interval * 1e9)
            # duologue channels only: the broadcast gains late joiners (clients sharing one
            # driver reuse its endpoint) that need a heartbeat to ask for SETUP
            driver_options["keepalive_ports"] = (c.clients_base_port, c.clients_base_port + 2 * c.max_clients - 1)
        return driver_options

    def _quiet_idle(self) -> QuietIdle | None:
        o = self._options
        if o.quiet_after is None or not o.endpoint_filter:
            return None
        if self._config.max_ipc_clients:  # IPC traffic never rings the driver's traffic bell
            logger.info("IPC clients served: the quiet idle is off (polls back off instead)")
            return None
        deep_after = None if o.deep_quiet_after is None else o.quiet_after + o.deep_quiet_after
        return QuietIdle(o.quiet_after, o.quiet_period, deep_after, o.deep_quiet_period)

    def open_telemetry(self, extra_counters: Callable[[], dict[str, int]]) -> ServerTelemetry | None:
        """Telemetry (``--events``; ``extra_counters``: the glue's drop counters), then the
        line that says the server is up."""
        o, c = self._options, self._config
        assert self.driver is not None
        if o.events is not None:
            server_id = o.server_id or f"{o.address}:{o.port}"
            if o.record is not None:
                self.recording = TelemetryRecording(self.driver, o.record, channel=o.record_channel,
                                                    stream_id=o.record_stream,
                                                    max_bytes=o.record_max_bytes, keep=o.record_keep)
            self.telemetry = ServerTelemetry(
                o.events, server_id, self.driver.dir, o.snapshot_interval, event_rate=o.event_rate,
                max_files=o.events_max_files, max_total_bytes=o.events_max_bytes, extra_counters=extra_counters,
                mirror=None if self.recording is None else self.recording.offer)
        logger.info("echo server on %s port %d control %d, duologue ports [%d, %d), driver %s",
                    o.address, o.port, o.control_port, c.clients_base_port,
                    c.clients_base_port + 2 * c.max_clients, self.driver.dir)
        return self.telemetry

    def _on_client_error(self, errcode: int, message: str) -> None:
        """The client's error handler (runs in the loop thread: agent invoker)."""
        self._client_errors.append(f"({errcode}) {message}")
        self._log_summary.log(logging.ERROR, f"client_error:{errcode}", time.monotonic(),
                              "aeron client error %d: %s", errcode, message)

    def check_driver(self) -> None:
        """Raise :class:`DriverLostError` once the client has given up on its driver."""
        assert self.aeron is not None
        if self.aeron.is_closed:
            why = self._client_errors[-1] if self._client_errors else "the Aeron client closed"
            raise DriverLostError(f"lost the media driver: {why}")

    def close(self) -> None:
        """Telemetry, poll sets, client, driver (and its directory); each even when one before fails."""
        try:
            if self.telemetry is not None:
                self.telemetry.close()  # its writer thread has offered its last line when this returns
            if self.recording is not None:
                self.recording.close()
        finally:
            for poll_set in (self.hello_set, self.poll_set):
                if poll_set is not None:
                    poll_set.clear()  # drops its references to the subscriptions
            started = time.monotonic()
            if self.aeron is not None:
                self.aeron.close()
            closed_client = time.monotonic()
            if self.driver is not None:
                self.driver.close()
            logger.info("echo server stopped; driver directory %s removed (Aeron client closed in %.1f s, "
                        "media driver in %.1f s)", self.driver_dir, closed_client - started,
                        time.monotonic() - closed_client)


def glue_counters(core: DuologueServerCore, channels: DuologueChannels, guard: EndpointGuard,
                  secure: SecureTransport | None = None) -> dict[str, int]:
    """The glue's cumulative drop counters (``extra_counters`` of the ``driver_snapshot``),
    and in secure mode the secure transport's (``secure dropped_bad_tag``, ...)."""
    stats = core.stats
    counters = {
        "outbox drops": channels.outbox_drops(),
        "refusals coalesced": stats.refusals_coalesced,
        "log lines folded": sum(core.log_summary.suppressed.values()),
        "ports retired": stats.ports_retired,
    }
    counters.update(guard.counters())
    if secure is not None:
        counters.update({f"secure {name}": value for name, value in secure.counters().items()})
    return counters
