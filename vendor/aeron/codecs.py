#!/usr/bin/env python3
"""The Aeron Archive client's C message codecs: from the pinned crate, or the sdist's copy.

Aeron's C archive client (``aeron-archive/src/main/c/client``) includes SBE message codecs
that Aeron's own Gradle build generates from the archive's schema. The pinned crate (see
``fetch.py``) ships them beside the Aeron tree, as Aeron's build generated them for that
very tree: ``<crate>/generated/c/aeron_archive_client/*.h``. No Java runs, here or anywhere
in aeron_py's build.

Where the codecs are looked for, first match wins:

1. ``$AERON_PY_ARCHIVE_CODECS``: a folder holding ``c/aeron_archive_client/`` (for an
   ``AERON_SOURCE_DIR`` checkout, which carries no generated codecs of its own);
2. an sdist's bundled copy, ``TREE/archive-codecs`` (staged by ``bundle.py`` with a stamp);
3. the fetched crate's ``generated/`` folder, beside ``TREE``.

Usage: ``python vendor/aeron/codecs.py AERON_TREE`` prints the include root (the folder
holding ``c/``) on stdout, or exits non-zero with a message that says what is missing and
what to do. Standard library only.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

FOLDER = Path("c/aeron_archive_client")  # the archive client includes "c/aeron_archive_client/…"
#: Headers every usable set has: the frame header and the two messages every call uses.
REQUIRED = ("messageHeader.h", "controlResponse.h", "recordingDescriptor.h")
BUNDLED_NAME = "archive-codecs"  # inside an sdist's bundled Aeron tree
STAMP = "CODECS"
ENV = "AERON_PY_ARCHIVE_CODECS"
HINT = (f"set {ENV} to a folder holding {FOLDER}/ (Aeron's generated archive codecs for that tree), "
        "unset AERON_SOURCE_DIR to build from the pinned crate, or leave the archive client out with "
        "-DAERON_PY_ARCHIVE=OFF (env AERON_PY_ARCHIVE=0)")


class CodecError(RuntimeError):
    """No usable set of codecs was found."""


def check(root: Path, what: str) -> Path:
    """``root`` if it holds a usable set of codecs, else CodecError naming ``what`` it is."""
    missing = [name for name in REQUIRED if not (root / FOLDER / name).is_file()]
    if missing:
        raise CodecError(f"{what} {root} lacks {', '.join(str(FOLDER / m) for m in missing)}: {HINT}")
    return root


def locate(tree: Path) -> Path:
    """The codecs' include root for the Aeron ``tree`` (see the module docstring)."""
    override = os.environ.get(ENV)
    if override:
        return check(Path(override).expanduser().resolve(), f"${ENV}")
    bundled = tree / BUNDLED_NAME
    if (bundled / STAMP).is_file():
        return check(bundled, "the sdist's bundled codecs")
    crate = tree.parent / "generated"
    if crate.is_dir():
        return check(crate, "the pinned crate's generated codecs")
    raise CodecError(f"no archive codecs for the Aeron tree {tree} (not the pinned crate, no {BUNDLED_NAME}/): {HINT}")


def bundle(tree: Path, dest: Path, stamp_text: str) -> int:
    """Copy the codecs of ``tree`` into ``dest`` (an sdist's ``archive-codecs``) with a stamp;
    return the number of files copied."""
    source = locate(tree) / FOLDER
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(source, dest / FOLDER)
    (dest / STAMP).write_text(stamp_text, encoding="utf-8")
    return sum(1 for path in (dest / FOLDER).iterdir() if path.is_file())


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python vendor/aeron/codecs.py AERON_TREE", file=sys.stderr)
        return 2
    try:
        print(locate(Path(argv[0]).resolve()))
    except (CodecError, OSError) as exc:
        print(f"aeron_py: cannot get the Aeron Archive client's codecs: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
