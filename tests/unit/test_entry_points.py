"""The documented commands run: ``python -m aeron_py.echo_server`` (``echo_client``,
``echo_load``), their package forms (``python -m aeron_py.echo.server``, ...) and the
console scripts of pyproject.toml."""
from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import pytest

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("module", [
    "aeron_py.echo_server", "aeron_py.echo_client", "aeron_py.echo_load",
    "aeron_py.echo.server", "aeron_py.echo.client", "aeron_py.echo.load",
])
def test_commands_print_help(module: str) -> None:
    done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "usage: python -m aeron_py.echo_" in done.stdout


def test_console_scripts_resolve() -> None:
    scripts = {ep.name: ep for ep in entry_points(group="console_scripts") if ep.name.startswith("aeron-")}
    if not scripts:
        pytest.skip("aeron_py's console scripts are not installed in this environment")
    for name in ("aeron-echo-server", "aeron-echo-client", "aeron-echo-load", "aeron-py-stat"):
        assert callable(scripts[name].load()), name
