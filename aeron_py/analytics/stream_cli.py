"""Command line of the streaming defence: ``python -m aeron_py.analytics EVENTS_DIR --follow ...``."""

from __future__ import annotations

import argparse
import logging
import re
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from aeron_py.analytics import cli_options as cli
from aeron_py.duologue.blocklist import Blocklist, BlocklistError

__all__ = ["duration", "main", "parser"]

DESCRIPTION = """\
Follow Echo 2.0 server telemetry as the server writes it (Spark Structured Streaming)
and block abusive clients within seconds: the batch job's abuse rules, per source key
(IPv4 address, IPv6 network of --ipv6-prefix bits), over a sliding event-time window.
Every trigger merges new verdicts into the blocklist file (atomically; the server
notices the new version by itself) and records how many lines it read.

State lives in CHECKPOINT_DIR: stop the job (SIGINT/SIGTERM: clean, exit 0) or kill it,
start it again with the same directory, and it goes on where it was: no line is lost
or counted twice. Per-batch line counts go to COUNTS_DIR/batch-<id>.json.
"""

EPILOG = """\
operator loop:
  echo_server --events DIR --blocklist FILE  ->  DIR/*.jsonl (complete files, every ~2 s)
  python -m aeron_py.analytics DIR --follow --blocklist FILE  ->  FILE (atomic rewrite)
  echo_server notices FILE changed  ->  refuses the blocked keys

examples:
  python -m aeron_py.analytics /var/lib/echo/events --follow --blocklist /etc/echo/blocklist.txt
  python -m aeron_py.analytics /shared/events --follow --blocklist /shared/blocklist.txt \\
      --master spark://10.0.0.5:7077 --checkpoint /shared/stream-checkpoint --window 1m --slide 10s

durations: 500ms, 30s, 2m or a plain number of seconds.
exit codes: 0 stopped by a signal (or --available-now done); 1 a query failed; 2 bad input;
3 Spark unavailable.
"""

_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ms|s|m|h)?\s*$")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def duration(text: str) -> float:
    """Seconds in ``500ms``, ``30s``, ``2m``, ``1h`` or a plain number (argparse type)."""
    match = _DURATION.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (use e.g. 500ms, 30s, 2m)")
    return float(match.group(1)) * _UNIT[match.group(2)]


def parser() -> argparse.ArgumentParser:
    """The ``--follow`` command line."""
    p = argparse.ArgumentParser(
        prog="python -m aeron_py.analytics",
        description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("events_dir", metavar="EVENTS_DIR", type=Path, help="the server's --events directory")
    p.add_argument("--follow", action="store_true", required=True, help="streaming mode (this command)")
    p.add_argument("--blocklist", required=True, metavar="FILE", type=Path,
                   help="blocklist to merge verdicts into (the server's --blocklist; created if missing)")
    p.add_argument("--checkpoint", metavar="CHECKPOINT_DIR", type=Path,
                   help="offsets, window state and the blocklist ledger (default FILE.checkpoint)")
    p.add_argument("--counts", metavar="COUNTS_DIR", type=Path,
                   help="per-batch line counts (default CHECKPOINT_DIR/batch_counts)")
    p.add_argument("--window", type=duration, default=30.0, metavar="DURATION",
                   help="event-time window the rules judge (default 30s)")
    p.add_argument("--slide", type=duration, default=5.0, metavar="DURATION",
                   help="how often a new window starts (default 5s)")
    p.add_argument("--watermark", type=duration, default=10.0, metavar="DURATION",
                   help="how late an event may arrive and still count (default 10s)")
    p.add_argument("--trigger", type=duration, default=1.0, metavar="DURATION",
                   help="micro-batch interval (default 1s)")
    p.add_argument("--max-files-per-trigger", type=int, default=1000, metavar="N",
                   help="cap on new files per micro-batch while catching up (default 1000)")
    p.add_argument("--available-now", action="store_true",
                   help="process every file there now (in bounded batches), then exit")
    p.add_argument("--rules", metavar="RULES.json", type=Path, help="abuse rule thresholds (as the batch job)")
    cli.add_judging_options(p)
    p.add_argument("--master", metavar="URL",
                   help="Spark master: local[N], local[*] or spark://HOST:PORT (default local[*] in this process)")
    cli.add_spark_options(p, driver_memory="1g")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the streaming job until SIGINT/SIGTERM; return the exit code."""
    args = parser().parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("aeron_py.analytics.stream")
    from aeron_py.analytics.rules import AbuseRules, RulesError
    from aeron_py.analytics.session import SparkUnavailable, build_session
    from aeron_py.analytics.stream import StreamConfig, run_stream

    bad = cli.judging_error(args)
    if bad is not None:
        return cli.fail(cli.EXIT_INPUT, bad)
    if not args.events_dir.is_dir():
        return cli.fail(cli.EXIT_INPUT, f"events directory does not exist or is not a directory: {args.events_dir}")
    try:
        rules = AbuseRules.from_json(args.rules) if args.rules else AbuseRules()
        config = StreamConfig(
            events_dir=args.events_dir, blocklist=args.blocklist,
            checkpoint=args.checkpoint or args.blocklist.with_name(args.blocklist.name + ".checkpoint"),
            counts_dir=args.counts, rules=rules, blocklist_ttl=args.blocklist_ttl, ipv6_prefix=args.ipv6_prefix,
            window_s=args.window, slide_s=args.slide, watermark_s=args.watermark, trigger_s=args.trigger,
            max_files_per_trigger=args.max_files_per_trigger, available_now=args.available_now,
        )
        if config.blocklist.exists():
            Blocklist.load(config.blocklist)
    except (RulesError, BlocklistError, ValueError, OSError) as exc:
        return cli.fail(cli.EXIT_INPUT, str(exc))

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise SystemExit(cli.EXIT_FAILED)  # a second signal: give up waiting
        log.info("%s: stopping the stream", signal.Signals(signum).name)
        stop.set()

    try:
        spark = build_session(args.master, app_name="aeron_py-analytics-stream", log_level=args.log_level,
                              driver_memory=args.driver_memory, executor_timeout=args.executor_timeout)
    except SparkUnavailable as exc:
        return cli.fail(cli.EXIT_SPARK, str(exc))
    # After Spark starts: SparkContext installs its own SIGINT handler (cancel jobs, raise
    # KeyboardInterrupt); a signal here stops the queries between batches instead.
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        log.info("following %s -> %s (checkpoint %s)", config.events_dir, config.blocklist, config.checkpoint)
        run_stream(spark, config, stop)
    except Exception as exc:  # noqa: BLE001 - Py4J/Spark errors: report, exit non-zero
        log.debug("stream failed", exc_info=True)
        return cli.fail(cli.EXIT_FAILED, f"streaming job failed: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    finally:
        try:
            spark.stop()
        except Exception:  # noqa: BLE001 - the JVM may already be gone
            log.debug("stopping Spark failed", exc_info=True)
    print("stream stopped")
    return cli.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
