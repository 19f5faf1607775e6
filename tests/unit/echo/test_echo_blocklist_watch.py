"""BlocklistWatch: new versions of the blocklist file are noticed, settled, validated."""
from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from aeron_py.duologue.blocklist import Blocklist, BlocklistError, Entry
from aeron_py.duologue.server.blocklist_watch import BlocklistWatch

pytestmark = pytest.mark.timeout(10)


def write(path: Path, *targets: str) -> None:
    Blocklist.write(path, [Entry.create(t, None, "test") for t in targets])


def poll_until_settled(watch: BlocklistWatch, polls: int = 3):
    """A new signature is read only at its second sighting: poll a bounded number of times."""
    for _ in range(polls):
        change = watch.poll()
        if change is not None:
            return change
    return None


@pytest.fixture
def path(tmp_path: Path) -> Path:
    p = tmp_path / "blocklist.txt"
    write(p, "10.0.0.1")
    return p


def test_unchanged_file_costs_nothing_and_changes_nothing(path: Path) -> None:
    watch = BlocklistWatch(path)
    assert [watch.poll() for _ in range(3)] == [None, None, None]
    assert watch.version == 1 and [e.target for e in watch.blocklist] == ["10.0.0.1"]


def test_atomic_replacement_is_read_once_settled(path: Path) -> None:
    watch = BlocklistWatch(path)
    write(path, "10.0.0.2", "10.0.0.3")
    assert watch.poll() is None  # first sighting of the new version: not read yet
    change = watch.poll()
    assert change is not None and change.version == watch.version == 2 and not change.requested
    assert (change.added, change.removed) == (2, 1)
    assert watch.blocklist.match("10.0.0.2", 0) is not None and watch.blocklist.match("10.0.0.1", 0) is None
    assert watch.poll() is None


def test_invalid_version_keeps_the_old_list_logs_once_and_retries_on_the_next_change(
        path: Path, caplog: pytest.LogCaptureFixture) -> None:
    watch = BlocklistWatch(path)
    path.write_text("not-an-address never reason\n")
    with caplog.at_level(logging.ERROR, logger="aeron_py.duologue.server"):
        assert all(watch.poll() is None for _ in range(5))
    failures = [r for r in caplog.records if "blocklist reload failed" in r.getMessage()]
    assert len(failures) == 1 and "blocklist.txt:1" in failures[0].getMessage()
    assert watch.version == 1 and watch.blocklist.match("10.0.0.1", 0) is not None
    write(path, "10.0.0.9")
    change = poll_until_settled(watch)
    assert change is not None and watch.version == 2 and watch.blocklist.match("10.0.0.9", 0) is not None


def test_torn_last_line_is_refused_by_the_watch_but_not_by_an_explicit_reload(path: Path) -> None:
    watch = BlocklistWatch(path)
    path.write_text("10.0.0.1 never test\n10.0.0.7 never hello fl")  # a writer caught mid-line
    assert poll_until_settled(watch) is None and watch.version == 1
    change = watch.reload()  # SIGHUP: the operator means this file
    assert change is not None and change.requested and watch.blocklist.match("10.0.0.7", 0) is not None


def test_touch_or_same_entries_is_not_a_new_version(path: Path) -> None:
    watch = BlocklistWatch(path)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert poll_until_settled(watch) is None
    write(path, "10.0.0.1")  # same entries, new inode
    assert poll_until_settled(watch) is None and watch.reload() is None and watch.version == 1


def test_missing_file_keeps_the_list_and_a_bad_start_fails_at_once(path: Path, tmp_path: Path) -> None:
    watch = BlocklistWatch(path)
    path.unlink()
    assert poll_until_settled(watch) is None and watch.reload() is None and watch.version == 1
    bad = tmp_path / "bad.txt"
    bad.write_text("1.2.3.4 someday reason\n")
    with pytest.raises(BlocklistError, match="bad.txt:1"):
        BlocklistWatch(bad)
    with pytest.raises(OSError):
        BlocklistWatch(tmp_path / "absent.txt")
