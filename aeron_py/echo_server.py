"""Echo 2.0 server command line: ``python -m aeron_py.echo_server`` (also ``python -m aeron_py.echo.server``).

Moved to :mod:`aeron_py.echo.server.cli`; this import path stays for existing code.
"""
from __future__ import annotations

from .echo.server.cli import (  # noqa: F401
    DEFAULTS, main, parser, settings,
)

__all__ = [
    "DEFAULTS", "main", "parser", "settings",
]

if __name__ == "__main__":
    import sys

    sys.exit(main())
