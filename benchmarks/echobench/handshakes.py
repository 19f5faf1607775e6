"""Part 2: handshakes per second, sequential and concurrent (see ``echo_bench.py``)."""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from .children import Children, RoleChild
from .plan import CLIENT_TIMEOUT_S, Plan, server_config, sources, summary_ms

log = logging.getLogger("benchmarks.echo_bench")


def _wait_for_server(server: RoleChild, predicate: Callable[[dict[str, Any]], bool], timeout: float,
                     step: float = 0.25) -> tuple[dict[str, Any], float]:
    """Poll the server's stats until ``predicate`` holds or ``timeout``; (stats, seconds waited)."""
    start = time.monotonic()
    while True:
        stats = server.request({"op": "stats"}, 15.0)
        waited = time.monotonic() - start
        if predicate(stats) or waited >= timeout:
            return stats, waited
        time.sleep(step)


def _handshake_summary(reply: dict[str, Any], connects: int) -> dict[str, Any]:
    ok = reply["ok"]
    return {
        "clients": reply["n"], "completed": ok, "failures": reply["failures"], "wall_s": reply["wall_s"],
        "rate_per_s": round(ok / reply["wall_s"], 1) if reply["wall_s"] > 0 else None,
        "open_phase_s": reply.get("open_s"), "server_connects": connects,
        "duplicate_connects": max(0, connects - ok),
        "per_client_open_to_first_echo_ms": summary_ms(reply["total_s"]),
        "hello_to_connect_ms": summary_ms(reply["handshake_s"]),
        "phase_ms": {name: summary_ms(values) for name, values in reply["phases_s"].items()},
        "phase_meaning": "join: initial channels connected; hello: first HELLO until CONNECT; "
                         "duologue: duologue channels connected; echo: first ECHO answered",
    }


def bench_handshakes(plan: Plan, children: Children) -> dict[str, Any]:
    """Sequential then concurrent HELLO -> CONNECT -> first ECHO completions on one server."""
    max_clients = 2 * max(plan.sequential, *plan.concurrent)
    srcs = sources(plan.handshake_sources)
    out: dict[str, Any] = {"settings": {"sources": len(srcs), "max_clients": max_clients,
                                        "max_per_ip": max_clients, "client_timeout_s": CLIENT_TIMEOUT_S}}
    with children.scope():
        server, _ = children.start("hs-server", "serve", server_config(18200, 18300, max_clients, max_clients))
        worker, _ = children.start("hs-clients", "clients", {"port": 18200})
        before = server.request({"op": "stats"}, 15.0)["connects"]
        log.info("handshakes: %d sequential", plan.sequential)
        reply = worker.request({"op": "sequential", "n": plan.sequential, "sources": srcs, "timeout": CLIENT_TIMEOUT_S},
                               60.0 + plan.sequential * 2.0)
        stats, _ = _wait_for_server(server, lambda s: s["duologues"] == 0, 15.0)
        out["sequential"] = _handshake_summary(reply, stats["connects"] - before)
        out["concurrent"] = []
        for k in plan.concurrent:
            log.info("handshakes: %d concurrent", k)
            before = stats["connects"]
            reply = worker.request({"op": "open", "n": k, "sources": srcs, "timeout": CLIENT_TIMEOUT_S, "batch": k},
                                   120.0 + k * 0.5)
            after = server.request({"op": "stats"}, 15.0)
            worker.request({"op": "close_all"}, 60.0)
            summary = _handshake_summary(reply, after["connects"] - before)
            # extras expire unused after the server's expiry; wait so runs stay independent
            stats, waited = _wait_for_server(server, lambda s: s["duologues"] == 0, 20.0)
            summary["server_idle_again_after_s"] = round(waited, 2)
            out["concurrent"].append(summary)
        out["server_stats"] = stats
    return out
