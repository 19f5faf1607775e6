#!/usr/bin/env python3
"""Locate (or fetch) the pinned libsodium source tree and print its path.

The tree comes from the Rust crate registry's crate ``libsodium-sys-stable`` (pinned, with
its checksum, in ``Cargo.toml`` and ``Cargo.lock`` beside this file), which carries
libsodium's release tarball ``LATEST.tar.gz`` (libsodium 1.0.22 "stable"). ``cargo fetch``
downloads the crate into a git-ignored cache (only the host's dependencies:
``--target``); this script checks the ``.crate`` archive's SHA-256, reads the tarball out
of it, checks the tarball's own pinned SHA-256, and unpacks it once into the cache
(``<cache>/libsodium-1.0.22/libsodium-stable``). Nothing is compiled by cargo.

``LIBSODIUM_SOURCE_DIR=/path/to/libsodium`` skips the fetch and uses an existing tree.
An sdist carries the pinned tree's build inputs in ``vendor/libsodium/src`` (staged by
``stage``/``staged`` below while the sdist is built, git-ignored in a checkout): when that
copy is there, it is used and nothing is fetched. ``AERON_PY_CACHE_DIR`` moves the cache
(default: ``vendor/libsodium/.cache``). Shared with ``vendor/aeron/fetch.py``:
``vendor/crate_fetch.py``.

Usage: ``python vendor/libsodium/fetch.py`` prints the absolute path of the libsodium tree
(the folder holding ``src/libsodium``) on stdout, or exits non-zero with a message that
says what is missing. ``python vendor/libsodium/fetch.py --stage DEST`` stages the sdist's
copy into DEST by hand (to look at what an sdist would carry).
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # vendor/: crate_fetch, shared with vendor/aeron/fetch.py
    sys.path.append(str(HERE.parent))
import crate_fetch  # noqa: E402
from crate_fetch import FetchError  # noqa: E402

CRATE = "libsodium-sys-stable"
VERSION = "1.24.3"
SHA256 = "1f55c1c508d31e2cf0a649c9c889e4bcf554cbfb2a6803f049f219784b044283"
TARBALL = "LATEST.tar.gz"  # in the crate: libsodium's release tarball
TARBALL_SHA256 = "eb9873cc5ccd7b26ef058394264663c99e9c047b423be1ffd484071774198f26"
LIBSODIUM_VERSION = "1.0.22"
TOP = "libsodium-stable"  # the tarball's one top folder
REQUIRED = ("src/libsodium/include/sodium.h", "src/libsodium/include/sodium/version.h.in",
            "src/libsodium/sodium/core.c", "LICENSE")
BUNDLED = HERE / "src"
STAMP = "PINNED"  # in BUNDLED: names the pinned crate the copy was taken from
DONE = ".unpacked"  # in the cache's unpacked tree: the tarball's SHA-256, written last
TARGET = "x86_64-unknown-linux-gnu"  # fallback when rustc cannot tell the host


def check_tree(tree: Path) -> Path:
    """Return ``tree`` if it holds libsodium's library sources, else raise."""
    missing = [rel for rel in REQUIRED if not (tree / rel).is_file()]
    if missing:
        raise FetchError(
            f"{tree} is not a usable libsodium source tree: missing {', '.join(missing)} "
            "(need the release tree's src/libsodium and LICENSE)"
        )
    return tree


def tree_version(tree: Path) -> str:
    """The libsodium version of a release tree, read from its ``configure.ac``."""
    configure = tree / "configure.ac"
    match = re.search(r"AC_INIT\(\[libsodium\],\s*\[([^\]]+)\]", configure.read_text(encoding="utf-8")) \
        if configure.is_file() else None
    if not match:
        raise FetchError(f"{tree} has no configure.ac naming libsodium's version")
    return match.group(1)


def _host_target(cargo: str) -> str:
    """The host's target triple (``rustc -vV``), so cargo skips other platforms' dependencies."""
    rustc = Path(cargo).with_name("rustc")
    try:
        out = subprocess.run([str(rustc) if rustc.exists() else "rustc", "-vV"],
                             capture_output=True, text=True, timeout=60).stdout
    except OSError:
        return TARGET
    found = re.search(r"^host: (\S+)$", out, re.M)
    return found.group(1) if found else TARGET


def _tarball(crate_file: Path) -> bytes:
    """``LATEST.tar.gz`` read out of the verified ``.crate`` archive, checked against its pin."""
    name = f"{CRATE}-{VERSION}/{TARBALL}"
    with tarfile.open(crate_file, "r:gz") as crate:
        member = crate.extractfile(name) if name in crate.getnames() else None
        if member is None:
            raise FetchError(f"{crate_file} holds no {name}")
        data = member.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != TARBALL_SHA256:
        raise FetchError(f"{name}: sha256 {digest} does not match the pinned {TARBALL_SHA256}")
    return data


def _check_members(archive: tarfile.TarFile) -> None:
    """Every entry is a plain file or folder under ``libsodium-stable/``: nothing lands elsewhere."""
    for member in archive.getmembers():
        path = PurePosixPath(member.name)
        if path.is_absolute() or ".." in path.parts or path.parts[:1] != (TOP,):
            raise FetchError(f"{TARBALL} has an entry outside {TOP}/: {member.name!r}")
        if not (member.isfile() or member.isdir()):
            raise FetchError(f"{TARBALL} has an entry that is not a file or folder: {member.name!r}")


