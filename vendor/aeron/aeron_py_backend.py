"""aeron_py's PEP 517 build backend: scikit-build-core, with Aeron's and libsodium's source
in the sdist.

Every hook is scikit-build-core's (``pyproject.toml`` names this module, with
``backend-path = ["vendor/aeron", "vendor"]``). Only ``build_sdist`` adds a step: the pinned Aeron
tree's build inputs are staged in ``vendor/aeron/src`` (``bundle.py``) and the pinned
libsodium tree's in ``vendor/libsodium/src`` (``vendor/libsodium/fetch.py``) while the
sdist is written, and ``[tool.scikit-build] sdist.include`` takes those git-ignored folders
in. Built from the sdist, CMake finds the copies (the two ``fetch.py``) and needs neither
cargo nor a network.
"""
from __future__ import annotations

from pathlib import Path

from scikit_build_core import build as _scikit_build
from scikit_build_core.build import (
    build_editable,
    build_wheel,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

import bundle
import crate_fetch  # vendor/crate_fetch.py (backend-path has vendor/ too)

# vendor/libsodium/fetch.py, under a name of its own (vendor/aeron/fetch.py is `fetch`)
_libsodium = crate_fetch.load_module(
    "aeron_py_libsodium_fetch", Path(crate_fetch.__file__).resolve().parent / "libsodium" / "fetch.py")

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]


def build_sdist(sdist_directory: str, config_settings: dict[str, list[str] | str] | None = None) -> str:
    """scikit-build-core's ``build_sdist`` with the pinned Aeron and libsodium trees staged in
    ``vendor/aeron/src`` and ``vendor/libsodium/src``."""
    with bundle.staged(), _libsodium.staged():
        return _scikit_build.build_sdist(sdist_directory, config_settings)
