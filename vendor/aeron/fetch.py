#!/usr/bin/env python3
"""Locate (or fetch) the pinned Aeron C source tree and print its path.

The tree comes from the Rust crate registry's crate ``libaeron_archive_c_client-sys`` (pinned,
with its checksum, in ``Cargo.toml`` and ``Cargo.lock`` beside this file); its ``aeron/``
folder is the complete Aeron tree, and its ``generated/`` folder the archive client's
message codecs that Aeron's own build generated for that tree (``codecs.py``).  ``cargo fetch`` downloads it into a git-ignored
cache, ``cargo metadata`` tells where it landed.  Nothing is compiled by cargo.

``AERON_SOURCE_DIR=/path/to/aeron`` skips the fetch and uses an existing checkout.
An sdist carries the pinned tree's build inputs in ``vendor/aeron/src`` (staged by
``bundle.py`` while the sdist is built, git-ignored in a checkout): when that copy is
there, it is used and nothing is fetched, so installing an sdist needs neither cargo
nor a network.  ``AERON_PY_CACHE_DIR`` moves the cache (default: ``vendor/aeron/.cache``).
What this shares with ``vendor/libsodium/fetch.py`` is in ``vendor/crate_fetch.py``.

Usage: ``python vendor/aeron/fetch.py`` prints the absolute path of the Aeron tree
on stdout, or exits non-zero with a message that says what is missing.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # vendor/: crate_fetch, shared with vendor/libsodium/fetch.py
    sys.path.append(str(HERE.parent))
import crate_fetch  # noqa: E402
from crate_fetch import FetchError  # noqa: E402  (fetch.FetchError, as before)

CRATE = "libaeron_archive_c_client-sys"
VERSION = "1.54.0"
SHA256 = "3d6a6fc92a63be484a07e1eb4a884eca3a006a677dadc0b1bd92ce43e312a639"
REQUIRED = ("aeron-client/src/main/c/aeronc.h", "aeron-driver/src/main/c/aeronmd.h", "version.txt")
BUNDLED = HERE / "src"
STAMP = "PINNED"  # in BUNDLED: names the pinned crate the copy was taken from

__all__ = ["BUNDLED", "CRATE", "FetchError", "SHA256", "STAMP", "VERSION", "bundled", "check_tree",
           "fetch", "locate", "pin"]


def check_tree(tree: Path) -> Path:
    """Return ``tree`` if it holds Aeron's C client and driver, else raise."""
    missing = [rel for rel in REQUIRED if not (tree / rel).is_file()]
    if missing:
        raise FetchError(
            f"{tree} is not a usable Aeron source tree: missing {', '.join(missing)} "
            "(need aeron-client/src/main/c and aeron-driver/src/main/c)"
        )
    return tree


def fetch(cache: Path) -> Path:
    """Fetch the pinned crate with cargo into ``cache`` and return its Aeron tree."""
    cargo = crate_fetch.find_cargo("Aeron's source", "set AERON_SOURCE_DIR to an existing Aeron checkout")
    env = crate_fetch.cargo_env(cache)
    crate_fetch.cargo_fetch(cargo, HERE, env)
    crate_fetch.verified_crate_file(cache / "cargo-home", CRATE, VERSION, SHA256)
    return check_tree(crate_fetch.package_dir(cargo, HERE, env, CRATE, VERSION) / "aeron")


def pin() -> str:
    """The first line of a bundled copy's stamp: the crate and version it must come from."""
    return f"{CRATE} {VERSION}"


def bundled() -> Path | None:
    """The sdist's copy of the pinned tree (``vendor/aeron/src``), if there is one."""
    copy = crate_fetch.bundled_copy(BUNDLED, STAMP, pin())
    return None if copy is None else check_tree(copy)


def locate() -> Path:
    """The Aeron tree: ``AERON_SOURCE_DIR`` if set, else the sdist's bundled copy, else
    the fetched, cached crate."""
    override = os.environ.get("AERON_SOURCE_DIR")
    if override:
        return check_tree(Path(override).expanduser().resolve())
    copy = bundled()
    if copy is not None:
        return copy
    return fetch(crate_fetch.cache_dir(HERE / ".cache"))


def main() -> int:
    try:
        print(locate())
    except (FetchError, subprocess.TimeoutExpired, OSError) as exc:
        print(f"aeron_py: cannot get Aeron's C source: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
