"""Interop with the official Aeron Java API (1.51.0, its own Java media driver):
a Java Echo 2.0 client against our Python server, and our Python client against a
minimal Java server that follows the same spec. Loopback only."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_java import JavaProcess, build_jar, java_command  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import free_udp_port  # noqa: E402

pytestmark = [pytest.mark.timeout(240), pytest.mark.java]


@pytest.fixture(scope="module")
def jar() -> Path:
    return build_jar()


#: A Java client configured the way the operator guide recommends (64 KiB terms, outside the
#: server's large-term budget); without it the client is stock (16 MiB terms).
SMALL_TERMS = ("-Daeron.term.buffer.length=65536",)


def python_server(tmp_path: Path, *options: str) -> tuple[JavaProcess, str, str]:
    """Our Echo 2.0 server in the reference positional form, with its two public ports."""
    port, control, base = (str(free_udp_port()) for _ in range(3))
    command = [sys.executable, "-m", "aeron_py.echo_server", str(tmp_path / "py-server"), "127.0.0.1",
               port, control, base, "4", *options]
    return JavaProcess(command), port, control


def run_java_client(jar: Path, tmp_path: Path, port: str, control: str, *options: str,
                    jvm: tuple[str, ...] = ()) -> JavaProcess:
    """Run the Java client to completion (bounded) and return it for its exit code and output."""
    with JavaProcess(java_command(jar, "client", str(tmp_path / "java-client"), "127.0.0.1", port, control,
                                  "--timeout", "30", *options, jvm=jvm)) as client:
        client.wait(timeout=90)
    return client


@pytest.mark.parametrize("jvm", [(), SMALL_TERMS], ids=["stock", "small-terms"])
def test_java_client_completes_a_session_with_the_python_server(jar, tmp_path, jvm):
    server, port, control = python_server(tmp_path)  # the server's defaults, no flags
    with server:
        server.wait_for_line("READY", timeout=60)
        client = run_java_client(jar, tmp_path, port, control, "--count", "3", jvm=jvm)
    assert client.returncode == 0, client.output_tail() + "\n--- python server ---\n" + server.output_tail()
    assert any(line.startswith("OK") for line in client.stdout_lines), client.output_tail()


def test_python_client_completes_a_session_with_the_java_server(jar, tmp_path):
    port, control, base = (str(free_udp_port()) for _ in range(3))
    with JavaProcess(java_command(jar, "server", str(tmp_path / "java-server"), "127.0.0.1", port, control,
                                  base, "4")) as server:
        server.wait_for_line("READY", timeout=60)
        client_cmd = [sys.executable, "-m", "aeron_py.echo_client", "127.0.0.1", port, control,
                      "--count", "3", "--timeout", "30"]
        with JavaProcess(client_cmd) as client:
            rc = client.wait(timeout=90)
            assert rc == 0, client.output_tail() + "\n--- java server ---\n" + server.output_tail()


def test_java_client_gets_the_python_servers_error_reason(jar, tmp_path):
    # A stock client (16 MiB terms) against a default server.
    server, port, control = python_server(tmp_path)
    with server:
        server.wait_for_line("READY", timeout=60)
        client = run_java_client(jar, tmp_path, port, control, "--message", "NOT AN ECHO")
    assert client.returncode == 1, client.output_tail()
    assert any("bad message" in line for line in client.stdout_lines), client.output_tail()


def wait_for_stderr(process: JavaProcess, text: str, timeout: float) -> None:
    """Wait (on the reader threads' condition, to a deadline) until ``process`` logs ``text``."""
    deadline = time.monotonic() + timeout
    with process._cond:
        while not any(text in line for line in process.stderr_lines):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or process.returncode is not None:
                raise TimeoutError(f"no {text!r} on stderr within {timeout} s\n{process.output_tail()}")
            process._cond.wait(timeout=min(remaining, 1.0))


def test_four_stock_java_clients_from_one_address_three_echo_the_fourth_is_refused(jar, tmp_path):
    """As the reference server serves them: a server on its defaults (--max-per-ip 3) holds
    three stock clients (Aeron's 16 MiB terms) from one address at once and answers the
    fourth with the reference's reason."""
    server, port, control = python_server(tmp_path)
    holders: list[JavaProcess] = []
    with server:
        server.wait_for_line("READY", timeout=60)
        try:
            for n in range(3):  # each echoes for ~15 s, holding its duologue
                holder = JavaProcess(java_command(jar, "client", str(tmp_path / f"java-client-{n}"), "127.0.0.1",
                                                  port, control, "--timeout", "30", "--count", "60",
                                                  "--interval-ms", "250")).start()
                holders.append(holder)
                wait_for_stderr(holder, "duologue connected", timeout=60)
            fourth = run_java_client(jar, tmp_path / "fourth", port, control, "--count", "1")
            assert fourth.returncode == 1, fourth.output_tail() + "\n--- python server ---\n" + server.output_tail()
            assert "ERROR too many connections for IP address" in fourth.stdout_lines, fourth.output_tail()
            for holder in holders:
                assert holder.wait(timeout=90) == 0, holder.output_tail()
                assert any(line.startswith("OK") for line in holder.stdout_lines), holder.output_tail()
        finally:
            for holder in holders:
                holder.stop()
