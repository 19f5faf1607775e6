"""Secure transport: authenticated encryption of chosen Aeron UDP sessions, inside the driver.

A UDP channel interceptor written in C (``cpp/plugins/secure_transport/``) runs on the
embedded driver's sender and receiver agents. For every *secured session* (one stream id
and session id, keyed on both ends with the same 32-byte session key) it

* seals each datagram the session sends: the first frame's fixed header stays in clear and
  is authenticated, everything after it (payload, batched frames) is encrypted with
  XChaCha20-Poly1305 from libsodium; DATA, PAD, SETUP and RTTM from the publication's
  driver, status messages, NAKs, ERR, RSP_SETUP and RTTM from the subscription's driver,
  so a forged status message or NAK cannot steer a publication;
* opens each datagram it receives for the session before the driver sees it, and drops (and
  counts) what does not verify, what was seen already (a replay window per key; Aeron's
  retransmits are sealed afresh and never look like replays), and, on a *secured port*,
  anything no session opens;
* leaves every other session untouched: plain and secured channels share one driver.

Sealing adds :data:`OVERHEAD` (40) bytes to every datagram. A secured channel's ``mtu``
must leave that room: :func:`max_mtu` gives the largest for a link, :func:`check_mtu`
raises with the fix. Aeron's default mtu (1408) fits a 1500-byte link.

Keys live in an immutable table in C, swapped atomically: the driver's agents never take a
lock or the GIL. A key added for a session that has one *rotates*: the new key seals from
then on, the previous one still opens (datagrams in flight) until :meth:`forget_previous`
or the next rotation. Removed keys are wiped once no agent uses them. Install the keys on
both sides before the session's first datagram, and never install the same key twice for one
session on one side: docs/security/secure-transport.md has the wire format and the
argument that no (key, nonce) pair repeats.

What it does not hide: that two hosts talk, when, how much (datagram sizes), and the
frame headers (stream and session ids, positions); nor does it stop a flood (the endpoint
filter does that). Unicast UDP only.
"""
from __future__ import annotations

import enum
import logging
import os
import threading
import time
from collections.abc import Callable

from . import _aeron
from .errors import AeronError
from .validation import require_int

logger = logging.getLogger(__name__)

#: Bytes a seal adds to each datagram (tag 16 + nonce 24).
OVERHEAD: int = _aeron.SECURE_OVERHEAD
#: Length of a session key.
SESSION_KEY_LENGTH = 32
#: The counters, in the C enum's order (``aeron_py_secure_counter_t``).
COUNTERS: tuple[str, ...] = ("dropped_bad_tag", "dropped_unknown_session", "dropped_replay", "dropped_malformed",
                             "seal_refused", "sealed", "opened")
_IP_UDP_HEADERS = {False: 20 + 8, True: 40 + 8}


class Role(enum.IntEnum):
    """Which end of a secured session this driver is."""

    PUBLICATION = _aeron.SECURE_ROLE_SEND      #: the driver that publishes the stream
    SUBSCRIPTION = _aeron.SECURE_ROLE_RECEIVE  #: the driver that subscribes (named with its local port)


def generate_session_key() -> bytes:
    """A fresh random 32-byte session key (the operating system's CSPRNG)."""
    return os.urandom(SESSION_KEY_LENGTH)


def max_mtu(link_mtu: int = 1500, *, ipv6: bool = False) -> int:
    """The largest Aeron ``mtu`` of a secured channel whose sealed datagrams fit a link of
    ``link_mtu`` bytes without IP fragmentation (1500, IPv4: 1432; IPv6: 1412)."""
    return link_mtu - _IP_UDP_HEADERS[ipv6] - OVERHEAD


def check_mtu(mtu: int, link_mtu: int = 1500, *, ipv6: bool = False) -> None:
    """Raise ValueError when a secured channel with this ``mtu`` would fragment on the link."""
    limit = max_mtu(link_mtu, ipv6=ipv6)
    if mtu > limit:
        raise ValueError(
            f"a secured channel's mtu must be <= {limit} on a {link_mtu}-byte {'IPv6' if ipv6 else 'IPv4'} link "
            f"(a seal adds {OVERHEAD} bytes), got {mtu}: set mtu={limit} or lower in the channel URI "
            f"(or the driver's mtu_length)")


def _check_identity(role: Role, stream_id: int, session_id: int, port: int | None) -> int:
    if not isinstance(role, Role):
        raise TypeError(f"role must be a aeron_py.secure.Role, got {role!r}")
    require_int("stream_id", stream_id, min=-2**31, max=2**31 - 1)
    require_int("session_id", session_id, min=-2**31, max=2**31 - 1)
    if role is Role.PUBLICATION:
        if port is not None:
            raise ValueError("a publication's session is named by stream and session id only: leave port out")
        return 0
    if port is None:
        return 0
    return require_int("port (the local UDP port a subscription's channel is bound to; None: any port)", port,
                       min=1, max=65535)


def _check_key(key: bytes) -> bytes:
    if not isinstance(key, bytes):
        raise TypeError(f"a session key must be bytes, got {type(key).__name__}")
    if len(key) != SESSION_KEY_LENGTH:
        raise ValueError(f"a session key must be {SESSION_KEY_LENGTH} bytes, got {len(key)}")
    return key


