"""Post-process pybind11-stubgen's _aeron.pyi with what stubgen cannot know (run by .ci/stubs).

Usage: python .ci/stub_fixups.py GENERATED.pyi OUT.pyi [MODULE]   (needs the built aeron_py._aeron)

MODULE (default aeron_py._aeron) may be one of its submodules (aeron_py._aeron.crypto): the
same rules apply, and the tables below concern the main module only. The main module's stub
is a single file (aeron_py/_aeron.pyi) whose submodules' stubs sit beside it
(aeron_py/_aeron/crypto.pyi); stubgen's `from . import crypto` is dropped from it (in a
module stub, `.` is the package aeron_py).

- parameters declared `x: T = None` in pybind11 become `x: T | None = None` (PEP 484);
- C++ types named in docstrings (`aeron_py::Name`) become the Python class `Name`;
- bare list/dict/tuple/Sequence get explicit typing.Any parameters (mypy --strict);
- the `__all__` stubgen invents is dropped (the extension has none);
- the raw CPython fast-call methods (PyDescr_NewMethod) carry only a `__text_signature__`
  without types: RAW_METHODS gives each its typed signature (same names and kinds);
- PyGetSetDef attributes that stubgen skips (HeaderView, BufferClaim.data) become
  properties typed by GETSETS;
- pybind11 functions returning py::object (`-> typing.Any`) get their real type from RETURNS;
- class attributes stubgen prints by their value only (`errcode = None` on the exception
  types) get their declared type from ATTRIBUTES;
- a class that cannot be subclassed at runtime (no Py_TPFLAGS_BASETYPE) is @typing.final;
- `TRICKS` (set from AERON_PY_NO_TRICKS at import) is declared by its type, without the value
  the generating process happened to see;
- a header line says the file is generated.
Every table entry must match the runtime, and every raw method / getset must have an entry:
a new binding without one fails here, naming it.
"""
from __future__ import annotations

import importlib
import re
import sys

MODULE = "aeron_py._aeron"
_HANDLER = "collections.abc.Callable[..., object]"
_CONTROLLED_HANDLER = "collections.abc.Callable[..., int | None]"
_POLL = "(self, /, handler: {h}, fragment_limit: int = 10, zero_copy: bool = False, with_header: bool = True) -> int"

#: (class, method) -> typed signature of a raw fast-call method (names and kinds as its __text_signature__).
RAW_METHODS: dict[tuple[str, str], str] = {
    ("IdleStrategy", "idle"): "(self, /, work_count: int = 0) -> None",
    ("HeaderView", "__repr__"): "(self) -> str",
    ("HeaderView", "copy"): "(self, /) -> Header",
    ("Image", "poll"): _POLL.format(h=_HANDLER),
    ("Image", "controlled_poll"): _POLL.format(h=_CONTROLLED_HANDLER),
    ("Image", "poll_batch"): "(self, /, fragment_limit: int = 100) -> list[bytes]",
    ("Subscription", "poll"): _POLL.format(h=_HANDLER),
    ("Subscription", "controlled_poll"): _POLL.format(h=_CONTROLLED_HANDLER),
    ("Subscription", "poll_fragments"): _POLL.format(h=_HANDLER),
    ("Subscription", "poll_batch"): "(self, /, fragment_limit: int = 100) -> list[bytes]",
    ("BufferClaim", "commit"): "(self, /) -> None",
    ("BufferClaim", "abort"): "(self, /) -> None",
    ("Publication", "offer"): "(self, buffer: typing_extensions.Buffer, /) -> int",
    ("Publication", "offer_batch"): "(self, buffers: collections.abc.Sequence[typing_extensions.Buffer], /) -> int",
    ("Publication", "try_claim"): "(self, length: int, /) -> BufferClaim",
    ("Publication", "offerv"): "(self, parts: collections.abc.Sequence[typing_extensions.Buffer], /) -> int",
    ("Publication", "append_padding"): "(self, length: int, /) -> int",
    ("PollSet", "poll"): "(self, /, fragment_limit: int = 10, max_messages: int | None = None) -> list[tuple[typing.Any, int, bytes]]",
}

#: (class, attribute) -> type of a read-only PyGetSetDef attribute.
GETSETS: dict[tuple[str, str], str] = {
    **{("HeaderView", name): "int" for name in (
        "session_id", "stream_id", "term_id", "term_offset", "frame_length", "flags", "type",
        "reserved_value", "initial_term_id", "position", "next_term_offset", "position_bits_to_shift")},
    ("HeaderView", "is_valid"): "bool",
    ("BufferClaim", "data"): "memoryview",
}

#: (class or "", function) -> the real return type of a pybind11 function returning py::object.
RETURNS: dict[tuple[str, str], str] = {
    ("AsyncAddPublication", "poll"): "Publication | None",
    ("AsyncAddExclusivePublication", "poll"): "Publication | None",
    ("AsyncAddSubscription", "poll"): "Subscription | None",
    ("Subscription", "image_at_index"): "Image | None",
    ("Subscription", "image_by_session_id"): "Image | None",
    ("Subscription", "images"): "list[Image]",
    ("Client", "counters_reader"): "CountersReader",
    ("Cnc", "counters_reader"): "CountersReader",
}

#: (class, attribute) -> type of a class attribute stubgen prints by its value only (`name = None`).
ATTRIBUTES: dict[tuple[str, str], str] = {
    ("AeronError", "errcode"): "int | None",
    ("AeronError", "cause_code"): "int | None",
}

