"""Random duologue session ids (docs/spec/echo2.md §2/§3 "Session allocator").

Ids come from ``[minimum, maximum)``, are never handed out twice until freed, and the
memory used is proportional to the ids in use (a set), not to the range.  Allocation
draws random candidates a bounded number of times, then falls back to a scan that
starts at a random point and wraps; the scan inspects at most ``in_use + 1`` ids, so it
always terminates.
"""

from __future__ import annotations

import random

from ...validation import require_int
from .ports import AllocationError

#: Range the server draws duologue ids from (the driver reserves 1..2147483647).
DEFAULT_SESSION_MIN = 1
DEFAULT_SESSION_MAX = 2**31 - 1

_RANDOM_TRIES = 32


class SessionAllocator:
    """Hands out random ints from ``[minimum, maximum)``, each at most once until freed."""

    def __init__(
        self,
        minimum: int = DEFAULT_SESSION_MIN,
        maximum: int = DEFAULT_SESSION_MAX,
        rng: random.Random | None = None,
    ) -> None:
        require_int("session minimum", minimum)
        require_int("session maximum", maximum)
        if minimum >= maximum:
            raise ValueError(f"session range [{minimum}, {maximum}) is empty")
        self._min = minimum
        self._max = maximum
        self._rng = rng if rng is not None else random.SystemRandom()
        self._used: set[int] = set()

    @property
    def size(self) -> int:
        """Number of ids in the range."""
        return self._max - self._min

    @property
    def in_use(self) -> int:
        """Number of ids currently allocated."""
        return len(self._used)

    def __contains__(self, session_id: object) -> bool:
        """True when ``session_id`` is currently allocated."""
        return session_id in self._used

    def allocate(self) -> int:
        """Return a fresh id; raises :class:`AllocationError` when none is free."""
        if len(self._used) >= self.size:
            raise AllocationError(
                f"all {self.size} session ids in [{self._min}, {self._max}) are in use"
            )
        for _ in range(_RANDOM_TRIES):
            candidate = self._rng.randrange(self._min, self._max)
            if candidate not in self._used:
                self._used.add(candidate)
                return candidate
        start = self._rng.randrange(self.size)
        for step in range(len(self._used) + 1):
            candidate = self._min + (start + step) % self.size
            if candidate not in self._used:
                self._used.add(candidate)
                return candidate
        raise AssertionError("unreachable: fewer ids in use than the range holds")

    def free(self, session_id: int) -> None:
        """Return an allocated id; freeing twice (or an unknown id) raises ValueError."""
        if session_id not in self._used:
            raise ValueError(f"cannot free session id {session_id!r}: not allocated (double free?)")
        self._used.remove(session_id)
