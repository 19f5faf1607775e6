"""``python -m aeron_py.echo.load``: the Echo 2.0 load generator command line (:mod:`.generator`)."""
import sys

from .generator import main

sys.exit(main())
