"""Every public import path and command of the flat Echo layout still works after the
layers became packages (``echo/core``, ``echo/server``, ``echo/client``, ``echo/load``):
the old modules re-export the very same objects, and the old ``python -m`` commands run."""
from __future__ import annotations

import importlib
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

pytestmark = pytest.mark.timeout(120)

# old path -> where it lives now
MOVED = {
    "aeron_py.blocklist": "aeron_py.echo.blocklist",
    "aeron_py.echo_server": "aeron_py.echo.server.cli",
    "aeron_py.echo_client": "aeron_py.echo.client.cli",
    "aeron_py.echo_load": "aeron_py.echo.load.generator",
    "aeron_py.echo.protocol": "aeron_py.echo.core.protocol",
    "aeron_py.echo.server_core": "aeron_py.echo.core.server",
    "aeron_py.echo.client_core": "aeron_py.echo.core.client",
    "aeron_py.echo.ports": "aeron_py.echo.core.ports",
    "aeron_py.echo.sessions": "aeron_py.echo.core.sessions",
    "aeron_py.echo.per_ip": "aeron_py.echo.core.per_ip",
    "aeron_py.echo.async_client": "aeron_py.echo.client.async_client",
    "aeron_py.echo.server_options": "aeron_py.echo.server.options",
}


@pytest.mark.parametrize("old, new", sorted(MOVED.items()))
def test_old_module_re_exports_the_same_objects(old: str, new: str) -> None:
    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    names = [n for n in old_module.__all__ if n != "address_key"]
    assert names, f"{old} re-exports nothing"
    for name in names:
        assert getattr(old_module, name) is getattr(new_module, name), f"{old}.{name}"


def test_package_paths_keep_their_names() -> None:
    from aeron_py.echo.client import EXIT_SERVER_ERROR, EchoClient, EchoResult, publication_channel
    from aeron_py.echo.client.sync import EchoClient as SyncEchoClient
    from aeron_py.echo.server import SNAPSHOT_COUNTERS, DriverLostError, EchoServer, ServerOptions
    from aeron_py.echo.server.loop import EchoServer as LoopEchoServer

    assert EchoClient is SyncEchoClient and EchoServer is LoopEchoServer
    assert EXIT_SERVER_ERROR == 1 and "echo_rtt_us" not in SNAPSHOT_COUNTERS
    assert all(callable(x) for x in (EchoResult, publication_channel, DriverLostError, ServerOptions))


def test_echo_package_still_re_exports_the_core() -> None:
    import aeron_py.echo as echo
    from aeron_py.echo.core import protocol, server

    assert echo.EchoServerCore is server.EchoServerCore and echo.format_hello is protocol.format_hello


def test_old_client_key_names_warn_and_agree() -> None:
    from aeron_py.addresses import client_key

    with pytest.warns(DeprecationWarning, match="client_key"):
        from aeron_py.endpoint_filter import source_key
    from aeron_py.echo import address_key

    assert source_key("2001:db8:1:2::9", 32, 48) == client_key("2001:db8:1:2::9", 32, 48) == "2001:db8:1::/48"
    with pytest.warns(DeprecationWarning, match="client_key"):
        assert address_key("2001:db8:1:2::9", 48) == "2001:db8:1::/48"
    with pytest.raises(AttributeError):
        importlib.import_module("aeron_py.echo").no_such_name  # noqa: B018


def test_network_parsing_lives_in_addresses() -> None:
    from aeron_py import addresses
    from aeron_py.echo import blocklist

    assert blocklist.parse_network is addresses.parse_network and blocklist.Network is addresses.Network
    assert str(addresses.parse_network("::ffff:192.0.2.0/120")) == "192.0.2.0/24"
    with pytest.raises(ValueError, match="did you mean 192.0.2.0/24"):
        addresses.parse_network("192.0.2.7/24")


@pytest.mark.parametrize("module", [
    "aeron_py.echo_server", "aeron_py.echo_client", "aeron_py.echo_load",
    "aeron_py.echo.server", "aeron_py.echo.client", "aeron_py.echo.load",
])
def test_commands_old_and_new_print_help(module: str) -> None:
    done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "usage: python -m aeron_py.echo_" in done.stdout


def test_console_scripts_resolve() -> None:
    scripts = {ep.name: ep for ep in entry_points(group="console_scripts") if ep.name.startswith("aeron-")}
    if not scripts:
        pytest.skip("aeron_py's console scripts are not installed in this environment")
    for name in ("aeron-echo-server", "aeron-echo-client", "aeron-echo-load", "aeron-py-stat"):
        assert callable(scripts[name].load()), name
