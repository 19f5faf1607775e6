"""Options and input checks the batch and the streaming command lines share."""

from __future__ import annotations

import argparse
import sys

__all__ = [
    "EXIT_FAILED", "EXIT_INPUT", "EXIT_OK", "EXIT_SPARK", "add_judging_options", "add_spark_options", "fail",
    "judging_error",
]

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_SPARK = 0, 1, 2, 3


def add_judging_options(parser: argparse.ArgumentParser, ttl_note: str = "") -> None:
    """``--blocklist-ttl`` and ``--ipv6-prefix`` (check them with :func:`judging_error`)."""
    parser.add_argument("--blocklist-ttl", metavar="SECONDS", type=float, default=3600.0,
                        help="lifetime of new blocklist entries (default 3600; 0 = never expire)" + ttl_note)
    parser.add_argument("--ipv6-prefix", metavar="BITS", type=int, default=64,
                        help="IPv6 addresses are judged per network of this prefix length (default 64)")


def add_spark_options(parser: argparse.ArgumentParser, driver_memory: str) -> None:
    """``--log-level``, ``--driver-memory`` (default ``driver_memory``), ``--executor-timeout``."""
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="log level of this tool (Spark logs one level quieter; default INFO)")
    parser.add_argument("--driver-memory", default=driver_memory, metavar="SIZE",
                        help=f"JVM heap of the embedded Spark driver (local masters only; default {driver_memory})")
    parser.add_argument("--executor-timeout", metavar="SECONDS", type=float, default=60.0,
                        help="spark:// only: give up if no executor registers within this time (default 60)")


def judging_error(args: argparse.Namespace) -> str | None:
    """What is wrong with ``--ipv6-prefix`` / ``--blocklist-ttl``, or None."""
    if not 0 <= args.ipv6_prefix <= 128:
        return f"--ipv6-prefix must be in [0, 128], got {args.ipv6_prefix}"
    if args.blocklist_ttl < 0:
        return f"--blocklist-ttl must be >= 0, got {args.blocklist_ttl:g}"
    return None


def fail(code: int, message: str) -> int:
    """Print ``error: message`` to stderr; return ``code`` (the exit code)."""
    print(f"error: {message}", file=sys.stderr)
    return code
