#!/usr/bin/env python3
"""Locate (or fetch) the pinned Aeron C source tree and print its path.

The tree comes from the Rust crate registry's crate ``libaeron_driver-sys`` (pinned, with its
checksum, in ``Cargo.toml`` and ``Cargo.lock`` beside this file); its ``aeron/``
folder is the complete Aeron tree.  ``cargo fetch`` downloads it into a git-ignored
cache, ``cargo metadata`` tells where it landed.  Nothing is compiled by cargo.

``AERON_SOURCE_DIR=/path/to/aeron`` skips the fetch and uses an existing checkout.
An sdist carries the pinned tree's build inputs in ``vendor/aeron/src`` (staged by
``bundle.py`` while the sdist is built, git-ignored in a checkout): when that copy is
there, it is used and nothing is fetched, so installing an sdist needs neither cargo
nor a network.  ``AERON_PY_CACHE_DIR`` moves the cache (default: ``vendor/aeron/.cache``).

Usage: ``python vendor/aeron/fetch.py`` prints the absolute path of the Aeron tree
on stdout, or exits non-zero with a message that says what is missing.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CRATE = "libaeron_driver-sys"
VERSION = "1.54.0"
SHA256 = "b2719da7d2dc8c05cc8368d83b09a216872080c1d8bed252066fcb47f3f4f00f"
REQUIRED = ("aeron-client/src/main/c/aeronc.h", "aeron-driver/src/main/c/aeronmd.h", "version.txt")
BUNDLED = HERE / "src"
STAMP = "PINNED"  # in BUNDLED: names the pinned crate the copy was taken from


class FetchError(RuntimeError):
    """The Aeron source could not be found or fetched."""


def check_tree(tree: Path) -> Path:
    """Return ``tree`` if it holds Aeron's C client and driver, else raise."""
    missing = [rel for rel in REQUIRED if not (tree / rel).is_file()]
    if missing:
        raise FetchError(
            f"{tree} is not a usable Aeron source tree: missing {', '.join(missing)} "
            "(need aeron-client/src/main/c and aeron-driver/src/main/c)"
        )
    return tree


def _cargo() -> str:
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    if not Path(cargo).exists():
        raise FetchError(
            "cargo is needed to fetch Aeron's source from the Rust crate registry (install Rust via rustup), "
            "or set AERON_SOURCE_DIR to an existing Aeron checkout"
        )
    return cargo


def _run(cmd: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run(cmd, cwd=HERE, env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise FetchError(f"`{' '.join(cmd)}` failed ({proc.returncode}):\n{proc.stderr.strip()}")
    return proc.stdout


def _verify_crate_file(cargo_home: Path) -> None:
    """Check the downloaded .crate archive against the pinned SHA-256."""
    archives = list((cargo_home / "registry" / "cache").glob(f"*/{CRATE}-{VERSION}.crate"))
    if not archives:
        raise FetchError(f"cargo fetch left no {CRATE}-{VERSION}.crate under {cargo_home}")
    digest = hashlib.sha256(archives[0].read_bytes()).hexdigest()
    if digest != SHA256:
        raise FetchError(f"{archives[0]}: sha256 {digest} does not match the pinned {SHA256}")


def fetch(cache: Path) -> Path:
    """Fetch the pinned crate with cargo into ``cache`` and return its Aeron tree."""
    cargo_home = cache / "cargo-home"
    env = dict(os.environ, CARGO_HOME=str(cargo_home), CARGO_TARGET_DIR=str(cache / "target"))
    _run([_cargo(), "fetch", "--locked", "--manifest-path", str(HERE / "Cargo.toml")], env)
    _verify_crate_file(cargo_home)
    meta = json.loads(
        _run([_cargo(), "metadata", "--locked", "--format-version", "1",
              "--manifest-path", str(HERE / "Cargo.toml")], env)
    )
    for package in meta["packages"]:
        if package["name"] == CRATE and package["version"] == VERSION:
            return check_tree(Path(package["manifest_path"]).parent / "aeron")
    raise FetchError(f"cargo metadata does not list {CRATE} {VERSION}")


def pin() -> str:
    """The first line of a bundled copy's stamp: the crate and version it must come from."""
    return f"{CRATE} {VERSION}"


def bundled() -> Path | None:
    """The sdist's copy of the pinned tree (``vendor/aeron/src``), if there is one."""
    stamp = BUNDLED / STAMP
    if not stamp.is_file():
        return None
    lines = stamp.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0] != pin():
        raise FetchError(
            f"{BUNDLED} holds {lines[0] if lines else 'nothing'!r}, not the pinned {pin()!r}: "
            "delete that folder (it is a build artefact) and build again"
        )
    return check_tree(BUNDLED)


def locate() -> Path:
    """The Aeron tree: ``AERON_SOURCE_DIR`` if set, else the sdist's bundled copy, else
    the fetched, cached crate."""
    override = os.environ.get("AERON_SOURCE_DIR")
    if override:
        return check_tree(Path(override).expanduser().resolve())
    copy = bundled()
    if copy is not None:
        return copy
    cache = Path(os.environ.get("AERON_PY_CACHE_DIR", HERE / ".cache")).expanduser().resolve()
    cache.mkdir(parents=True, exist_ok=True)
    return fetch(cache)


def main() -> int:
    try:
        print(locate())
    except (FetchError, subprocess.TimeoutExpired, OSError) as exc:
        print(f"aeron_py: cannot get Aeron's C source: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
