"""Telemetry recorded by an Aeron Archive, written back as telemetry files.

The Echo server's ``--record`` sends its telemetry lines to an Aeron Archive
(:mod:`aeron_py.duologue.server.telemetry_recording`). This tool replays those recordings and
writes the events of a time window into a directory, as telemetry JSON Lines files the
analytics' batch mode reads like any other::

    python -m aeron_py.telemetry.replay --control aeron:udp?endpoint=127.0.0.1:8010 \\
        --since 2026-11-27T00:00:00 --until 2026-11-27T01:00:00 --out /tmp/attack
    python -m aeron_py.analytics /tmp/attack --out /tmp/attack-report

One file per recording (``events-archive-<recording id>.jsonl``), lines in recorded order,
written under a hidden name and renamed when complete. An active recording is replayed up
to where it had got when the tool asked. Needs a media driver: an embedded one by default,
or ``--aeron-dir`` of a running one.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

#: The Echo server's default recorded stream (``--record-stream``).
DEFAULT_STREAM_ID = 9100
REPLAY_STREAM_ID = 9199
#: A replay that makes no progress for this long is reported and left.
STALL_TIMEOUT_S = 10.0


@dataclass
class ReplayStats:
    recordings: int = 0
    lines: int = 0  # written
    outside: int = 0  # outside the window
    unreadable: int = 0  # not a JSON object with a numeric ts


def _when(text: str) -> float:
    """Epoch seconds, or an ISO 8601 time (UTC when it names no zone)."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = _dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not epoch seconds nor an ISO 8601 time: {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    return moment.timestamp()


def replay_recording(archive: Any, descriptor: Any, out: Path, since: float, until: float,
                     stats: ReplayStats, channel: str = "aeron:udp?endpoint=localhost:0") -> Path | None:
    """Replay one recording into ``out``; the file written, or None when the window holds none of it."""
    start = descriptor.start_position
    end = archive.max_recorded_position(descriptor.recording_id)
    if end <= start:
        return None
    name = f"events-archive-{descriptor.recording_id}.jsonl"
    temporary = out / f".{name}.tmp"
    reached = [start]
    written = 0
    with temporary.open("wb") as sink:
        def on_line(data: bytes, header: Any) -> None:
            nonlocal written
            reached[0] = header.position
            try:
                ts = json.loads(data)["ts"]
                inside = since <= float(ts) < until
            except (ValueError, KeyError, TypeError):
                stats.unreadable += 1
                return
            if not inside:
                stats.outside += 1
                return
            sink.write(data if data.endswith(b"\n") else data + b"\n")
            written += 1

        replay = archive.replay(descriptor.recording_id, channel, REPLAY_STREAM_ID, position=start,
                                length=end - start)
        try:
            last_progress, seen = time.monotonic(), start
            while reached[0] < end:
                if replay.poll(on_line, 256) == 0:
                    if reached[0] != seen:
                        last_progress, seen = time.monotonic(), reached[0]
                    elif time.monotonic() - last_progress > STALL_TIMEOUT_S:
                        raise TimeoutError(f"the replay of recording {descriptor.recording_id} stalled at "
                                           f"position {reached[0]} of {end}")
                    time.sleep(0.001)
        finally:
            replay.close()
    stats.recordings += 1
    stats.lines += written
    if written == 0:
        temporary.unlink()
        return None
    target = out / name
    os.replace(temporary, target)
    return target


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m aeron_py.telemetry.replay", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--control", required=True, metavar="CHANNEL",
                   help="the Archive's control channel, e.g. aeron:udp?endpoint=127.0.0.1:8010")
    p.add_argument("--out", required=True, type=Path, help="directory for the telemetry files (made if missing)")
    p.add_argument("--stream", type=int, default=DEFAULT_STREAM_ID,
                   help=f"the recorded stream id (the server's --record-stream; {DEFAULT_STREAM_ID})")
    p.add_argument("--since", type=_when, default=float("-inf"), help="first event time: epoch seconds or ISO 8601")
    p.add_argument("--until", type=_when, default=float("inf"), help="events before this time (epoch or ISO 8601)")
    p.add_argument("--aeron-dir", help="a running media driver's directory (default: an embedded driver)")
    p.add_argument("--response-channel", default="aeron:udp?endpoint=localhost:0",
                   help="where the Archive answers this tool (aeron:udp?endpoint=localhost:0)")
    p.add_argument("--replay-channel", default="aeron:udp?endpoint=localhost:0",
                   help="where the Archive replays to (aeron:udp?endpoint=localhost:0: any free port here; "
                   "aeron:ipc when --aeron-dir is the Archive's own driver)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    from aeron_py import Aeron, MediaDriver
    from aeron_py.archive import AeronArchive, ArchiveError

    if args.since >= args.until:
        parser().error(f"--since must be before --until ({args.since} >= {args.until})")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parser().error(f"cannot make --out {args.out}: {exc.strerror or exc}")
    stats = ReplayStats()
    driver = MediaDriver() if args.aeron_dir is None else None
    try:
        with Aeron(dir=args.aeron_dir, driver=driver) as aeron, \
                AeronArchive.connect(aeron, control_channel=args.control, response_channel=args.response_channel) \
                as archive:
            recordings = archive.list_recordings(count=100_000, channel_fragment="aeron:", stream_id=args.stream)
            for descriptor in recordings:
                written = replay_recording(archive, descriptor, args.out, args.since, args.until, stats,
                                           args.replay_channel)
                if written is not None:
                    logger.info("recording %d -> %s", descriptor.recording_id, written)
    except (ArchiveError, TimeoutError) as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 1
    finally:
        if driver is not None:
            driver.close()
    print(f"replayed {stats.recordings} recordings of stream {args.stream}: {stats.lines} events written to "
          f"{args.out}, {stats.outside} outside the window, {stats.unreadable} unreadable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
