"""``python -m aeron_py.echo_load``: the Echo 2.0 load generator's command line, :mod:`aeron_py.echo.load.generator`."""
from __future__ import annotations

import sys

from .echo.load.generator import main

if __name__ == "__main__":
    sys.exit(main())
