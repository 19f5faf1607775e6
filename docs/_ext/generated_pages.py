"""Sphinx extension: text generated at build time into ``_generated/`` (git-ignored).

* ``generated_clis`` (conf.py: ``{"echo_server": ["-m", "aeron_py.echo_server", "--help"]}``):
  each command's output, run with this build's Python at a fixed width, becomes
  ``_generated/<name>_help.txt`` for ``literalinclude``. The commands run concurrently;
  one that fails or takes more than 60 s fails the build.
* ``generated_optional_clis`` (``{name: (module, arguments)}``): the same when the build
  has ``module``; ``_generated/<name>.md`` is a text block of the output, or empty.
* ``generated_markdown`` (``{name: arguments}``): a command that prints Markdown; its output
  is ``_generated/<name>.md`` as is (the C API coverage table).
* ``generated_optional_plots`` (``{file name: (title, text)}``): ``_generated/optional_plots.md``
  has one section per plot present in ``benchmarks/results/`` (read in place, never copied
  into git), for a page to ``include``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from optional_modules import has_module


def _write(target: Path, text: str) -> None:
    """Write only on change, so an unchanged page is not rebuilt."""
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


def run_commands(commands: dict[str, list[str]], cwd: Path) -> dict[str, str]:
    """``name -> stdout`` of ``python ARGS`` for every command, run concurrently."""
    env = dict(os.environ, COLUMNS="100", PYTHONIOENCODING="utf-8")
    running = {name: subprocess.Popen([sys.executable, *args], cwd=cwd, env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for name, args in commands.items()}
    outputs: dict[str, str] = {}
    try:
        for name, process in running.items():
            what = f"`python {' '.join(commands[name])}`"
            try:
                out, errors = process.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                raise RuntimeError(f"docs: {what} took more than 60 s") from None
            if process.returncode != 0:
                raise RuntimeError(f"docs: {what} exited {process.returncode}:\n{errors}")
            outputs[name] = out
    finally:
        for process in running.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    return outputs


def _generate(app: Any) -> None:
    generated = Path(app.srcdir) / "_generated"
    generated.mkdir(exist_ok=True)
    config = app.config
    commands = dict(config.generated_clis)
    optional = {name: args for name, (module, args) in config.generated_optional_clis.items()
                if has_module(module)}
    outputs = run_commands({**commands, **optional, **config.generated_markdown}, cwd=generated)
    for name, text in outputs.items():
        if name in config.generated_markdown:
            _write(generated / f"{name}.md", text)
        else:
            _write(generated / f"{name}_help.txt", text)
    for name in config.generated_optional_clis:
        _write(generated / f"{name}.md", f"```text\n{outputs[name]}```\n" if name in outputs else "")

    results = Path(app.srcdir).parent / "benchmarks" / "results"
    sections = [f"### {title}\n\n{text}\n\n![{title}](../benchmarks/results/{name})\n"
                for name, (title, text) in config.generated_optional_plots.items()
                if (results / name).is_file()]
    _write(generated / "optional_plots.md", "\n".join(sections))


def setup(app: Any) -> dict[str, Any]:
    app.add_config_value("generated_clis", {}, "env")
    app.add_config_value("generated_optional_clis", {}, "env")
    app.add_config_value("generated_optional_plots", {}, "env")
    app.add_config_value("generated_markdown", {}, "env")
    app.connect("builder-inited", _generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
