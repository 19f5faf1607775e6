"""The server's open-file budget (aeron_py.echo.file_limit), in a child process so the
test runner's own limits are untouched."""
from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)

_CHILD = r"""
import logging, resource, sys
logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="%(message)s")
from aeron_py.duologue.server.file_limit import ensure_file_limit
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))
got = ensure_file_limit(min(300, hard))
assert got == min(300, hard), got
assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == got
if hard != resource.RLIM_INFINITY:
    short = ensure_file_limit(hard + 10)
    assert short == hard, short
print("done")
"""


def test_soft_limit_is_raised_and_a_shortfall_is_reported() -> None:
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=50)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("done")
    import resource
    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] != resource.RLIM_INFINITY:
        assert "is below the" in out.stdout
