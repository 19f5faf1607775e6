"""Echo 2.0 client on asyncio: :mod:`aeron_py.asyncio` channels around the sans-I/O
:class:`~.client_core.EchoClientCore` (the same core, URIs and results as
:class:`~.client.EchoClient`).

>>> result = await AsyncEchoClient("127.0.0.1", 9000, 9001, count=5).run()

Phases as in :mod:`.client`: the initial channels connect; ``HELLO <key>`` is sent and
re-sent every ``hello_interval`` s until our CONNECT or ERROR; the duologue channels
connect; ``count`` echoes are sent one at a time, ``interval`` s apart, each checked
equal.  Every wait is bounded by ``timeout`` seconds without progress (the core's
timer), and none blocks the event loop: the embedded driver and client start on a
worker thread (``asyncio.to_thread``), Aeron waits are awaited.  A receive that times
out is cancelled, which never loses a message (see :mod:`aeron_py.asyncio.subscription`).
"""
from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import Any

from ... import asyncio as aio
from ...channel import ChannelUri
from ...driver import MediaDriver
from ...errors import AeronError, AeronTimeoutError, error_summary
from ...duologue.client_security import SHARED_KEY_HOLD, ClientKeys, ClientSecurity, ServerKeyRefused, wrong_server_key
from ...duologue.client_channels import CLOSE_LINGER, DEFAULT_TERM_LENGTH, LINGER_NS, publication_channel, source_ip
from .common import EchoResult, check_pacing
from ...duologue.core.client import EchoClientCore, Failed, OpenDuologue, random_payload
from ...duologue.core.protocol import STREAM_ID, Echoed
from ...duologue.core.secure_client import ServerKeyOffered

logger = logging.getLogger(__name__)

__all__ = ["AsyncEchoClient", "run_echo_client"]


_TICK = 0.1  # s between the core's timeout checks while a reply is awaited


class _Stop(Exception):
    """The run ended (``failure`` None: success)."""

    def __init__(self, failure: Failed | None) -> None:
        super().__init__(failure.reason if failure is not None else "done")
        self.failure = failure


