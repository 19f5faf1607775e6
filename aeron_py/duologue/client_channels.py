"""A duologue client's channels: :class:`ClientChannels` (the Aeron side of one client: an
embedded media driver and client, or a shared client, or a client of a same-host server's
driver over IPC; the publications and subscriptions made for it; a secure duologue's keys;
and the order they are closed in), the URIs of its publications, and the address a server sees.

:func:`publication_channel` makes a client publication's URI, sending from a chosen local
address through a manual-MDC publication when ``interface`` is given (Aeron's own
``interface=`` only accepts addresses configured on a network interface); :func:`source_ip`
is the address the server will count the client under.
"""
from __future__ import annotations

import socket
import time
from typing import Any

from ..channel import ChannelUri
from ..client import Aeron
from ..driver import MediaDriver
from ..publication import ExclusivePublication
from ..subscription import Subscription
from .client_security import SHARED_KEY_HOLD, ClientKeys, ClientSecurity
from .core.client import OpenDuologue
from .core.protocol import IPC_BROADCAST_STREAM, IPC_HELLO_STREAM, STREAM_ID

__all__ = ["CLOSE_LINGER", "DEFAULT_TERM_LENGTH", "LINGER_NS", "ClientChannels", "publication_channel", "source_ip"]

#: Term length of a client's publications (Aeron's minimum; messages are <= 1 KiB).
DEFAULT_TERM_LENGTH = 64 * 1024


def publication_channel(address: str, port: int, *, session_id: int | None = None, interface: str | None = None,
                        term_length: int | None = None) -> tuple[ChannelUri, ChannelUri | None]:
    """A client publication to ``address:port``: its URI, and the destination to add to
    it when it sends from ``interface`` (a manual-MDC publication)."""
    if interface is None:
        return ChannelUri.udp(endpoint=(address, port), reliable=True, session_id=session_id,
                              term_length=term_length), None
    uri = ChannelUri.udp(control=(interface, 0), control_mode="manual", reliable=True, session_id=session_id,
                         term_length=term_length)
    return uri, ChannelUri.udp(endpoint=(address, port))



def source_ip(address: str, port: int, interface: str | None = None) -> str:
    """The address a server at ``address:port`` sees: ``interface``, else the kernel's route choice."""
    if interface is not None:
        return interface
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:  # connect() sends nothing
        probe.connect((address, port))
        return str(probe.getsockname()[0])


#: Publication linger of an embedded driver (ns): long enough to send end of stream.
LINGER_NS = 100_000_000
#: Seconds an embedded driver stays up after its channels close, to send end of stream
#: (the server then frees the duologue at once instead of after image liveness).
CLOSE_LINGER = 0.15

Channel = ExclusivePublication | Subscription


