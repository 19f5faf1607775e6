"""Build Aeron's own C media driver and C sample tools from the pinned Aeron tree.

The tree is the one ``vendor/aeron/fetch.py`` prints (the same source aeron_py is built
from).  Only the targets the benchmarks need are built, into the git-ignored
``benchmarks/.build/aeron-c``; a stamp file records the source tree and options so a
build is reused until one of them changes or a binary goes missing.

Idle variants.  Aeron's C samples hard-code ``aeron_idle_strategy_busy_spinning_idle``
in their poll/offer loops (there is no option or environment variable for it).  Besides
the stock binaries (idle ``spin``), this module builds a ``yield`` variant of each client
tool from the *unmodified* sample sources, with the exact compiler and linker command
lines Ninja uses for the stock target plus one macro,
``-Daeron_idle_strategy_busy_spinning_idle=aeron_idle_strategy_yielding_idle``, so the
tool idles with Aeron's own ``yield`` strategy (``sched_yield`` when a poll found nothing),
the same function ``_aeron.IdleStrategy("yield")`` calls.  Only the sample's own
translation unit gets the macro; the Aeron client library is the stock one.

Usage: ``python -m benchmarks.c_tools [--force]`` builds (if needed) and prints the paths.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("benchmarks.c_tools")

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
BUILD_DIR = BENCH_DIR / ".build" / "aeron-c"
STAMP_NAME = "aeron_py_bench_stamp.json"

# CMake target names (aeron-driver/src/main/c/CMakeLists.txt, aeron-samples/src/main/c/
# CMakeLists.txt in Aeron 1.54.0); each target's executable has the same name.
DRIVER_TARGET = "aeronmd"
CLIENT_TARGETS: tuple[str, ...] = ("cping", "cpong", "streaming_publisher", "rate_subscriber")
TARGETS: tuple[str, ...] = (DRIVER_TARGET, *CLIENT_TARGETS)
SAMPLES_OBJ_DIR = "aeron-samples/src/main/c/CMakeFiles"

# idle mode -> macro that remaps the samples' hard-coded busy-spin idle (None = stock build)
IDLE_VARIANTS: dict[str, str | None] = {
    "spin": None,
    "yield": "aeron_idle_strategy_busy_spinning_idle=aeron_idle_strategy_yielding_idle",
}

CMAKE_OPTIONS: dict[str, str] = {
    "CMAKE_BUILD_TYPE": "Release",
    "AERON_BUILD_SAMPLES": "ON",
    "AERON_TESTS": "OFF",
    "AERON_SYSTEM_TESTS": "OFF",
    "AERON_UNIT_TESTS": "OFF",
    "BUILD_AERON_ARCHIVE_API": "OFF",
    "AERON_BUILD_DOCUMENTATION": "OFF",
    "AERON_INSTALL_TARGETS": "OFF",
}

CONFIGURE_TIMEOUT_S = 300.0
BUILD_TIMEOUT_S = 1200.0
COMMAND_TIMEOUT_S = 300.0


class CToolsError(RuntimeError):
    """Aeron's C tools could not be located or built."""


@dataclass(frozen=True)
class CTools:
    """Paths of the built C executables and the Aeron tree they came from."""

    source_dir: Path
    version: str
    aeronmd: Path
    clients: dict[str, dict[str, Path]] = field(default_factory=dict)  # idle mode -> tool -> path

    def client(self, tool: str, idle: str) -> Path:
        """The executable of ``tool`` built for ``idle`` ("spin" = stock, "yield")."""
        try:
            return self.clients[idle][tool]
        except KeyError:
            raise CToolsError(
                f"no C tool {tool!r} for idle mode {idle!r} (have {sorted(self.clients)} x {list(CLIENT_TARGETS)})"
            ) from None

    def as_dict(self) -> dict[str, object]:
        """JSON-friendly view (all paths as strings)."""
        return {
            "source_dir": str(self.source_dir),
            "version": self.version,
            "aeronmd": str(self.aeronmd),
            "clients": {m: {t: str(p) for t, p in tools.items()} for m, tools in self.clients.items()},
            "idle_variants": IDLE_VARIANTS,
        }