class _Removals:
    """Scheduled key removals, done by one daemon thread that lives while any is pending."""

    def __init__(self, remove: Callable[[tuple[int, int, int, int]], None]) -> None:
        self._remove = remove
        self._due: dict[tuple[int, int, int, int], float] = {}
        self._wake = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None

    def __len__(self) -> int:
        return len(self._due)

    def schedule(self, identity: tuple[int, int, int, int], at: float) -> None:
        with self._wake:
            self._due[identity] = at
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="aeron-py-secure-removals", daemon=True)
                self._thread.start()
            self._wake.notify()

    def cancel(self, identity: tuple[int, int, int, int]) -> None:
        with self._wake:
            self._due.pop(identity, None)

    def take(self, identity: tuple[int, int, int, int]) -> bool:
        """Whether ``identity``'s removal is (still) due now; it is no longer pending after."""
        with self._wake:
            at = self._due.get(identity)
            if at is None or at > time.monotonic():
                return False
            del self._due[identity]
            return True

    def _run(self) -> None:
        while True:
            with self._wake:
                if not self._due:
                    self._thread = None
                    return
                now = time.monotonic()
                due = [identity for identity, at in self._due.items() if at <= now]
                if not due:
                    self._wake.wait(min(self._due.values()) - now)
                    continue
            for identity in due:
                self._remove(identity)


class SecureTransport:
    """The secure transport of one :class:`~aeron_py.driver.MediaDriver`
    (``MediaDriver(secure_transport=True)``, then ``driver.secure_transport``).

    Thread-safe; every change replaces the C key table atomically. Keys can be changed after
    the driver closed (nothing uses them then); counters raise AeronError once it closed.
    """

    def __init__(self, native: "_aeron.SecureTransport", where: str) -> None:
        self._native = native
        self._where = where
        self._lock = threading.Lock()
        self._removals = _Removals(self._remove_due)

    def add(self, role: Role, *, stream_id: int, session_id: int, key: bytes, port: int | None = None) -> None:
        """Install (or rotate) the session key of a session. ``port``: for
        :attr:`Role.SUBSCRIPTION`, the local UDP port of the subscription's channel, which
        becomes a secured port (:meth:`secure_port`); ``None`` keys the session on any local
        port (a subscription whose port the system picks, e.g. a dynamic MDC subscriber)."""
        native_port = _check_identity(role, stream_id, session_id, port)
        _check_key(key)
        with self._lock:
            self._removals.cancel((int(role), native_port, stream_id, session_id))
            self._native.add(int(role), native_port, stream_id, session_id, key)
        logger.debug("secure transport of %s: key for %s stream %d session %d", self._where, role.name, stream_id,
                     session_id)

    def remove(self, role: Role, *, stream_id: int, session_id: int, port: int | None = None) -> None:
        """Remove a session's keys (wiped once no agent uses them); KeyError when it has none."""
        native_port = _check_identity(role, stream_id, session_id, port)
        with self._lock:
            self._removals.cancel((int(role), native_port, stream_id, session_id))
            self._native.remove(int(role), native_port, stream_id, session_id)

    def remove_later(self, role: Role, *, stream_id: int, session_id: int, port: int | None = None,
                     delay: float) -> None:
        """Remove a session's keys ``delay`` seconds from now, from a daemon thread: what a
        just-closed publication or subscription still sends (its last data, end of stream,
        status messages while its image drains) is sealed and opened until then. A key
        added for the session meanwhile cancels the removal; no key then is not an error."""
        native_port = _check_identity(role, stream_id, session_id, port)
        if not 0 <= delay < float("inf"):
            raise ValueError(f"remove_later: delay must be >= 0 seconds, got {delay!r}")
        with self._lock:
            self._removals.schedule((int(role), native_port, stream_id, session_id), time.monotonic() + delay)

    @property
    def removals_pending(self) -> int:
        """Removals :meth:`remove_later` has scheduled that are not done yet."""
        return len(self._removals)

    def _remove_due(self, identity: tuple[int, int, int, int]) -> None:
        with self._lock:
            if not self._removals.take(identity):
                return  # cancelled by an add meanwhile
            try:
                self._native.remove(*identity)
            except KeyError:
                logger.debug("secure transport of %s: no key left to remove for %s", self._where, identity)

    def forget_previous(self, role: Role, *, stream_id: int, session_id: int, port: int | None = None) -> None:
        """After a rotation: stop opening datagrams sealed with the previous key."""
        native_port = _check_identity(role, stream_id, session_id, port)
        with self._lock:
            self._native.forget_previous(int(role), native_port, stream_id, session_id)

    def secure_port(self, port: int, secured: bool = True) -> None:
        """Drop every datagram to local UDP ``port`` that no secured session opens (or stop)."""
        require_int("secure_port: port", port, min=1, max=65535)
        with self._lock:
            self._native.set_port(port, bool(secured))

    @property
    def session_count(self) -> int:
        """Sessions with keys installed."""
        return int(self._native.session_count())

    @property
    def secured_port_count(self) -> int:
        return int(self._native.port_count())

    def counters(self) -> dict[str, int]:
        """Datagrams sealed, opened, refused and dropped per reason (:data:`COUNTERS`), also in
        the CnC file as ``aeron_py secure transport <name>``."""
        with self._lock:
            self._check_open()
            values = self._native.counters()
        return {name.replace(": ", "_").replace(" ", "_"): value for name, value in values.items()}

    def counter_ids(self) -> dict[str, int]:
        """The CnC counter id of each counter."""
        with self._lock:
            self._check_open()
            ids = self._native.counter_ids()
        return {name.replace(": ", "_").replace(" ", "_"): value for name, value in ids.items()}

    def _check_open(self) -> None:
        if self._native.phase != "running":
            raise AeronError(f"the secure transport of {self._where} has no counters: its media driver is closed")

    def __repr__(self) -> str:
        return f"<SecureTransport of {self._where}: {self.session_count} sessions, {self.secured_port_count} ports>"
