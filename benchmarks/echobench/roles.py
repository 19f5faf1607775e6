"""The child side: each ``echo_bench.py --role NAME`` process, spoken to in JSON lines
(commands on stdin, ``@@``-prefixed answers on stdout)."""
from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import queue
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TextIO

from benchmarks.harness import BenchError
from benchmarks.harness.probes import driver_python_seconds

from .plan import (CLIENT_DRIVER_OPTIONS, LINE_PREFIX, LOOP_MAX_PARK_NS, LOOPBACK, MESSAGE, PAYLOAD,
                   SERVER_DRIVER_OPTIONS, STOP_TIMEOUT_S, TERM_LENGTH)
from .pool import ClientPool, child_log


def _emit(message: dict[str, Any]) -> None:
    sys.stdout.write(LINE_PREFIX + json.dumps(message, default=str) + "\n")
    sys.stdout.flush()


def _commands() -> "queue.Queue[dict[str, Any] | None]":
    """stdin commands on a queue; None once stdin closes (the orchestrator is gone or done)."""
    commands: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read(stream: TextIO) -> None:
        for line in stream:
            with contextlib.suppress(json.JSONDecodeError):
                commands.put(json.loads(line))
        commands.put(None)

    threading.Thread(target=read, args=(sys.stdin,), name="stdin", daemon=True).start()
    return commands


def _is_exit(command: dict[str, Any] | None) -> bool:
    return command is None or command.get("op") == "exit"


def role_serve(cfg: dict[str, Any]) -> None:
    """The Echo server on a thread; answers ``stats``."""
    from aeron_py.duologue.server import ServerOptions
    from aeron_py.echo.server import echo_server
    from aeron_py.duologue.core.contract import DEFAULT_MAX_IMAGE_TERM_LENGTH, ServerConfig

    config = ServerConfig(max_clients=cfg["max_clients"], clients_base_port=cfg["base_port"],
                          max_per_ip=cfg["max_per_ip"],
                          max_image_term_length=cfg["max_image_term_length"] or DEFAULT_MAX_IMAGE_TERM_LENGTH)
    options = ServerOptions(address=LOOPBACK, port=cfg["port"], control_port=cfg["control_port"], dir=cfg["dir"],
                            term_length=cfg["term_length"])
    commands = _commands()
    server = echo_server(config, options).start(timeout=30.0)
    try:
        _emit({"ready": True, "dir": server.driver_dir, "pid": os.getpid()})
        while True:
            try:
                command = commands.get(timeout=0.5)
            except queue.Empty:
                if not server.is_serving:
                    raise BenchError("echo server stopped serving")
                continue
            if _is_exit(command):
                break
            if command.get("op") == "stats":
                s = server.stats
                _emit({"duologues": s.duologues, "initial_images": s.initial_images, "hellos": s.hellos,
                       "connects": s.connects, "rejects": dict(s.rejects), "closes": dict(s.closes),
                       "channels": server.channel_count, "connected": sum(d.connected for d in server.duologues)})
            else:
                _emit({"error": f"serve: unknown op {command.get('op')!r}"})
    finally:
        server.close(timeout=STOP_TIMEOUT_S)


def _raw_driver(cfg: dict[str, Any], options: dict[str, int]) -> tuple[Any, Any]:
    from aeron_py import Aeron, MediaDriver

    driver = MediaDriver(cfg["dir"], threading_mode="SHARED", idle_strategy="backoff",
                         dir_delete_on_start=True, dir_delete_on_shutdown=True, **options)
    return driver, Aeron(driver=driver, use_conductor_agent_invoker=True)


def _raw_channels(aeron: Any, cfg: dict[str, Any], server: bool) -> tuple[Any, Any]:
    """The duologue's channel shapes: data to ``endpoint=``, replies over dynamic MDC."""
    from aeron_py import ChannelUri

    session = 424242
    data = ChannelUri.udp(endpoint=(LOOPBACK, cfg["data_port"]), reliable=True, session_id=session,
                          term_length=None if server else TERM_LENGTH)
    control = ChannelUri.udp(control=(LOOPBACK, cfg["control_port"]), control_mode="dynamic", reliable=True,
                             session_id=session, term_length=TERM_LENGTH if server else None)
    if server:
        return aeron.add_exclusive_publication(control, 541388802), aeron.add_subscription(data, 541388802)
    return aeron.add_exclusive_publication(data, 541388802), aeron.add_subscription(control, 541388802)


def role_pong(cfg: dict[str, Any]) -> None:
    """Raw pong: echo every message back, with the duologue server's loop shape and idling."""
    from aeron_py.idle import BackoffIdleStrategy

    commands = _commands()
    driver, aeron = _raw_driver(cfg, SERVER_DRIVER_OPTIONS)
    try:
        pub, sub = _raw_channels(aeron, cfg, server=True)
        _emit({"ready": True, "dir": driver.dir, "pid": os.getpid()})
        idle = BackoffIdleStrategy(max_park_ns=LOOP_MAX_PARK_NS)
        outbox: deque[bytes] = deque()
        while commands.empty():
            work = aeron.do_work()
            for data in sub.poll_batch(10):
                outbox.append(data)
                work += 1
            while outbox and pub.offer(outbox[0]) > 0:
                outbox.popleft()
                work += 1
            idle.idle(work)
    finally:
        aeron.close()
        driver.close()


