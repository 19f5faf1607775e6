"""``python -m aeron_py.echo_server``: the Echo 2.0 server's command line, :mod:`aeron_py.echo.server.cli`."""
from __future__ import annotations

import sys

from .echo.server.cli import main

if __name__ == "__main__":
    sys.exit(main())
