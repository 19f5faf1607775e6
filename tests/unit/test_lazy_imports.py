"""What importing the duologue layer loads: a threaded server or client never pays for
asyncio (about 60 modules and 7 MiB of a server's memory); the asyncio faces still
import by name from :mod:`aeron_py.duologue`, on first use."""
from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=50, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_threaded_duologue_and_echo_server_import_no_asyncio() -> None:
    out = _run("import sys, aeron_py.duologue, aeron_py.echo.server, aeron_py.echo_server\n"
               "print(sorted(m for m in sys.modules if m == 'asyncio' or m.startswith('asyncio.')))")
    assert out == "[]"


def test_the_asyncio_faces_import_by_name_on_first_use() -> None:
    out = _run("import sys, aeron_py.duologue as d\n"
               "assert 'connect_async' in dir(d) and 'asyncio' not in sys.modules\n"
               "from aeron_py.duologue import AsyncDuologueServer, connect_async\n"
               "from aeron_py.duologue.async_client import connect_async as direct\n"
               "assert connect_async is direct and 'asyncio' in sys.modules\n"
               "print(all(getattr(d, name) is not None for name in d.__all__))")
    assert out == "True"


def test_an_unknown_name_is_an_attribute_error() -> None:
    import aeron_py.duologue as duologue

    with pytest.raises(AttributeError, match="no attribute 'connect_later'"):
        getattr(duologue, "connect_later")
