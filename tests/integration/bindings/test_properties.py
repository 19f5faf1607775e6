"""Aeron properties files (aeron_py.properties): they change the whole process's environment,
so each case runs in a child process."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from processes import run_process

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


def _child(script: str, cwd: Path) -> str:
    run = run_process([sys.executable, "-c", script], capture_output=True, text=True, timeout=30, cwd=cwd)
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def test_a_properties_file_sets_what_later_drivers_start_with(tmp_path: Path) -> None:
    (tmp_path / "driver.properties").write_text("# comment\naeron.term.buffer.length=131072\naeron.mtu.length=4096\n")
    out = _child(
        "from aeron_py import MediaDriver, Aeron, _aeron\n"
        "from aeron_py.properties import load_properties\n"
        "print(_aeron.DriverContext().get_term_buffer_length())\n"
        "load_properties('driver.properties')\n"
        "context = _aeron.DriverContext()\n"
        "print(context.get_term_buffer_length(), context.get_mtu_length())\n"
        "with MediaDriver(mtu_length=1408) as driver, Aeron(driver=driver) as aeron:\n"
        "    pub = aeron.add_publication('aeron:udp?endpoint=127.0.0.1:40791', 3)\n"
        "    print(pub.term_buffer_length)\n", tmp_path)
    assert out.split() == ["16777216", "131072", "4096", "131072"]  # explicit options still win (mtu)


def test_properties_text_and_errors(tmp_path: Path) -> None:
    out = _child(
        "from aeron_py import _aeron\n"
        "from aeron_py.properties import load_properties, load_properties_text\n"
        "load_properties_text('aeron.mtu.length=2048')\n"
        "print(_aeron.DriverContext().get_mtu_length())\n"
        "for bad in (lambda: load_properties('missing.properties'), lambda: load_properties_text('a=b\\0c')):\n"
        "    try:\n"
        "        bad()\n"
        "    except (FileNotFoundError, ValueError) as exc:\n"
        "        print(type(exc).__name__)\n", tmp_path)
    assert out.split() == ["2048", "FileNotFoundError", "ValueError"]
