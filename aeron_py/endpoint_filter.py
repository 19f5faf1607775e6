"""Endpoint-level filtering inside the embedded media driver.

A receive-side UDP channel interceptor written in C (``cpp/plugins/endpoint_filter/``) runs on the
driver's receiver and sender agents for every datagram, *before* the driver acts on it, and
drops:

* every datagram from a blocklisted address or prefix (:meth:`EndpointFilter.set_blocklist`);
* datagrams to an owned local UDP port from anyone but its owner
  (:meth:`EndpointFilter.set_port_owner`);
* SETUP frames whose term length exceeds ``max_setup_term_length`` (no image, no log file);
* SETUPs of *new* sessions beyond a per-source token bucket (``setup_rate`` per second,
  ``setup_burst``), beyond ``max_images_per_source`` concurrent images per source and
  beyond ``max_images_total`` in total. Images on owned ports are exempt (only their owner
  can reach them); a SETUP admitted but not yet an image counts as one for
  ``pending_timeout`` seconds;
* SETUPs of new sessions whose term is longer than ``large_term_length`` beyond a budget of
  such *large-term* images: ``max_large_images_per_source`` and ``max_large_images_total``
  (owned ports included: a large term costs memory wherever it lands). A log is three
  terms, so the budget bounds what strangers can map: ``max_large_images_total`` × 3 ×
  ``max_setup_term_length``. :meth:`EndpointFilter.last_term_drop` names the last SETUP
  dropped for its term length, for a log line that says who and which setting admits it.

A *source* is an address masked to ``ipv4_prefix`` / ``ipv6_prefix`` bits (IPv4-mapped IPv6
is IPv4): :func:`aeron_py.addresses.source_key` is the one definition of that rule; the C side is only handed
the prefix lengths.

Each drop reason has a counter in the driver's CnC file (type id
``_aeron.ENDPOINT_FILTER_COUNTER_TYPE_ID``, label ``aeron_py filter dropped: <reason>``), so
``python -m aeron_py.stat`` and anything else reading CnC counters shows them.

The rule table is immutable in C; every change here builds a new one and publishes it with
an atomic pointer swap. Agents never take the GIL or a lock: each announces the table it
reads in a hazard slot, and the old table is freed once no slot names it.
"""
from __future__ import annotations

import dataclasses
import ipaddress
import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Union

from . import _aeron
from .addresses import IPAddress, Network, parse_address, parse_network
from .errors import AeronError
from .validation import is_int, is_number, optional_int, optional_positive, require_int

logger = logging.getLogger(__name__)


#: Drop reasons, in the C enum's order (``aeron_py_filter_reason_t``).
REASONS: tuple[str, ...] = ("blocklist", "port_owner", "setup_term_length", "setup_rate", "source_images",
                            "total_images", "source_table_full", "source_large_terms", "total_large_terms")

#: The reasons that drop a SETUP for its term length (see :meth:`EndpointFilter.last_term_drop`).
TERM_REASONS: tuple[str, ...] = ("setup_term_length", "source_large_terms", "total_large_terms")

_V4_MAPPED_PREFIX = 96


def _positive_or_none(name: str, value: float | None, kind: type) -> None:
    """None (no limit), else a finite ``kind`` > 0: TypeError for another type, ValueError out of range."""
    what = f"EndpointFilterConfig.{name}"
    if value is not None and not (is_number(value) if kind is float else is_int(value)):
        raise TypeError(f"{what} must be None or {'a number' if kind is float else 'an int'}, got {value!r}")
    if kind is float:
        optional_positive(what, value)
    else:
        optional_int(what, value, min=1)


