"""Telemetry schema, EventWriter and the tolerant reader (no Spark)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from aeron_py.telemetry import events as schema
from aeron_py.telemetry.events import KIND_FIELDS, SCHEMA_VERSION, EventError, make_event
from aeron_py.telemetry.reader import ReadStats, read_events
from aeron_py.telemetry.writer import EventWriter, EventWriterError
from conftest import wait_until

pytestmark = pytest.mark.timeout(30)

COMMON = {"source": "server", "server_id": "echo-1"}
EXAMPLES: dict[str, dict] = {
    "hello": {"initial_session": -5, "ip": "198.51.100.1", "port": 40000, "key_valid": True},
    "reject": {"initial_session": -5, "ip": "198.51.100.1", "reason": "server_full"},
    "duologue_created": {"session": 7, "owner_ip": "198.51.100.1", "data_port": 9010, "control_port": 9011},
    "client_connected": {"session": 7, "ip": "198.51.100.2", "wrong_ip": True},
    "bad_message": {"session": None, "ip": "198.51.100.1", "where": "initial"},
    "duologue_closed": {
        "session": 7, "owner_ip": "198.51.100.1", "reason": "idle", "lifetime_s": 12.5,
        "msgs_in": 3, "msgs_out": 3, "bytes_in": 63, "bytes_out": 63,
    },
    "blocklist_hit": {"ip": "203.0.113.9", "rule": "203.0.113.0/24"},
    "blocklist_reload": {"counters": {"version": 2, "entries": 1, "active": 1, "added": 1, "removed": 0,
                                      "duologues_closed": 0}, "reason": "file_changed"},
    "driver_snapshot": {
        "counters": {"Bytes sent": 10},
        "new_loss": [{
            "observation_count": 1, "total_bytes_lost": 1408, "first_observation_ts": 1.0,
            "last_observation_ts": 2.0, "session_id": 9, "stream_id": 541388802,
            "channel": "aeron:udp?endpoint=0.0.0.0:9010", "source": "10.0.0.1:40000",
        }],
        "new_errors": [{"observation_count": 2, "first_observation_ts": 1.0, "last_observation_ts": 3.0,
                        "message": "boom"}],
    },
    "rtt_sample": {"client_ip": "2001:db8::1", "rtt_us": 512, "seq": 0},
}


# -- schema ---------------------------------------------------------------------------

def test_every_kind_has_an_example_and_is_documented() -> None:
    assert set(EXAMPLES) == set(KIND_FIELDS)
    for kind, fields in KIND_FIELDS.items():
        assert f"``{kind}``" in schema.__doc__
        for field in fields:
            assert f"``{field.name}``" in schema.__doc__, (kind, field.name)


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_make_event_orders_and_fills_common_fields(kind: str) -> None:
    event = make_event(kind, ts=1.25, **COMMON, **EXAMPLES[kind])
    assert list(event)[:5] == ["schema_version", "ts", "kind", "source", "server_id"]
    assert event["schema_version"] == SCHEMA_VERSION and event["kind"] == kind and event["ts"] == 1.25
    assert {k: event[k] for k in EXAMPLES[kind]} == EXAMPLES[kind]


def test_make_event_defaults_ts_to_now() -> None:
    import time

    before = time.time()
    event = make_event("blocklist_hit", **COMMON, ip="1.2.3.4", rule="1.2.3.4")
    assert before <= event["ts"] <= time.time()


@pytest.mark.parametrize(
    ("kind", "change", "message"),
    [
        ("nope", {}, "unknown event kind 'nope'"),
        ("hello", {"ip": None}, "hello event: field 'ip' must not be null"),
        ("hello", {"port": "40000"}, "field 'port' must be int"),
        ("hello", {"port": True}, "field 'port' must be int"),
        ("hello", {"key_valid": 1}, "field 'key_valid' must be bool"),
        ("hello", {"extra": 1}, "unknown field(s) extra"),
        ("reject", {"reason": "server full"}, "field 'reason' must be one of bad_message"),
        ("bad_message", {"where": "elsewhere"}, "field 'where' must be one of initial, duologue"),
        ("duologue_closed", {"lifetime_s": float("nan")}, "must be finite"),
        ("driver_snapshot", {"counters": {"x": 1.5}}, "entry 'x' must map a string to int"),
        ("driver_snapshot", {"new_errors": [{"message": "m"}]}, "new_errors'[0]: missing field 'observation_count'"),
    ],
)
def test_make_event_rejects_bad_input_with_a_clear_message(kind: str, change: dict, message: str) -> None:
    fields = {**EXAMPLES.get(kind, {}), **change}
    with pytest.raises(EventError) as info:
        make_event(kind, **COMMON, **fields)
    assert message in str(info.value)


def test_make_event_requires_every_field_and_the_current_version() -> None:
    fields = dict(EXAMPLES["hello"])
    del fields["key_valid"]
    with pytest.raises(EventError, match="missing field 'key_valid'"):
        make_event("hello", **COMMON, **fields)
    with pytest.raises(EventError, match="missing field 'server_id'"):
        make_event("hello", source="server", **EXAMPLES["hello"])
    with pytest.raises(EventError, match="schema_version 2"):
        make_event("hello", schema_version=2, **COMMON, **EXAMPLES["hello"])


# -- writer ---------------------------------------------------------------------------

def _lines(directory: Path) -> list[dict]:
    return [json.loads(line) for p in sorted(directory.glob("*.jsonl")) for line in p.read_text().splitlines()]


def test_writer_appends_one_flushed_line_per_event(tmp_path: Path) -> None:
    with EventWriter(tmp_path / "new" / "dir", source="server", server_id="s1", rotate_seconds=None) as writer:
        written = writer.emit("hello", ts=2.0, **EXAMPLES["hello"])
        # Flushed per line into the hidden temporary file; readers see nothing yet.
        current = writer.current_file
        assert current is not None and current.name.startswith(".") and current.name.endswith(".jsonl.tmp")
        on_disk = current.read_bytes()
        assert on_disk.endswith(b"\n") and json.loads(on_disk) == written
        assert writer.files == [] and list(read_events(tmp_path / "new" / "dir")) == []
        writer.emit("rtt_sample", ts=3.0, **EXAMPLES["rtt_sample"])
    events = _lines(tmp_path / "new" / "dir")
    assert [e["kind"] for e in events] == ["hello", "rtt_sample"]
    assert all(e["source"] == "server" and e["server_id"] == "s1" for e in events)
    assert re.fullmatch(r"events-\d{13}-000000\.jsonl", writer.files[0].name)
    assert [p.name for p in (tmp_path / "new" / "dir").iterdir()] == [writer.files[0].name]  # no temp left


def test_writer_rotates_by_size(tmp_path: Path) -> None:
    line = len(json.dumps(make_event("rtt_sample", ts=1.0, **COMMON, **EXAMPLES["rtt_sample"]),
                          separators=(",", ":"))) + 1
    with EventWriter(tmp_path, source="server", server_id="echo-1", max_bytes=3 * line, prefix="load") as writer:
        for seq in range(10):
            writer.emit("rtt_sample", ts=1.0, client_ip="2001:db8::1", rtt_us=512, seq=seq)
    files = sorted(tmp_path.glob("*.jsonl"))
    assert [p.name for p in files] == [p.name for p in writer.files]
    assert [len(p.read_text().splitlines()) for p in files] == [3, 3, 3, 1]
    assert all(p.stat().st_size <= 3 * line for p in files)
    assert [f.name.rsplit("-", 1)[1] for f in files] == [f"{n:06d}.jsonl" for n in range(4)]
    assert [e["seq"] for e in _lines(tmp_path)] == list(range(10))


def test_writer_retention_caps_files_and_bytes(tmp_path: Path) -> None:
    line = len(json.dumps(make_event("rtt_sample", ts=1.0, **COMMON, **{**EXAMPLES["rtt_sample"], "seq": 10}),
                          separators=(",", ":"))) + 1  # every seq below has two digits
    with EventWriter(tmp_path, source="server", server_id="echo-1", max_bytes=2 * line, max_files=3,
                     count_cap_min_age=0) as writer:
        for seq in range(10, 30):
            writer.emit("rtt_sample", ts=1.0, client_ip="2001:db8::1", rtt_us=512, seq=seq)
    files = sorted(tmp_path.glob("*.jsonl"))
    assert [p.name for p in files] == [p.name for p in writer.files] and len(files) == 3
    assert [e["seq"] for e in _lines(tmp_path)] == list(range(24, 30))  # the newest survive
    assert writer.deleted_files == 7 and writer.deleted_bytes == 14 * line
    with EventWriter(tmp_path / "b", source="server", server_id="echo-1", max_total_bytes=5 * line) as capped:
        for seq in range(10, 60):
            capped.emit("rtt_sample", ts=1.0, client_ip="2001:db8::1", rtt_us=512, seq=seq)
    on_disk = sum(p.stat().st_size for p in (tmp_path / "b").glob("*.jsonl"))
    assert on_disk <= 5 * line and capped.deleted_bytes + on_disk == 50 * line


def test_the_file_cap_spares_files_a_reader_may_just_have_listed(tmp_path: Path) -> None:
    line = len(json.dumps(make_event("rtt_sample", ts=1.0, **COMMON, **{**EXAMPLES["rtt_sample"], "seq": 10}),
                          separators=(",", ":"))) + 1
    with EventWriter(tmp_path, source="server", server_id="echo-1", max_bytes=2 * line, max_files=2,
                     max_total_bytes=100 * line) as writer:
        for seq in range(10, 30):
            writer.emit("rtt_sample", ts=1.0, client_ip="2001:db8::1", rtt_us=512, seq=seq)
    assert writer.deleted_files == 0 and len(_lines(tmp_path)) == 20  # all young: the file cap waits
    with EventWriter(tmp_path / "b", source="server", server_id="echo-1", max_bytes=2 * line, max_files=2,
                     max_total_bytes=5 * line) as capped:
        for seq in range(10, 30):
            capped.emit("rtt_sample", ts=1.0, client_ip="2001:db8::1", rtt_us=512, seq=seq)
    assert len(_lines(tmp_path / "b")) <= 6 and capped.deleted_files > 0  # the byte cap never waits


def test_writer_retention_arguments_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_files"):
        EventWriter(tmp_path, source="server", server_id="x", max_files=0)
    with pytest.raises(ValueError, match="max_total_bytes"):
        EventWriter(tmp_path, source="server", server_id="x", max_total_bytes=0)


def test_every_close_reason_the_server_can_produce_is_accepted() -> None:
    from aeron_py.duologue.core.contract import CloseReason

    for reason in CloseReason:
        event = make_event("duologue_closed", ts=1.0, **COMMON, **{**EXAMPLES["duologue_closed"],
                                                                   "reason": reason.value})
        assert event["reason"] == reason.value


def test_every_refusal_the_server_can_send_is_accepted() -> None:
    from aeron_py.duologue.core.protocol import Reason
    from aeron_py.duologue.core.secure_hello import SecureReason
    from aeron_py.duologue.server.telemetry import WIRE_REASONS

    reasons = [*Reason, *SecureReason]  # plain mode's, and those secure mode adds
    assert set(WIRE_REASONS) == {r.value for r in reasons}
    for reason in reasons:
        make_event("reject", ts=1.0, **COMMON, **{**EXAMPLES["reject"], "reason": WIRE_REASONS[reason.value]})


def test_duologue_created_secure_is_optional_for_older_files() -> None:
    base = {**COMMON, "ts": 1.0, "session": 7, "owner_ip": "1.2.3.4", "data_port": 9010, "control_port": 9011}
    assert "secure" not in make_event("duologue_created", **base)  # written before secure mode: still valid
    assert make_event("duologue_created", **base, secure=True)["secure"] is True
    with pytest.raises(EventError, match="secure"):
        make_event("duologue_created", **base, secure="yes")


def test_oversized_event_is_written_alone(tmp_path: Path) -> None:
    with EventWriter(tmp_path, source="server", server_id="echo-1", max_bytes=10) as writer:
        writer.emit("blocklist_hit", ts=1.0, ip="1.2.3.4", rule="1.2.3.4")
        writer.emit("blocklist_hit", ts=2.0, ip="1.2.3.5", rule="1.2.3.5")
    assert [len(p.read_text().splitlines()) for p in writer.files] == [1, 1]


def test_writer_is_thread_safe(tmp_path: Path) -> None:
    threads, per_thread = 4, 250
    with EventWriter(tmp_path, source="load", server_id="echo-1", max_bytes=4096) as writer:
        def work(n: int) -> None:
            for seq in range(per_thread):
                writer.emit("rtt_sample", ts=1.0, client_ip=f"10.0.0.{n}", rtt_us=100, seq=seq)

        workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
        for t in workers:
            t.start()
        for t in workers:
            t.join(timeout=20)
        assert not any(t.is_alive() for t in workers)
    events = _lines(tmp_path)  # every line parses: no interleaved writes
    assert len(events) == threads * per_thread
    for n in range(threads):
        assert sorted(e["seq"] for e in events if e["client_ip"] == f"10.0.0.{n}") == list(range(per_thread))


def test_close_is_idempotent_and_emit_after_close_fails(tmp_path: Path) -> None:
    writer = EventWriter(tmp_path, source="server", server_id="echo-1")
    writer.close()
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.emit("blocklist_hit", ip="1.2.3.4", rule="1.2.3.4")


def test_invalid_event_is_not_written(tmp_path: Path) -> None:
    with EventWriter(tmp_path, source="server", server_id="echo-1") as writer:
        with pytest.raises(EventError):
            writer.emit("hello", ip="1.2.3.4")
    assert writer.files == [] and list(tmp_path.iterdir()) == []  # an empty file is never published


def test_unwritable_directory_names_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    target = blocker / "telemetry"
    with pytest.raises(EventWriterError) as info:
        EventWriter(target, source="server", server_id="echo-1")
    assert str(target) in str(info.value)


def test_writers_sharing_a_name_stem_never_overwrite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import aeron_py.telemetry.writer as writer_module

    monkeypatch.setattr(writer_module.time, "time", lambda: 1000.0)  # same <start-ts> for both
    with EventWriter(tmp_path, source="server", server_id="a") as a, \
            EventWriter(tmp_path, source="server", server_id="b") as b:
        a.emit("blocklist_hit", ts=1.0, ip="1.2.3.4", rule="x")
        b.emit("blocklist_hit", ts=1.0, ip="1.2.3.5", rule="x")
    assert [p.name for p in a.files + b.files] == ["events-1000000-000000.jsonl", "events-1000000-000001.jsonl"]
    assert sorted(e["server_id"] for e in _lines(tmp_path)) == ["a", "b"]


def test_writer_publishes_by_time_only_files_with_data(tmp_path: Path) -> None:
    with EventWriter(tmp_path, source="server", server_id="echo-1", rotate_seconds=0.2) as writer:
        assert writer.current_file is None  # nothing written: no file, nothing to publish
        writer.emit("blocklist_hit", ts=1.0, ip="1.2.3.4", rule="1.2.3.4")
        first = wait_until(lambda: writer.files, 10, "the time rotation to publish the first file")
        assert writer.current_file is None and [e["ip"] for e in _lines(tmp_path)] == ["1.2.3.4"]
        writer.emit("blocklist_hit", ts=2.0, ip="1.2.3.5", rule="1.2.3.5")
        wait_until(lambda: len(writer.files) == 2, 10, "the second file")
        assert writer.files[0] == first[0] and writer.published_files == 2
    assert [e["ip"] for e in _lines(tmp_path)] == ["1.2.3.4", "1.2.3.5"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [p.name for p in writer.files]


def test_writer_rotate_seconds_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="rotate_seconds"):
        EventWriter(tmp_path, source="server", server_id="x", rotate_seconds=0)


def test_a_reader_never_sees_a_partial_line_or_a_growing_file(tmp_path: Path) -> None:
    """A reader polling while 4 threads write (size and time rotation) sees only complete files."""
    stop = threading.Event()
    seen: dict[str, int] = {}
    problems: list[str] = []

    def read_repeatedly() -> None:
        for _ in range(100_000):
            if stop.is_set():
                return
            stats = ReadStats()
            for _event in read_events(tmp_path, stats):
                pass
            if stats.torn_last_lines or stats.malformed_lines:
                problems.append(f"partial lines seen: {stats}")
            for path in tmp_path.glob("*.jsonl"):
                try:
                    size = path.stat().st_size
                except FileNotFoundError:
                    continue
                if seen.setdefault(path.name, size) != size:
                    problems.append(f"{path.name} changed after it was published")

    reader = threading.Thread(target=read_repeatedly)
    reader.start()
    try:
        with EventWriter(tmp_path, source="load", server_id="echo-1", max_bytes=2000, rotate_seconds=0.05,
                         flush_each_event=False) as writer:
            def work(n: int) -> None:
                for seq in range(300):
                    writer.emit("rtt_sample", ts=1.0, client_ip=f"10.0.0.{n}", rtt_us=100, seq=seq)

            workers = [threading.Thread(target=work, args=(n,)) for n in range(4)]
            for t in workers:
                t.start()
            for t in workers:
                t.join(timeout=20)
    finally:
        stop.set()
        reader.join(timeout=20)
    assert not problems, problems[:3]
    assert len(_lines(tmp_path)) == 1200 and len(seen) > 1


def test_a_crashed_writers_file_is_published_by_the_next_writer(tmp_path: Path) -> None:
    """A writer killed with SIGKILL mid-file: its complete lines are published, the torn one cut."""
    code = (
        "import os, signal, sys\n"
        "from aeron_py.telemetry.writer import EventWriter\n"
        "w = EventWriter(sys.argv[1], source='server', server_id='dead', rotate_seconds=None)\n"
        "for seq in range(3):\n"
        "    w.emit('rtt_sample', ts=1.0, client_ip='10.0.0.1', rtt_us=5, seq=seq)\n"
        "w._file.write(b'{\"schema_version\":1,\"ts\":')\n"  # a torn line, as a crash mid-write leaves
        "w._file.flush()\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    child = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert list(read_events(tmp_path)) == []  # only a hidden temporary file is there
    with EventWriter(tmp_path, source="server", server_id="next") as writer:
        stats = ReadStats()
        assert [e["seq"] for e in read_events(tmp_path, stats) if e["server_id"] == "dead"] == [0, 1, 2]
        assert stats.torn_last_lines == 0 and stats.malformed_lines == 0
        # A live writer's temporary file is never taken by another writer's recovery.
        writer.emit("rtt_sample", ts=1.0, client_ip="10.0.0.2", rtt_us=5, seq=9)
        live = writer.current_file
        with EventWriter(tmp_path, source="server", server_id="third"):
            assert live is not None and live.exists()
    assert sorted(e["seq"] for e in _lines(tmp_path)) == [0, 1, 2, 9]


def test_readers_skip_temporary_and_hidden_files(tmp_path: Path) -> None:
    from aeron_py.analytics.job import InputError, check_events_dir

    _write(tmp_path / ".events-1-000000.jsonl.tmp", _event_line(0) + "\n")
    with pytest.raises(InputError, match="no events"):  # the batch job's input check
        check_events_dir(tmp_path)
    _write(tmp_path / ".hidden.jsonl", _event_line(1) + "\n")
    _write(tmp_path / "_hidden.jsonl", _event_line(2) + "\n")
    assert list(read_events(tmp_path)) == []
    _write(tmp_path / "events-1-000001.jsonl", _event_line(3) + "\n")
    assert [e["seq"] for e in read_events(tmp_path)] == [3]


# -- reader ---------------------------------------------------------------------------

def _write(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8"))


def _event_line(seq: int) -> str:
    return json.dumps(make_event("rtt_sample", ts=float(seq), **COMMON, client_ip="10.0.0.1", rtt_us=5, seq=seq))


def test_reader_skips_and_counts_a_torn_last_line(tmp_path: Path) -> None:
    _write(tmp_path / "events-1-000000.jsonl", _event_line(0) + "\n" + _event_line(1) + "\n" + '{"schema_ver')
    _write(tmp_path / "events-1-000001.jsonl", _event_line(2) + "\n")
    stats = ReadStats()
    assert [e["seq"] for e in read_events(tmp_path, stats)] == [0, 1, 2]
    assert stats == ReadStats(files=2, lines=4, events=3, torn_last_lines=1, malformed_lines=0)


def test_reader_accepts_a_complete_last_line_without_newline(tmp_path: Path) -> None:
    _write(tmp_path / "a.jsonl", _event_line(0) + "\n" + _event_line(1))
    stats = ReadStats()
    assert [e["seq"] for e in read_events(tmp_path, stats)] == [0, 1]
    assert stats.torn_last_lines == 0 and stats.events == 2


def test_reader_counts_malformed_lines_and_goes_on(tmp_path: Path) -> None:
    bad = [
        "not json",
        "[1, 2]",
        '{"kind": "hello"}',  # no ts
        '{"kind": 5, "ts": 1.0}',
        '{"kind": "hello", "ts": true}',
        "",
    ]
    text = "\n".join([_event_line(0), *bad, _event_line(1)]) + "\n"
    _write(tmp_path / "a.jsonl", text)
    (tmp_path / "b.jsonl").write_bytes(b"\xff\xfe\n" + (_event_line(2) + "\n").encode())
    (tmp_path / "ignored.txt").write_text("not an event file\n")
    stats = ReadStats()
    assert [e["seq"] for e in read_events(tmp_path, stats)] == [0, 1, 2]
    assert stats == ReadStats(files=2, lines=len(bad) + 4, events=3, torn_last_lines=0, malformed_lines=len(bad) + 1)


def test_reader_passes_unknown_kinds_and_fields_through(tmp_path: Path) -> None:
    _write(tmp_path / "a.jsonl", '{"kind": "future_kind", "ts": 5, "new_field": [1]}\n')
    assert list(read_events(tmp_path)) == [{"kind": "future_kind", "ts": 5, "new_field": [1]}]


def test_reader_round_trips_the_writer(tmp_path: Path) -> None:
    with EventWriter(tmp_path, source="server", server_id="echo-1", max_bytes=600) as writer:
        written = [writer.emit(kind, ts=float(i), **EXAMPLES[kind]) for i, kind in enumerate(sorted(EXAMPLES))]
    stats = ReadStats()
    assert list(read_events(tmp_path, stats)) == written
    assert stats.files == len(writer.files) > 1 and stats.malformed_lines == stats.torn_last_lines == 0


def test_reader_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="telemetry directory not found"):
        list(read_events(tmp_path / "missing"))


def test_a_mirror_gets_every_line_the_files_get(tmp_path: Path) -> None:
    mirrored: list[bytes] = []
    writer = EventWriter(tmp_path, source="server", server_id="s", rotate_seconds=None, mirror=mirrored.append)
    for i in range(5):
        writer.emit("blocklist_hit", ts=1000.0 + i, ip=f"10.0.0.{i}", rule="10.0.0.0/8")
    writer.close()
    on_disk = b"".join(path.read_bytes() for path in sorted(tmp_path.glob("*.jsonl")))
    assert b"".join(mirrored) == on_disk and len(mirrored) == 5
    assert all(line.endswith(b"\n") for line in mirrored)
