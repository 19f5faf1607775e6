"""The Echo 2.0 clients: Aeron channels around the sans-I/O :class:`~aeron_py.echo.core.client.EchoClientCore`.

* :mod:`.sync` - :class:`EchoClient`, step-driven (one thread can drive many);
* :mod:`.async_client` - :class:`~.async_client.AsyncEchoClient` on :mod:`aeron_py.asyncio`;
* :mod:`.cli` - ``python -m aeron_py.echo.client`` (also ``python -m aeron_py.echo_client``).
"""
from __future__ import annotations

from .sync import (
    DEFAULT_TERM_LENGTH,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_SERVER_ERROR,
    HOLD_CHECK_INTERVAL,
    EchoClient,
    EchoClientError,
    EchoResult,
    Phase,
    publication_channel,
)

__all__ = ["DEFAULT_TERM_LENGTH", "EXIT_FAILED", "EXIT_OK", "EXIT_SERVER_ERROR", "HOLD_CHECK_INTERVAL",
           "EchoClient", "EchoClientError", "EchoResult", "Phase", "publication_channel"]
