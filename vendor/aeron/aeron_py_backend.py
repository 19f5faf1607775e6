"""aeron_py's PEP 517 build backend: scikit-build-core, with Aeron's source in the sdist.

Every hook is scikit-build-core's (``pyproject.toml`` names this module, with
``backend-path = ["vendor/aeron"]``). Only ``build_sdist`` adds a step: the pinned Aeron
tree's build inputs are staged in ``vendor/aeron/src`` (``bundle.py``) while the sdist is
written, and ``[tool.scikit-build] sdist.include`` takes that git-ignored folder in. Built
from the sdist, CMake finds the copy (``fetch.py``) and needs neither cargo nor a network.
"""
from __future__ import annotations

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
    """scikit-build-core's ``build_sdist`` with the pinned Aeron tree staged in ``vendor/aeron/src``."""
    with bundle.staged():
        return _scikit_build.build_sdist(sdist_directory, config_settings)
