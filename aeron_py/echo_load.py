"""Echo 2.0 load generator command line: ``python -m aeron_py.echo_load`` (also ``python -m aeron_py.echo.load``).

Moved to :mod:`aeron_py.echo.load.generator`; this import path stays for existing code.
"""
from __future__ import annotations

from .echo.load.generator import (  # noqa: F401
    LoadReport, StopFlag, main, parser, percentile, run_load, write_events, write_png,
)

__all__ = [
    "LoadReport", "StopFlag", "main", "parser", "percentile", "run_load", "write_events",
    "write_png",
]

if __name__ == "__main__":
    import sys

    sys.exit(main())
