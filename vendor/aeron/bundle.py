"""Stage the pinned Aeron tree's build inputs in ``vendor/aeron/src`` for an sdist.

An sdist must build with neither cargo nor a network, so it carries what CMake needs
from the pinned Aeron tree (see ``fetch.py``), and nothing else:

* the top-level ``CMakeLists.txt`` and ``version.txt`` (our CMakeLists.txt adds Aeron's
  top level as a subdirectory), Aeron's ``LICENSE`` (and ``NOTICE``, should a release
  ship one: 1.54.0 does not);
* the C client and the C driver: ``aeron-client/src/main/c`` and
  ``aeron-driver/src/main/c`` (sources, headers, CMake files);
* ``aeron-client/src/main/cpp_wrapper``'s CMake file and headers: Aeron's top level
  always adds that directory (a header-only interface target), so CMake must find the
  files it lists, though nothing of it is compiled.
* the C archive client, ``aeron-archive/src/main/c/client`` (sources and headers), and
  its message codecs from the pinned crate (``codecs.py``) in ``archive-codecs/``.

The copy is made while ``aeron_py_backend.build_sdist`` runs and removed afterwards, so a
checkout keeps building from the fetched crate. ``python vendor/aeron/bundle.py DEST``
stages into DEST by hand (to look at what an sdist would carry).
"""
from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import fetch

FILES = ("CMakeLists.txt", "version.txt", "LICENSE")
OPTIONAL_FILES = ("NOTICE",)
# (folder, suffixes of the files taken from it, recursively)
FOLDERS = (
    ("aeron-client/src/main/c", (".c", ".h", ".txt")),
    ("aeron-driver/src/main/c", (".c", ".h", ".txt")),
    ("aeron-client/src/main/cpp_wrapper", (".h", ".txt")),
    ("aeron-archive/src/main/c/client", (".c", ".h")),
)
# codecs.py beside this file: where the archive client's generated codecs are
codecs = fetch.crate_fetch.load_module("aeron_py_archive_codecs", Path(__file__).resolve().parent / "codecs.py")


def wanted(tree: Path) -> Iterator[Path]:
    """The files of ``tree`` an sdist carries, relative to ``tree``."""
    for name in FILES:
        if not (tree / name).is_file():
            raise fetch.FetchError(f"{tree} has no {name}")
        yield Path(name)
    for name in OPTIONAL_FILES:
        if (tree / name).is_file():
            yield Path(name)
    for folder, suffixes in FOLDERS:
        if not (tree / folder).is_dir():
            raise fetch.FetchError(f"{tree} has no {folder}/")
        for path in sorted((tree / folder).rglob("*")):
            if path.is_file() and path.suffix in suffixes:
                yield path.relative_to(tree)


def stage(tree: Path, dest: Path) -> int:
    """Copy the build inputs of ``tree`` into ``dest`` (replacing an earlier copy; any other
    non-empty folder is refused) and stamp it with the pin; return the number of files."""
    fetch.check_tree(tree)
    version = (tree / "version.txt").read_text(encoding="utf-8").strip()
    if version != fetch.VERSION:
        raise fetch.FetchError(
            f"an sdist bundles the pinned Aeron {fetch.VERSION}, but {tree} is Aeron {version} "
            "(unset AERON_SOURCE_DIR to use the pinned crate)"
        )
    text = (
        f"{fetch.pin()}\nAeron {version}: the C client's and C driver's build inputs, copied "
        f"unmodified from the Rust crate registry {fetch.CRATE}={fetch.VERSION} (sha256 {fetch.SHA256}) "
        "when this sdist was built; see vendor/aeron/README.md.\n"
    )
    count = fetch.crate_fetch.copy_stamped(tree, wanted(tree), dest, fetch.STAMP, text)
    return count + codecs.bundle(tree, dest / codecs.BUNDLED_NAME, text)


@contextlib.contextmanager
def staged() -> Iterator[Path]:
    """``vendor/aeron/src`` holding the pinned tree for the duration of the block.

    An existing stamped copy (building an sdist from an unpacked sdist) is used as it is
    and kept; otherwise the tree comes from ``fetch.locate()`` and the copy is removed when
    the block ends.
    """
    existing = fetch.bundled()
    if existing is not None:
        yield existing
        return
    if fetch.BUNDLED.exists():
        raise fetch.FetchError(f"{fetch.BUNDLED} exists without a {fetch.STAMP} stamp: delete it")
    stage(fetch.locate(), fetch.BUNDLED)
    try:
        yield fetch.BUNDLED
    finally:
        shutil.rmtree(fetch.BUNDLED, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python vendor/aeron/bundle.py DEST  (a new or empty folder)", file=sys.stderr)
        return 2
    try:
        count = stage(fetch.locate(), Path(argv[0]).resolve())
    except (fetch.FetchError, codecs.CodecError, OSError) as exc:
        print(f"aeron_py: cannot stage Aeron's C source: {exc}", file=sys.stderr)
        return 1
    print(f"staged {count} files of Aeron {fetch.VERSION} into {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