@dataclasses.dataclass(frozen=True)
class EndpointFilterConfig:
    """Limits of the driver's endpoint filter; ``None`` means no limit (the default for all).

    ``max_setup_term_length``: largest term length (bytes) a SETUP may announce.
    ``setup_rate`` / ``setup_burst``: new sessions per second per source, bucket size
    (default ``max(1, setup_rate)``).
    ``max_images_per_source`` / ``max_images_total``: concurrent images (plus admitted SETUPs
    awaiting their image) on ports without an owner.
    ``ipv4_prefix`` / ``ipv6_prefix``: what a source is (see :func:`aeron_py.addresses.source_key`).
    ``max_sources``: sources tracked at once; a new source beyond it is refused
    (``source_table_full``) until idle ones can be forgotten.
    ``max_pending`` / ``pending_timeout``: admitted SETUPs tracked while their image is made.
    ``large_term_length`` / ``max_large_images_per_source`` / ``max_large_images_total``:
    images whose term is longer than ``large_term_length`` (and admitted SETUPs awaiting
    them), on any port, per source and in total; no budget unless ``large_term_length`` and
    one of the two caps are set.
    ``stream_session_limit``: also set the driver's own per-stream session cap
    (``aeron_driver_context_set_stream_session_limit``), a backstop behind the filter.
    """

    max_setup_term_length: int | None = None
    setup_rate: float | None = None
    setup_burst: float | None = None
    max_images_per_source: int | None = None
    max_images_total: int | None = None
    ipv4_prefix: int = 32
    ipv6_prefix: int = 64
    max_sources: int = 16384
    max_pending: int = 1024
    pending_timeout: float = 2.0
    stream_session_limit: int | None = None
    large_term_length: int | None = None
    max_large_images_per_source: int | None = None
    max_large_images_total: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_setup_term_length", "max_images_per_source", "max_images_total", "stream_session_limit",
                     "large_term_length", "max_large_images_per_source", "max_large_images_total"):
            _positive_or_none(name, getattr(self, name), int)
        for name in ("setup_rate", "setup_burst", "pending_timeout"):
            _positive_or_none(name, getattr(self, name), float)
        if self.setup_burst is not None and self.setup_burst < 1:
            raise ValueError(f"EndpointFilterConfig.setup_burst must be >= 1, got {self.setup_burst!r}")
        for name in ("max_setup_term_length", "large_term_length", "max_large_images_per_source",
                     "max_large_images_total"):
            value = getattr(self, name)
            if value is not None and value > 2**31 - 1:
                raise ValueError(f"EndpointFilterConfig.{name} must fit an int32, got {value}")
        for name, top in (("ipv4_prefix", 32), ("ipv6_prefix", 128)):
            require_int(f"EndpointFilterConfig.{name}", getattr(self, name), min=0, max=top)
        for name in ("max_sources", "max_pending"):
            require_int(f"EndpointFilterConfig.{name}", getattr(self, name), min=1, max=2**24)
        if self.pending_timeout is None:
            raise ValueError("EndpointFilterConfig.pending_timeout must be > 0")

    def _native(self) -> "_aeron.EndpointFilter":
        burst = self.setup_burst if self.setup_burst is not None else max(1.0, float(self.setup_rate or 0.0))
        return _aeron.EndpointFilter(
            max_setup_term_length=self.max_setup_term_length or 0,
            setup_rate=float(self.setup_rate or 0.0),
            setup_burst=float(burst),
            max_images_per_source=self.max_images_per_source or 0,
            max_images_total=self.max_images_total or 0,
            ipv4_prefix=self.ipv4_prefix,
            ipv6_prefix=self.ipv6_prefix,
            max_sources=self.max_sources,
            max_pending=self.max_pending,
            pending_timeout_ns=int(self.pending_timeout * 1e9),
            large_term_length=self.large_term_length or 0,
            max_large_images_per_source=self.max_large_images_per_source or 0,
            max_large_images_total=self.max_large_images_total or 0,
        )


def _wire(address: IPAddress) -> bytes:
    """16 bytes as the C filter sees addresses (IPv4 as ::ffff:a.b.c.d)."""
    if address.version == 4:
        return b"\x00" * 10 + b"\xff\xff" + address.packed
    return address.packed


def _unwire(wire: bytes) -> IPAddress:
    """The address of 16 wire bytes (IPv4-mapped IPv6 as IPv4)."""
    address = ipaddress.IPv6Address(wire)
    return address.ipv4_mapped or address


@dataclasses.dataclass(frozen=True)
class TermDrop:
    """A SETUP the filter dropped for its term length: who, how long, and which rule."""

    address: IPAddress
    term_length: int
    reason: str


def _wire_network(network: Network) -> tuple[bytes, int]:
    offset = _V4_MAPPED_PREFIX if network.version == 4 else 0
    return _wire(network.network_address), network.prefixlen + offset


