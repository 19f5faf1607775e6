"""A source tree whose extension was never built says so, and how to build it.

The package's ``.py`` and ``.pyi`` files are copied to a temporary directory without the compiled
``_aeron`` module (a fresh clone), and Python runs there in a child process. ``-S`` keeps
site-packages (and so an editable install's import hook) out, so the copy is what is
imported. Without the guard in ``aeron_py/__init__.py`` Python reports a confusing
"partially initialized module ... (most likely due to a circular import)".
"""
from __future__ import annotations

import importlib.machinery
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import aeron_py

PACKAGE = Path(aeron_py.__file__).resolve().parent


@pytest.fixture
def source_only(tmp_path: Path) -> Path:
    """A copy of the package's Python sources and stubs, with no compiled extension. The
    stubs of the extension's submodules (``_aeron/crypto.pyi``) come too: in a fresh clone
    their folder makes ``aeron_py._aeron`` importable as a namespace package."""
    for source in [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyi")]:
        target = tmp_path / "aeron_py" / source.relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    assert not list((tmp_path / "aeron_py").glob("_aeron*.so"))
    assert (tmp_path / "aeron_py" / "_aeron" / "crypto.pyi").is_file(), "the namespace-package case is not covered"
    return tmp_path


def run_python(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-S", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "args",
    [("-c", "import aeron_py"), ("-m", "aeron_py.echo_server", "--help")],
    ids=["import", "echo_server_cli"],
)
def test_missing_extension_says_not_built_and_how_to_build(
    source_only: Path, args: tuple[str, ...]
) -> None:
    proc = run_python(source_only, *args)
    assert proc.returncode == 1, proc
    assert "aeron_py is not built" in proc.stderr
    assert "pip install -e ." in proc.stderr
    assert str(source_only / "aeron_py") in proc.stderr
    assert "circular import" not in proc.stderr


def test_extension_that_fails_to_load_keeps_its_own_error(source_only: Path) -> None:
    # An extension file that is present but cannot load (here: not an ELF file) is not
    # "not built": the loader's own message must come through unchanged.
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (source_only / "aeron_py" / f"_aeron{suffix}").write_bytes(b"not a shared object")
    proc = run_python(source_only, "-c", "import aeron_py")
    assert proc.returncode == 1, proc
    assert "ImportError" in proc.stderr
    assert "not built" not in proc.stderr