_DEF = re.compile(r"^    def (\w+)\((.*)\)( -> (.+))?:$")
_ATTRIBUTE = re.compile(r"^    (\w+) = (None)$")


def fail(message: str) -> None:
    print(f"stub_fixups: {message}", file=sys.stderr)
    sys.exit(1)


def split_classes(text: str) -> list[tuple[str, list[str]]]:
    """[(class name or '' for module level, lines)] in order."""
    parts: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        match = re.match(r"^class (\w+)", line)
        if match:
            parts.append((match.group(1), [line]))
        elif line and not line[0].isspace() and parts[-1][0]:
            parts.append(("", [line]))
        else:
            parts[-1][1].append(line)
    return parts


def fix_class(name: str, lines: list[str], runtime: type, used: set[tuple[str, str]]) -> list[str]:
    out: list[str] = []
    for line in lines:
        match = _DEF.match(line)
        if match and (name, match.group(1)) in RAW_METHODS:
            key = (name, match.group(1))
            used.add(key)
            line = f"    def {key[1]}{RAW_METHODS[key]}:"
        elif match and (name, match.group(1)) in RETURNS:
            key = (name, match.group(1))
            if match.group(4) not in ("typing.Any", "list[typing.Any]"):
                fail(f"{name}.{key[1]} returns {match.group(4)!r} now: drop its RETURNS entry")
            used.add(key)
            line = f"    def {key[1]}({match.group(2)}) -> {RETURNS[key]}:"
        elif match and match.group(3) is None:
            fail(f"{name}.{match.group(1)} has no types (a raw method?): add it to RAW_METHODS")
        out.append(line)
    present = {m.group(1) for m in map(_DEF.match, out) if m}
    for attr, value in vars(runtime).items():
        if type(value).__name__ != "getset_descriptor" or attr in ("__weakref__", "__dict__") or attr in present:
            continue
        key = (name, attr)
        if key not in GETSETS:
            fail(f"{name}.{attr} is a getset attribute with no type: add it to GETSETS")
        used.add(key)
        out += ["    @property", f"    def {attr}(self) -> {GETSETS[key]}:"]
        out += ['        """', f"        {value.__doc__}", '        """'] if value.__doc__ else ["        ..."]
    if not runtime.__flags__ & (1 << 10):  # Py_TPFLAGS_BASETYPE
        out.insert(0, "@typing.final")
    return out


def main(src: str, dst: str, module_name: str = MODULE) -> None:
    module = importlib.import_module(module_name)
    text = open(src, encoding="utf-8").read()
    text = re.sub(r"^from \. import \w+\n", "", text, flags=re.M)
    # `name: Type = None` -> `name: Type | None = None` (pybind11 prints py::none() defaults so)
    text = re.sub(r"(\b\w+): ([\w.\[\], ]+?) = None\b", lambda m: m.group(0) if "None" in m.group(2)
                  else f"{m.group(1)}: {m.group(2)} | None = None", text)
    # bare py::list / py::dict / py::tuple / py::sequence annotations -> explicit Any parameters
    any_args = {"list": "[typing.Any]", "dict": "[typing.Any, typing.Any]", "tuple": "[typing.Any, ...]",
                "collections.abc.Sequence": "[typing.Any]"}
    text = re.sub(r"(: |-> |\| )(collections\.abc\.Sequence|list|dict|tuple)\b(?!\[)",
                  lambda m: m.group(1) + m.group(2) + any_args[m.group(2)], text)
    text = re.sub(r"^__all__: .*\n", "", text, flags=re.M)
    text = re.sub(r"\baeron_py::(\w+)", r"\1", text)
    # _aeron.TRICKS is read from AERON_PY_NO_TRICKS at import: its type, not the value seen here
    text = re.sub(r"^TRICKS: bool = (True|False)$", "TRICKS: bool", text, flags=re.M)
    used: set[tuple[str, str]] = set()
    lines: list[str] = []
    for name, block in split_classes(text):
        runtime = getattr(module, name, None) if name else None
        if isinstance(runtime, type) and runtime.__module__ == module_name and not issubclass(runtime, BaseException):
            block = fix_class(name, block, runtime, used)
        for i, line in enumerate(block):
            match = _ATTRIBUTE.match(line)
            if match and (name, match.group(1)) in ATTRIBUTES:
                used.add((name, match.group(1)))
                block[i] = f"    {match.group(1)}: {ATTRIBUTES[name, match.group(1)]} = {match.group(2)}"
        lines += block
    unused = (RAW_METHODS.keys() | GETSETS.keys() | RETURNS.keys() | ATTRIBUTES.keys()) - used
    if unused and module_name == MODULE:
        fail(f"table entries matching nothing in the stub: {sorted(unused)}")
    text = "\n".join(lines) + "\n"
    if "typing_extensions." in text and "import typing_extensions\n" not in text:
        anchor = "import typing\n" if "import typing\n" in text else "from __future__ import annotations\n"
        text = text.replace(anchor, anchor + "import typing_extensions\n", 1)
    if "collections.abc." in text and "import collections.abc\n" not in text:
        text = text.replace("import typing\n", "import collections.abc\nimport typing\n", 1)
    header = ("# Generated from the built extension by .ci/stubs (pybind11-stubgen + .ci/stub_fixups.py); "
              "do not edit by hand.\n")
    open(dst, "w", encoding="utf-8").write(header + text)
    print(f"wrote {dst}")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        fail(__doc__ or "usage")
    main(*sys.argv[1:])