class ClientChannels:
    """The Aeron side of one client of ``address:port`` (control ``control_port``).

    ``aeron``: a shared client (its owner drives and closes it); else :meth:`open` starts
    an embedded media driver (in ``dir`` if given, deleted afterwards; with a secure
    transport when ``security`` is set) and a client, in conductor-invoker mode when
    ``invoker`` (then :meth:`work` runs its duty cycle: a step-driven owner calls it) or
    with its own conductor thread.  ``interface`` binds the publications to a local
    address (see :func:`~.client_channels.publication_channel`).

    :meth:`ipc` makes the channels of a same-host client instead: a client of the
    server's own media driver (in ``aeron_dir``), its channels ``aeron:ipc``, its
    "ports" the streams the server names.
    """

    def __init__(self, address: str, port: int, control_port: int, *, interface: str | None = None,
                 term_length: int = DEFAULT_TERM_LENGTH, aeron: Aeron | None = None, dir: str | None = None,
                 security: ClientSecurity | None = None, invoker: bool = True,
                 client_name: str = "echo-client") -> None:
        self.address, self.port, self.control_port = address, port, control_port
        self.interface, self.term_length = interface, term_length
        self._shared = aeron
        self._aeron: Aeron | None = aeron
        self._dir = dir
        self._security = security
        self._invoker = invoker
        self._client_name = client_name
        self._driver: MediaDriver | None = None
        self._keys: ClientKeys | None = None
        self._owned: list[Channel] = []
        self._closed = False
        self._ipc_dir: str | None = None

    @classmethod
    def ipc(cls, aeron_dir: str, *, term_length: int = DEFAULT_TERM_LENGTH, aeron: Aeron | None = None,
            invoker: bool = True, client_name: str = "duologue-client") -> ClientChannels:
        """The channels of a same-host client of the server whose media driver is in
        ``aeron_dir``: HELLO on stream ``IPC_HELLO_STREAM``, replies on
        ``IPC_BROADCAST_STREAM``, the duologue on the streams of its CONNECT; ``aeron``: a
        shared client of that driver instead of one of our own."""
        channels = cls("ipc", IPC_HELLO_STREAM, IPC_BROADCAST_STREAM, term_length=term_length, aeron=aeron,
                       invoker=invoker, client_name=client_name)
        channels._ipc_dir = aeron_dir
        return channels

    @property
    def peer(self) -> str:
        """The server, in words: ``address:port`` or the IPC driver directory."""
        return f"the IPC server of {self._ipc_dir}" if self._ipc_dir is not None else f"{self.address}:{self.port}"

    @property
    def where(self) -> str:
        """The server's all-clients channels, in words (for errors)."""
        if self._ipc_dir is not None:
            return f"IPC through the media driver in {self._ipc_dir}"
        return f"{self.address} port {self.port} control {self.control_port}"

    @property
    def aeron(self) -> Aeron:
        """The client in use (after :meth:`open`)."""
        if self._aeron is None:
            raise RuntimeError("ClientChannels.open() was not called")
        return self._aeron

    @property
    def shared(self) -> bool:
        """Whether the Aeron client is someone else's."""
        return self._shared is not None

    @property
    def secure(self) -> bool:
        return self._security is not None

    @property
    def closed(self) -> bool:
        return self._closed

    def open(self) -> None:
        """Start the embedded driver and client (unless shared), and the key holder of
        secure mode (ValueError: a shared client without a secure transport)."""
        if self._aeron is None and self._ipc_dir is not None:
            self._aeron = Aeron(self._ipc_dir, use_conductor_agent_invoker=self._invoker,
                                client_name=self._client_name)
        if self._aeron is None:
            cleanup: dict[str, Any] = ({} if self._dir is None
                                       else {"dir_delete_on_start": True, "dir_delete_on_shutdown": True})
            self._driver = MediaDriver(self._dir, publication_linger_timeout_ns=LINGER_NS,
                                       secure_transport=self._security is not None, **cleanup)
            try:
                self._aeron = Aeron(driver=self._driver, use_conductor_agent_invoker=self._invoker,
                                    client_name=self._client_name)
            except BaseException:
                self._driver.close()
                self._driver = None
                raise
        if self._security is not None and self._keys is None:
            self._keys = ClientKeys(self._security.transport_of(self._driver))

    def work(self) -> int:
        """One duty cycle of the embedded client's conductor in invoker mode (else 0)."""
        if self._shared is not None or not self._invoker or self._aeron is None or self._aeron.is_closed:
            return 0
        return self._aeron.do_work()

    def publication(self, port: int, session_id: int | None) -> ExclusivePublication:
        """An exclusive publication to ``address:port`` (from ``interface`` if set); IPC: on stream ``port``."""
        if self._ipc_dir is not None:
            pub = self.aeron.add_exclusive_publication(
                ChannelUri.ipc(session_id=session_id, term_length=self.term_length), port)
            self._owned.append(pub)
            return pub
        uri, destination = publication_channel(self.address, port, session_id=session_id,
                                               interface=self.interface, term_length=self.term_length)
        pub = self.aeron.add_exclusive_publication(uri, STREAM_ID)
        self._owned.append(pub)
        if destination is not None:
            pub.add_destination(destination)
        return pub

    def subscription(self, control_port: int, session_id: int | None) -> Subscription:
        """An MDC subscription to the server's publication via ``address:control_port``; IPC: on
        stream ``control_port``."""
        if self._ipc_dir is not None:
            ipc_sub = self.aeron.add_subscription(ChannelUri.ipc(session_id=session_id), control_port)
            self._owned.append(ipc_sub)
            return ipc_sub
        sub = self.aeron.add_subscription(ChannelUri.udp(
            control=(self.address, control_port), control_mode="dynamic", reliable=True,
            session_id=session_id), STREAM_ID)
        self._owned.append(sub)
        return sub

    def install(self, duologue: OpenDuologue) -> None:
        """Secure mode: the duologue's keys into the driver, before its channels exist."""
        if duologue.keys is None:
            return
        if self._keys is None:
            raise RuntimeError("a secure duologue needs ClientChannels(security=...) opened")
        self._keys.install(duologue.keys)

    def release(self, *resources: Channel | None) -> None:
        """Close some of the channels made here now (the rest close with :meth:`close`)."""
        for resource in resources:
            if resource is not None and resource in self._owned:
                self._owned.remove(resource)
                resource.close()

    def close(self) -> None:
        """Close the channels, then (if embedded) the client once end of stream is out, the
        secure keys (a shared driver keeps them :data:`SHARED_KEY_HOLD` s more, for the
        closed channels' last datagrams) and the driver.  Idempotent."""
        if self._closed:
            return
        self._closed = True
        owned, self._owned = self._owned, []
        try:
            for resource in reversed(owned):
                resource.close()
            if self._shared is None and self._aeron is not None:
                if owned and self._driver is not None and not self._aeron.is_closed:
                    self._linger()  # an IPC client's end of stream is in the shared log already
                self._aeron.close()
        finally:
            if self._keys is not None:
                self._keys.remove(delay=SHARED_KEY_HOLD if self._shared is not None else 0.0)
            if self._driver is not None:
                self._driver.close()

    def _linger(self) -> None:
        """Keep the embedded driver up :data:`CLOSE_LINGER` s so the closed publications
        send end of stream (running the conductor in invoker mode meanwhile)."""
        deadline = time.monotonic() + CLOSE_LINGER
        while (left := deadline - time.monotonic()) > 0:
            self.work()
            time.sleep(min(0.005, left))
