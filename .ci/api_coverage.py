"""How much of Aeron's C API the extension wraps: every public function of the pinned
``aeronc.h`` (client), ``aeronmd.h`` (driver) and ``aeron_archive.h`` (the archive client),
with where the bindings call it, or why not.

    python .ci/api_coverage.py                 # the table, then the summary
    python .ci/api_coverage.py --check         # CI: fails if a function is in no class
    python .ci/api_coverage.py --markdown F    # the table as Markdown (the docs render it)

A function is **wrapped** when ``cpp/binding/`` calls it (directly, or through one of its
token-pasting macros such as ``AERON_PY_SETTER(term_buffer_length, size_t)``), **internal**
when only the C plug-ins or the binding's plumbing call it, **reasoned** when
``.ci/api_coverage.toml`` says why it is not wrapped (a rule or a name), and **todo** when the
file lists it as not wrapped yet. Anything else is *unclassified*: ``--check`` fails, so a new
pinned Aeron version that adds functions is noticed.
"""
from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import re
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / ".ci" / "api_coverage.toml"
HEADERS = ("aeron-client/src/main/c/aeronc.h", "aeron-driver/src/main/c/aeronmd.h",
           "aeron-archive/src/main/c/client/aeron_archive.h")
# a declaration's name, its return type before it on the line or on the line above
_DECLARATION = re.compile(r"^[ \t]*(?:(?!typedef|return)[A-Za-z_][\w \t\*]*?[ \t\*])?(aeron_\w+)\s*\(", re.M)
_USE = re.compile(r"\b(aeron_\w+)\b")  # a call, or a function pointer taken
_NOT_CODE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)
_MACRO = re.compile(r"#define\s+(\w+)\((\w+)[^)]*\)((?:.*\\\n)*.*)")


@dataclass(frozen=True)
class Entry:
    function: str
    header: str
    status: str  # wrapped, internal, reasoned, todo, unclassified
    detail: str


def aeron_tree() -> Path:
    """The pinned Aeron source (fetched like the build does: vendor/aeron/fetch.py)."""
    spec = importlib.util.spec_from_file_location("aeron_fetch", ROOT / "vendor" / "aeron" / "fetch.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "vendor"))
    spec.loader.exec_module(module)
    return Path(module.locate())


def declared(tree: Path) -> dict[str, str]:
    """Public function -> header, from the pinned headers (comments removed)."""
    functions: dict[str, str] = {}
    for header in HEADERS:
        text = re.sub(r"/\*.*?\*/|//[^\n]*", "", (tree / header).read_text(), flags=re.S)
        for name in _DECLARATION.findall(text):
            functions.setdefault(name, Path(header).name)
    return functions


def calls(folder: Path) -> dict[str, str]:
    """Function -> the file that calls it (and the macro, when expanded from one) for every
    ``aeron_*`` call in ``folder``."""
    sources = sorted(p for p in folder.rglob("*") if p.suffix in (".c", ".h", ".cpp", ".hpp"))
    texts = {p: p.read_text() for p in sources}
    code = {p: _NOT_CODE.sub(" ", text) for p, text in texts.items()}  # names in messages are not uses
    macros: dict[str, set[tuple[str, str]]] = {}  # macro -> (prefix, suffix) pasted around its argument
    for text in texts.values():
        for match in _MACRO.finditer(text):  # the body is read with its strings: ## is outside them
            pasted = set(re.findall(r"(aeron_\w*?)##" + match.group(2) + r"\b(?:##(\w+))?", match.group(3)))
            if pasted:
                macros[match.group(1)] = pasted
    found: dict[str, str] = {}
    for path, text in code.items():
        where = str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.relative_to(folder))
        for match in _USE.finditer(text):
            found.setdefault(match.group(1), where)
        for macro, pasted in macros.items():
            for arg in re.findall(r"\b" + macro + r"\((\w+)", code[path]):
                for prefix, suffix in pasted:
                    found.setdefault(prefix + arg + suffix, f"{where}: {macro}({arg})")
    return found


def classify(functions: dict[str, str], binding: dict[str, str], plugins: dict[str, str],
             rules: dict[str, object]) -> list[Entry]:
    reasons: dict[str, str] = rules.get("reasons", {})  # type: ignore[assignment]
    patterns: list[dict[str, str]] = rules.get("rule", [])  # type: ignore[assignment]
    todo: dict[str, str] = rules.get("todo", {})  # type: ignore[assignment]
    entries = []
    for name, header in sorted(functions.items()):
        if name in binding:
            entries.append(Entry(name, header, "wrapped", binding[name]))
        elif name in plugins:
            entries.append(Entry(name, header, "internal", plugins[name]))
        elif name in reasons:
            entries.append(Entry(name, header, "reasoned", reasons[name]))
        elif (rule := next((r for r in patterns if fnmatch.fnmatchcase(name, r["pattern"])), None)) is not None:
            entries.append(Entry(name, header, rule.get("status", "reasoned"), rule["reason"]))
        elif name in todo:
            entries.append(Entry(name, header, "todo", todo[name]))
        else:
            entries.append(Entry(name, header, "unclassified", "in no class of .ci/api_coverage.toml"))
    return entries


def summary(entries: list[Entry]) -> str:
    total = len(entries)
    counts = {s: sum(e.status == s for e in entries) for s in ("wrapped", "internal", "reasoned", "todo",
                                                                 "unclassified")}
    covered = counts["wrapped"] + counts["internal"] + counts["reasoned"]
    parts = ", ".join(f"{n} {s}" for s, n in counts.items())
    by_header = "; ".join(f"{header} {covered_share(e for e in entries if e.header == header):.0%}"
                          for header in dict.fromkeys(e.header for e in entries))
    return f"{total} public functions: {parts}; wrapped or reasoned {covered / total:.0%} ({by_header})"


def covered_share(entries: Iterable[Entry]) -> float:
    """The share of ``entries`` wrapped, internal or reasoned."""
    statuses = [e.status for e in entries]
    return sum(s in ("wrapped", "internal", "reasoned") for s in statuses) / max(1, len(statuses))


def markdown(entries: list[Entry]) -> str:
    rows = ["| function | header | status | where / why |", "|---|---|---|---|"]
    rows += [f"| `{e.function}` | {e.header} | {e.status} | {e.detail.replace('|', '/')} |" for e in entries]
    return summary(entries) + ".\n\n" + "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="fail when a function is in no class")
    p.add_argument("--markdown", type=Path, metavar="FILE", help="write the table as Markdown (-: to stdout)")
    p.add_argument("--aeron", type=Path, help="an Aeron source tree (default: the pinned one)")
    args = p.parse_args(argv)
    tree = args.aeron or aeron_tree()
    entries = classify(declared(tree), calls(ROOT / "cpp" / "binding"), calls(ROOT / "cpp" / "plugins"),
                       tomllib.loads(RULES.read_text()))
    if args.markdown == Path("-"):
        sys.stdout.write(markdown(entries))
        return 0
    if args.markdown:
        args.markdown.write_text(markdown(entries))
    elif not args.check:
        for e in entries:
            print(f"{e.status:12} {e.function:60} {e.detail}")
    print(f"api_coverage: {summary(entries)}")
    unclassified = [e.function for e in entries if e.status == "unclassified"]
    if args.check and unclassified:
        print(f"api_coverage: {len(unclassified)} functions in no class (add each to .ci/api_coverage.toml: "
              f"wrap it, or say why not): {', '.join(unclassified)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
