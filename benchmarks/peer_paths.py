"""Per-path costs of one library's natural API, for the peer benchmark (``peers.py``).

Run in a child process by ``peer_roles.py {aeron_py|pyaeron} paths``: one exclusive IPC
publication and one subscription on the shared driver, each path timed in a function (so
its loop variables are fast locals) and reported in nanoseconds per operation, best of
``--repeats``. What each path runs, per library (the nearest equivalent where pyaeron has
no such call; the JSON says which):

==================  ===========================================  ===========================================
path                aeron_py                                     pyaeron 0.1.0
==================  ===========================================  ===========================================
empty_poll          ``sub.poll(handler, 10)``, nothing to read   the same call
empty_poll_bound    ``poll(handler, 10)`` with ``poll = sub.poll``  the same call
                    bound once before the loop
poll                ``sub.poll(handler, 256)``, handler gets     the same call, handler gets a
                    ``bytes``                                    ``BufferView`` (its only form)
poll_zero_copy      ``sub.poll(handler, 256, zero_copy=True)``   the same as ``poll`` (its views are
                                                                 zero-copy)
controlled_poll     ``sub.controlled_poll(handler, 256)``        nearest: ``poll`` (no controlled poll)
poll_batch          ``sub.poll_batch(256)``: a list of bytes     nearest: ``poll`` with a handler
                                                                 appending ``bytes(view)`` to a list
offer               ``pub.offer(msg)``                           the same call
offer_batch         ``pub.offer_batch(msgs)``, 100 per call      nearest: ``for m in msgs: pub.offer(m)``
try_claim           ``c = pub.try_claim(32); c.data[:] = msg;``  ``c = pub.try_claim(32); c.buffer[:] =``
                    ``c.commit()``                               ``msg; c.commit()``
==================  ===========================================  ===========================================

Receive paths drain ``BATCH`` pre-filled 32 B messages (filled untimed, no publisher
running while timed); send paths time ``BATCH`` sends into an empty log and drain it
untimed afterwards (a send refused at a term boundary or by a publication limit the
driver has not moved yet is retried, inside the timed loop, for both libraries). Every
handler has the same body (count the message). Every path but ``empty_poll_bound`` looks
the method up on its object in each call (``sub.poll(...)``, ``pub.offer(...)``), as a
user's loop does; CPython specialises that call for each library's own class.
"""
from __future__ import annotations

import time
from typing import Any, Callable

MSG_LEN = 32
BATCH = 20_000
OFFER_BATCH_SIZE = 100
EMPTY_POLLS = 500_000
FILL_TIMEOUT_S = 15.0

PATHS = ("empty_poll", "empty_poll_bound", "poll", "poll_zero_copy", "controlled_poll", "poll_batch", "offer", "offer_batch",
         "try_claim")
NEAREST = {  # what pyaeron runs for paths it has no call of its own for
    "poll_zero_copy": "poll (BufferView is its only, zero-copy form)",
    "controlled_poll": "poll (pyaeron has no controlled poll)",
    "poll_batch": "poll with a handler appending bytes(view) to a list",
    "offer_batch": "a Python loop of offer()",
}


class PathError(RuntimeError):
    """A path could not be measured (a fill or drain did not finish in time)."""


def _ns_per_op(run: Callable[[], tuple[int, int]], repeats: int) -> float:
    """The best of ``repeats`` runs; ``run()`` returns (operations, nanoseconds timed)."""
    best = float("inf")
    for _ in range(repeats):
        ops, elapsed_ns = run()
        best = min(best, elapsed_ns / ops)
    return best


def _timed(body: Callable[[], int]) -> tuple[int, int]:
    start = time.perf_counter_ns()
    ops = body()
    return ops, time.perf_counter_ns() - start


class _Rig:
    """One publication and one subscription of the library under test, and their helpers."""

    def __init__(self, library: str, pub: Any, sub: Any) -> None:
        self.library, self.pub, self.sub = library, pub, sub
        self.msg = bytes(MSG_LEN)
        self.accepted: Callable[[Any], bool] = (lambda r: r > 0) if library == "aeron_py" else bool
        self.seen = 0

    def handler(self, data: Any, header: Any) -> None:  # not timed itself: each path binds its own
        self.seen += 1

    def fill(self, count: int) -> None:
        offer, msg, accepted = self.pub.offer, self.msg, self.accepted
        deadline = time.monotonic() + FILL_TIMEOUT_S
        done = 0
        while done < count:
            if accepted(offer(msg)):
                done += 1
            elif time.monotonic() > deadline:
                raise PathError(f"fill: {done} of {count} offered in {FILL_TIMEOUT_S}s")

    def drain(self) -> None:
        """Reads everything in the log (untimed), so a send path starts from an empty one."""
        deadline = time.monotonic() + FILL_TIMEOUT_S
        poll = self.sub.poll

        def skip(data: Any, header: Any) -> None:
            pass

        while poll(skip, 4096) > 0:
            if time.monotonic() > deadline:
                raise PathError("drain did not finish")


def _counting_drain(rig: _Rig, poll_once: Callable[[], int]) -> Callable[[], tuple[int, int]]:
    """A run: fill BATCH (untimed), then time ``poll_once`` (returns messages read) until all are read."""
    def run() -> tuple[int, int]:
        rig.fill(BATCH)
        left = BATCH
        start = time.perf_counter_ns()
        deadline = start + int(FILL_TIMEOUT_S * 1e9)
        polls = 0
        while left > 0:
            left -= poll_once()
            polls += 1
            if polls & 0x3FF == 0 and time.perf_counter_ns() > deadline:
                raise PathError(f"{left} messages not read in {FILL_TIMEOUT_S}s")
        return BATCH, time.perf_counter_ns() - start
    return run


