"""The server's ``--blocklist`` file, watched for new versions.

:class:`BlocklistWatch` holds the :class:`~aeron_py.duologue.blocklist.Blocklist` in force and
notices a new version of its file by itself: :meth:`BlocklistWatch.poll` (called every
loop tick) costs one ``stat`` and compares the file's *signature* (inode, size,
``mtime_ns``, ``ctime_ns``) with the last one it looked at.  An atomic replacement
(``Blocklist.write``: temporary file + rename, what the analytics job does) always
changes the inode; an in-place rewrite changes the size or a time stamp.

Torn files: a new signature is only read once it has stayed the same for one more
check (the writer is done with it), and the file is read between two ``stat`` calls
that must agree.  A version that is not valid (a bad line, not UTF-8, or a last line
without its newline: the usual sign of a writer caught mid-line) keeps the previous
list in force, is logged once, and is not read again until the file changes again.
:meth:`BlocklistWatch.reload` (SIGHUP, :meth:`~.loop.DuologueServer.reload_blocklist`)
reads the file now, whatever its signature, and accepts an unterminated last line
(an operator asked for exactly this file).  A version whose entries are the ones
in force (a ``touch``, a re-read) is not a new version.
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..blocklist import Blocklist, BlocklistError

__all__ = ["BlocklistChange", "BlocklistWatch", "Signature"]

logger = logging.getLogger("aeron_py.duologue.server")

#: (inode, size, mtime_ns, ctime_ns) of the file, or None when it cannot be stat'ed.
Signature = tuple[int, int, int, int] | None


def signature(path: Path) -> Signature:
    """The file's identity and version as ``stat`` tells it (None: missing/unreadable)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True)
class BlocklistChange:
    """A new blocklist was put in force: the list and how it differs from the previous one."""

    blocklist: Blocklist
    previous: Blocklist
    version: int
    requested: bool  # True: an explicit reload (SIGHUP); False: the file changed

    @property
    def added(self) -> int:
        """Entries in the new list that were not in the previous one."""
        return len(set(self.blocklist.entries) - set(self.previous.entries))

    @property
    def removed(self) -> int:
        """Entries of the previous list that are gone."""
        return len(set(self.previous.entries) - set(self.blocklist.entries))


class BlocklistWatch:
    """The blocklist in force and its file; :meth:`poll` each tick, :meth:`reload` on request.

    The constructor reads the file (a bad file fails at once: ``OSError`` or
    :class:`~aeron_py.duologue.blocklist.BlocklistError`).  Not thread-safe: the server loop
    owns it.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        before = signature(self.path)
        self.blocklist = Blocklist.load(self.path)
        self.version = 1
        self._loaded: Signature = before  # the signature of the version in force
        self._seen: Signature = before  # the signature at the previous poll
        self._failed: Signature = None  # a version that was refused (not retried, logged once)

    def is_blocked(self, ip: str) -> str | None:
        """The core's ``is_blocked``: the target of the entry in force now matching ``ip``, or None."""
        entry = self.blocklist.match(ip, time.time())
        return None if entry is None else entry.target

    def poll(self) -> BlocklistChange | None:
        """One cheap check (a ``stat``): the new list if the file has a new, valid, settled version."""
        current = signature(self.path)
        seen, self._seen = self._seen, current
        if current is None or current == self._loaded or current == self._failed:
            return None
        if current != seen:
            return None  # changed since the last look: read it once it has settled
        return self._load(current, requested=False)

    def reload(self) -> BlocklistChange | None:
        """Read the file now (an explicit request); None (logged) when it is not valid."""
        return self._load(signature(self.path), requested=True)

    def _load(self, before: Signature, requested: bool) -> BlocklistChange | None:
        try:
            text = self._read()
            if signature(self.path) != before:
                self._seen = None  # still being written: look again at the next poll
                logger.debug("blocklist %s changed while being read; reading it again later", self.path)
                return None
            if not requested and text and not text.endswith("\n"):
                raise BlocklistError(f"{self.path}: the last line has no newline (a partial write?)")
            blocklist = Blocklist.parse(text, str(self.path))
        except (OSError, ValueError) as exc:
            if before is None or before != self._failed or requested:
                logger.error("blocklist reload failed, keeping the previous one (version %d, %d entries): %s",
                             self.version, len(self.blocklist), exc)
            self._failed = before
            return None
        self._loaded, self._failed = before, None
        if blocklist.entries == self.blocklist.entries:  # touched, or re-read: nothing new
            logger.info("blocklist %s re-read: unchanged (version %d, %d entries)", self.path, self.version,
                        len(blocklist))
            return None
        previous, self.blocklist = self.blocklist, blocklist
        self.version += 1
        logger.info("blocklist reloaded from %s (%s): version %d, %d entries", self.path,
                    "requested" if requested else "file changed", self.version, len(blocklist))
        return BlocklistChange(blocklist, previous, self.version, requested)

    def _read(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise BlocklistError(f"{self.path}: not UTF-8 text ({exc.reason})") from None
        except OSError as exc:
            raise type(exc)(exc.errno, f"cannot read blocklist {self.path}: {exc.strerror}") from exc
