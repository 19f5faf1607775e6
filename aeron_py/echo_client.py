"""Echo 2.0 client command line: ``python -m aeron_py.echo_client`` (also ``python -m aeron_py.echo.client``).

Moved to :mod:`aeron_py.echo.client.cli`; this import path stays for existing code.
"""
from __future__ import annotations

from .echo.client.cli import (  # noqa: F401
    main, parser,
)

__all__ = [
    "main", "parser",
]

if __name__ == "__main__":
    import sys

    sys.exit(main())
