"""``python -m aeron_py.echo.server``: the Echo 2.0 server command line (:mod:`.cli`)."""
import sys

from .cli import main

sys.exit(main())
