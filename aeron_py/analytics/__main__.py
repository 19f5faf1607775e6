"""Command line of the analytics job: ``python -m aeron_py.analytics --help``."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from aeron_py.analytics import cli_options as cli
from aeron_py.duologue.blocklist import Blocklist, BlocklistError

__all__ = ["main"]

DESCRIPTION = """\
Analyse Echo 2.0 server telemetry (JSON Lines written by aeron_py.telemetry) with
PySpark: who connects, who gets rejected and why, what the transport does, and which
client addresses behave abusively. Flagged addresses are merged into a blocklist file
the server enforces.

Reads every *.jsonl file directly in EVENTS_DIR (lines that do not parse are counted
as malformed, never fatal). Writes into REPORT_DIR:
  report.html       one self-contained page: summary, verdicts, plots, tables
  report.json       counts (lines, malformed, per kind), time range, verdicts, ...
  blocklist.txt     flagged source keys merged into the existing list (see --blocklist)
  per_ip/ verdicts/ timeseries/ driver_counters/ driver_loss/ driver_errors/ rtt/
                    Parquet tables (read with spark.read.parquet or pyarrow)
  plot_*.png        the plots of report.html
"""

EPILOG = """\
streaming mode (continuous defence): python -m aeron_py.analytics EVENTS_DIR --follow
--blocklist FILE [...]; see `python -m aeron_py.analytics EVENTS_DIR --follow --help`.

examples:
  # make some test data, analyse it on this machine, open the report
  python -m aeron_py.analytics.generate --out /tmp/events --events 100000
  python -m aeron_py.analytics /tmp/events --out /tmp/report
  xdg-open /tmp/report/report.html

  # on a Spark standalone cluster (EVENTS_DIR and REPORT_DIR must be visible to
  # the workers at the same path, e.g. a shared mount)
  python -m aeron_py.analytics /shared/events --out /shared/report --master spark://10.0.0.5:7077

  # under spark-submit, master and resources come from spark-submit (aeron_py must
  # be importable there: installed, or on PYTHONPATH)
  spark-submit --master spark://10.0.0.5:7077 /path/to/aeron_py/analytics/__main__.py /shared/events --out /shared/report

rules file (JSON, any subset; null disables a rule), defaults shown:
  {"min_hellos_without_connect": 20, "max_bad_messages": 5,
   "max_wrong_ip_connects": 3, "max_reject_rate": 0.5, "min_hellos": 20}
  see the aeron_py.analytics.rules docstring for what each rule means.

exit codes: 0 done; 1 the Spark job failed; 2 bad input (missing or empty EVENTS_DIR,
bad rules or blocklist file, bad option); 3 Spark unavailable (master unreachable or
no executor registered in time).
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m aeron_py.analytics",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("events_dir", metavar="EVENTS_DIR", type=Path, help="directory of *.jsonl telemetry files")
    parser.add_argument("--out", required=True, metavar="REPORT_DIR", type=Path,
                        help="directory for the report and tables (created; tables are overwritten)")
    parser.add_argument("--master", metavar="URL",
                        help="Spark master: local[N], local[*] or spark://HOST:PORT "
                             "(default: spark-submit's, else local[*] inside this process)")
    parser.add_argument("--rules", metavar="RULES.json", type=Path, help="abuse rule thresholds (JSON, see below)")
    parser.add_argument("--blocklist", metavar="FILE", type=Path,
                        help="blocklist to merge verdicts into, rewritten atomically "
                             "(default REPORT_DIR/blocklist.txt); point it at the server's file")
    cli.add_judging_options(parser, ". Source addresses can be spoofed: prefer expiring entries")
    cli.add_spark_options(parser, driver_memory="2g")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code. ``--follow`` selects the streaming job."""
    argv = sys.argv[1:] if argv is None else argv
    if "--follow" in argv:
        from aeron_py.analytics.stream_cli import main as follow

        return follow(argv)
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("aeron_py.analytics")
    bad = cli.judging_error(args)
    if bad is not None:
        return cli.fail(cli.EXIT_INPUT, bad)

    # Everything that can be wrong with the input is checked before Spark starts.
    from aeron_py.analytics.job import InputError, JobConfig, check_events_dir, run_job
    from aeron_py.analytics.rules import AbuseRules, RulesError
    from aeron_py.analytics.session import SparkUnavailable, build_session

    try:
        check_events_dir(args.events_dir)
        rules = AbuseRules.from_json(args.rules) if args.rules else AbuseRules()
        config = JobConfig(
            events_dir=args.events_dir, out_dir=args.out, rules=rules, blocklist_path=args.blocklist,
            blocklist_ttl=args.blocklist_ttl, ipv6_prefix=args.ipv6_prefix,
        )
        if config.blocklist.exists():
            Blocklist.load(config.blocklist)
    except (InputError, RulesError, BlocklistError, OSError) as exc:
        return cli.fail(cli.EXIT_INPUT, str(exc))

    try:
        spark = build_session(
            args.master, log_level=args.log_level, driver_memory=args.driver_memory,
            executor_timeout=args.executor_timeout,
        )
    except SparkUnavailable as exc:
        return cli.fail(cli.EXIT_SPARK, str(exc))
    try:
        report = run_job(spark, config)
    except (InputError, BlocklistError) as exc:
        return cli.fail(cli.EXIT_INPUT, str(exc))
    except Exception as exc:  # noqa: BLE001 - Py4J/Spark errors: report, exit non-zero
        log.debug("job failed", exc_info=True)
        return cli.fail(cli.EXIT_FAILED, f"analytics job failed: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    finally:
        try:
            spark.stop()
        except Exception:  # noqa: BLE001 - the JVM may already be gone (e.g. out of memory)
            log.debug("stopping Spark failed", exc_info=True)
    print(
        f"{report['lines']['ok']} events, {report['malformed_lines']} malformed lines, "
        f"{report['clients']['flagged']} source keys flagged; report: {args.out / 'report.html'}"
    )
    return cli.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
