"""The Echo 2.0 clients: Aeron channels around the sans-I/O :class:`~aeron_py.echo.core.client.EchoClientCore`.

* :mod:`.sync` - :class:`EchoClient`, step-driven (one thread can drive many);
* :mod:`.common` - what both share: :class:`EchoResult`, the exit codes, the channel URIs;
* :mod:`.security` - secure mode: :class:`ClientSecurity` (which server key), the duologue's keys;
* :mod:`.async_client` - :class:`~.async_client.AsyncEchoClient` on :mod:`aeron_py.asyncio`;
* :mod:`.cli` - ``python -m aeron_py.echo.client`` (also ``python -m aeron_py.echo_client``).
"""
from __future__ import annotations

from .common import (
    DEFAULT_TERM_LENGTH,
    EXIT_AUTHENTICATION,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_SERVER_ERROR,
    EchoClientError,
    EchoResult,
    publication_channel,
)
from .security import ClientSecurity, ServerKeyRefused
from .sync import HOLD_CHECK_INTERVAL, EchoClient, Phase

__all__ = ["ClientSecurity", "DEFAULT_TERM_LENGTH", "EXIT_AUTHENTICATION", "EXIT_FAILED", "EXIT_OK", "EXIT_SERVER_ERROR", "HOLD_CHECK_INTERVAL",
           "EchoClient", "EchoClientError", "EchoResult", "Phase", "ServerKeyRefused", "publication_channel"]