def _unpack(data: bytes, into: Path) -> Path:
    """Unpack the tarball into ``into/libsodium-stable`` (once: a finished unpack is marked)."""
    tree = into / TOP
    if (tree / DONE).is_file() and (tree / DONE).read_text(encoding="utf-8").strip() == TARBALL_SHA256:
        return tree
    into.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".unpack-", dir=into))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            _check_members(archive)
            if hasattr(tarfile, "data_filter"):
                archive.extractall(scratch, filter="data")
            else:  # Python < 3.10.12 / 3.11.4: the members were checked above
                archive.extractall(scratch)
        (scratch / TOP / DONE).write_text(TARBALL_SHA256 + "\n", encoding="utf-8")
        shutil.rmtree(tree, ignore_errors=True)
        os.replace(scratch / TOP, tree)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return tree


def fetch(cache: Path) -> Path:
    """Fetch the pinned crate with cargo into ``cache`` and return the unpacked libsodium tree."""
    cargo = crate_fetch.find_cargo(
        "libsodium's source", "set LIBSODIUM_SOURCE_DIR to an existing libsodium release tree")
    env = crate_fetch.cargo_env(cache)
    crate_fetch.cargo_fetch(cargo, HERE, env, target=_host_target(cargo))
    crate_file = crate_fetch.verified_crate_file(cache / "cargo-home", CRATE, VERSION, SHA256)
    return check_tree(_unpack(_tarball(crate_file), cache / f"libsodium-{LIBSODIUM_VERSION}"))


def pin() -> str:
    """The first line of a bundled copy's stamp: the crate and version it must come from."""
    return f"{CRATE} {VERSION}"


def bundled() -> Path | None:
    """The sdist's copy of the pinned tree (``vendor/libsodium/src``), if there is one."""
    copy = crate_fetch.bundled_copy(BUNDLED, STAMP, pin())
    return None if copy is None else check_tree(copy)


def locate() -> Path:
    """The libsodium tree: ``LIBSODIUM_SOURCE_DIR`` if set, else the sdist's bundled copy,
    else the fetched, cached crate's tarball."""
    override = os.environ.get("LIBSODIUM_SOURCE_DIR")
    if override:
        return check_tree(Path(override).expanduser().resolve())
    copy = bundled()
    if copy is not None:
        return copy
    return fetch(crate_fetch.cache_dir(HERE / ".cache"))


def wanted(tree: Path) -> Iterator[Path]:
    """The files of ``tree`` an sdist carries, relative to ``tree``: ``LICENSE`` and the C
    sources and headers of ``src/libsodium`` (with ``version.h.in``); no assembly, tests,
    build scripts or docs."""
    yield Path("LICENSE")
    for path in sorted((tree / "src" / "libsodium").rglob("*")):
        if path.is_file() and (path.suffix in (".c", ".h") or path.name == "version.h.in"):
            yield path.relative_to(tree)


def stage(tree: Path, dest: Path) -> int:
    """Copy the build inputs of ``tree`` into ``dest`` (replacing an earlier copy; any other
    non-empty folder is refused) and stamp it with the pin; return the number of files."""
    check_tree(tree)
    version = tree_version(tree)
    if version != LIBSODIUM_VERSION:
        raise FetchError(
            f"an sdist bundles the pinned libsodium {LIBSODIUM_VERSION}, but {tree} is libsodium {version} "
            "(unset LIBSODIUM_SOURCE_DIR to use the pinned crate)"
        )
    text = (f"{pin()}\nlibsodium {version}: src/libsodium's C sources and headers and LICENSE, copied "
            f"unmodified from {TARBALL} (sha256 {TARBALL_SHA256}) in the Rust crate registry's "
            f"{CRATE}={VERSION} (sha256 {SHA256}) when this sdist was built; see vendor/libsodium/README.md.\n")
    return crate_fetch.copy_stamped(tree, wanted(tree), dest, STAMP, text)


@contextlib.contextmanager
def staged() -> Iterator[Path]:
    """``vendor/libsodium/src`` holding the pinned tree's build inputs for the duration of the block.

    An existing stamped copy (building an sdist from an unpacked sdist) is used as it is
    and kept; otherwise the tree comes from ``locate()`` and the copy is removed when the
    block ends.
    """
    existing = bundled()
    if existing is not None:
        yield existing
        return
    if BUNDLED.exists():
        raise FetchError(f"{BUNDLED} exists without a {STAMP} stamp: delete it")
    stage(locate(), BUNDLED)
    try:
        yield BUNDLED
    finally:
        shutil.rmtree(BUNDLED, ignore_errors=True)


def main(argv: list[str]) -> int:
    if argv and (argv[0] != "--stage" or len(argv) != 2):
        print("usage: python vendor/libsodium/fetch.py [--stage DEST]", file=sys.stderr)
        return 2
    try:
        if argv:
            count = stage(locate(), Path(argv[1]).resolve())
            print(f"staged {count} files of libsodium {LIBSODIUM_VERSION} into {argv[1]}")
        else:
            print(locate())
    except (FetchError, subprocess.TimeoutExpired, OSError, tarfile.TarError) as exc:
        print(f"aeron_py: cannot get libsodium's C source: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
