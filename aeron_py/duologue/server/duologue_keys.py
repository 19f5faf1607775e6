"""Secure mode: the keys of each secure duologue in the driver's secure transport.

A secure duologue (docs/spec/echo2.md §5) has two keyed sessions: the client's
publication (``client_session``, opened on the duologue's data port) and the server's
(``server_session``, sealed by this driver).  :class:`DuologueKeyring` installs both
before the duologue's channels are asked for, so not one datagram of either session
passes unsealed, and has them removed once the channels are surely gone
(:meth:`~aeron_py.secure.SecureTransport.remove_later`): a closed publication still
sends its last replies (up to ``send_timeout``), lingers and ends its stream; a closed
subscription's image drains for about a second.  Until then the keys stay, so those
last datagrams are sealed and opened like the others.  A session id handed out again
before that cancels the removal (the new key replaces the old).  The data ports stay
secured ports after their duologue: only secure duologues ever use them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...secure import Role
from ..core.protocol import STREAM_ID

if TYPE_CHECKING:
    from ...secure import SecureTransport
    from ..core.contract import CreateDuologue

__all__ = ["DuologueKeyring"]

#: (role, session id, port) of one keyed session of a duologue.
_Identity = tuple[Role, int, int | None]


class DuologueKeyring:
    """The keys of the live secure duologues, by duologue session."""

    def __init__(self, transport: SecureTransport, hold: float) -> None:
        self._transport = transport
        self._hold = hold  # seconds from a duologue's close until its channels are surely gone
        self._live: dict[int, tuple[_Identity, ...]] = {}  # duologue session -> its keyed sessions

    def __len__(self) -> int:
        """Secure duologues with keys installed."""
        return len(self._live)

    def install(self, action: CreateDuologue) -> None:
        """Install both keys of a secure duologue (nothing for a plain one); raises what
        :meth:`~aeron_py.secure.SecureTransport.add` raises, with nothing left installed."""
        keys = action.keys
        if keys is None:
            return
        identities: tuple[_Identity, ...] = ((Role.SUBSCRIPTION, keys.client_session, action.data_port),
                                             (Role.PUBLICATION, keys.server_session, None))
        installed: list[_Identity] = []
        try:
            for identity, key in zip(identities, (keys.client_send_key, keys.server_send_key)):
                role, session, port = identity
                self._transport.add(role, stream_id=STREAM_ID, session_id=session, key=key, port=port)
                installed.append(identity)
        except BaseException:
            for role, session, port in installed:
                self._transport.remove(role, stream_id=STREAM_ID, session_id=session, port=port)
            raise
        self._live[action.session_id] = identities

    def retire(self, session: int) -> None:
        """Duologue ``session`` was closed: its keys go once its channels are surely gone."""
        for role, key_session, port in self._live.pop(session, ()):
            self._transport.remove_later(role, stream_id=STREAM_ID, session_id=key_session, port=port,
                                         delay=self._hold)
