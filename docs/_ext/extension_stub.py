"""Sphinx extension: signatures, types and docs of the compiled extension's members from its stub.

``aeron_py._aeron`` is a pybind11 module: its raw fast-call methods carry untyped text
signatures (``offer(buffer, /)``) and its properties no type at all. The typed stub
``aeron_py/_aeron.pyi`` (generated and checked by ``.ci/stubs``) knows both, so for every
documented member that a class inherits from ``aeron_py._aeron``:

* a method gets the stub's signature (typed parameters and return type);
* a property gets a ``Type:`` line, and the stub's docstring when it has none itself.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any, NamedTuple


class StubMember(NamedTuple):
    parameters: str
    returns: str | None
    doc: str | None
    is_property: bool


def read_stub(path: Path) -> dict[tuple[str, str], StubMember]:
    """``(class name, member name) -> StubMember`` for every method and property of the stub.

    >>> import aeron_py
    >>> members = read_stub(Path(aeron_py.__file__).with_name("_aeron.pyi"))
    >>> members[("Publication", "offer")].returns, members[("Publication", "offer")].is_property
    ('int', False)
    >>> members[("Publication", "is_connected")].is_property
    True
    """
    members: dict[tuple[str, str], StubMember] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if not isinstance(item, ast.FunctionDef) or (node.name, item.name) in members:
                continue  # the first of several overloads stands for them
            decorators = {ast.unparse(d) for d in item.decorator_list}
            arguments = item.args
            if "staticmethod" not in decorators:  # drop self / cls
                if arguments.posonlyargs:
                    arguments.posonlyargs = arguments.posonlyargs[1:]
                elif arguments.args:
                    arguments.args = arguments.args[1:]
            returns = ast.unparse(item.returns) if item.returns is not None else None
            members[(node.name, item.name)] = StubMember(
                f"({ast.unparse(arguments)})", returns, ast.get_docstring(item), "property" in decorators)
    return members


def _owner(name: str) -> tuple[str, str] | None:
    """``(extension class name, member)`` when ``name`` is a member inherited from ``aeron_py._aeron``."""
    path, _, member = name.rpartition(".")
    module_name, _, class_name = path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError):
        return None
    for klass in getattr(cls, "__mro__", ()):
        if member in vars(klass):
            return (klass.__name__, member) if klass.__module__ == "aeron_py._aeron" else None
    return None


class ExtensionStub:
    def __init__(self, members: dict[tuple[str, str], StubMember]) -> None:
        self.members = members

    def signature(self, app: Any, what: str, name: str, obj: Any, options: Any, signature: str | None,
                  return_annotation: str | None) -> tuple[str | None, str | None] | None:
        key = _owner(name) if what == "method" else None
        member = self.members.get(key) if key else None
        if member is None or member.is_property:
            return None
        return member.parameters, member.returns

    def docstring(self, app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
        key = _owner(name) if what in ("property", "attribute") else None
        member = self.members.get(key) if key else None
        if member is None:
            return
        if not any(line.strip() for line in lines) and member.doc:
            lines[:] = member.doc.splitlines()
        if member.returns:
            lines.extend(["", f"Type: ``{member.returns}``"])


def setup(app: Any) -> dict[str, Any]:
    import aeron_py

    stub = ExtensionStub(read_stub(Path(aeron_py.__file__).with_name("_aeron.pyi")))
    app.connect("autodoc-process-signature", stub.signature)
    app.connect("autodoc-process-docstring", stub.docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
