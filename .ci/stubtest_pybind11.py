"""Run mypy's stubtest on a pybind11 extension and fail on every report but two that
pybind11 makes for every class and a stub cannot express:

- "metaclass differs" where the runtime metaclass is ``pybind11_builtins.pybind11_type``
  (a private type no stub can name);
- ``__init__`` "stub does not have *args" where the stub has no constructor (inherited
  ``object.__init__``) and the runtime is pybind11's ``(self, /, *args, **kwargs)`` that
  raises ``TypeError: No constructor defined`` (the class is made by the API, not by users).

A module's submodules (pybind11 ``def_submodule``, e.g. ``aeron_py._aeron.crypto``, stubbed
in ``aeron_py/_aeron/crypto.pyi``) are checked with it: a submodule without a stub fails.

Usage: python .ci/stubtest_pybind11.py aeron_py._aeron
"""
from __future__ import annotations

import importlib
import re
import subprocess
import sys
import types

PYBIND11_NOISE = (
    re.compile(r"^error: \S+ is inconsistent, metaclass differs\n.*\nRuntime:\n<class 'pybind11_builtins\.pybind11_type'>",
               re.S),
    re.compile(r"^error: \S+\.__init__ is inconsistent, stub does not have \*args parameter \"args\"\n"
               r"Stub: .*\ndef \(self: object\)\nRuntime:\ndef \(self, /, \*args, \*\*kwargs\)", re.S),
)


def with_submodules(modules: list[str]) -> list[str]:
    """``modules`` and, after each, the extension submodules it holds as attributes."""
    out: list[str] = []
    for name in modules:
        out.append(name)
        module = importlib.import_module(name)
        out += sorted(value.__name__ for value in vars(module).values()
                      if isinstance(value, types.ModuleType) and value.__name__.startswith(name + "."))
    return out


def main(modules: list[str]) -> int:
    if not modules:
        print(__doc__, file=sys.stderr)
        return 2
    modules = with_submodules(modules)
    run = subprocess.run([sys.executable, "-m", "mypy.stubtest", *modules], capture_output=True, text=True, timeout=600)
    blocks = [b.strip() for b in re.split(r"\n(?=error: )", run.stdout) if b.strip()]
    errors = [b for b in blocks if b.startswith("error: ") and not any(p.match(b) for p in PYBIND11_NOISE)]
    ignored = sum(1 for b in blocks if b.startswith("error: ")) - len(errors)
    for block in errors:
        print(block + "\n")
    if run.returncode not in (0, 1) or (run.returncode == 1 and not blocks):
        print(run.stdout, run.stderr, sep="\n", file=sys.stderr)
        print(f"stubtest failed to run (exit {run.returncode})", file=sys.stderr)
        return 1
    print(f"stubtest {' '.join(modules)}: {len(errors)} error(s); {ignored} pybind11 metaclass/no-constructor "
          "report(s) ignored")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
