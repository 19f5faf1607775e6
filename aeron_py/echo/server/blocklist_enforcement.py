"""Blocklist enforcement: the list in force refuses HELLOs, fills the driver's filter,
and (``close_blocked``) ends the duologues of owners a new version blocks.

The file and its versions are :mod:`.blocklist_watch`'s; this mixin applies what it
reads: every tick one cheap check for a new version (or the re-read SIGHUP asked for),
then the driver's filter table, the core's duologues and a ``blocklist_reload``
telemetry event.
"""
from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from ..core.server import CloseDuologue

if TYPE_CHECKING:
    from ..blocklist import Blocklist
    from .blocklist_watch import BlocklistChange, BlocklistWatch
    from .endpoint_guard import EndpointGuard
    from ..core.server import Action, EchoServerCore
    from .options import ServerOptions
    from .telemetry import ServerTelemetry

__all__ = ["BlocklistEnforcement"]

logger = logging.getLogger("aeron_py.echo.server")


class BlocklistEnforcement:
    """Blocklist half of the server loop (a mixin: the state lives on the server)."""

    options: ServerOptions
    _core: EchoServerCore
    _guard: EndpointGuard | None
    _telemetry: ServerTelemetry | None
    _watch: BlocklistWatch | None
    _reload: bool

    if TYPE_CHECKING:
        def _execute(self, actions: list[Action], now: float) -> None: ...

    @property
    def blocklist_version(self) -> int:
        """1 for the blocklist read at start, +1 per new version put in force (0: none)."""
        return 0 if self._watch is None else self._watch.version

    def reload_blocklist(self) -> None:
        """Ask the loop to re-read the blocklist file now (what SIGHUP does)."""
        self._reload = True

    @property
    def _blocklist(self) -> Blocklist | None:
        return None if self._watch is None else self._watch.blocklist

    def _is_blocked(self, ip: str) -> str | None:
        """The core's ``is_blocked``: the matching entry's target, or None."""
        blocklist = self._blocklist
        entry = blocklist.match(ip, time.time()) if blocklist is not None else None
        return None if entry is None else entry.target

    def _check_blocklist(self, now: float) -> None:
        """Each tick: a new version of the file (one ``stat``), or the re-read asked for."""
        requested, self._reload = self._reload, False
        if self._watch is None:
            if requested:
                logger.info("blocklist reload requested but no blocklist file is configured")
            return
        change = self._watch.reload() if requested else self._watch.poll()
        if change is not None:
            self._apply_blocklist(change, now)

    def _apply_blocklist(self, change: BlocklistChange, now: float) -> None:
        """Put a new blocklist in force: the driver's filter, then (``close_blocked``) the
        duologues of owners it now blocks; new HELLOs see it through ``_is_blocked``."""
        if self._guard is not None:
            self._guard.set_blocklist(change.blocklist)
        closed = 0
        if self.options.close_blocked:
            actions = self._core.close_blocked(now)
            closed = sum(1 for a in actions if isinstance(a, CloseDuologue))
            self._execute(actions, now)
        if closed:
            logger.warning("blocklist version %d: closed %d duologue(s) of newly blocked owners",
                           change.version, closed)
        if self._telemetry is not None:
            wall = time.time()
            self._telemetry.blocklist_reload(change, active=sum(1 for e in change.blocklist if e.active(wall)),
                                             duologues_closed=closed)
