"""``python -m aeron_py.stat``: print a running driver's counters, loss report and error log."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, TextIO

from .. import _aeron
from . import DriverStat, snapshot


def _print_text(snap: dict[str, Any], out: TextIO) -> None:
    print(f"driver {snap['dir']} pid {snap['pid']} heartbeat {snap['heartbeat_age_s']:.3f} s ago", file=out)
    print("== counters ==", file=out)
    for c in snap["counters"]:
        print(f"{c['id']:4d}: {c['value']:>20,d} - {c['label']}", file=out)
    print(f"== loss report ({len(snap['loss'])}) ==", file=out)
    for e in snap["loss"]:
        print(f"{e['observation_count']} observations, {e['total_bytes_lost']} bytes lost, session "
              f"{e['session_id']} stream {e['stream_id']} {e['channel']} from {e['source']}", file=out)
    print(f"== errors ({len(snap['errors'])}) ==", file=out)
    for e in snap["errors"]:
        print(f"{e['observation_count']} x {e['message']}", file=out)


def _print_backlog(snap: dict[str, Any], out: TextIO) -> None:
    """BacklogStat's view: per stream, who has how many bytes still to move."""
    print(f"== backlog ({len(snap['backlog'])} streams) ==", file=out)
    for b in snap["backlog"]:
        print(f"session {b['session_id']} stream {b['stream_id']} {b['channel']}", file=out)
        if (p := b["publisher"]) is not None:
            print(f"  publisher {p['registration_id']}: position {p['position']}, "
                  f"{p['remaining_window']} bytes before back-pressure", file=out)
        if (s := b["sender"]) is not None:
            print(f"  sender {s['registration_id']}: {s['backlog']} bytes to send, "
                  f"{s['window']} bytes of sender window", file=out)
        if (r := b["receiver"]) is not None:
            print(f"  receiver {r['registration_id']}: position {r['position']}, "
                  f"high-water mark {r['high_water_mark']}", file=out)
        for sub in b["subscribers"]:
            print(f"  subscriber {sub['registration_id']}: {sub['backlog']} bytes to read "
                  f"(position {sub['position']})", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m aeron_py.stat",
        description="Print a running Aeron media driver's counters, loss report, error log and backlog "
                    "per stream (like Aeron's AeronStat, LossStat, ErrorStat and BacklogStat).")
    parser.add_argument("--dir", default=os.environ.get("AERON_DIR") or _aeron.default_path(),
                        help="the driver's directory (default: $AERON_DIR or Aeron's default path)")
    parser.add_argument("--watch", type=float, metavar="SECONDS",
                        help="print again every SECONDS until interrupted")
    parser.add_argument("--count", type=int, default=0, help="with --watch: stop after N prints (0 = forever)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per snapshot")
    parser.add_argument("--timeout", type=float, default=1.0, help="seconds to wait for the CnC file")
    parser.add_argument("--backlog", action="store_true",
                        help="print only the backlog per stream: publisher, sender, receiver and subscriber "
                        "positions and the bytes each has still to move (like Aeron's BacklogStat)")
    args = parser.parse_args(argv)
    try:
        stat = DriverStat(args.dir, timeout=args.timeout)
    except (FileNotFoundError, _aeron.AeronError) as exc:
        print(f"aeron_py.stat: {exc}", file=sys.stderr)
        return 2
    printed = 0
    with stat:
        try:
            while True:
                snap = snapshot(stat)
                if args.json:
                    print(json.dumps({"dir": snap["dir"], "backlog": snap["backlog"]} if args.backlog else snap),
                          flush=True)
                elif args.backlog:
                    _print_backlog(snap, sys.stdout)
                else:
                    _print_text(snap, sys.stdout)
                printed += 1
                if not args.watch or (args.count and printed >= args.count):
                    return 0
                time.sleep(args.watch)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
