"""Blocklist enforcement: the list in force refuses HELLOs, fills the driver's filter,
and (``close_blocked``) ends the duologues of owners a new version blocks.

The file and its versions are :mod:`.blocklist_watch`'s (whose ``is_blocked`` the core
asks about each HELLO); :class:`BlocklistEnforcement` applies what it reads: every
tick one cheap check for a new version (or the re-read SIGHUP asked for), then the
driver's filter table, the core's duologues and a ``blocklist_reload`` telemetry event.
"""
from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from .steps import Steps
from ..core.contract import CloseDuologue
from ..core.protocol import IPC_SOURCE

if TYPE_CHECKING:
    from .blocklist_watch import BlocklistChange, BlocklistWatch
    from .endpoint_guard import EndpointGuard
    from ..core.server import DuologueServerCore
    from .options import ServerOptions
    from .telemetry import ServerTelemetry

__all__ = ["BlocklistEnforcement"]

logger = logging.getLogger("aeron_py.duologue.server")


class BlocklistEnforcement:
    """Puts each new version of the blocklist file in force (no-op without a file)."""

    def __init__(self, watch: BlocklistWatch | None, options: ServerOptions, core: DuologueServerCore,
                 guard: EndpointGuard, telemetry: ServerTelemetry | None) -> None:
        self._watch = watch
        self._options = options
        self._core = core
        self._guard = guard
        self._telemetry = telemetry

    def check(self, now: float, requested: bool) -> Steps:
        """Each tick: a new version of the file (one ``stat``), or the re-read asked for
        (``requested``); the core's actions of closing blocked duologues are yielded."""
        if self._watch is None:
            if requested:
                logger.info("blocklist reload requested but no blocklist file is configured")
            return 0
        change = self._watch.reload() if requested else self._watch.poll()
        if change is None:
            return 0
        return (yield from self._apply(self._watch, change, now))

    def _apply(self, watch: BlocklistWatch, change: BlocklistChange, now: float) -> Steps:
        """Put a new blocklist in force: the driver's filter, then (``close_blocked``) the
        duologues of owners it now blocks; new HELLOs see it through the glue's ``blocked`` fact."""
        self._guard.set_blocklist(change.blocklist)
        closed = 0
        if self._options.close_blocked:
            blocked = {ip for ip in self._core.owner_ips() if ip != IPC_SOURCE and watch.is_blocked(ip) is not None}
            actions = self._core.close_blocked(blocked, now)
            closed = sum(1 for a in actions if isinstance(a, CloseDuologue))
            yield actions
        if closed:
            logger.warning("blocklist version %d: closed %d duologue(s) of newly blocked owners",
                           change.version, closed)
        if self._telemetry is not None:
            wall = time.time()
            self._telemetry.blocklist_reload(change, active=sum(1 for e in change.blocklist if e.active(wall)),
                                             duologues_closed=closed)
        return 1
