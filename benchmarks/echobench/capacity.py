"""Part 3: how many connected duologues one server holds, and its memory (see ``echo_bench.py``)."""
from __future__ import annotations

import logging
import math
import time
from collections import Counter
from typing import Any

from benchmarks.harness import BenchError
from benchmarks.harness.probes import driver_log_usage, driver_python_percent, mapped_counter, process_memory

from .children import Children, RoleChild
from .plan import (CAPACITY_HELLO_INTERVAL_S, CLIENT_TIMEOUT_S, GIB, IDLE_CPU_WINDOW_S, PHASES, TERM_LENGTH, Plan,
                   server_config, sources, summary_ms)

log = logging.getLogger("benchmarks.echo_bench")


def _server_snapshot(server: RoleChild, server_pid: int, directory: str) -> dict[str, Any]:
    stats = server.request({"op": "stats"}, 15.0)
    return {"duologues": stats["duologues"], "connected": stats["connected"], "connects": stats["connects"],
            "counter_bytes": mapped_counter(directory), **driver_log_usage(directory),
            "process": process_memory(server_pid)}


def _settled(snap: dict[str, Any]) -> bool:
    """One image per duologue and one publication per duologue plus the broadcast."""
    n = snap["duologues"]
    return snap["images"] == n and snap["publications"] == n + 1 and snap["connected"] == n


