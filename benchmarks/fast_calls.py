"""What the public classes' own fast-method descriptors save per call (A/B in one process).

    python -m benchmarks.fast_calls [--rounds 12] [--calls 300000]

aeron_py's hot calls (``sub.poll``, ``pub.offer``, ``pub.try_claim``, ``claim.commit``,
``idle.idle``) are raw fast-call methods of the extension's classes. CPython (3.11+)
specialises a call of a method descriptor only while ``type(self)`` is exactly the
descriptor's class; inherited by aeron_py's public classes from the pybind11 bases, every
call missed that check. Since then each public class holds its own copy
(``_aeron._adopt_fast_methods``, cpp/binding/fastcall.hpp).

This benchmark times each path written as a user writes it (the method looked up on the
object in every call) in both modes, in ONE process, alternating every round:

* ``own``: the descriptors as aeron_py installs them (the default a user gets);
* ``inherited``: those descriptors deleted from the public classes, so the calls go to
  the pybind11 base's (what every release before this one did).

Each round compiles fresh copies of the loops, so no call site keeps a specialisation
from the other mode. One embedded ``MediaDriver()`` on its defaults (SHARED, backoff),
``aeron:ipc``, 32 B. Reported: ns per iteration, the median over rounds, and the speed-up
inherited / own, in ``results/fast_calls.json`` and ``fast_calls.png``.
"""
from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this tree's aeron_py and the benchmarks package

from benchmarks.harness import (RESULTS_DIR, machine_info, pyplot, save_grouped_bars, save_run,  # noqa: E402
                                wait_until)

from aeron_py import Aeron, MediaDriver, NoOpIdleStrategy, OfferError  # noqa: E402
from aeron_py.publication import Claim, ExclusivePublication  # noqa: E402
from aeron_py.subscription import Subscription  # noqa: E402

log = logging.getLogger("benchmarks.fast_calls")

#: The descriptors the A/B removes and restores: (class, method name).
ADOPTED = ((Subscription, "poll"), (ExclusivePublication, "offer"), (ExclusivePublication, "try_claim"),
           (Claim, "commit"), (NoOpIdleStrategy, "idle"))

LOOPS = '''
def empty_poll(sub, pub, idle, handler, msg, n):
    for _ in range(n):
        sub.poll(handler, 10)

def offer_then_poll(sub, pub, idle, handler, msg, n):
    for _ in range(n):
        pub.offer(msg)
        sub.poll(handler, 10)

def claim_commit_then_poll(sub, pub, idle, handler, msg, n):
    for _ in range(n):
        try:
            claim = pub.try_claim(32)
        except OfferError:  # a term boundary (ADMIN_ACTION) or back pressure: the next one goes
            pass
        else:
            claim.commit()
        sub.poll(handler, 10)

def idle_noop(sub, pub, idle, handler, msg, n):
    for _ in range(n):
        idle.idle(0)
'''
PATHS = ("empty_poll", "offer_then_poll", "claim_commit_then_poll", "idle_noop")


def fresh_loops() -> dict[str, Any]:
    namespace: dict[str, Any] = {"OfferError": OfferError}
    exec(compile(LOOPS, "<fast_calls loops>", "exec"), namespace)
    return namespace


def set_mode(saved: dict[tuple[type, str], Any], own: bool) -> None:
    for (cls, name), descriptor in saved.items():
        if own:
            setattr(cls, name, descriptor)
        elif name in cls.__dict__:
            delattr(cls, name)


def measure(rounds: int, calls: int) -> dict[str, Any]:
    saved = {(cls, name): cls.__dict__[name] for cls, name in ADOPTED}
    samples: dict[str, dict[str, list[float]]] = {mode: {p: [] for p in PATHS} for mode in ("own", "inherited")}
    msg = bytes(32)
    with MediaDriver() as driver, Aeron(driver=driver) as aeron:
        sub = aeron.add_subscription("aeron:ipc", 1101)
        pub = aeron.add_exclusive_publication("aeron:ipc", 1101)
        wait_until(lambda: sub.is_connected and pub.is_connected, 10.0, "IPC publication connected")
        idle = NoOpIdleStrategy()

        def handler(data: bytes, header: Any) -> None:
            pass
        try:
            for r in range(rounds):
                for mode in ("own", "inherited") if r % 2 == 0 else ("inherited", "own"):
                    set_mode(saved, mode == "own")
                    loops = fresh_loops()
                    for path in PATHS:
                        loop = loops[path]
                        loop(sub, pub, idle, handler, msg, 2_000)  # warm up: let the call sites specialise
                        start = time.perf_counter_ns()
                        loop(sub, pub, idle, handler, msg, calls)
                        samples[mode][path].append((time.perf_counter_ns() - start) / calls)
                log.info("round %d/%d done", r + 1, rounds)
        finally:
            set_mode(saved, True)
    median = {mode: {p: round(statistics.median(v), 2) for p, v in by_path.items()} for mode, by_path in samples.items()}
    speedup = {p: round(median["inherited"][p] / median["own"][p], 3) for p in PATHS}
    return {"ns_per_iteration": median, "speedup_own_over_inherited": speedup, "samples": samples}


def render(results: dict[str, Any], out: Path) -> None:
    plt = pyplot()
    ns = results["ns_per_iteration"]
    fig, ax = plt.subplots(figsize=(8, 4))
    xs = range(len(PATHS))
    ax.bar([x - 0.2 for x in xs], [ns["inherited"][p] for p in PATHS], 0.4, label="inherited descriptor (before)")
    ax.bar([x + 0.2 for x in xs], [ns["own"][p] for p in PATHS], 0.4, label="own descriptor (now)")
    ratios = [(max(ns["own"][p], ns["inherited"][p]), f"{results['speedup_own_over_inherited'][p]:.2f}x")
              for p in PATHS]
    save_grouped_bars(fig, ax, out, PATHS, ratios, ylabel="ns per iteration (median of rounds)",
                      title=f"aeron_py fast calls, one process, Python {results['machine']['python']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="Writes results/fast_calls.json and fast_calls.png (see the module "
                                            "docstring for the method).")
    parser.add_argument("--rounds", type=int, default=12, help="rounds, each timing both modes (12)")
    parser.add_argument("--calls", type=int, default=300_000, help="iterations per timed loop (300000)")
    parser.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.calls < 1:
        parser.error("--rounds and --calls must be at least 1")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    started = time.monotonic()
    results = {"method": __doc__, "rounds": args.rounds, "calls": args.calls, "machine": machine_info(),
               **measure(args.rounds, args.calls)}
    results["duration_s"] = round(time.monotonic() - started, 1)
    headline = {f"speedup_{p}": results["speedup_own_over_inherited"][p] for p in PATHS}
    json_path, png_path = save_run(args.out_dir, "fast_calls", results, headline, render)
    for p in PATHS:
        print(f"{p:24s} own {results['ns_per_iteration']['own'][p]:8.1f} ns   inherited "
              f"{results['ns_per_iteration']['inherited'][p]:8.1f} ns   speed-up "
              f"{results['speedup_own_over_inherited'][p]:.3f}")
    print(f"wrote {json_path} and {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
