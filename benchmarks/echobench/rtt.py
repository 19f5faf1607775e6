"""Part 1: Echo duologue RTT against raw aeron_py ping-pong (see ``echo_bench.py``)."""
from __future__ import annotations

import logging
import statistics
from typing import Any

from benchmarks.harness.probes import driver_python_seconds

from .children import Children
from .plan import MESSAGE, PAYLOAD, TERM_LENGTH, Plan, server_config, summary_us

log = logging.getLogger("benchmarks.echo_bench")


def _rtt_round(children: Children, kind: str, server_role: str, server_cfg: dict[str, Any], client_role: str,
               client_cfg: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One round: a fresh server-side and client-side process; samples plus CPU per round trip."""
    with children.scope():
        _, ready = children.start(f"rtt-{kind}-server", server_role, server_cfg)
        server_cpu = driver_python_seconds(ready["pid"])
        client, _ = children.start(f"rtt-{kind}-client", client_role, client_cfg)
        reply = client.recv(timeout, f"{kind} RTT result")
        server_used = {k: v - server_cpu[k] for k, v in driver_python_seconds(ready["pid"]).items()}
    trips = client_cfg["count"]
    per_trip = {side: {k: round(v * 1e6 / trips, 1) for k, v in used.items()}
                for side, used in (("server", server_used), ("client", reply["cpu_s"]))}
    return {"samples_us": reply["samples_us"], "cpu_us_per_round_trip": per_trip}


def bench_rtt(plan: Plan, children: Children) -> dict[str, Any]:
    """Echo duologue RTT vs raw aeron_py ping-pong, alternating rounds.

    Each round starts fresh processes.  The headline pools every round's samples
    (rounds on this 2-core VM are bimodal: ~150 or ~300 us depending on where the
    scheduler puts the four active threads); the per-round summaries are kept too.
    CPU per round trip (driver and Python threads of each side) includes idle polling
    between messages (so it grows with the RTT), each client's start-up and handshake,
    and the server's idling while its client starts: an upper bound, for comparison.
    """
    samples: dict[str, list[float]] = {"echo": [], "raw": []}
    rounds: dict[str, list[dict[str, Any]]] = {"echo": [], "raw": []}
    total = plan.rtt_warmup + plan.rtt_samples
    timeout = 60.0 + total * 0.01
    for r in range(plan.rtt_rounds):
        port = 18000 + 20 * r
        raw_ports = {"data_port": port + 2, "control_port": port + 3}
        for kind, server_role, server_cfg, client_role, client_cfg in (
                ("echo", "serve", server_config(port, port + 10, 4, 3), "echo_rtt", {"port": port}),
                ("raw", "pong", raw_ports, "ping", dict(raw_ports))):
            log.info("RTT round %d/%d: %s", r + 1, plan.rtt_rounds, kind)
            result = _rtt_round(children, kind, server_role, server_cfg, client_role,
                                dict(client_cfg, count=total, warmup=plan.rtt_warmup), timeout)
            samples[kind] += result["samples_us"]
            rounds[kind].append({**summary_us(result["samples_us"]),
                                 "cpu_us_per_round_trip": result["cpu_us_per_round_trip"]})
    pooled = {kind: summary_us(values) for kind, values in samples.items()}
    median = {kind: {k: statistics.median(r[k] for r in rs) for k in ("p50", "p99")} for kind, rs in rounds.items()}
    ratio = {q: round(pooled["echo"][q] / pooled["raw"][q], 3) for q in ("p50", "p99")}
    cpu = {kind: {side: {k: statistics.median(r["cpu_us_per_round_trip"][side][k] for r in rs)
                         for k in ("python", "driver")} for side in ("server", "client")}
           for kind, rs in rounds.items()}
    return {
        "settings": {"message_bytes": len(MESSAGE), "payload_bytes": len(PAYLOAD), "in_flight": 1,
                     "warmup_per_round": plan.rtt_warmup, "samples_per_round": plan.rtt_samples,
                     "rounds": plan.rtt_rounds, "term_length": TERM_LENGTH,
                     "summary": "echo_us/raw_us/ratio pool every round's samples; median_of_rounds per round"},
        "echo_us": pooled["echo"], "raw_us": pooled["raw"], "ratio": ratio,
        "median_of_rounds_us": median,
        "median_of_rounds_ratio": {q: round(median["echo"][q] / median["raw"][q], 3) for q in ("p50", "p99")},
        "cpu_us_per_round_trip_median": cpu,
        "rounds": rounds,
        "target": {"max_ratio": 1.5, "p50_holds": ratio["p50"] <= 1.5, "p99_holds": ratio["p99"] <= 1.5},
    }
