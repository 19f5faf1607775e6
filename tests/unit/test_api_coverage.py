""".ci/api_coverage.py: which C functions count as wrapped, internal, reasoned, todo or unclassified."""
from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.timeout(30)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def coverage() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_coverage", ROOT / ".ci" / "api_coverage.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["api_coverage"] = module  # dataclasses need the module registered
    spec.loader.exec_module(module)
    return module


def test_each_kind_of_use_and_classification(coverage: ModuleType, tmp_path: Path) -> None:
    tree = tmp_path / "aeron"
    for header in coverage.HEADERS:
        (tree / header).parent.mkdir(parents=True, exist_ok=True)
    (tree / coverage.HEADERS[0]).write_text(
        "/* aeron_in_comment(void); */\n"
        "int aeron_called(int x);\n"
        "int64_t\naeron_pointer(void);\n"
        "int aeron_set_pasted(int v);\n"
        "int aeron_only_in_message(void);\n"
        "void aeron_plugin_only(void);\n"
        "void aeron_why_not(void);\n"
        "void aeron_later(void);\n"
        "void aeron_nobody(void);\n"
        "int aeron_get_x_range(int *low, int *high);\n")
    (tree / coverage.HEADERS[1]).write_text("int aeron_called(int x);\n")
    for header in coverage.HEADERS[2:]:  # the archive client's: nothing of its own here
        (tree / header).write_text("")
    binding, plugins = tmp_path / "binding", tmp_path / "plugins"
    binding.mkdir()
    plugins.mkdir()
    (binding / "a.cpp").write_text(
        '#define SETTER(name) \\\n  aeron_set_##name(1)\n'
        '#define RANGE(role) aeron_get_##role##_range(0, 0)\n'
        'void h() { RANGE(x); }\n'
        'void f() { aeron_called(1); auto p = aeron_pointer; SETTER(pasted); throw_error("aeron_only_in_message"); }\n')
    (plugins / "b.c").write_text("void g(void) { aeron_plugin_only(); }\n")
    rules = tomllib.loads('[reasons]\naeron_why_not = "a reason"\n'
                          '[[rule]]\npattern = "aeron_later"\nstatus = "todo"\nreason = "soon"\n')
    functions = coverage.declared(tree)
    assert "aeron_in_comment" not in functions and functions["aeron_pointer"] == "aeronc.h"
    entries = {e.function: e for e in coverage.classify(functions, coverage.calls(binding),
                                                        coverage.calls(plugins), rules)}
    status = {name: e.status for name, e in entries.items()}
    assert status == {"aeron_called": "wrapped", "aeron_pointer": "wrapped", "aeron_set_pasted": "wrapped",
                      "aeron_only_in_message": "unclassified", "aeron_plugin_only": "internal",
                      "aeron_why_not": "reasoned", "aeron_later": "todo", "aeron_nobody": "unclassified",
                      "aeron_get_x_range": "wrapped"}
    assert entries["aeron_set_pasted"].detail.endswith("SETTER(pasted)")
    assert "wrapped or reasoned 67%" in coverage.summary(list(entries.values()))  # 6 of 9
