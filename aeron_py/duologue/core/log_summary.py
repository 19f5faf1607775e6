"""Repeated log lines folded into one line per reason per interval.

Under a flood the server would otherwise write one line per refused HELLO or
dropped reply (tens of MB a minute).  :class:`LogSummary` logs the first line of a
reason at once, counts the repeats for ``interval`` seconds, and then writes one
summary line with the count and the last message's text:

>>> summary = LogSummary(logging.getLogger("aeron_py.echo"), interval=10.0)
>>> summary.log(logging.INFO, "refuse:max_clients", now, "refusing HELLO from %s", ip)
>>> summary.flush(now)   # from the loop's housekeeping: writes due summaries

Log volume is therefore bounded by (number of reasons) x 2 lines per interval,
whatever the traffic.  :attr:`suppressed` counts every folded line (cumulative,
per reason) for telemetry.
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

__all__ = ["LogSummary"]


@dataclass
class _Window:
    level: int
    opened: float
    repeats: int = 0
    last: tuple[str, tuple[Any, ...]] = ("", ())


class LogSummary:
    """Rate-limits log lines by reason: first at once, then one count per ``interval``."""

    def __init__(self, logger: logging.Logger, interval: float = 10.0) -> None:
        if not interval > 0:
            raise ValueError(f"LogSummary interval must be > 0 seconds, got {interval!r}")
        self._logger = logger
        self.interval = interval
        self._windows: dict[str, _Window] = {}
        self.suppressed: Counter[str] = Counter()

    def log(self, level: int, reason: str, now: float, msg: str, *args: Any) -> None:
        """Log ``msg % args`` unless ``reason`` was already logged less than ``interval`` ago."""
        window = self._windows.get(reason)
        if window is None:
            self._windows[reason] = _Window(level, now)
            self._logger.log(level, msg, *args)
            return
        window.repeats += 1
        window.level = max(window.level, level)
        window.last = (msg, args)
        self.suppressed[reason] += 1

    def flush(self, now: float, force: bool = False) -> None:
        """Write the summary of every reason whose interval is over (all with ``force``)."""
        for reason, window in list(self._windows.items()):
            if not force and now - window.opened < self.interval:
                continue
            del self._windows[reason]
            if window.repeats:
                msg, args = window.last
                try:
                    last = msg % args if args else msg
                except (TypeError, ValueError):
                    last = f"{msg} {args!r}"
                self._logger.log(window.level, "%d more '%s' in %.1f s (last: %s)", window.repeats, reason,
                                 max(now - window.opened, 0.0), last)