def receive_paths(rig: _Rig, repeats: int) -> dict[str, float]:
    sub, out = rig.sub, {}
    seen = [0]

    def count(data: Any, header: Any) -> None:
        seen[0] += 1

    def empty() -> int:
        for _ in range(EMPTY_POLLS):
            sub.poll(count, 10)
        return EMPTY_POLLS

    def empty_bound() -> int:
        poll = sub.poll
        for _ in range(EMPTY_POLLS):
            poll(count, 10)
        return EMPTY_POLLS

    rig.drain()
    out["empty_poll"] = _ns_per_op(lambda: _timed(empty), repeats)
    out["empty_poll_bound"] = _ns_per_op(lambda: _timed(empty_bound), repeats)
    out["poll"] = _ns_per_op(_counting_drain(rig, lambda: sub.poll(count, 256)), repeats)
    if rig.library == "aeron_py":
        out["poll_zero_copy"] = _ns_per_op(_counting_drain(rig, lambda: sub.poll(count, 256, zero_copy=True)),
                                           repeats)
        out["controlled_poll"] = _ns_per_op(_counting_drain(rig, lambda: sub.controlled_poll(count, 256)), repeats)
        out["poll_batch"] = _ns_per_op(_counting_drain(rig, lambda: len(sub.poll_batch(256))), repeats)
    else:
        out["poll_zero_copy"] = out["controlled_poll"] = out["poll"]
        kept: list[bytes] = []

        def keep(view: Any, header: Any) -> None:
            kept.append(bytes(view))

        def batch_like() -> int:
            kept.clear()
            sub.poll(keep, 256)
            return len(kept)
        out["poll_batch"] = _ns_per_op(_counting_drain(rig, batch_like), repeats)
    return out


def _retry(send: Callable[[], bool]) -> int:
    """1 once ``send()`` is accepted within RETRY_S, else 0 (the run then fails its count)."""
    deadline = time.monotonic() + RETRY_S
    while time.monotonic() < deadline:
        if send():
            return 1
    return 0


def _timed_sends(rig: _Rig, send_all: Callable[[], int]) -> Callable[[], tuple[int, int]]:
    def run() -> tuple[int, int]:
        rig.drain()
        sent, elapsed_ns = _timed(send_all)
        if sent != BATCH:
            raise PathError(f"only {sent} of {BATCH} accepted into an empty log")
        return BATCH, elapsed_ns
    return run


RETRY_S = 1.0  # a refused send (term boundary, or a publication limit the driver has not moved yet) retried


def send_paths(rig: _Rig, repeats: int) -> dict[str, float]:
    pub, msg, out = rig.pub, rig.msg, {}
    accepted = rig.accepted
    msgs = [msg] * OFFER_BATCH_SIZE

    # Each library's own test of an accepted offer, written inline as a user would.
    def offers_aeron_py() -> int:
        ok = 0
        for _ in range(BATCH):
            if pub.offer(msg) > 0:
                ok += 1
            else:
                ok += _retry(lambda: accepted(pub.offer(msg)))
        return ok

    def offers_pyaeron() -> int:
        ok = 0
        for _ in range(BATCH):
            if pub.offer(msg):
                ok += 1
            else:
                ok += _retry(lambda: accepted(pub.offer(msg)))
        return ok

    offers = offers_aeron_py if rig.library == "aeron_py" else offers_pyaeron

    out["offer"] = _ns_per_op(_timed_sends(rig, offers), repeats)
    if rig.library == "aeron_py":
        from aeron_py import OfferError

        def batches() -> int:
            ok = 0
            for _ in range(BATCH // OFFER_BATCH_SIZE):
                n = pub.offer_batch(msgs)
                if n != OFFER_BATCH_SIZE:
                    n += _retry(lambda: pub.offer_batch(msgs[n:]) == OFFER_BATCH_SIZE - n)
                    n = OFFER_BATCH_SIZE if n > OFFER_BATCH_SIZE - 1 else n
                ok += n
            return ok

        def claim_once() -> bool:
            try:
                claim = pub.try_claim(MSG_LEN)
            except OfferError as error:
                if error.retryable:
                    return False
                raise
            claim.data[:] = msg
            claim.commit()
            return True
    else:
        def batches() -> int:
            ok = 0
            for _ in range(BATCH // OFFER_BATCH_SIZE):
                for m in msgs:
                    if pub.offer(m):
                        ok += 1
                    else:
                        ok += _retry(lambda: bool(pub.offer(m)))
            return ok

        def claim_once() -> bool:
            claim = pub.try_claim(MSG_LEN)
            if not claim:  # a falsy OfferCode: retry
                return False
            claim.buffer[:] = msg
            claim.commit()
            return True

    def claims() -> int:
        ok = 0
        for _ in range(BATCH):
            ok += 1 if claim_once() else _retry(claim_once)
        return ok
    out["offer_batch"] = _ns_per_op(_timed_sends(rig, batches), repeats)
    out["try_claim"] = _ns_per_op(_timed_sends(rig, claims), repeats)
    rig.drain()
    return out


def measure(library: str, pub: Any, sub: Any, repeats: int) -> dict[str, float]:
    """ns per operation of every path in PATHS for ``library``."""
    rig = _Rig(library, pub, sub)
    result = {**receive_paths(rig, repeats), **send_paths(rig, repeats)}
    return {path: round(result[path], 2) for path in PATHS}
