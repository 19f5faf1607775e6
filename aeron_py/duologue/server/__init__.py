"""The duologue server's glue: moves bytes between Aeron, the sans-I/O core and the application.

:class:`~.loop.DuologueServer` runs the loop; :mod:`.application` hands each duologue's
messages to the application and its answers back to the core. The collaborators, one job
each: :mod:`.channels` (channel creation, outboxes, ports still bound), :mod:`.image_admission`
(image events), :mod:`.message_polling`, :mod:`.dispatch` (executes the core's actions),
:mod:`.endpoint_guard` (the driver's endpoint filter), :mod:`.blocklist_watch` and
:mod:`.blocklist_enforcement`, :mod:`.lifecycle` (driver, client, shutdown), :mod:`.telemetry`.
"""
from __future__ import annotations

from .lifecycle import DriverLostError
from .loop import DEFAULT_TERM_LENGTH, SNAPSHOT_COUNTERS, DuologueServer
from .options import ServerOptions

__all__ = ["DEFAULT_TERM_LENGTH", "SNAPSHOT_COUNTERS", "DriverLostError", "DuologueServer", "ServerOptions"]