def _capacity_step(plan: Plan, target: int, server: RoleChild, pid: int, directory: str, workers: list[RoleChild],
                   srcs: list[str], base: dict[str, Any], steps: list[dict[str, Any]], budget: float) -> dict[str, Any]:
    """Grow to ``target`` connected duologues, let the server settle, measure."""
    total = steps[-1]["total_connected"] if steps else 0
    need = target - total
    shares = [need // len(workers) + (w < need % len(workers)) for w in range(len(workers))]
    connects_before = steps[-1]["server_settled"]["connects"] if steps else base["connects"]
    t0 = time.monotonic()
    offset = total
    for w, share in zip(workers, shares):
        rotated = srcs[offset % len(srcs):] + srcs[:offset % len(srcs)]
        offset += share
        w.send({"op": "open", "n": share, "sources": rotated, "timeout": CLIENT_TIMEOUT_S,
                "batch": plan.capacity_batch, "hello_interval": CAPACITY_HELLO_INTERVAL_S, "budget_s": budget})
    replies = [w.recv(budget + 3 * CLIENT_TIMEOUT_S + 40, "open result") for w in workers]
    wall = time.monotonic() - t0
    ok = sum(r["ok"] for r in replies)
    total += ok
    failures = Counter[str]()
    for r in replies:
        failures.update(r["failures"])
    transient = _server_snapshot(server, pid, directory)
    settle_start = time.monotonic()
    settled = transient
    settle_for = plan.settle_timeout_s if plan.settle_every_step or target == plan.capacity_steps[-1] else 0.0
    while not _settled(settled) and time.monotonic() - settle_start < settle_for:
        time.sleep(0.5)
        settled = _server_snapshot(server, pid, directory)
    settle_s = time.monotonic() - settle_start
    clients_side = [w.request({"op": "stats"}, 30.0) for w in workers]
    idle_cpu = driver_python_percent([pid, *(w.proc.pid for w in workers)], IDLE_CPU_WINDOW_S)
    n = max(settled["duologues"], 1)
    return {
        "target": target, "opened": need, "connected_now": ok, "total_connected": total,
        "duplicate_connects": max(0, transient["connects"] - connects_before - ok),
        "failures": dict(failures), "connect_wall_s": round(wall, 2),
        "connect_rate_per_s": round(ok / wall, 1) if wall > 0 else None,
        "phase_p50_ms": {name: summary_ms([v for r in replies for v in r["phases_s"][name]]).get("p50")
                         for name in PHASES},
        "settled": _settled(settled), "settle_s": round(settle_s, 2),
        "server_transient": transient, "server_settled": settled,
        "counter_per_duologue_bytes": round((settled["counter_bytes"] - base["counter_bytes"]) / n),
        "logs_per_duologue_bytes": round((settled["log_bytes"] - base["log_bytes"]) / n),
        "counter_total_gib": round(settled["counter_bytes"] / GIB, 3),
        "logs_total_gib": round(settled["dir_bytes"] / GIB, 3),
        "client_side": [{k: c[k] for k in ("clients", "counter_bytes", "log_bytes")} for c in clients_side],
        "idle_cpu_percent": {"server": idle_cpu[0], "client_processes": idle_cpu[1:]},
    }


def bench_capacity(plan: Plan, children: Children) -> dict[str, Any]:
    """Ramp concurrent connected duologues while reading the server driver's memory."""
    srcs = sources(plan.capacity_sources)
    max_clients = plan.capacity_max_clients
    per_ip = math.ceil(max_clients / len(srcs)) + 8
    out: dict[str, Any] = {"settings": {
        "steps": list(plan.capacity_steps), "sources": len(srcs), "client_processes": plan.capacity_workers,
        "open_batch_per_process": plan.capacity_batch, "server_max_clients": max_clients,
        "server_max_per_ip": per_ip, "server_term_length": TERM_LENGTH, "client_term_length": TERM_LENGTH,
        "server_max_image_term_length": TERM_LENGTH, "budget_s": plan.capacity_budget_s,
        "client_hello_interval_s": CAPACITY_HELLO_INTERVAL_S, "client_timeout_s": CLIENT_TIMEOUT_S}}
    steps: list[dict[str, Any]] = []
    out["steps"] = steps
    started = time.monotonic()
    with children.scope():
        server, ready = children.start("cap-server", "serve", server_config(
            23000, 23010, max_clients, per_ip, max_image_term=TERM_LENGTH))
        directory, pid = ready["dir"], ready["pid"]
        workers = [children.start(f"cap-clients-{w}", "clients", {"port": 23000})[0]
                   for w in range(plan.capacity_workers)]
        base = _server_snapshot(server, pid, directory)
        out["baseline"] = base
        for target in plan.capacity_steps:
            left = plan.capacity_budget_s - (time.monotonic() - started)
            if left <= 0:
                out["stopped"] = f"time budget {plan.capacity_budget_s:.0f} s used up before step {target}"
                break
            log.info("capacity: growing to %d duologues", target)
            try:
                step = _capacity_step(plan, target, server, pid, directory, workers, srcs, base, steps, left)
            except BenchError as exc:
                out["stopped"] = f"step {target} failed: {exc}"
                log.error("capacity: %s", out["stopped"])
                break
            steps.append(step)
            log.info("capacity %d: %d connected (%d failed, %d duplicate CONNECTs) in %.1f s; server duologues %d, "
                     "counter %.3f GiB, log files %.3f GiB; idle CPU %s", target, step["total_connected"],
                     sum(step["failures"].values()), step["duplicate_connects"], step["connect_wall_s"],
                     step["server_settled"]["duologues"], step["counter_total_gib"], step["logs_total_gib"],
                     step["idle_cpu_percent"])
            if step["total_connected"] < target or step["server_settled"]["duologues"] < target:
                out["stopped"] = f"step {target} did not hold: {step['total_connected']} clients connected, " \
                                 f"{step['server_settled']['duologues']} server duologues"
                break
        for w in workers:  # clients first: the server then sees every image go
            children.stop(w, timeout=60.0)
        children.stop(server, timeout=60.0)
    held = [s for s in steps if s["total_connected"] >= s["target"] and s["server_settled"]["duologues"] >= s["target"]]
    at_1000 = next((s for s in held if s["target"] >= 1000), None)
    out["max_duologues_held"] = max((s["target"] for s in held), default=0)
    settled = [s for s in held if s["settled"]]
    out["per_duologue_bytes"] = {
        "counter": settled[-1]["counter_per_duologue_bytes"] if settled else None,
        "log_files": settled[-1]["logs_per_duologue_bytes"] if settled else None,
        "at_duologues": settled[-1]["target"] if settled else None,
        "log_file_bytes_each": 3 * TERM_LENGTH + 4096,
        "note": "counter: 'Bytes currently mapped' growth / duologues (it never shrinks and counts images "
                "twice); log_files: growth of the log files present in the server driver's directory"}
    out["target"] = {
        "duologues": 1000, "max_bytes": GIB, "reached_1000": at_1000 is not None,
        "counter_holds": at_1000 is not None and at_1000["server_settled"]["counter_bytes"] <= GIB,
        "log_files_hold": at_1000 is not None and at_1000["server_settled"]["dir_bytes"] <= GIB}
    return out