def aeron_source_dir() -> Path:
    """The pinned Aeron tree, as printed by ``vendor/aeron/fetch.py``."""
    fetch = REPO_DIR / "vendor" / "aeron" / "fetch.py"
    if not fetch.is_file():
        raise CToolsError(f"{fetch} is missing: cannot locate Aeron's source")
    proc = subprocess.run(
        [sys.executable, str(fetch)], capture_output=True, text=True, timeout=900, cwd=REPO_DIR
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        raise CToolsError(f"{fetch} failed ({proc.returncode}): {proc.stderr.strip()}")
    tree = Path(proc.stdout.strip().splitlines()[-1])
    if not (tree / "aeron-samples" / "src" / "main" / "c" / "cping.c").is_file():
        raise CToolsError(f"{tree} has no aeron-samples/src/main/c/cping.c: not a full Aeron tree")
    return tree


def _tool(name: str, env_var: str) -> str:
    """Find a build tool: ``$env_var``, then this interpreter's venv, then ``$PATH``."""
    explicit = os.environ.get(env_var)
    if explicit:
        return explicit
    in_venv = Path(sys.executable).parent / name
    if in_venv.is_file():
        return str(in_venv)
    found = shutil.which(name)
    if found is None:
        raise CToolsError(f"{name} not found (set {env_var}, or pip install {name} into the venv)")
    return found


def _cmake_version(cmake: str) -> tuple[int, int]:
    out = subprocess.run([cmake, "--version"], capture_output=True, text=True, timeout=30).stdout
    first = out.splitlines()[0] if out else ""
    try:
        major, minor = first.split()[2].split(".")[:2]
        return int(major), int(minor)
    except (IndexError, ValueError) as exc:
        raise CToolsError(f"cannot parse `{cmake} --version` output: {first!r}") from exc


def _run(cmd: list[str], timeout: float, what: str, cwd: Path | None = None) -> str:
    log.info("%s: %s", what, shlex.join(cmd))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired as exc:
        raise CToolsError(f"{what} timed out after {timeout:.0f}s: {shlex.join(cmd)}") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise CToolsError(f"{what} failed ({proc.returncode}): {shlex.join(cmd)}\n{tail}")
    return proc.stdout


def _paths(build_dir: Path) -> tuple[Path, dict[str, dict[str, Path]]]:
    clients: dict[str, dict[str, Path]] = {}
    for mode, macro in IDLE_VARIANTS.items():
        folder = build_dir / "binaries" if macro is None else build_dir / f"idle-{mode}"
        clients[mode] = {t: folder / t for t in CLIENT_TARGETS}
    return build_dir / "binaries" / DRIVER_TARGET, clients


def _all_paths(build_dir: Path) -> list[Path]:
    driver, clients = _paths(build_dir)
    return [driver] + [p for tools in clients.values() for p in tools.values()]


def _expected(source: Path) -> dict[str, object]:
    return {"source_dir": str(source), "options": CMAKE_OPTIONS, "targets": list(TARGETS),
            "idle_variants": IDLE_VARIANTS}


def _is_current(source: Path, build_dir: Path) -> bool:
    stamp = build_dir / STAMP_NAME
    if not stamp.is_file() or not all(p.is_file() for p in _all_paths(build_dir)):
        return False
    try:
        return json.loads(stamp.read_text()) == _expected(source)
    except (OSError, ValueError):
        return False


def _ninja_commands(ninja: str, build_dir: Path, target: str) -> list[list[str]]:
    out = _run([ninja, "-C", str(build_dir), "-t", "commands", target], COMMAND_TIMEOUT_S, "list commands")
    commands = []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith(": &&") and line.endswith("&& :"):  # Ninja's link-rule wrapper
            line = line[len(": &&"):-len("&& :")].strip()
        commands.append(shlex.split(line))
    return commands


def _replace_once(argv: list[str], old: str, new: str, what: str) -> list[str]:
    hits = [i for i, a in enumerate(argv) if a == old]
    if len(hits) != 1:
        raise CToolsError(f"{what}: expected {old!r} once in {shlex.join(argv)}, found it {len(hits)} times")
    out = list(argv)
    out[hits[0]] = new
    return out


def _strip_depfile_flags(argv: list[str]) -> list[str]:
    out: list[str] = []
    skip = 0
    for a in argv:
        if skip:
            skip -= 1
        elif a in ("-MT", "-MF"):
            skip = 1
        elif a != "-MD":
            out.append(a)
    return out


def _build_variant(ninja: str, build_dir: Path, target: str, macro: str, out: Path) -> None:
    """Recompile ``target``'s own source with ``-D<macro>`` and relink it as ``out``."""
    commands = _ninja_commands(ninja, build_dir, target)
    obj = f"{SAMPLES_OBJ_DIR}/{target}.dir/{target}.c.o"
    compiles = [c for c in commands if "-c" in c and "-o" in c and c[c.index("-o") + 1] == obj]
    links = [c for c in commands if "-o" in c and c[c.index("-o") + 1] == f"binaries/{target}"]
    if len(compiles) != 1 or len(links) != 1:
        raise CToolsError(f"cannot find the compile/link commands of {target} in the Ninja graph")
    out.parent.mkdir(parents=True, exist_ok=True)
    variant_obj = str(out.with_suffix(".c.o"))
    compile_cmd = _replace_once(_strip_depfile_flags(compiles[0]), obj, variant_obj, target)
    compile_cmd.insert(1, f"-D{macro}")
    _run(compile_cmd, COMMAND_TIMEOUT_S, f"compile {out.name}", cwd=build_dir)
    link_cmd = _replace_once(links[0], obj, variant_obj, target)
    link_cmd = _replace_once(link_cmd, f"binaries/{target}", str(out), target)
    _run(link_cmd, COMMAND_TIMEOUT_S, f"link {out.name}", cwd=build_dir)
    _check_remap(variant_obj, macro)


def _check_remap(obj: str, macro: str) -> None:
    """Make sure the variant object calls the replacement idle function, not the original."""
    nm = shutil.which("nm")
    if nm is None:
        log.warning("nm not found: cannot verify the idle remap in %s", obj)
        return
    undefined = subprocess.run([nm, "-u", obj], capture_output=True, text=True, timeout=60).stdout
    original, replacement = macro.split("=", 1)
    if original in undefined or replacement not in undefined:
        raise CToolsError(f"{obj}: idle remap {macro} did not take effect (nm -u: {undefined.split()})")


def build_c_tools(force: bool = False, build_dir: Path = BUILD_DIR) -> CTools:
    """Configure and build Aeron's C driver and sample tools (only when missing or stale)."""
    source = aeron_source_dir()
    version = (source / "version.txt").read_text().strip()
    if force or not _is_current(source, build_dir):
        cmake = _tool("cmake", "CMAKE")
        ninja = _tool("ninja", "NINJA")
        if _cmake_version(cmake) < (3, 30):
            raise CToolsError(f"{cmake} is older than 3.30, which Aeron {version} requires")
        build_dir.mkdir(parents=True, exist_ok=True)
        (build_dir / STAMP_NAME).unlink(missing_ok=True)
        configure = [cmake, "-S", str(source), "-B", str(build_dir), "-G", "Ninja",
                     f"-DCMAKE_MAKE_PROGRAM={ninja}"]
        configure += [f"-D{k}={v}" for k, v in CMAKE_OPTIONS.items()]
        _run(configure, CONFIGURE_TIMEOUT_S, "configure Aeron C")
        jobs = str(os.cpu_count() or 1)
        _run([cmake, "--build", str(build_dir), "--parallel", jobs, "--target", *TARGETS],
             BUILD_TIMEOUT_S, "build Aeron C tools")
        _, clients = _paths(build_dir)
        for mode, macro in IDLE_VARIANTS.items():
            if macro is not None:
                for target, out in clients[mode].items():
                    _build_variant(ninja, build_dir, target, macro, out)
        missing = [str(p) for p in _all_paths(build_dir) if not p.is_file()]
        if missing:
            raise CToolsError(f"build finished but these binaries are missing: {', '.join(missing)}")
        (build_dir / STAMP_NAME).write_text(json.dumps(_expected(source), indent=1))
    driver, clients = _paths(build_dir)
    return CTools(source_dir=source, version=version, aeronmd=driver, clients=clients)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build Aeron's C driver and sample tools for the benchmarks.")
    parser.add_argument("--force", action="store_true", help="reconfigure and rebuild")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        tools = build_c_tools(force=args.force)
    except CToolsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(tools.as_dict(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
