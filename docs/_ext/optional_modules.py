"""Sphinx extension: pages and sections for modules that a build may not have yet.

Some modules arrive later than the pages that document them (other branches, optional
parts). A page that imports a missing module would fail the build (warnings are errors),
so:

* ``optional_pages`` (conf.py: ``{"api/asyncio": "aeron_py.asyncio", ...}``): a page whose
  module is missing is excluded from the build, and the line ``OPTIONAL_PAGES`` in a
  toctree is replaced by the pages that are present;
* ``.. optional-automodule:: M`` in a page is ``.. automodule:: M`` when the build has
  ``M``, and nothing otherwise.
"""
from __future__ import annotations

import importlib.util
import re
from typing import Any

_OPTIONAL_AUTOMODULE = re.compile(r"^\.\. optional-automodule:: ([\w.]+)\n", re.MULTILINE)


def has_module(name: str) -> bool:
    """Whether ``name`` can be imported here (without importing it)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


def _present_pages(config: Any) -> list[str]:
    return [page for page, module in config.optional_pages.items() if has_module(module)]


def _exclude_missing(app: Any, config: Any) -> None:
    present = _present_pages(config)
    config.exclude_patterns.extend(f"{page}.rst" for page in config.optional_pages if page not in present)


def _automodule(match: re.Match[str]) -> str:
    return f".. automodule:: {match.group(1)}\n" if has_module(match.group(1)) else ""


def _read_source(app: Any, docname: str, source: list[str]) -> None:
    text = source[0]
    if "   OPTIONAL_PAGES\n" in text:
        folder = docname.rpartition("/")[0]
        entries = "".join(f"   {page.removeprefix(folder + '/') if folder else page}\n"
                          for page in _present_pages(app.config))
        text = text.replace("   OPTIONAL_PAGES\n", entries)
    source[0] = _OPTIONAL_AUTOMODULE.sub(_automodule, text)


def setup(app: Any) -> dict[str, Any]:
    app.add_config_value("optional_pages", {}, "env")
    app.connect("config-inited", _exclude_missing)
    app.connect("source-read", _read_source)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
