"""Where and how the Echo 2.0 server glue runs (the protocol limits are :class:`ServerConfig`)."""
from __future__ import annotations

from dataclasses import dataclass

from ...validation import optional_int, require_int
from .outbox import DEFAULT_BROADCAST_CAP, DEFAULT_DUOLOGUE_CAP
from .telemetry import DEFAULT_EVENT_RATE, DEFAULT_MAX_FILES, DEFAULT_MAX_TOTAL_BYTES

__all__ = ["DEFAULT_TERM_LENGTH", "ServerOptions"]

#: Term length of the server's own publications (Aeron's minimum; messages are <= 1 KiB).
DEFAULT_TERM_LENGTH = 64 * 1024


@dataclass(frozen=True, kw_only=True)
class ServerOptions:
    """Where and how the glue runs (the protocol limits live in :class:`ServerConfig`).

    ``dir``: Aeron directory (default: a fresh one under /dev/shm); it is deleted on
    start and on shutdown.  ``linger``: publication linger in seconds.  ``send_timeout``:
    how long a reply may wait for its publication.  ``create_timeout``: how long a
    duologue may wait for its ports.  ``image_liveness_timeout``: seconds before a
    silent client image is dropped (5 s; None: Aeron's 10 s).  A client's publication
    sends a heartbeat every 100 ms even when it has nothing to say, so only a client that
    is gone (or cut off) is silent for seconds; a departed image is released about
    twice this after its last datagram (liveness, then linger), which is how long a
    flood's images outlive it.  ``blocklist``: file of
    :class:`~aeron_py.duologue.blocklist.Blocklist` entries, watched for new versions;
    ``close_blocked``: close the duologues of owners a new version blocks (else they
    live on; new HELLOs are refused either way).  ``events``: telemetry directory;
    ``snapshot_interval``: seconds between ``driver_snapshot`` events.

    Bounds: ``driver_timeout``: seconds without the driver's keepalive before
    the client (and so the server) gives up on it.  ``max_creating``: duologue channel
    adds in flight at once (more wait, up to ``create_timeout``, then ``server full``).
    ``broadcast_cap`` / ``duologue_outbox_cap``: replies queued per publication.
    ``events_max_bytes`` / ``events_max_files``: telemetry retention; ``event_rate``:
    telemetry events per second per kind.  ``endpoint_filter``: use the driver's
    endpoint filter (False: no interceptor at all); ``setup_rate``/``setup_burst``: new
    sessions per second per source; ``max_images_per_source``/``max_images_total``:
    concurrent images the filter lets the driver create (``max_images_total=None``:
    ``2 * max_clients + 64``, each duologue's image plus its client's HELLO image).
    ``sparse_logs``: term files are sparse (disk is used only as terms fill; at 1,000
    idle duologues 0.06 GiB real against 0.43 GiB apparent).

    Quiet mode (:mod:`aeron_py.traffic`): once no application traffic (data,
    end of stream, SETUP) reached the driver for ``quiet_after`` seconds and nothing is
    queued, the loop sleeps on the driver's traffic bell instead of polling (waking at
    least every housekeeping tick, 0.1 s) and the driver runs one duty cycle per
    ``quiet_period``.  The price: the first message after a quiet spell waits up to
    ``quiet_period`` in the driver.  ``quiet_after=None``: never quiet (poll with backoff,
    as before); quiet mode also needs ``endpoint_filter``.  Deep quiet: after
    ``deep_quiet_after`` more seconds of quiet the driver's period becomes
    ``deep_quiet_period`` (``deep_quiet_after=None``: never); at 1,000 idle duologues the
    server's CPU falls from ~7 % to ~4 % of a core, and the first message after a long
    silence waits up to ``deep_quiet_period``.  It starts late on purpose: entered while a
    burst of handshakes was still being torn down (the clients' HELLO images, ~12 s after
    1,000 handshakes), 5 s after the last traffic, the driver stayed busy for ~30 s.

    ``record``: the control channel of an Aeron Archive that records the telemetry
    (``record_channel`` / ``record_stream``, at most ``record_max_bytes`` per recording and ``record_keep``
    recordings; see :mod:`.telemetry_recording`); needs ``events``.
    ``keepalive_interval``: an idle duologue's heartbeats (Aeron: every 0.1 s) and
    unchanged status messages (every 0.2 s) reach the wire at most once per this many
    seconds; anything that says something new (a reply's position, a consumed message,
    end of stream) goes at once.  See ``keepalive_interval_ns`` in
    :class:`~aeron_py.driver.MediaDriver`.  At 1,000 idle duologues: ~13,000 fewer
    system calls a second.  ``None``: Aeron's own pace.
    """

    address: str = "127.0.0.1"
    port: int = 9000
    control_port: int = 9001
    dir: str | None = None
    term_length: int = DEFAULT_TERM_LENGTH
    linger: float = 0.2
    send_timeout: float = 2.0
    create_timeout: float = 5.0
    image_liveness_timeout: float | None = 5.0
    blocklist: str | None = None
    close_blocked: bool = True
    events: str | None = None
    snapshot_interval: float = 10.0
    server_id: str | None = None
    driver_timeout: float = 10.0
    max_creating: int = 4
    broadcast_cap: int = DEFAULT_BROADCAST_CAP
    duologue_outbox_cap: int = DEFAULT_DUOLOGUE_CAP
    events_max_bytes: int = DEFAULT_MAX_TOTAL_BYTES
    events_max_files: int = DEFAULT_MAX_FILES
    event_rate: float = DEFAULT_EVENT_RATE
    endpoint_filter: bool = True
    setup_rate: float = 20.0
    setup_burst: int = 40
    max_images_per_source: int = 8
    max_images_total: int | None = None
    sparse_logs: bool = True
    quiet_after: float | None = 1.0
    quiet_period: float = 0.05
    deep_quiet_after: float | None = 15.0
    deep_quiet_period: float = 0.2
    keepalive_interval: float | None = 1.0
    record: str | None = None
    record_channel: str = "aeron:udp?endpoint=127.0.0.1:9110|term-length=1m"
    record_stream: int = 9100
    record_max_bytes: int = 64 * 1024 * 1024
    record_keep: int = 8

    def __post_init__(self) -> None:
        for name in ("port", "control_port"):
            require_int(f"ServerOptions.{name}", getattr(self, name), min=1, max=65535)
        if self.port == self.control_port:
            raise ValueError(f"ServerOptions: port and control_port are both {self.port}")
        term = require_int("ServerOptions.term_length", self.term_length, min=64 * 1024, max=2**30)
        if term & (term - 1):
            raise ValueError(f"ServerOptions.term_length must be a power of two, got {term!r}")
        for name in ("max_creating", "broadcast_cap", "duologue_outbox_cap", "events_max_bytes", "events_max_files",
                     "setup_burst", "max_images_per_source"):
            require_int(f"ServerOptions.{name}", getattr(self, name), min=1)
        optional_int("ServerOptions.max_images_total", self.max_images_total, min=1)
        for name in ("send_timeout", "create_timeout", "snapshot_interval", "driver_timeout", "event_rate",
                     "setup_rate"):
            if not getattr(self, name) > 0:
                raise ValueError(f"ServerOptions.{name} must be > 0 seconds, got {getattr(self, name)!r}")
        if self.quiet_after is not None and not 0 <= self.quiet_after < float("inf"):
            raise ValueError(f"ServerOptions.quiet_after must be None or >= 0 seconds, got {self.quiet_after!r}")
        for name in ("quiet_period", "deep_quiet_period"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"ServerOptions.{name} must be in (0, 1] seconds, got {getattr(self, name)!r}")
        if self.deep_quiet_after is not None and not 0 <= self.deep_quiet_after < float("inf"):
            raise ValueError("ServerOptions.deep_quiet_after must be None or >= 0 seconds, "
                             f"got {self.deep_quiet_after!r}")
        if self.keepalive_interval is not None and not 0.1 <= self.keepalive_interval <= 2:
            raise ValueError("ServerOptions.keepalive_interval must be None or in [0.1, 2] seconds, "
                             f"got {self.keepalive_interval!r}")
        if self.record is not None and self.events is None:
            raise ValueError("ServerOptions.record (--record) records the telemetry: it needs events (--events DIR)")
        if self.record_max_bytes < 1 << 20 or self.record_keep < 1:
            raise ValueError("ServerOptions.record_max_bytes must be >= 1 MiB and record_keep >= 1, got "
                             f"{self.record_max_bytes!r} and {self.record_keep!r}")
        if not self.linger >= 0:
            raise ValueError(f"ServerOptions.linger must be >= 0 seconds, got {self.linger!r}")
        if self.image_liveness_timeout is not None and not self.image_liveness_timeout > 0:
            raise ValueError("ServerOptions.image_liveness_timeout must be None or > 0 seconds, "
                             f"got {self.image_liveness_timeout!r}")
