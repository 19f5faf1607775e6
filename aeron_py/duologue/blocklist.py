"""The blocklist file the Echo 2.0 server enforces.

Format: UTF-8 text, one entry per line::

    # comment lines start with '#'; blank lines are ignored
    203.0.113.7             2026-11-21T18:00:00Z  hello flood (analytics)
    198.51.100.0/24         never                 abusive network, ticket 42
    2001:db8:bad:1::/64     2026-11-22T00:00:00Z  rules fired: max_bad_messages

* ``ADDRESS_OR_PREFIX``: an IPv4 or IPv6 address, or a CIDR prefix whose host bits are
  zero. IPv4-mapped IPv6 (``::ffff:a.b.c.d``, ``::ffff:0:0/96`` and longer) is stored
  and matched as IPv4.
* ``EXPIRES``: ISO-8601 date-time in UTC (``Z`` or ``+00:00``), or ``never``. An entry
  is in force while ``now < EXPIRES``; expired entries are kept in the file until the
  next rewrite but never match.
* ``REASON``: free text to the end of the line (required, may contain ``#``).

:meth:`Blocklist.load` reports every bad line as ``path:line: what is wrong``.
:meth:`Blocklist.match` returns the longest-prefix entry in force for an address.
:meth:`Blocklist.write` replaces a file atomically (temporary file + rename).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..addresses import Network, bare_address, parse_address, parse_network, unmap_network

__all__ = ["Blocklist", "BlocklistError", "Entry", "Network", "parse_network"]

_HEADER = (
    "# aeron_py blocklist: ADDRESS_OR_PREFIX EXPIRES(ISO-8601 UTC or never) REASON...\n"
)


class BlocklistError(ValueError):
    """A blocklist line or file is invalid; the message names the place."""


def _parse_expiry(text: str) -> float | None:
    if text == "never":
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"EXPIRES {text!r} is neither 'never' nor an ISO-8601 date-time "
            "(e.g. 2026-11-21T18:00:00Z)"
        ) from None
    if when.tzinfo is None or when.utcoffset() != timezone.utc.utcoffset(None):
        raise ValueError(f"EXPIRES {text!r} must be in UTC (end with Z or +00:00)")
    return when.timestamp()


def _format_expiry(expires: float | None) -> str:
    if expires is None:
        return "never"
    when = datetime.fromtimestamp(expires, tz=timezone.utc)
    return when.isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Entry:
    """One blocklist entry; ``expires`` is epoch seconds or None for never."""

    network: Network
    expires: float | None
    reason: str
    line: int | None = field(default=None, compare=False)

    def active(self, now: float) -> bool:
        """True while the entry is in force at ``now`` (epoch seconds)."""
        return self.expires is None or now < self.expires

    @property
    def target(self) -> str:
        """The address (single host) or CIDR prefix as written in the file."""
        net = self.network
        return str(net.network_address) if net.prefixlen == net.max_prefixlen else str(net)

    def to_line(self) -> str:
        """The entry as one file line (reason whitespace collapsed to single spaces)."""
        reason = " ".join(self.reason.split())
        if not reason:
            raise BlocklistError(f"blocklist entry {self.target} has an empty reason")
        return f"{self.target} {_format_expiry(self.expires)} {reason}"

    @classmethod
    def create(cls, target: str, expires: float | None, reason: str) -> "Entry":
        """An entry from an address/prefix string; raises :class:`BlocklistError`."""
        try:
            network = parse_network(target)
        except ValueError as exc:
            raise BlocklistError(str(exc)) from None
        return cls(network, expires, reason)


def _parse_line(text: str, where: str, line_no: int) -> Entry | None:
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return None
    parts = stripped.split(None, 2)
    if len(parts) < 3:
        missing = ("EXPIRES and REASON", "REASON")[len(parts) - 1]
        raise BlocklistError(
            f"{where}:{line_no}: missing {missing}; expected 'ADDRESS_OR_PREFIX EXPIRES REASON...'"
        )
    try:
        network = parse_network(parts[0])
        expires = _parse_expiry(parts[1])
    except ValueError as exc:
        raise BlocklistError(f"{where}:{line_no}: {exc}") from None
    return Entry(network, expires, parts[2], line_no)


class Blocklist:
    """An immutable set of entries with longest-prefix matching."""

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        self._entries = tuple(Entry(unmap_network(e.network), e.expires, e.reason, e.line) for e in entries)
        # (version, prefixlen) -> network number -> entries; longest prefixes first.
        index: dict[tuple[int, int], dict[int, list[Entry]]] = {}
        for entry in self._entries:
            net = entry.network
            bucket = index.setdefault((net.version, net.prefixlen), {})
            bucket.setdefault(int(net.network_address), []).append(entry)
        self._index = dict(sorted(index.items(), key=lambda kv: -kv[0][1]))

    @classmethod
    def parse(cls, text: str, where: str = "<blocklist>") -> "Blocklist":
        """Parse file contents; ``where`` names the source in error messages."""
        entries = []
        for line_no, line in enumerate(text.splitlines(), start=1):
            entry = _parse_line(line, where, line_no)
            if entry is not None:
                entries.append(entry)
        return cls(entries)

    @classmethod
    def load(cls, path: str | Path) -> "Blocklist":
        """Read and parse ``path``; raises :class:`BlocklistError` or ``OSError``."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise BlocklistError(f"{path}: not UTF-8 text ({exc.reason})") from None
        except OSError as exc:
            raise type(exc)(exc.errno, f"cannot read blocklist {path}: {exc.strerror}") from exc
        return cls.parse(text, str(path))

    @property
    def entries(self) -> tuple[Entry, ...]:
        """All entries, expired ones included, in file order."""
        return self._entries

    def match(self, ip: str, now: float) -> Entry | None:
        """The most specific entry in force at ``now`` covering ``ip``, else None.

        ``ip`` may carry brackets or a zone; IPv4-mapped IPv6 is matched as IPv4.
        Raises ``ValueError`` if ``ip`` is not an address.
        """
        try:
            address = parse_address(bare_address(ip))
        except ValueError:
            raise ValueError(f"not an IP address: {ip!r}") from None
        number = int(address)
        for (version, prefixlen), bucket in self._index.items():
            if version != address.version:
                continue
            shift = address.max_prefixlen - prefixlen
            candidates = bucket.get((number >> shift) << shift)
            if candidates:
                best = _best_active(candidates, now)
                if best is not None:
                    return best
        return None

    @staticmethod
    def write(path: str | Path, entries: Iterable[Entry]) -> None:
        """Atomically replace ``path`` with ``entries`` (one line each, header first)."""
        path = Path(path)
        body = _HEADER + "".join(entry.to_line() + "\n" for entry in entries)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(body)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries)


def _best_active(candidates: list[Entry], now: float) -> Entry | None:
    """The entry in force the longest (never beats any date), or None."""
    active = [e for e in candidates if e.active(now)]
    if not active:
        return None
    return max(active, key=lambda e: float("inf") if e.expires is None else e.expires)