def role_ping(cfg: dict[str, Any]) -> None:
    """Raw ping: one message in flight, timed like EchoClient's echo step."""
    from aeron_py.idle import BackoffIdleStrategy

    cpu = driver_python_seconds(os.getpid())
    driver, aeron = _raw_driver(cfg, CLIENT_DRIVER_OPTIONS)
    try:
        pub, sub = _raw_channels(aeron, cfg, server=False)
        _emit({"ready": True, "dir": driver.dir, "pid": os.getpid()})
        idle = BackoffIdleStrategy(max_park_ns=LOOP_MAX_PARK_NS)
        deadline = time.monotonic() + 10.0
        while not (pub.is_connected and sub.is_connected):
            if time.monotonic() > deadline:
                raise BenchError("raw ping: channels not connected within 10 s")
            idle.idle(aeron.do_work())
        rtts: list[float] = []
        sent_at: float | None = None
        deadline = time.monotonic() + 30.0 + cfg["count"] * 0.01
        while len(rtts) < cfg["count"]:
            now = time.monotonic()
            if now > deadline:
                raise BenchError(f"raw ping: only {len(rtts)} of {cfg['count']} round trips before the deadline")
            work = aeron.do_work()
            if sent_at is None and pub.offer(MESSAGE) > 0:
                sent_at = now
                work += 1
            for data in sub.poll_batch(10):
                work += 1
                if data != MESSAGE or sent_at is None:
                    raise BenchError(f"raw ping: unexpected reply {data[:60]!r}")
                rtts.append(now - sent_at)
                sent_at = None
            idle.idle(work)
        used = {k: v - cpu[k] for k, v in driver_python_seconds(os.getpid()).items()}
        _emit({"samples_us": [round(r * 1e6, 1) for r in rtts[cfg["warmup"]:]], "cpu_s": used})
    finally:
        aeron.close()
        driver.close()


def role_echo_rtt(cfg: dict[str, Any]) -> None:
    """One EchoClient with its own driver: ``count`` echoes, one in flight."""
    from aeron_py.echo.client import EchoClient

    _emit({"ready": True, "dir": cfg["dir"], "pid": os.getpid()})
    client = EchoClient(LOOPBACK, cfg["port"], cfg["port"] + 1, count=cfg["count"], interval=0.0,
                        message=PAYLOAD, timeout=10.0, term_length=TERM_LENGTH, dir=cfg["dir"])
    cpu = driver_python_seconds(os.getpid())
    result = client.run()
    used = {k: v - cpu[k] for k, v in driver_python_seconds(os.getpid()).items()}
    if not result.ok:
        raise BenchError(f"echo client failed after {result.echoes} echoes: {result.server_reason or result.reason}")
    _emit({"samples_us": [round(r * 1e6, 1) for r in result.rtts[cfg["warmup"]:]], "cpu_s": used})



def role_clients(cfg: dict[str, Any]) -> None:
    """A client process: one driver, many EchoClients, driven by commands."""
    from aeron_py import Aeron, MediaDriver

    commands = _commands()
    driver = MediaDriver(cfg["dir"], dir_delete_on_start=True, dir_delete_on_shutdown=True, **CLIENT_DRIVER_OPTIONS)
    aeron = Aeron(driver=driver, use_conductor_agent_invoker=True, client_name="echo-bench")
    pool = ClientPool(aeron, driver, cfg["port"])
    try:
        _emit({"ready": True, "dir": driver.dir, "pid": os.getpid()})
        while True:
            try:
                command = commands.get(timeout=0.005)
            except queue.Empty:
                aeron.do_work()  # keep the client conductor alive between commands
                continue
            if _is_exit(command):
                break
            op = command.get("op")
            if op == "open":
                _emit(pool.open(command["n"], command["sources"], command["timeout"], command["batch"],
                                command.get("hello_interval", 1.0), command.get("budget_s", math.inf)))
            elif op == "sequential":
                _emit(pool.sequential(command["n"], command["sources"], command["timeout"]))
            elif op == "close_all":
                _emit({"closed": pool.close_all()})
            elif op == "stats":
                _emit(pool.stats())
            else:
                _emit({"error": f"clients: unknown op {op!r}"})
    finally:
        for client in pool.live:
            client.close()
        pool.live.clear()
        pool.pump(0.2)
        aeron.close()
        driver.close()


ROLES: dict[str, Callable[[dict[str, Any]], None]] = {
    "serve": role_serve, "pong": role_pong, "ping": role_ping, "echo_rtt": role_echo_rtt, "clients": role_clients}


def child_main(role: str, cfg: dict[str, Any]) -> int:
    """Entry point of a child: SIGTERM/SIGINT unwind (so drivers close and dirs go)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format=f"%(asctime)s {role} %(levelname)s %(name)s: %(message)s")
    child_log.setLevel(logging.INFO)

    def unwind(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, unwind)
    signal.signal(signal.SIGINT, unwind)
    try:
        ROLES[role](cfg)
    except BenchError as exc:
        _emit({"error": str(exc)})
        return 1
    except Exception as exc:  # noqa: BLE001 - report anything to the orchestrator, then fail
        logging.getLogger(role).exception("child failed")
        _emit({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"})
        return 1
    return 0
