"""What ``vendor/aeron/fetch.py`` and ``vendor/libsodium/fetch.py`` share: getting a pinned
crate of the Rust crate registry with cargo, checking it, and the sdist's bundled copy.

Nothing here knows a particular crate or tree: each ``fetch.py`` names its crate, version,
checksum, messages and files, and keeps its own command line. Standard library only (it
runs inside CMake's configure step and inside the sdist build backend).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType


class FetchError(RuntimeError):
    """A pinned source could not be found, fetched or checked."""


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file's bytes, as hex."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def find_cargo(what: str, alternative: str) -> str:
    """cargo's path; else FetchError saying ``what`` needs it and the ``alternative``."""
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    if not Path(cargo).exists():
        raise FetchError(
            f"cargo is needed to fetch {what} from the Rust crate registry (install Rust via rustup), "
            f"or {alternative}"
        )
    return cargo


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run ``cmd`` (15 min at most) and return its stdout; FetchError with its stderr if it fails."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise FetchError(f"`{' '.join(cmd)}` failed ({proc.returncode}):\n{proc.stderr.strip()}")
    return proc.stdout


def cargo_env(cache: Path) -> dict[str, str]:
    """The environment of the cargo calls: ``CARGO_HOME`` and the target dir inside ``cache``."""
    return dict(os.environ, CARGO_HOME=str(cache / "cargo-home"), CARGO_TARGET_DIR=str(cache / "target"))


def verified_crate_file(cargo_home: Path, crate: str, version: str, sha256: str) -> Path:
    """The downloaded ``.crate`` archive, checked against the pinned SHA-256."""
    archives = list((cargo_home / "registry" / "cache").glob(f"*/{crate}-{version}.crate"))
    if not archives:
        raise FetchError(f"cargo fetch left no {crate}-{version}.crate under {cargo_home}")
    digest = sha256_of(archives[0])
    if digest != sha256:
        raise FetchError(f"{archives[0]}: sha256 {digest} does not match the pinned {sha256}")
    return archives[0]


def cargo_fetch(cargo: str, manifest_dir: Path, env: dict[str, str], target: str | None = None) -> None:
    """``cargo fetch --locked`` of ``manifest_dir/Cargo.toml`` (only ``target``'s dependencies if given)."""
    cmd = [cargo, "fetch", "--locked", "--manifest-path", str(manifest_dir / "Cargo.toml")]
    if target:
        cmd += ["--target", target]
    run(cmd, manifest_dir, env)


def package_dir(cargo: str, manifest_dir: Path, env: dict[str, str], crate: str, version: str) -> Path:
    """Where cargo unpacked ``crate`` ``version`` (asked of ``cargo metadata``)."""
    meta = json.loads(
        run([cargo, "metadata", "--locked", "--format-version", "1",
             "--manifest-path", str(manifest_dir / "Cargo.toml")], manifest_dir, env)
    )
    for package in meta["packages"]:
        if package["name"] == crate and package["version"] == version:
            return Path(package["manifest_path"]).parent
    raise FetchError(f"cargo metadata does not list {crate} {version}")


def cache_dir(default: Path) -> Path:
    """The fetch cache: ``$AERON_PY_CACHE_DIR`` if set, else ``default``; created."""
    cache = Path(os.environ.get("AERON_PY_CACHE_DIR", default)).expanduser().resolve()
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def bundled_copy(folder: Path, stamp: str, pin: str) -> Path | None:
    """``folder`` if it holds a copy stamped with ``pin`` (an sdist's); None if it holds no stamp.

    A stamp naming another pin is an error: the folder is a stale build artefact.
    """
    path = folder / stamp
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0] != pin:
        raise FetchError(
            f"{folder} holds {lines[0] if lines else 'nothing'!r}, not the pinned {pin!r}: "
            "delete that folder (it is a build artefact) and build again"
        )
    return folder


def copy_stamped(tree: Path, files: Iterable[Path], dest: Path, stamp: str, stamp_text: str) -> int:
    """Copy ``files`` (relative to ``tree``) into ``dest`` and write the stamp; return the count.

    ``dest`` is replaced if it holds an earlier stamped copy; any other non-empty folder is refused.
    """
    if dest.exists():
        if not (dest / stamp).is_file() and any(dest.iterdir()):
            raise FetchError(f"{dest} is not empty and holds no earlier copy: not touching it")
        shutil.rmtree(dest)
    count = 0
    for rel in files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tree / rel, dest / rel)
        count += 1
    (dest / stamp).write_text(stamp_text, encoding="utf-8")
    return count


def load_module(name: str, path: Path) -> ModuleType:
    """Import the file ``path`` as module ``name`` (both vendored trees have a ``fetch.py``)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
