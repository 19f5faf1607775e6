"""The orchestrator's side of the role children: a :class:`benchmarks.harness.Child` running
``echo_bench.py --role NAME``, spoken to in JSON lines, and the set of them in a run."""
from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.harness import BenchError, Child, aeron_free_env, python_child_argv

from .plan import KILL_TIMEOUT_S, LINE_PREFIX, STOP_TIMEOUT_S

log = logging.getLogger("benchmarks.echo_bench")


class RoleChild:
    """A child process running one ``--role`` of ``echo_bench.py``: commands go to its
    stdin, answers come back as ``@@``-prefixed JSON lines on its stdout."""

    def __init__(self, name: str, role: str, config: dict[str, Any], log_dir: Path) -> None:
        self.name = name
        self.child = Child(name, python_child_argv("echo_bench.py", "--role", role, "--config", json.dumps(config)),
                           aeron_free_env(), stdin=True, log_path=log_dir / f"{name}.log")
        self.proc = self.child.proc
        self.dir: str | None = config.get("dir")
        self._next = 0  # index of the first stdout line not read yet

    def send(self, message: dict[str, Any]) -> None:
        try:
            self.child.send(json.dumps(message))
        except BenchError as exc:
            raise BenchError(f"{self.name}: cannot send {message.get('op')}: {exc}") from None

    def recv(self, timeout: float, what: str) -> dict[str, Any]:
        """The next message; BenchError when the child ends or the deadline passes."""
        while True:
            index, line = self.child.next_line(self._next, lambda t: t.startswith(LINE_PREFIX), timeout, what)
            self._next = index + 1
            try:
                message: dict[str, Any] = json.loads(line.text[len(LINE_PREFIX):])
                break
            except json.JSONDecodeError:
                log.warning("%s: unreadable line %r", self.name, line.text[:200])
        if "error" in message:
            raise BenchError(f"{self.name}: {message['error']}")
        return message

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.send(message)
        return self.recv(timeout, f"answer to {message.get('op')}")

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Ask it to exit (``exit``, then stdin closed), then SIGINT, then SIGKILL; remove its driver dir."""
        if self.proc.poll() is None:
            with contextlib.suppress(BenchError):
                self.send({"op": "exit"})
        self.child.stop(grace_s=timeout, kill_s=KILL_TIMEOUT_S)
        if self.dir is not None and os.path.isdir(self.dir):
            log.info("%s left %s behind: removing it", self.name, self.dir)
            shutil.rmtree(self.dir, ignore_errors=True)


class Children:
    """Every child of a run, stopped in reverse order on exit; unique driver dirs."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.prefix = f"/dev/shm/echo-bench-{os.getpid()}"
        self._all: list[RoleChild] = []
        self._n = 0

    def start(self, name: str, role: str, config: dict[str, Any],
              ready_timeout: float = 30.0) -> tuple[RoleChild, dict[str, Any]]:
        self._n += 1
        config = dict(config, dir=f"{self.prefix}-{self._n}-{name}")
        child = RoleChild(f"{self._n:02d}-{name}", role, config, self.log_dir)
        self._all.append(child)
        try:
            return child, child.recv(ready_timeout, "ready")
        except BenchError:
            self.stop(child)
            raise

    def stop(self, child: RoleChild, timeout: float = STOP_TIMEOUT_S) -> None:
        child.stop(timeout)
        if child in self._all:
            self._all.remove(child)

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """Stop every child started inside the block when it ends (however it ends)."""
        before = len(self._all)
        try:
            yield
        finally:
            for child in reversed(self._all[before:]):
                self.stop(child)

    def stop_all(self) -> None:
        for child in reversed(list(self._all)):
            self.stop(child)
        shm = Path(self.prefix).parent
        for leftover in shm.glob(Path(self.prefix).name + "-*"):
            shutil.rmtree(leftover, ignore_errors=True)