class AsyncEchoClient:
    """One Echo 2.0 client on the running event loop.  Pass ``aeron`` (an
    :class:`aeron_py.asyncio.Aeron`) to share a client/driver; otherwise it embeds its own
    media driver (in ``dir`` if given, deleted afterwards) and client."""

    def __init__(self, address: str, port: int, control_port: int, *, count: int = 5, interval: float = 0.0,
                 message: bytes | str | None = None, timeout: float = 10.0, interface: str | None = None,
                 hello_interval: float = 1.0, term_length: int = DEFAULT_TERM_LENGTH,
                 aeron: aio.Aeron | None = None, dir: str | None = None, rng: random.Random | None = None,
                 secure: ClientSecurity | None = None) -> None:
        check_pacing(count, interval, hello_interval)
        self.address, self.port, self.control_port = address, port, control_port
        self.count, self.interval, self.hello_interval = count, interval, hello_interval
        self.timeout, self.interface, self.term_length = timeout, interface, term_length
        self._message = message.encode("utf-8") if isinstance(message, str) else message
        self._rng = rng
        self._security = secure
        self._core = EchoClientCore(timeout=timeout, rng=rng,
                                    secure=None if secure is None else secure.hello(address, port))
        self._keys: ClientKeys | None = None  # secure mode: the duologue's keys in the driver
        self._auth_failed = False
        self._shared = aeron
        self._dir = dir
        self._aeron: aio.Aeron | None = aeron
        self._driver: MediaDriver | None = None
        self._owned: list[aio.Publication | aio.Subscription] = []
        self._handshake: float | None = None
        self._rtts: list[float] = []

    @property
    def source_ip(self) -> str:
        """The address the server sees: ``interface``, else the kernel's route choice."""
        return source_ip(self.address, self.port, self.interface)

    async def run(self) -> EchoResult:
        """Open, handshake, echo, close.  Protocol and Aeron failures come back in the result
        (see :attr:`EchoResult.ok`); cancellation propagates after closing everything."""
        failure: Failed | None
        try:
            await self._open()
            await self._session()
            failure = None
        except _Stop as stop:
            failure = stop.failure
        except AeronError as exc:
            failure = self._core.fail(f"Aeron error: {error_summary(exc)}")
        finally:
            await self._close()
        session = self._core.duologue.session_id if self._core.duologue is not None else None
        auth_failed = self._auth_failed or (failure is not None and wrong_server_key(failure))
        return EchoResult(ok=failure is None, echoes=self._core.echoes_ok, rtts=tuple(self._rtts),
                          handshake=self._handshake, reason=None if failure is None else failure.reason,
                          server_reason=None if failure is None else failure.server_reason,
                          session_id=session, source_ip=self.source_ip, secure=self._security is not None,
                          authentication_failed=auth_failed)

    # ---- channels

    async def _open(self) -> None:
        if self._aeron is None:
            cleanup: dict[str, Any] = {} if self._dir is None else {"dir_delete_on_start": True,
                                                                     "dir_delete_on_shutdown": True}
            self._driver = await asyncio.to_thread(MediaDriver, self._dir, publication_linger_timeout_ns=LINGER_NS,
                                                   secure_transport=self._security is not None, **cleanup)
            self._aeron = await asyncio.to_thread(aio.Aeron, driver=self._driver, client_name="echo-client")
        if self._security is not None:
            self._keys = ClientKeys(self._security.transport_of(self._driver))

    async def _publication(self, port: int, session_id: int | None) -> aio.Publication:
        assert self._aeron is not None
        uri, destination = publication_channel(self.address, port, session_id=session_id,
                                               interface=self.interface, term_length=self.term_length)
        pub = await self._aeron.add_exclusive_publication(uri, STREAM_ID)
        self._owned.append(pub)
        if destination is not None:
            await pub.add_destination(destination)
        return pub

    async def _subscription(self, control_port: int, session_id: int | None) -> aio.Subscription:
        assert self._aeron is not None
        sub = await self._aeron.add_subscription(ChannelUri.udp(
            control=(self.address, control_port), control_mode="dynamic", reliable=True, session_id=session_id),
            STREAM_ID, with_header=False)
        self._owned.append(sub)
        return sub

    async def _connected(self, pub: aio.Publication, sub: aio.Subscription, what: str) -> None:
        try:
            await pub.wait_connected(self.timeout)
            await sub.wait_connected(self.timeout)
        except AeronTimeoutError:
            raise _Stop(self._core.fail(what)) from None

    def _release(self, *resources: aio.Publication | aio.Subscription) -> None:
        for resource in resources:
            self._owned.remove(resource)
            resource.close()

    async def _close(self) -> None:
        owned, self._owned = self._owned, []
        for resource in reversed(owned):
            resource.close()
        if self._shared is None and self._aeron is not None:
            if owned and not self._aeron.is_closed:
                await asyncio.sleep(CLOSE_LINGER)  # the driver sends end-of-stream for the closed publications
            self._aeron.close()
        if self._driver is not None:
            await asyncio.to_thread(self._driver.close)
        if self._keys is not None:  # a shared driver still sends the closed channels' last datagrams
            self._keys.remove(delay=SHARED_KEY_HOLD if self._shared is not None else 0.0)

    # ---- the protocol

    async def _receive(self, sub: aio.Subscription, wait: float) -> bytes | None:
        """The next message within ``wait`` seconds, else None (a timed-out receive loses nothing)."""
        try:
            async with asyncio.timeout(wait):
                return (await sub.receive()).data
        except TimeoutError:
            return None

    def _tick(self, now: float) -> None:
        failure = self._core.tick(now)
        if failure is not None:
            raise _Stop(failure)

    async def _session(self) -> None:
        pub = await self._publication(self.port, None)
        sub = await self._subscription(self.control_port, None)
        self._core.set_initial_session(pub.session_id)
        await self._connected(pub, sub, f"no server answering at {self.address} port {self.port} control "
                                        f"{self.control_port}: channels not connected within {self.timeout:g} s")
        duologue = await self._hello(pub, sub)
        self._release(pub, sub)  # the broadcast channel is no longer needed: free it (and the server's fan-out)
        if duologue.keys is not None:
            assert self._keys is not None
            self._keys.install(duologue.keys)  # before the channels: no datagram of theirs goes unsealed
        dsub = await self._subscription(duologue.control_port, duologue.session_id)
        dpub = await self._publication(duologue.data_port, duologue.publication_session)
        await self._connected(dpub, dsub, f"duologue {duologue.session_id} not connected within {self.timeout:g} s")
        for i in range(self.count):
            if i and self.interval:
                await asyncio.sleep(self.interval)
            await self._echo(dpub, dsub)
        self._core.finish()

    async def _hello(self, pub: aio.Publication, sub: aio.Subscription) -> OpenDuologue:
        first = time.monotonic()
        next_hello = first
        while True:
            now = time.monotonic()
            if now >= next_hello:
                await pub.offer(self._core.hello(), timeout=self.timeout)
                next_hello = now + self.hello_interval
            self._tick(now)
            data = await self._receive(sub, max(0.001, min(_TICK, next_hello - time.monotonic())))
            if data is None:
                continue
            reply = self._core.initial_reply(data, time.monotonic())
            if isinstance(reply, ServerKeyOffered):
                self._trust(reply)
                next_hello = time.monotonic()  # the HELLO-SECURE goes at once
                continue
            if isinstance(reply, Failed):
                raise _Stop(reply)
            if isinstance(reply, OpenDuologue):
                self._handshake = time.monotonic() - first
                return reply

    def _trust(self, offer: ServerKeyOffered) -> None:
        """Secure mode, no key known: record the server's key (trust on first use), or stop."""
        assert self._security is not None and self._core.secure is not None
        try:
            self._security.offered(self.address, self.port, offer.public_key)
        except ServerKeyRefused as exc:
            self._auth_failed = True
            raise _Stop(self._core.fail(f"not trusting the server's key: {exc}")) from None
        self._core.secure.trust(offer.public_key)

    async def _echo(self, pub: aio.Publication, sub: aio.Subscription) -> None:
        payload = self._message if self._message is not None else random_payload(self._rng)
        echo = self._core.next_echo(payload, time.monotonic())
        sent = time.monotonic()
        await pub.offer(echo, timeout=self.timeout)
        while True:
            data = await self._receive(sub, _TICK)
            now = time.monotonic()
            if data is None:
                self._tick(now)
                if not sub.is_connected:
                    raise _Stop(self._core.fail("the server closed the duologue"))
                continue
            reply = self._core.duologue_reply(data, now)
            if isinstance(reply, Failed):
                raise _Stop(reply)
            if isinstance(reply, Echoed):
                self._rtts.append(now - sent)
                return


async def run_echo_client(address: str, port: int, control_port: int, **options: Any) -> EchoResult:
    """``AsyncEchoClient(address, port, control_port, **options).run()``."""
    return await AsyncEchoClient(address, port, control_port, **options).run()
