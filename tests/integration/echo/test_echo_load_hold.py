"""The load generator's hold mode against a real server: duologues are held, echo, and close
cleanly; a failed client of the load's shared driver frees the broadcast at once."""
from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest

from aeron_py import Aeron, MediaDriver
from aeron_py.echo.client import EchoClient
from aeron_py.echo.load.hold import HoldPlan, run_hold
from echo_harness import HOST, PortBlocks, make_server, wait_idle, wait_until
from processes import run_process

pytestmark = [pytest.mark.timeout(90), pytest.mark.integration]

BLOCKS = PortBlocks(20500, 20800, size=60)
SOURCES = [f"127.0.0.{i}" for i in range(2, 7)]  # 5 source addresses, 4 duologues each


def test_hold_grows_holds_echoes_and_closes_cleanly() -> None:
    ports = BLOCKS.take(24)
    with make_server(ports, clients=24, max_per_ip=6, options={"max_images_per_source": 64}) as server:
        events: list[dict[str, Any]] = []
        during: dict[tuple[str, int], int] = {}

        def on_event(event: dict[str, Any]) -> None:
            events.append(event)
            if event["event"] == "hold":  # the server's view while the load holds
                during[(event["mode"], event["target"])] = server.stats.duologues

        plan = HoldPlan(steps=[10, 20], hold_s=0.5, echo_s=1.0, rate=4.0, batch=10, timeout=15.0, hello_interval=1.0,
                        progress_s=0.01)
        summary = run_hold(HOST, ports.port, ports.control, plan, sources=SOURCES, on_event=on_event)

        assert summary["max_held"] == 20 and summary["opened"] == 20
        growing = [e for e in events if e["event"] == "growing"]  # every 0.01 s while a step grows
        for target in (10, 20):
            held = [e["held"] for e in growing if e["target"] == target]
            assert held == sorted(held) and all(target - 10 <= h <= target for h in held), (target, held)
        assert growing and all(e["in_flight"] <= plan.batch and e["failed"] == 0 for e in growing), growing
        steps = [e for e in events if e["event"] == "step"]
        assert [(s["target"], s["held"], s["failures"]) for s in steps] == [(10, 10, {}), (20, 20, {})]
        assert during == {("idle", 10): 10, ("echo", 10): 10, ("idle", 20): 20, ("echo", 20): 20}
        idle = [e for e in events if e["event"] == "held" and e["mode"] == "idle"]
        assert [(e["held_after"], e["dropped"]) for e in idle] == [(10, {}), (20, {})]
        echoed = [e for e in events if e["event"] == "held" and e["mode"] == "echo"]
        # every queued echo came back (4/s for 1 s per client) and nobody was dropped
        assert [(e["expected"], e["rtt"]["count"], e["dropped"]) for e in echoed] == [(40, 40, {}), (80, 80, {})]
        assert server.stats.connects == 20
        wait_idle(server, timeout=15)  # closed cleanly: every slot, port and session returned


def test_hold_cli_prints_events_and_summary() -> None:
    ports = BLOCKS.take(24)
    with make_server(ports, clients=24, max_per_ip=6, options={"max_images_per_source": 64}) as server:
        done = run_process(
            [sys.executable, "-m", "aeron_py.echo_load", HOST, str(ports.port), str(ports.control), "--clients", "6",
             "--hold", "0.3", "--echo-hold", "0.5", "--rate", "4", "--batch", "6", "--hello-interval", "1",
             "--sources", ",".join(SOURCES)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        events = [json.loads(line[len("EVENT "):]) for line in lines if line.startswith("EVENT ")]
        assert [(e["event"], e.get("mode")) for e in events if e["event"] != "growing"] == [
            ("step", None), ("hold", "idle"), ("held", "idle"), ("hold", "echo"), ("held", "echo")]
        summary = json.loads("\n".join(lines[len(events):]))
        assert summary["max_held"] == 6 and summary["steps"][0]["echo"]["rtt"]["count"] == 12
        wait_idle(server, timeout=15)


def test_load_driver_counters_cover_the_last_step() -> None:
    """The clients' driver needs ~15 counters per duologue too: Aeron's default 65,536
    ran out at ~4,300 held, so the plan sizes the buffer from its largest step."""
    small = HoldPlan(steps=[100, 200], hold_s=0)
    big = HoldPlan(steps=[3000, 5000], hold_s=0, batch=50)
    assert small.counters_buffer_length == 8 << 20  # Aeron's default
    assert big.counters_buffer_length // 128 >= (5000 + 50) * 15 + 1024
    assert big.counters_buffer_length > 8 << 20


def test_a_failed_client_frees_its_broadcast_channels_before_close() -> None:
    """The load's clients share one driver, and so the broadcast's image: a failed client's
    subscription, never polled again, held it back (untethered: for the window-limit timeout,
    again after every rest) and with it every CONNECT of the clients still handshaking, until
    the growth stalled.  A client that fails closes its HELLO and broadcast channels at once."""
    ports = BLOCKS.take(2)  # nobody serves them: the client fails to join
    on_port = re.compile(rf"127\.0\.0\.1:({ports.port}|{ports.control})(?!\d)")
    with MediaDriver(publication_linger_timeout_ns=0) as driver, Aeron(driver=driver) as aeron:
        def channels() -> int:
            with driver.stat() as stat:
                return sum(bool(on_port.search(c.label)) for c in stat.counters())

        client = EchoClient(HOST, ports.port, ports.control, count=1, timeout=0.5, aeron=aeron, hold=True).open()
        try:
            assert channels() > 0
            wait_until(lambda: client.step() >= 0 and client.finished, 10, "the client to fail")
            assert client.result is not None and "no server answering" in (client.result.reason or "")
            wait_until(lambda: channels() == 0, 10, "the failed client's channels to close before close()")
        finally:
            client.close()
