"""Sphinx extension: repair what autodoc shows, without editing the code.

Docstrings are written for ``help()`` first; a few use reST that docutils rejects, and
with warnings as errors one such line would fail the documentation build. The fixes
here are mechanical and leave correct reST untouched:

* simple tables whose cell text runs into the gap between two columns (a column one
  character too narrow): the column is widened until every cell fits;
* an inline literal that ends with a space (````ECHO ````), which reST cannot express:
  the space is shown as a visible ``␠``;
* pybind11 signatures name ``self`` with its C++ type (``self: aeron_py._aeron.Publication``):
  the ``self`` parameter is dropped, as for Python methods.
"""
from __future__ import annotations

import re
from typing import Any

_BORDER = re.compile(r"^\s*=+( +=+)+\s*$")


def _columns(border: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"=+", border)]


def _overflow(lines: list[str], borders: set[int], gap: tuple[int, int]) -> bool:
    start, end = gap
    return any(line[start:end].strip() for i, line in enumerate(lines) if i not in borders)


def widen_simple_tables(lines: list[str]) -> None:
    """Widen, in place, each simple-table column whose cells run into the next gap.

    >>> lines = ["=====  ===", "``abc``  1", "x      2", "=====  ===", ""]
    >>> widen_simple_tables(lines)
    >>> print("\\n".join(lines))
    =======  ===
    ``abc``    1
    x        2
    =======  ===
    <BLANKLINE>
    """
    i = 0
    while i < len(lines):
        if not _BORDER.match(lines[i]):
            i += 1
            continue
        # a simple table: from this border to the last border before a blank line after it
        end = i + 1
        last_border = i
        while end < len(lines):
            if _BORDER.match(lines[end]):
                last_border = end
                if end + 1 >= len(lines) or not lines[end + 1].strip():
                    break
            end += 1
        table = list(range(i, last_border + 1))
        borders = {j for j in table if _BORDER.match(lines[j])}
        for _ in range(200):  # bounded: each pass widens one column by one character
            columns = _columns(lines[i])
            bad = next(((a, b) for a, b in zip(columns, columns[1:])
                        if _overflow([lines[j] for j in table], {j - i for j in borders}, (a[1], b[0]))),
                       None)
            if bad is None:
                break
            (_, col_end), _next = bad
            for j in table:
                line = lines[j]
                if j in borders:
                    lines[j] = line[:col_end] + "=" + line[col_end:]
                else:  # one more space at the first gap space after this row's cell text
                    k = line.find(" ", col_end)
                    if k >= 0:
                        lines[j] = line[:k] + " " + line[k:]
        i = last_border + 1


def fix_literals(lines: list[str]) -> None:
    """Inline literals ending in a space (invalid reST) show the space as ``␠``.

    The ``````` marks of a line are paired in order, as docutils reads them.

    >>> lines = ['after ``ECHO `` and ``"a"``, ``"b"``', 'a ``literal``', 'odd `` marks']
    >>> fix_literals(lines)
    >>> lines[0]
    'after ``ECHO\u2420`` and ``"a"``, ``"b"``'
    >>> lines[1:]
    ['a ``literal``', 'odd `` marks']
    """
    for n, line in enumerate(lines):
        marks = [m.start() for m in re.finditer("``", line)]
        if len(marks) % 2:
            continue  # a literal spanning lines: leave it to docutils
        for start, end in reversed(list(zip(marks[::2], marks[1::2]))):
            content = line[start + 2:end]
            if content.strip() and content.endswith(" ") and not content.startswith(" "):
                line = line[:start + 2] + content[:-1] + "\u2420" + line[end:]
        lines[n] = line


def _process(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    widen_simple_tables(lines)
    fix_literals(lines)


_PYBIND_SELF = re.compile(r"^\(self: [\w.]+(, )?")


def _signature(app: Any, what: str, name: str, obj: Any, options: Any, signature: str | None,
               return_annotation: str | None) -> tuple[str | None, str | None] | None:
    if signature and _PYBIND_SELF.match(signature):
        return _PYBIND_SELF.sub("(", signature), return_annotation
    return None


def setup(app: Any) -> dict[str, Any]:
    app.connect("autodoc-process-docstring", _process)
    app.connect("autodoc-process-signature", _signature)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
