"""``python -m aeron_py.echo_client``: the Echo 2.0 client's command line, :mod:`aeron_py.echo.client.cli`."""
from __future__ import annotations

import sys

from .echo.client.cli import main

if __name__ == "__main__":
    sys.exit(main())
