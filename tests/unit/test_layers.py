"""The package's layers, read from the source's imports (no module is imported here).

* the sans-I/O cores (the duologue layer's ``aeron_py/duologue/core`` and Echo's rule in
  ``aeron_py/echo/core``) import no Aeron, threads, sockets,
  event loops, processes or clocks: only the standard library's pure parts, itself,
  :mod:`aeron_py.addresses` and :mod:`aeron_py.validation` (pure Python);
* the core takes facts, never callables: no field of its contract (``contract.py``) and
  no parameter of :class:`DuologueServerCore`'s methods is annotated ``Callable`` (what the
  glue knows, a blocked source, a busy port, the time, arrives as an argument);
* the bindings (the top level of ``aeron_py/``, ``asyncio/`` and ``stat/``) import nothing
  of the application layers (``duologue/``, ``echo/``, ``analytics/``, ``telemetry/``), except the
  ``python -m`` entry points that only call an application command line;
* no cycle of files: following the imports (module level and inside functions) from any
  file never leads back to it.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

PACKAGE = Path(__file__).resolve().parents[2] / "aeron_py"
APPLICATION = ("aeron_py.duologue", "aeron_py.echo", "aeron_py.analytics", "aeron_py.telemetry")
# top-level files that exist only for their `python -m` command: each calls an application command line
ENTRY_POINTS = {"aeron_py.echo_server", "aeron_py.echo_client", "aeron_py.echo_load"}
CORE_FORBIDDEN = {"threading", "time", "socket", "select", "selectors", "asyncio", "subprocess",
                  "multiprocessing", "concurrent", "signal", "os", "datetime", "sched", "_thread"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: frozenset[str] = frozenset()) -> set[str]:
    """Absolute names of the modules ``path`` imports.

    ``from x import y`` counts as importing x.y when that is one of ``modules``, else x.
    """
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
    return found


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = frozenset(files) | {"aeron_py._aeron"}
    return {name: {t for t in _imports(path, modules) if t in files and t != name} for name, path in files.items()}


def test_the_sans_io_cores_do_no_io() -> None:
    core = sorted((PACKAGE / "duologue" / "core").glob("*.py"))
    assert len(core) >= 10, "the core folder moved: update this test"
    core += sorted((PACKAGE / "echo" / "core").glob("*.py"))
    pure = {"aeron_py.addresses": {"__future__", "ipaddress", "typing", "aeron_py"},
            "aeron_py.validation": {"__future__", "math", "typing"}}
    allowed_own = {"aeron_py.duologue.core", "aeron_py.echo.core", *pure}
    for path in core:
        for target in _imports(path):
            top = target.split(".")[0]
            if top == "aeron_py":
                assert any(target == a or target.startswith(a + ".") for a in allowed_own), \
                    f"{path.name} imports {target}: the core imports only itself, {sorted(pure)}"
            else:
                assert top not in CORE_FORBIDDEN, f"{path.name} imports {target}: no I/O, threads or clocks in the core"
    # what the core may import of aeron_py is pure too, and imports no more of aeron_py
    for name, allowed in pure.items():
        targets = _imports(PACKAGE / f"{name.split('.')[-1]}.py")
        assert {t.split(".")[0] for t in targets} <= allowed, f"{name} imports {sorted(targets)}"
        assert {t for t in targets if t.startswith("aeron_py")} <= set(pure), f"{name} imports {sorted(targets)}"


def test_the_echo_core_takes_facts_not_callables() -> None:
    core = PACKAGE / "duologue" / "core"
    contract = ast.parse((core / "contract.py").read_text(encoding="utf-8"))
    fields = [(node.name, item) for node in contract.body if isinstance(node, ast.ClassDef)
              for item in node.body if isinstance(item, ast.AnnAssign)]
    assert len(fields) >= 20, "the contract moved: update this test"
    for cls, item in fields:
        assert "Callable" not in ast.unparse(item.annotation), \
            f"contract.py {cls}.{ast.unparse(item.target)} holds a callable: pass the fact instead"
    server = ast.parse((core / "server.py").read_text(encoding="utf-8"))
    (core_class,) = [n for n in server.body if isinstance(n, ast.ClassDef) and n.name == "DuologueServerCore"]
    methods = [m for m in core_class.body if isinstance(m, ast.FunctionDef)]
    assert len(methods) >= 10, "DuologueServerCore moved: update this test"
    for method in methods:
        for arg in (*method.args.args, *method.args.kwonlyargs):
            annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
            assert "Callable" not in annotation, \
                f"DuologueServerCore.{method.name}({arg.arg}) takes a callable: pass the fact instead"


def test_the_bindings_import_no_application_layer() -> None:
    for name, targets in _graph().items():
        if name.startswith(APPLICATION) or name in ENTRY_POINTS:
            continue
        wrong = sorted(t for t in targets if t.startswith(APPLICATION))
        assert not wrong, f"{name} (bindings) imports the application layer: {wrong}"


def test_entry_points_only_call_a_command_line() -> None:
    for name in ENTRY_POINTS:
        tree = ast.parse((PACKAGE / f"{name.split('.')[-1]}.py").read_text())
        defined = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))]
        assert not defined, f"{name} defines {[n.name for n in defined]}: it should only call the real command line"


def test_no_cycle_of_files() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycle = path[path.index(target):] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
