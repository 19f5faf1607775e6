"""The server's use of the driver's endpoint filter.

The filter (``aeron_py.endpoint_filter``, a receive-side UDP interceptor in the
embedded driver) drops traffic before the driver creates anything for it.  The server
turns it on unless ``--no-endpoint-filter`` (then every call here is a no-op):

* term cap = the server's ``max_image_term_length``, and the server's large-term budget
  (``core/large_terms.py``), so an image the server would reject for its term is never
  made (spec decision 3 holds trivially for it); drops for the term length are reported
  in one summarised log line naming the source, the term and the option that admits it;
* new-session SETUP rate and concurrent-image caps per source and in total;
* the blocklist (and each reload) fills the filter's table, and so do the sources the
  core penalises for flooding (:class:`~..core.contract.BlockSource`), each for its
  penalty;
* each duologue's data port is owned by its client's IP while the duologue lives.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ParamSpec, Protocol

from ..blocklist import Blocklist
from ..core.contract import ServerConfig
from ..core.large_terms import large_term_rule
from ...endpoint_filter import TERM_REASONS, EndpointFilterConfig, TermDrop
from ...errors import AeronError

logger = logging.getLogger(__name__)

#: At most one term-length drop report per this many seconds.
TERM_DROP_REPORT_INTERVAL = 10.0
#: The filter's term-length drop reasons as the core's refusal causes (core/large_terms.py).
_TERM_CAUSES = dict(zip(TERM_REASONS, ("term_length", "large_terms_per_ip", "large_terms_total")))

__all__ = ["FilterLimits", "EndpointGuard"]

P = ParamSpec("P")


class _Filter(Protocol):
    """What the guard uses of ``driver.endpoint_filter`` (:class:`~aeron_py.endpoint_filter.EndpointFilter`)."""

    def set_blocklist(self, entries: Iterable[str]) -> None: ...
    def set_port_owner(self, port: int, address: str | None) -> None: ...
    def set_port_owners(self, owners: Mapping[int, str]) -> None: ...
    def counters(self) -> dict[str, int]: ...
    def last_term_drop(self) -> TermDrop | None: ...


@dataclass(frozen=True, kw_only=True)
class FilterLimits:
    """What the server asks of the filter."""

    max_term_length: int
    large_term_length: int
    max_large_images: int
    max_large_images_per_source: int
    setup_rate: float = 20.0
    setup_burst: int = 40
    max_images_per_source: int = 8
    max_images_total: int = 512
    ipv6_prefix: int = 64

    def driver_option(self) -> dict[str, Any]:
        """``MediaDriver`` keyword arguments that install the filter with these limits."""
        no_large = self.max_large_images == 0 or self.max_large_images_per_source == 0
        return {"endpoint_filter": EndpointFilterConfig(
            max_setup_term_length=self.large_term_length if no_large else self.max_term_length,
            large_term_length=self.large_term_length, max_large_images_total=self.max_large_images or None,
            max_large_images_per_source=self.max_large_images_per_source or None, setup_rate=self.setup_rate,
            setup_burst=self.setup_burst, max_images_per_source=self.max_images_per_source,
            max_images_total=self.max_images_total, ipv4_prefix=32, ipv6_prefix=self.ipv6_prefix)}


class EndpointGuard:
    """Keeps the driver's filter table in step with the server (no-op without a filter)."""

    def __init__(self, driver: Any, config: ServerConfig) -> None:
        self._config = config
        self._term_drops_seen = 0
        self._next_term_report = float("-inf")
        self._filter: _Filter | None
        try:
            self._filter = driver.endpoint_filter
        except (AttributeError, AeronError):  # a driver made with endpoint_filter=None
            self._filter = None
        self._next_expiry: float | None = None
        self._blocklist: Blocklist | None = None
        self._penalties: dict[str, float] = {}  # address -> until (wall clock)
        self._stale = False  # a penalty came since the table was last loaded
        if self._filter is not None:
            logger.info("endpoint filter active in the media driver")

    @property
    def active(self) -> bool:
        return self._filter is not None

    def set_blocklist(self, blocklist: Blocklist | None, now: float | None = None) -> None:
        """Load the entries in force now; remembers when the next one expires."""
        self._blocklist = blocklist
        self._load(time.time() if now is None else now)

    def block(self, ip: str, seconds: float, now: float | None = None) -> None:
        """Drop everything from ``ip`` for ``seconds`` besides the blocklist (a flooding
        source); loaded into the driver's table at the next :meth:`refresh`, so a burst of
        penalties costs one load."""
        if self._filter is not None:
            self._penalties[ip] = (time.time() if now is None else now) + seconds
            self._stale = True

    @property
    def penalised(self) -> int:
        """Sources dropped for a penalty (some may have expired since the last load)."""
        return len(self._penalties)

    def refresh(self, now: float | None = None) -> None:
        """Load the table again when penalties came or an entry expired (call periodically)."""
        now = time.time() if now is None else now
        if self._stale or (self._next_expiry is not None and now >= self._next_expiry):
            self._load(now)

    def _load(self, now: float) -> None:
        """The blocklist's entries in force at ``now`` and the penalties not yet over."""
        if self._filter is None:
            return
        self._penalties = {ip: until for ip, until in self._penalties.items() if until > now}
        entries = [] if self._blocklist is None else [e for e in self._blocklist if e.active(now)]
        expiries = [e.expires for e in entries if e.expires is not None] + list(self._penalties.values())
        self._next_expiry = min(expiries) if expiries else None
        self._stale = False
        targets = [e.target for e in entries] + [ip for ip in self._penalties]
        self._call(self._filter.set_blocklist, targets)

    def own_port(self, port: int, address: str | None) -> None:
        """Only ``address`` may send to ``port`` (None: anyone again)."""
        if self._filter is not None:
            self._call(self._filter.set_port_owner, port, address)

    def disown_all(self) -> None:
        """Every port anyone's again, in one table publication.  Each owner change publishes
        the whole table, so a shutdown that freed 3,000 duologues' ports one by one took
        10 s (quadratic); after this, freeing an unowned port publishes nothing."""
        if self._filter is not None:
            self._call(self._filter.set_port_owners, {})

    def report_term_drops(self, now: float) -> None:
        """One log line when SETUPs were dropped for their term length since the last one
        (at most every ``TERM_DROP_REPORT_INTERVAL`` seconds): how many, who last, and which
        option admits them. Call periodically."""
        if self._filter is None or now < self._next_term_report:
            return
        try:
            counters = self._filter.counters()
            total = sum(counters.get(reason, 0) for reason in TERM_REASONS)
            drop = self._filter.last_term_drop() if total > self._term_drops_seen else None
        except Exception as exc:  # noqa: BLE001 - a report must not stop the server
            logger.warning("endpoint filter counters unavailable: %s", exc)
            return
        if drop is None:
            return
        new, self._term_drops_seen = total - self._term_drops_seen, total
        self._next_term_report = now + TERM_DROP_REPORT_INTERVAL
        logger.warning(
            "endpoint filter: dropped %d SETUP(s) for their term length; the last from %s announced a %d-byte term "
            "(%s). Clients that publish with term-length=65536 (Java: -Daeron.term.buffer.length=65536) are "
            "outside this limit", new, drop.address, drop.term_length,
            large_term_rule(self._config, _TERM_CAUSES[drop.reason]))

    def counters(self) -> dict[str, int]:
        """The filter's drop counters, named ``filter: <reason>``."""
        if self._filter is None:
            return {}
        try:
            return {f"filter: {name}": int(value) for name, value in self._filter.counters().items()}
        except Exception as exc:  # noqa: BLE001 - telemetry must not stop the server
            logger.warning("endpoint filter counters unavailable: %s", exc)
            return {}

    @staticmethod
    def _call(method: Callable[P, None], *args: P.args, **kwargs: P.kwargs) -> None:
        """``method(*args)`` of the filter; a failure is logged, the server goes on."""
        try:
            method(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - a filter failure is logged, the server goes on
            logger.error("endpoint filter %s%r failed: %s", method.__name__, args, exc)
