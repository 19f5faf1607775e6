"""``python -m aeron_py.echo.client``: the Echo 2.0 client command line (:mod:`.cli`)."""
import sys

from .cli import main

sys.exit(main())
