"""Sphinx configuration of the aeron_py documentation (built by .ci/docs, warnings are errors).

aeron_py is imported from the environment Sphinx runs in (an installed wheel or the
editable install): the extension ``aeron_py._aeron`` must be built. The local extensions
in ``_ext/``: ``autodoc_fixes`` (docstring reST repairs), ``extension_stub`` (types of the
compiled extension's members from ``_aeron.pyi``), ``optional_modules`` (pages for
modules a build may not have yet, such as ``aeron_py.asyncio`` and ``aeron_py.poll_set``,
are left out instead of failing) and ``generated_pages`` (the command lines' ``--help``
and optional plots, generated into the git-ignored ``_generated/``). Benchmark plots are
read from ``benchmarks/results/`` in place, never copied into git.
"""
from __future__ import annotations

import sys
from pathlib import Path

import aeron_py

DOCS = Path(__file__).resolve().parent

project = "aeron_py"
author = "the aeron_py authors"
copyright = "2026, the aeron_py authors"
release = version = aeron_py.__version__

sys.path.insert(0, str(DOCS / "_ext"))
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "autodoc_fixes",
    "extension_stub",
    "optional_modules",
    "generated_pages",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = f"aeron_py {release}"
html_static_path: list[str] = []
exclude_patterns = ["_build", "_generated", ".gitignore"]

# --- autodoc -----------------------------------------------------------------------
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_class_signature = "mixed"
# The analytics job imports PySpark and matplotlib at module level; the API pages need
# neither (and importing PySpark would slow the build), so they are mocked for autodoc.
autodoc_mock_imports = ["pyspark", "matplotlib"]
# A builtin named in a signature (``kind: type``) also matches attributes of that name
# (``Header.type``, ``HeaderView.type``); Sphinx then warns "more than one target found"
# for a link that should go to the builtin anyway.
suppress_warnings = ["ref.python"]

# --- modules and plots a build may not have yet (docs/_ext/optional_modules.py) ----
# api/index.rst lists these pages with the line "OPTIONAL_PAGES"; a page whose module is
# missing is left out. Within a page, ".. optional-automodule:: M" needs M only if present.
optional_pages = {"api/poll_set": "aeron_py.poll_set", "api/asyncio": "aeron_py.asyncio"}

# --- generated at build time into _generated/ (docs/_ext/generated_pages.py) ----------
generated_clis = {
    "echo_server": ["-m", "aeron_py.echo_server", "--help"],
    "echo_client": ["-m", "aeron_py.echo_client", "--help"],
    "echo_load": ["-m", "aeron_py.echo_load", "--help"],
    "stat": ["-m", "aeron_py.stat", "--help"],
    "analytics": ["-m", "aeron_py.analytics", "--help"],
}
generated_markdown = {
    # every public function of the pinned aeronc.h and aeronmd.h: wrapped where, or why not
    "api_coverage": [str(Path(__file__).resolve().parents[1] / ".ci" / "api_coverage.py"), "--markdown", "-"],
}
generated_optional_clis = {
    "analytics_follow": ("aeron_py.analytics.stream",
                         ["-m", "aeron_py.analytics", "EVENTS_DIR", "--follow", "--help"]),
}
generated_optional_plots = {
    "async.png": ("asyncio against the sync API",
                  "`benchmarks/async_bench.py`: UDP round trip and CPU while idle of `aeron_py.asyncio` "
                  "(each waker, under asyncio and uvloop) against the sync API (`results/async.json`)."),
}
