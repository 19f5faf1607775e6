"""The sans-I/O core's records: one per initial image, one per duologue (mutable, core-owned)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .protocol import Reason
from .secure_hello import SecureReason

__all__ = ["DuologueRecord", "InitialImage"]


@dataclass
class InitialImage:
    """What the core knows of one client's initial publication (an all-clients image)."""

    session_id: int
    ip: str
    rejected: bool
    last_refusal: tuple[Reason | SecureReason, float] | None = None  # what was last answered, and when
    refusals: int = 0  # HELLOs refused (sent or coalesced): ServerConfig.flood_hellos marks a flood


@dataclass
class DuologueRecord:
    """The core's record of one duologue (its resources, clients and counters)."""

    session_id: int
    initial_session: int
    owner_ip: str
    data_port: int
    control_port: int
    created_at: float
    last_activity: float
    first_image_at: float | None = None
    images: dict[int, bool] = field(default_factory=dict)  # image id -> served?
    msgs_in: int = 0
    msgs_out: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    # (initial image id, HELLO key or secure message 1) while no client has connected
    hello: tuple[int, int | bytes] | None = None
    client_session: int | None = None  # secure mode: the client's publication's session id
    secure_connect: bytes | None = None  # secure mode: the CONNECT-SECURE sent (a repeated HELLO gets it again)
    moves: int = 0  # times moved to other ports before its channels existed (DuologueTable.move)

    @property
    def secure(self) -> bool:
        return self.client_session is not None
