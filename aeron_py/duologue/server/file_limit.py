"""The server's open-file budget: each duologue holds two UDP sockets in the driver.

At a few thousand duologues the default soft ``RLIMIT_NOFILE`` (often 1,024) runs out
long before memory or CPU does, and the symptom is a driver error deep in a channel
add.  :func:`ensure_file_limit` raises the soft limit towards the need (never above the
hard limit, which only root can raise) and says plainly when the need cannot be met.
"""
from __future__ import annotations

import logging

import resource

logger = logging.getLogger(__name__)


def ensure_file_limit(needed: int) -> int:
    """Raise the soft open-file limit to at least ``needed`` if the hard limit allows.

    Returns the soft limit in force afterwards; logs a warning when it is below
    ``needed`` (the server then refuses duologues once descriptors run out)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            logger.warning("cannot raise the open-file limit from %d to %d: %s", soft, target, exc)
    if soft != resource.RLIM_INFINITY and soft < needed:
        logger.warning("open-file limit %d is below the %d that --clients needs (2 sockets per "
                       "duologue): raise the hard limit (ulimit -Hn) or lower --clients", soft, needed)
    return int(soft)
