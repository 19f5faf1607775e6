"""Smoke test of an installed aeron_py, run from outside the source tree (.ci/wheels, .ci/sdist).

    cd /tmp && /path/to/venv/bin/python /path/to/.ci/installed_check.py LABEL

Checks that the package comes from the venv's site-packages (not a source tree), that a
message round-trips over UDP on loopback through an embedded driver, that the linked-in
libsodium gives a known answer (aeron_py.crypto), that the Archive client is linked in
(aeron_py.archive: a connect with no Archive there times out, typed), and that the Echo 2.0 server's modules
and CLI need no optional dependency (the venv has none installed).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

OPTIONAL = ("pyspark", "matplotlib", "tqdm")


def main() -> int:
    label = sys.argv[1] if len(sys.argv) > 1 else "installed aeron_py"
    import aeron_py
    import aeron_py.echo.server  # noqa: F401  the server's modules: must not need an extra
    import aeron_py.echo.server.cli  # noqa: F401

    where = os.path.dirname(aeron_py.__file__)
    assert "site-packages" in where, f"aeron_py imported from {where}, not from site-packages"
    pulled = [name for name in OPTIONAL if name in sys.modules]
    assert not pulled, f"the echo server's imports pull optional packages: {pulled}"

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:  # a free loopback UDP port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    channel = f"aeron:udp?endpoint=127.0.0.1:{port}"
    got: list[bytes] = []
    with aeron_py.MediaDriver() as driver, aeron_py.Aeron(driver=driver) as aeron:
        sub = aeron.add_subscription(channel, 11)
        pub = aeron.add_publication(channel, 11)
        pub.offer_until(f"{label} ok".encode(), timeout=10)
        idle = aeron_py.SleepingIdleStrategy(1_000_000)
        deadline = time.monotonic() + 10
        while not got and time.monotonic() < deadline:
            idle.idle(sub.poll(lambda data, header: got.append(bytes(data)), 10))
    assert got == [f"{label} ok".encode()], got

    from aeron_py import crypto  # libsodium, compiled in: a known answer (SHA-256 of "abc")
    assert crypto.sha256(b"abc").hex().startswith("ba7816bf8f01cfea"), crypto.sha256(b"abc").hex()

    # the archive client is linked in and runs: with no Archive there, connect times out, typed
    from aeron_py.archive import AeronArchive, ArchiveTimeoutError
    with aeron_py.MediaDriver() as driver, aeron_py.Aeron(driver=driver) as aeron:
        try:
            AeronArchive.connect(aeron, control_channel=f"aeron:udp?endpoint=127.0.0.1:{port}", message_timeout=0.3)
        except ArchiveTimeoutError:
            pass
        else:
            raise AssertionError("an archive connect with no Archive there succeeded")

    cli = subprocess.run(
        [sys.executable, "-m", "aeron_py.echo_server", "--help"],
        capture_output=True, text=True, timeout=60,
    )
    assert cli.returncode == 0 and "usage" in cli.stdout.lower(), cli
    print(
        f"{label}: aeron_py {aeron_py.__version__} (Aeron {aeron_py.aeron_version()}) on Python "
        f"{sys.version.split()[0]} from {where}: UDP round trip ok, libsodium {crypto.libsodium_version()} ok, "
        "archive client ok, "
        "echo server needs no extras"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
