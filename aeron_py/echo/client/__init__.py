"""The Echo 2.0 clients: Aeron channels around the sans-I/O :class:`~aeron_py.duologue.core.client.EchoClientCore`
(their channels and secure mode are the duologue layer's: :mod:`aeron_py.duologue.client_channels`,
:mod:`aeron_py.duologue.client_security`).

* :mod:`.sync` - :class:`EchoClient`, step-driven (one thread can drive many);
* :mod:`.common` - what both share: :class:`EchoResult`, the exit codes, the pacing check;
* :mod:`.async_client` - :class:`~.async_client.AsyncEchoClient` on :mod:`aeron_py.asyncio`;
* :mod:`.cli` - ``python -m aeron_py.echo.client`` (also ``python -m aeron_py.echo_client``).
"""
from __future__ import annotations

from .common import EXIT_AUTHENTICATION, EXIT_FAILED, EXIT_OK, EXIT_SERVER_ERROR, EchoClientError, EchoResult
from .sync import HOLD_CHECK_INTERVAL, EchoClient, Phase

__all__ = ["EXIT_AUTHENTICATION", "EXIT_FAILED", "EXIT_OK", "EXIT_SERVER_ERROR", "HOLD_CHECK_INTERVAL", "EchoClient",
           "EchoClientError", "EchoResult", "Phase"]
