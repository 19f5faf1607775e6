"""A burst of new sessions cannot hang a SHARED driver
(cpp/plugins/driver_queues/driver_queues.h).

Aeron's conductor command ring is 128 KiB and drains one command per duty cycle; in the
SHARED threading mode the agent that finds it full is the conductor itself, so it spins
forever and ``aeron_driver_close`` never returns. 3,000 forged SETUPs of distinct
sessions (one create-image command each) filled it on this machine. aeron_py's drivers
use a 4 MiB ring, and the quiet idle strategy also drains the ring between duty cycles:
with it even Aeron's 128 KiB ring survives the burst. The burst runs in a child process:
a hang there fails this test instead of the suite.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from aeron_py import MediaDriver
from processes import ChildProcess

pytestmark = [pytest.mark.integration]

TESTS = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent('''
    import socket, sys, threading, time
    sys.path.insert(0, {tests!r})
    from forged import setup_frame
    from aeron_py import Aeron, MediaDriver, QuietIdle
    from conftest import free_udp_port

    port = free_udp_port()
    driver = MediaDriver(publication_linger_timeout_ns=0, term_buffer_sparse_file=True, **{options})
    aeron = Aeron(driver=driver)
    sub = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{{port}}", 77)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for i in range(3000):
            s.sendto(setup_frame(1000 + i, 77, 65536), ("127.0.0.1", port))
    deadline = time.monotonic() + 20
    ages = []
    while time.monotonic() < deadline:  # the driver keeps its heartbeat fresh while it works through the burst
        with driver.stat() as stat:
            ages.append(stat.heartbeat_age())
            full = stat.system_counters()["Failed offers to DriverConductorProxy"]
        time.sleep(0.25)
    print("MAX-AGE", round(max(ages), 2), flush=True)
    print("RING-FULL", full, flush=True)
    aeron.close()
    closer = threading.Thread(target=driver.close, daemon=True)
    closer.start()
    closer.join(20)
    print("CLOSED" if not closer.is_alive() else "CLOSE-HANGS", flush=True)
''')


@pytest.mark.timeout(120)
@pytest.mark.parametrize("options", [
    # the 4 MiB ring, aeron_py's default only while the tricks are on (aeron_py/driver.py)
    pytest.param('{"endpoint_filter": None}', marks=pytest.mark.tricks, id="big-ring"),
    pytest.param('{"conductor_queue_capacity": 131072, "quiet_idle": QuietIdle(after=0.0, period=0.05)}',
                 id="drained-aeron-ring"),  # Aeron's ring, drained
])
def test_a_burst_of_three_thousand_new_sessions_does_not_hang_a_shared_driver(options: str) -> None:
    script = CHILD.format(tests=str(TESTS), options=options)
    with ChildProcess([sys.executable, "-c", script], stop_timeout=5) as child:
        code = child.wait(90)
        output = child.output_tail(40)
        lines = list(child.stdout_lines)
    assert code == 0, f"exit code {code}\n{output}"
    assert "CLOSED" in lines, output
    max_age = float(next(line.split()[1] for line in lines if line.startswith("MAX-AGE")))
    assert max_age < 5.0, output  # a spinning driver stops heartbeating (10 s is its client's timeout)
    assert "RING-FULL 0" in lines, output  # no agent ever found the conductor's ring full


def test_conductor_queue_capacity_is_checked() -> None:
    for bad in (1000, 65536, 3 * 1024 * 1024):
        with pytest.raises(ValueError, match="power of two"):
            MediaDriver(conductor_queue_capacity=bad)
    with MediaDriver(conductor_queue_capacity=1 << 21) as driver:
        assert driver.options["conductor_queue_capacity"] == 1 << 21