class EndpointFilter:
    """The filter of one running :class:`~aeron_py.driver.MediaDriver` (``driver.endpoint_filter``).

    Thread-safe; every change replaces the C rule table atomically. After the driver closed,
    every method raises :class:`~aeron_py.errors.AeronError`.
    """

    def __init__(self, native: "_aeron.EndpointFilter", config: EndpointFilterConfig, where: str) -> None:
        self._native = native
        self.config = config
        self._where = where
        self._lock = threading.Lock()
        self._blocklist: tuple[Network, ...] = ()
        self._owners: dict[int, IPAddress] = {}
        self._owner_wires: dict[int, bytes] = {}  # the same owners as the C table sees them (made once each)
        self._closed = False

    def set_blocklist(self, entries: Iterable[str | Network]) -> None:
        """Replace the blocklist: 'a.b.c.d', 'a.b.c.0/24', '2001:db8::/64', '[::1]' or
        ``ipaddress`` networks; the syntax of :func:`aeron_py.addresses.parse_network`
        (IPv4-mapped IPv6 is IPv4; host bits must be zero).

        All entries are checked first: a bad one raises ValueError naming it (and its index)
        and leaves the current blocklist in force.
        """
        if isinstance(entries, str):
            raise TypeError("set_blocklist takes an iterable of entries, not one str")
        networks: list[Network] = []
        for index, entry in enumerate(entries):
            if isinstance(entry, (ipaddress.IPv4Network, ipaddress.IPv6Network)):
                entry = str(entry)
            if not isinstance(entry, str):
                raise ValueError(f"blocklist entry {index} {entry!r}: not a str or an ipaddress network")
            try:
                networks.append(parse_network(entry))
            except ValueError as exc:
                raise ValueError(f"blocklist entry {index} {entry!r}: {exc}") from None
        with self._lock:
            self._check_open()
            self._blocklist = tuple(dict.fromkeys(networks))
            self._publish()
        logger.info("endpoint filter of %s: blocklist now %d entries", self._where, len(self._blocklist))

    def set_port_owner(self, port: int, address: str | None) -> None:
        """Only ``address`` may send to local UDP ``port`` (``None`` removes the owner)."""
        require_int("set_port_owner: port", port, min=1, max=65535)
        owner = None
        if address is not None:
            try:
                owner = parse_address(address)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"set_port_owner({port}, {address!r}): {exc}") from None
        with self._lock:
            self._check_open()
            if owner is None:
                if self._owners.pop(port, None) is None:
                    return
                del self._owner_wires[port]
            else:
                self._owners[port] = owner
                self._owner_wires[port] = _wire(owner)
            self._publish()

    def set_port_owners(self, owners: Mapping[int, str]) -> None:
        """Replace every port owner at once (one table publication)."""
        parsed: dict[int, IPAddress] = {}
        for port, address in owners.items():
            require_int("set_port_owners: port", port, min=1, max=65535)
            try:
                parsed[port] = parse_address(address)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"set_port_owners: port {port} owner {address!r}: {exc}") from None
        with self._lock:
            self._check_open()
            self._owners = parsed
            self._owner_wires = {port: _wire(address) for port, address in parsed.items()}
            self._publish()

    @property
    def blocklist(self) -> tuple[str, ...]:
        """The blocklist in force, as normalised networks."""
        return tuple(str(n) for n in self._blocklist)

    @property
    def port_owners(self) -> dict[int, str]:
        """Owned local ports and their owner address."""
        with self._lock:
            return {port: str(address) for port, address in self._owners.items()}

    def counters(self) -> dict[str, int]:
        """Datagrams dropped so far, per reason (:data:`REASONS`)."""
        with self._lock:
            self._check_open()
            dropped = self._native.dropped()
        return {reason.replace(" ", "_"): value for reason, value in dropped.items()}

    def last_term_drop(self) -> TermDrop | None:
        """The last SETUP dropped for its term length (a reason in :data:`TERM_REASONS`), or None."""
        with self._lock:
            self._check_open()
            drop = self._native.last_term_drop()
        if drop is None:
            return None
        address, term_length, reason = drop
        return TermDrop(_unwire(address), term_length, reason.replace(" ", "_"))

    def counter_ids(self) -> dict[str, int]:
        """The CnC counter id of each reason (for readers of the CnC file)."""
        with self._lock:
            self._check_open()
            ids = self._native.counter_ids()
        return {reason.replace(" ", "_"): value for reason, value in ids.items()}

    def _publish(self) -> None:
        blocklist = [_wire_network(n) for n in self._blocklist]
        owners = sorted(self._owner_wires.items())  # each change publishes the whole table: no conversions here
        self._native.publish(blocklist, owners)

    def _check_open(self) -> None:
        if self._closed or self._native.phase != "running":
            raise AeronError(f"the endpoint filter of {self._where} is gone: its media driver is closed")

    def _close(self) -> None:
        with self._lock:
            self._closed = True

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._blocklist)} blocked, {len(self._owners)} owned ports"
        return f"<EndpointFilter of {self._where}: {state}>"

