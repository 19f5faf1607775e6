"""What the sans-I/O Echo 2.0 server core and its glue exchange.

:class:`ServerConfig` (the protocol limits), the actions the core returns
(:class:`Broadcast`, :class:`CreateDuologue`, :class:`SendDuologue`,
:class:`CloseDuologue`, :class:`RejectImage`, :class:`Event`; their contract is in
:mod:`.server_core`), why a duologue closed (:class:`CloseReason`) and the read-only
snapshots (:class:`DuologueInfo`, :class:`ServerStats`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ...validation import optional_int, optional_positive, require_int, require_positive
from .protocol import IPC_SOURCE, IPC_STREAM_BASE
from .secure_handshake import ServerSecrets
from .secure_hello import DuologueKeys
from .sessions import DEFAULT_SESSION_MAX, DEFAULT_SESSION_MIN

__all__ = ["DEFAULT_FLOOD_HELLOS", "DEFAULT_FLOOD_PENALTY", "LARGE_TERM_IMAGES_PER_CLIENT",
           "DEFAULT_LARGE_TERM_LENGTH", "DEFAULT_MAX_IMAGE_TERM_LENGTH", "DEFAULT_RECLAIM_AFTER", "DEFAULT_REFUSAL_INTERVAL",
           "DEFAULT_STANDING_WINDOW", "Action", "BlockSource", "Broadcast", "CloseDuologue",
           "CloseReason", "CreateDuologue", "Deliver", "DuologueInfo", "Event", "RejectImage", "SendDuologue", "ServerConfig",
           "ServerStats"]
#: Most IPC duologues (their streams, two each from ``IPC_STREAM_BASE``, fit a CONNECT's port fields).
MAX_IPC_CLIENTS = (65535 - IPC_STREAM_BASE + 1) // 2
#: Largest term length accepted on client images: Aeron's default term, so that a stock
#: Aeron client is served (within the large-term budget, :mod:`.large_terms`).
DEFAULT_MAX_IMAGE_TERM_LENGTH = 16 * 1024 * 1024
#: Terms longer than this are *large* and take a place in the large-term budget: Aeron's
#: minimum term, which already holds 8 KiB messages (the protocol's are at most 1 KiB), so
#: a client image within it costs the server ~196 KiB of log.
DEFAULT_LARGE_TERM_LENGTH = 64 * 1024
#: Large-term images a stock client holds: its initial and its duologue image. The budget's
#: defaults follow from the duologue limits (:meth:`ServerConfig.large_term_limits`), so a
#: server serves as many stock clients as it serves duologues.
LARGE_TERM_IMAGES_PER_CLIENT = 2
#: A refusal repeated to the same initial image within this many seconds is not sent
#: again (the client acts on the first one; a flood must not become a reply flood).
DEFAULT_REFUSAL_INTERVAL = 0.5
#: On a full server, an unjoined duologue this old gives its place to a HELLO from a
#: source in good standing (:mod:`.reclaim`).
DEFAULT_RECLAIM_AFTER = 2.0
#: How long a source whose duologue was reclaimed or expired unjoined cannot reclaim.
DEFAULT_STANDING_WINDOW = 60.0
#: Refusals one initial image may earn before its source counts as flooding: a client
#: sends one HELLO a second and gives up at the first refusal.
DEFAULT_FLOOD_HELLOS = 20
#: How long a flooding source is refused, and dropped in the driver.
DEFAULT_FLOOD_PENALTY = 60.0


class CloseReason(StrEnum):
    """Why a duologue was closed (``CloseDuologue.reason``)."""

    CLIENT_GONE = "client_gone"
    BAD_MESSAGE = "bad_message"
    SEND_DEADLINE = "send_deadline"
    EXPIRED = "expired"
    IDLE = "idle"
    SHUTDOWN = "shutdown"
    CREATE_FAILED = "create_failed"
    BLOCKED = "blocked"
    RECLAIMED = "reclaimed"
    APPLICATION = "application"  # the application closed it (Duologue.close)


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """Server limits.  Times are seconds; sizes are bytes."""

    max_clients: int
    clients_base_port: int
    max_per_ip: int = 3
    expiry: float = 10.0
    idle_timeout: float | None = None
    max_message: int = 1024
    ipv6_prefix: int = 64
    max_image_term_length: int = DEFAULT_MAX_IMAGE_TERM_LENGTH
    large_term_length: int = DEFAULT_LARGE_TERM_LENGTH
    #: None: ``LARGE_TERM_IMAGES_PER_CLIENT`` × ``max_clients`` + 1 (:meth:`large_term_limits`).
    max_large_term_images: int | None = None
    #: None: ``LARGE_TERM_IMAGES_PER_CLIENT`` × ``max_per_ip`` + 1.
    max_large_term_images_per_ip: int | None = None
    session_min: int = DEFAULT_SESSION_MIN
    session_max: int = DEFAULT_SESSION_MAX
    refusal_interval: float = DEFAULT_REFUSAL_INTERVAL
    #: None: a full server never reclaims an unjoined duologue's place (:mod:`.reclaim`).
    reclaim_after: float | None = DEFAULT_RECLAIM_AFTER
    standing_window: float = DEFAULT_STANDING_WINDOW
    #: None: never penalise a source for flooding (:mod:`.hello_admission`).
    flood_hellos: int | None = DEFAULT_FLOOD_HELLOS
    flood_penalty: float = DEFAULT_FLOOD_PENALTY
    log_interval: float = 10.0
    #: Secure mode (docs/spec/echo2.md §5): the server's key pair; None: plain Echo 2.0.
    secure: ServerSecrets | None = None
    #: Duologues with same-host clients over IPC (through the server's media driver), a
    #: limit of their own beside ``max_clients``; 0: no IPC all-clients channels at all.
    max_ipc_clients: int = 0

    def __post_init__(self) -> None:
        for name in ("max_clients", "max_per_ip", "max_message", "max_image_term_length", "large_term_length"):
            require_int(f"ServerConfig.{name}", getattr(self, name), min=1)
        require_int("ServerConfig.max_ipc_clients", self.max_ipc_clients, min=0, max=MAX_IPC_CLIENTS)
        if self.max_ipc_clients and self.secure is not None:
            raise ValueError("ServerConfig: max_ipc_clients needs plain mode: an IPC duologue's log is shared "
                             "memory that any process able to open the driver directory can read, which secure "
                             "mode cannot seal; set max_ipc_clients=0 with secure")
        for name in ("max_large_term_images", "max_large_term_images_per_ip"):
            optional_int(f"ServerConfig.{name}", getattr(self, name), min=0)
        optional_int("ServerConfig.flood_hellos", self.flood_hellos, min=1)
        for name in ("refusal_interval", "standing_window"):
            require_positive(f"ServerConfig.{name}", getattr(self, name), or_zero=True, unit="seconds")
        for name in ("log_interval", "expiry", "flood_penalty"):
            require_positive(f"ServerConfig.{name}", getattr(self, name), unit="seconds")
        for name in ("reclaim_after", "idle_timeout"):
            optional_positive(f"ServerConfig.{name}", getattr(self, name), unit="seconds")

    def large_term_limits(self) -> tuple[int, int]:
        """Large-term images kept at once, (in total, per source key): the configured values,
        else two per duologue the limits allow (a stock client's initial and duologue
        images) and one more, for the initial image of the next client, whose HELLO is then
        answered ("server full", "too many connections") rather than its SETUP dropped."""
        total, per_ip = self.max_large_term_images, self.max_large_term_images_per_ip
        return (LARGE_TERM_IMAGES_PER_CLIENT * self.max_clients + 1 if total is None else total,
                LARGE_TERM_IMAGES_PER_CLIENT * self.max_per_ip + 1 if per_ip is None else per_ip)


# ------------------------------------------------------------------ actions


@dataclass(frozen=True)
class Broadcast:
    """Send ``data`` on the all-clients publication (a CONNECT names its duologue); ``ipc``:
    on the IPC all-clients publication (the HELLO came from a same-host IPC client)."""

    data: bytes
    duologue_session: int | None = None
    ipc: bool = False


@dataclass(frozen=True)
class CreateDuologue:
    """Create the duologue publication/subscription for ``session_id``.

    Secure mode: ``keys`` are the duologue's session keys, to install in the driver
    before either channel exists; the subscription then takes the client's session
    (``keys.client_session``), the publication ``session_id`` (``keys.server_session``)."""

    session_id: int
    data_port: int
    control_port: int
    owner_ip: str
    keys: DuologueKeys | None = field(default=None, repr=False)

    @property
    def client_session(self) -> int:
        """The session id of the client's duologue publication (the subscription's filter)."""
        return self.session_id if self.keys is None else self.keys.client_session

    @property
    def ipc(self) -> bool:
        """A same-host client's duologue: its channels are IPC, ``data_port`` and
        ``control_port`` the streams (client to server, server to client)."""
        return self.owner_ip == IPC_SOURCE


@dataclass(frozen=True)
class SendDuologue:
    """Send ``data`` on the duologue publication of ``session_id``."""

    session_id: int
    data: bytes


@dataclass(frozen=True)
class Deliver:
    """Hand ``data``, a message from duologue ``session_id``'s client, to the application;
    its answers come back as :meth:`~.server.DuologueServerCore.reply`,
    :meth:`~.server.DuologueServerCore.bad_message` and :meth:`~.server.DuologueServerCore.close`."""

    session_id: int
    data: bytes


@dataclass(frozen=True)
class CloseDuologue:
    """Close (after flushing) the duologue ``session_id``."""

    session_id: int
    reason: CloseReason


@dataclass(frozen=True)
class RejectImage:
    """Reject an image; ``session_id`` is None on the all-clients subscription."""

    image_id: int
    session_id: int | None
    reason: str


@dataclass(frozen=True)
class BlockSource:
    """Drop everything from ``ip`` in the driver for ``seconds`` (where the driver can):
    the source floods (``ServerConfig.flood_hellos``); the core refuses its HELLOs
    meanwhile either way."""

    ip: str
    seconds: float


@dataclass(frozen=True)
class Event:
    """Telemetry record; see the module docstring for the kinds."""

    kind: str
    fields: dict[str, Any] = field(default_factory=dict)


Action = Broadcast | CreateDuologue | SendDuologue | Deliver | CloseDuologue | RejectImage | BlockSource | Event



# ------------------------------------------------------------------ snapshots


@dataclass(frozen=True)
class DuologueInfo:
    """Read-only snapshot of one duologue."""

    session_id: int
    initial_session: int
    owner_ip: str
    data_port: int
    control_port: int
    created_at: float
    connected: bool
    msgs_in: int
    msgs_out: int
    bytes_in: int
    bytes_out: int
    images: int = 0  # client images on its subscription, served or not (wrong IP)
    secure: bool = False  # opened by a secure handshake (its traffic is encrypted)

    @property
    def ipc(self) -> bool:
        """A same-host client over IPC (``owner_ip`` is ``"ipc"``, the ports are streams)."""
        return self.owner_ip == IPC_SOURCE


@dataclass(frozen=True)
class ServerStats:
    """Read-only snapshot of the core's resources and cumulative counters."""

    duologues: int
    initial_images: int
    ports_in_use: int
    sessions_in_use: int
    source_keys: int
    hellos: int
    connects: int  # duologues ever created (CONNECTs sent)
    rejects: Mapping[str, int]
    closes: Mapping[str, int]
    refusals_coalesced: int = 0  # refusals not sent again within refusal_interval
    ports_retired: int = 0  # taken out of service (see retire_port)
    large_term_images: int = 0  # client images holding a place in the large-term budget
    sources_out_of_standing: int = 0  # sources that may not reclaim a place now (see .reclaim)
    floods: int = 0  # initial images refused flood_hellos times: their sources penalised
    ipc_duologues: int = 0  # duologues of same-host clients over IPC (counted in duologues)
