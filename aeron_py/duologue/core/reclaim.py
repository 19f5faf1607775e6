"""Room for a newcomer on a full server: unjoined duologues reclaimed from sources that never join.

A duologue is *unjoined* from its CONNECT until its client's image appears.  A HELLO
flood fills every place with unjoined duologues, and each would hold its place until
``expiry`` (10 s): as each expires, the flood's next HELLO takes it, so a legitimate
client is refused ``server full`` for as long as the flood lasts and one expiry after.

The rule (:meth:`Reclaim.make_room`): when the server is full, a HELLO from a source
*in good standing* that holds no place closes the oldest unjoined duologue that has
waited at least ``reclaim_after`` seconds (reason ``reclaimed``) and takes its place.  A source falls
out of good standing for ``standing_window`` seconds whenever one of its duologues is
reclaimed or expires unjoined; out of standing it may still take a free place, but
never another's.  A flood's sources therefore each lose standing after at most one
reclaim, and from then on the places they hold go to whoever joins.  With ``S``
flooding sources and ``P`` places, every source has lost its standing after about
``S * reclaim_after / P`` seconds (250 sources on 64 places: ~8 s); from then on the
first HELLO of a legitimate client is admitted once one unjoined duologue is
``reclaim_after`` old, for as long as the sources stay out of standing (a source that
keeps failing to join keeps losing it).

A client in good standing joins within ``reclaim_after`` of its CONNECT (a round trip
and Aeron's SETUP exchange: milliseconds on a LAN, well under a second across the
Internet), so only duologues nobody came for are reclaimed.  Sources are keyed like
the per-IP limit (IPv6 by prefix); the table of sources out of standing holds at most
:data:`MAX_SOURCES_OUT_OF_STANDING` (the oldest entry makes way), so its memory is
bounded whatever the number of addresses a flood uses.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

from .contract import Action, CloseReason, ServerConfig
from .duologues import DuologueTable
from .expiring import ExpiringKeys
from .records import DuologueRecord

__all__ = ["MAX_SOURCES_OUT_OF_STANDING", "Reclaim"]

logger = logging.getLogger("aeron_py.duologue.core.server")

#: Most sources remembered as out of good standing at once.
MAX_SOURCES_OUT_OF_STANDING = 65_536

CloseFn = Callable[[DuologueRecord, CloseReason, float], list[Action]]


class Reclaim:
    """Which sources are in good standing, and the one rule that reclaims a place for them."""

    def __init__(self, config: ServerConfig, duologues: DuologueTable, close: CloseFn) -> None:
        self._config = config
        self._duologues = duologues
        self._close = close
        self._out_of_standing = ExpiringKeys(config.standing_window, MAX_SOURCES_OUT_OF_STANDING)
        self.reclaimed = 0

    @property
    def sources_out_of_standing(self) -> int:
        """Sources remembered as out of good standing (some may be back in it by now)."""
        return len(self._out_of_standing)

    def in_good_standing(self, ip: str, now: float) -> bool:
        """No duologue of ``ip``'s source was reclaimed or expired unjoined in the last
        ``standing_window`` seconds."""
        return not self._out_of_standing.holds(self._duologues.per_ip.source_key(ip), now)

    def lose_standing(self, ip: str, now: float) -> None:
        """``ip``'s source loses its standing: a duologue of it closed with no client ever
        joined, or it floods (:mod:`.hello_admission`)."""
        self._out_of_standing.hold(self._duologues.per_ip.source_key(ip), now)

    def make_room(self, ip: str, now: float) -> list[Action] | None:
        """On a full server: close the oldest unjoined duologue for ``ip``'s HELLO, if the
        rule allows (its actions), else None."""
        after = self._config.reclaim_after
        if after is None:
            return None
        oldest = self._duologues.oldest_unjoined()
        if oldest is None or now - oldest.created_at < after:
            return None
        if self._duologues.per_ip.count(ip) > 0 or not self.in_good_standing(ip, now):
            return None
        self.reclaimed += 1
        logger.debug("duologue %d of %s reclaimed for a HELLO from %s: no client after %.3f s",
                     oldest.session_id, oldest.owner_ip, ip, now - oldest.created_at)
        self.lose_standing(oldest.owner_ip, now)
        return self._close(oldest, CloseReason.RECLAIMED, now)
