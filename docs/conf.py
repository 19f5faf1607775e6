"""Sphinx configuration of the aeron_py documentation (built by .ci/docs, warnings are errors).

aeron_py is imported from the environment Sphinx runs in (an installed wheel or the
editable install): the extension ``aeron_py._aeron`` must be built. Pages for modules
that are not in this build (``aeron_py.asyncio``, ``aeron_py.poll_set``) are left out,
so the build never fails on a missing optional module. The command-line ``--help``
texts are generated at build time into ``_generated/`` (git-ignored), and the benchmark
plots are read from ``benchmarks/results/`` in place (never copied into git).
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import aeron_py

DOCS = Path(__file__).resolve().parent
GENERATED = DOCS / "_generated"

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

# --- optional modules: a page per module that this build may not have yet ----------
# api/index.rst lists them with the line "OPTIONAL_PAGES" in its toctree; the pages whose
# module this build has replace it, the others are excluded from the build. Within a page,
# ".. optional-automodule:: M" documents M only when this build has it.
OPTIONAL_PAGES = {"poll_set": "aeron_py.poll_set", "asyncio": "aeron_py.asyncio"}


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


PRESENT_OPTIONAL_PAGES = [page for page, module in OPTIONAL_PAGES.items() if _has_module(module)]
exclude_patterns += [f"api/{page}.rst" for page in OPTIONAL_PAGES if page not in PRESENT_OPTIONAL_PAGES]


_OPTIONAL_AUTOMODULE = re.compile(r"^\.\. optional-automodule:: ([\w.]+)\n", re.MULTILINE)


def _optional_automodule(match: re.Match[str]) -> str:
    """``.. optional-automodule:: M``: ``.. automodule:: M`` when this build has M, else nothing."""
    return f".. automodule:: {match.group(1)}\n" if _has_module(match.group(1)) else ""


def _read_source(app: Any, docname: str, source: list[str]) -> None:
    if docname == "api/index":
        source[0] = source[0].replace("   OPTIONAL_PAGES\n",
                                      "".join(f"   {page}\n" for page in PRESENT_OPTIONAL_PAGES))
    if docname.startswith("api/"):
        source[0] = _OPTIONAL_AUTOMODULE.sub(_optional_automodule, source[0])


# --- generated: the command lines' --help -------------------------------------------
CLIS = {
    "echo_server": ["-m", "aeron_py.echo_server", "--help"],
    "echo_client": ["-m", "aeron_py.echo_client", "--help"],
    "echo_load": ["-m", "aeron_py.echo_load", "--help"],
    "stat": ["-m", "aeron_py.stat", "--help"],
    "analytics": ["-m", "aeron_py.analytics", "--help"],
}
# Command lines of modules this build may not have: NAME -> (module, arguments). Each gives
# _generated/NAME.md, a text block of its --help, or an empty file without the module.
OPTIONAL_CLIS = {
    "analytics_follow": ("aeron_py.analytics.stream",
                         ["-m", "aeron_py.analytics", "EVENTS_DIR", "--follow", "--help"]),
}
for _name, (_module, _args) in OPTIONAL_CLIS.items():
    if _has_module(_module):
        CLIS[_name] = _args


def _write_cli_help() -> None:
    """Run each CLI's ``--help`` (fixed width, outside the source tree) into ``_generated/``."""
    GENERATED.mkdir(exist_ok=True)
    env = dict(os.environ, COLUMNS="100", PYTHONIOENCODING="utf-8")
    running = {name: subprocess.Popen([sys.executable, *args], cwd=GENERATED, env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for name, args in CLIS.items()}
    for name, process in running.items():
        try:
            text, errors = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise RuntimeError(f"docs: `python {' '.join(CLIS[name])}` took more than 60 s") from None
        if process.returncode != 0:
            raise RuntimeError(f"docs: `python {' '.join(CLIS[name])}` exited {process.returncode}:\n{errors}")
        target = GENERATED / f"{name}_help.txt"
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")


_write_cli_help()
for _name in OPTIONAL_CLIS:
    _help = GENERATED / f"{_name}_help.txt"
    _fragment = f"```text\n{_help.read_text(encoding='utf-8')}```\n" if _help.exists() else ""
    (GENERATED / f"{_name}.md").write_text(_fragment, encoding="utf-8")


# --- generated: plots of benchmarks that this checkout may not have yet ---------------
# benchmarks.md includes _generated/optional_plots.md: one section per plot present.
REPOSITORY = DOCS.parent
OPTIONAL_PLOTS = {
    "async.png": ("asyncio against the sync API",
                  "`benchmarks/async_bench.py`: UDP round trip and CPU while idle of `aeron_py.asyncio` "
                  "(each waker, under asyncio and uvloop) against the sync API (`results/async.json`)."),
}


def _write_optional_plots() -> None:
    sections = []
    for name, (title, text) in OPTIONAL_PLOTS.items():
        if (REPOSITORY / "benchmarks" / "results" / name).is_file():
            sections.append(f"### {title}\n\n{text}\n\n![{title}](../benchmarks/results/{name})\n")
    target = GENERATED / "optional_plots.md"
    text = "\n".join(sections)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


_write_optional_plots()


def setup(app: Any) -> None:
    app.connect("source-read", _read_source)
