"""The Aeron Archive client: record streams, list recordings, replay them.

>>> with Aeron(driver=driver) as aeron, AeronArchive.connect(aeron) as archive:
...     subscription_id = archive.start_recording("aeron:ipc", 10)
...     ...  # publish on aeron:ipc stream 10: the Archive records it
...     archive.stop_recording(subscription_id)
...     recording = archive.list_recordings()[-1]
...     replay = archive.replay(recording.recording_id, "aeron:ipc", 20)
...     replay.poll(handler, 10)   # the recorded messages, from the start

The Archive itself is Aeron's Java ``Archive`` (there is no C archive server) running on
the same media driver as this client or on another one; this is Aeron's C archive client
(``aeron_archive.h``), linked into the extension. Every call sends one request and waits
for its answer, bounded by ``message_timeout``, with the GIL released; calls from several
threads take turns. Refusals raise the typed exceptions of :mod:`aeron_py.archive.errors`.
"""
from __future__ import annotations

import collections
import logging
import os
import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

from .._aeron import archive as _native
from ..channel import ChannelUri
from ..client import Aeron
from ..validation import require_int
from ..errors import AeronError
from ..publication import ExclusivePublication, Publication
from ..subscription import Subscription
from .errors import (ArchiveClosedError, ArchiveError, ArchiveTimeoutError, AuthenticationRejectedError,
                     UnknownRecordingError, translate, typed)
from .settings import (DEFAULT_MESSAGE_TIMEOUT_S, DEFAULT_RECORDING_EVENTS_CHANNEL, DEFAULT_RECORDING_EVENTS_STREAM_ID,
                       channel_text, control_options, control_tuning, credential_options, idle_options, or_env)
from .records import (RecordingDescriptor, RecordingSignalEvent, RecordingSubscription, SourceLocation)
from .replay_merge import DEFAULT_PROGRESS_TIMEOUT_S, ReplayMerge

logger = logging.getLogger(__name__)
T = TypeVar("T")

#: Signals kept for :meth:`AeronArchive.poll_recording_signals` when no callback takes them.
MAX_KEPT_SIGNALS = 4096
#: A UDP endpoint with port 0 in a channel (``endpoint=HOST:0``): bound before a replay is asked for.
_ANY_PORT = re.compile(r"endpoint=[^|]*:0(?:\||$)")
#: How long a replay channel's port 0 may take to be bound.
RESOLVE_TIMEOUT_S = 5.0
#: ``length=`` of a replay that follows a live recording (``INT64_MAX``).
FOLLOW = (1 << 63) - 1

SignalHandler = Callable[[RecordingSignalEvent], Any]
ErrorHandler = Callable[[int, str], Any]


def _log_error(errcode: int, message: str) -> None:
    logger.warning("aeron archive error %d: %s", errcode, message)


def _optional(value: int | None, null: int = -1) -> int:
    return null if value is None else value


class AeronArchive:
    """One client's connection to an Aeron Archive (``aeron_archive_t``). Make it with
    :meth:`connect`; close it with :meth:`close` (or ``with``), or it closes with its client.

    ``on_recording_signal(event)``: called on the thread that made a call, after the call,
    for every recording signal the Archive sent meanwhile; without it, the last
    ``MAX_KEPT_SIGNALS`` wait for :meth:`poll_recording_signals`. ``error_handler(errcode,
    message)``: errors the Archive sent for no call in progress (default: logged).
    """

    def __init__(self, raw: _native.Archive, aeron: Aeron, on_recording_signal: SignalHandler | None,
                 error_handler: ErrorHandler | None) -> None:
        self._raw = raw
        self._aeron = aeron  # kept alive: the connection uses its client
        self._on_signal = on_recording_signal
        self._on_error = error_handler
        self._signals: collections.deque[RecordingSignalEvent] = collections.deque(maxlen=MAX_KEPT_SIGNALS)

    @classmethod
    def connect(cls, aeron: Aeron, *, control_channel: object | None = None,
                control_stream_id: int | None = None, response_channel: object | None = None,
                response_stream_id: int | None = None, recording_events_channel: object | None = None,
                recording_events_stream_id: int | None = None, message_timeout: float | None = None,
                client_name: str = "", on_recording_signal: SignalHandler | None = None,
                error_handler: ErrorHandler | None = _log_error, control_term_length: int | None = None,
                control_mtu: int | None = None, control_sparse: bool | None = None,
                message_retry_attempts: int | None = None, idle_strategy: str | None = None,
                credentials: bytes | None = None,
                on_challenge: Callable[[bytes], bytes] | None = None) -> "AeronArchive":
        """Connect to the Archive listening on ``control_channel`` (``aeron_archive_connect``).

        Unset channels and stream ids take their ``AERON_ARCHIVE_*`` environment variable
        (the names of Aeron's C client), else Aeron's default (``DEFAULT_*`` here). ``response_channel``: where the Archive answers this
        client (port 0: any free port). ``message_timeout`` (s): how long each request waits
        for its answer, the connect included. Raises :class:`ArchiveTimeoutError` when no
        Archive answers, :class:`~aeron_py.errors.AeronError` for bad settings.

        The control streams (this client's request publication and response subscription):
        ``control_term_length`` (a power of two, 64 KiB to 1 GiB), ``control_mtu`` (a multiple
        of 32, 32 to 65504) and ``control_sparse`` (sparse term files); ``message_retry_attempts``:
        how many times a request is offered before it fails. None keeps Aeron's default.

        ``idle_strategy``: how a call waits for its answer, one of Aeron's idle strategies
        (``"sleeping"``, ``"yield"``, ``"backoff"``, ``"noop"``, ``"spin"``; ``"name:args"`` passes
        arguments, e.g. ``"sleeping:1ms"``); None: Aeron's ``backoff`` (or the
        ``AERON_ARCHIVE_IDLE_STRATEGY`` environment variable).

        ``credentials``: sent with the connect to an Archive that authenticates;
        ``on_challenge(challenge) -> bytes`` answers the Archive's challenge, if it sends one
        (called on this thread, during the connect; what it raises is raised here).
        A refusal raises :class:`~aeron_py.archive.errors.AuthenticationRejectedError`.
        """
        timeout = DEFAULT_MESSAGE_TIMEOUT_S if message_timeout is None else float(message_timeout)
        tuning = control_tuning(control_term_length, control_mtu, control_sparse, message_retry_attempts)
        if not 0 < timeout <= 3600:
            raise ValueError(f"message_timeout must be in (0, 3600] seconds, got {timeout!r}")
        options = dict(
            **control_options(control_channel, control_stream_id, response_channel, response_stream_id),
            recording_events_channel=channel_text(or_env(recording_events_channel, "AERON_ARCHIVE_RECORDING_EVENTS_CHANNEL",
                                                      DEFAULT_RECORDING_EVENTS_CHANNEL), "recording_events_channel"),
            recording_events_stream_id=int(or_env(recording_events_stream_id,
                                                   "AERON_ARCHIVE_RECORDING_EVENTS_STREAM_ID",
                                                   DEFAULT_RECORDING_EVENTS_STREAM_ID)),
            message_timeout_ns=int(timeout * 1e9),
            client_name=str(client_name),
            **tuning,
            **idle_options(idle_strategy),
            **credential_options(credentials, on_challenge),
        )
        if aeron.is_closed:
            raise ArchiveClosedError(f"the Aeron client for {aeron.dir!r} is closed")
        try:
            raw = _native.connect(aeron._client, **options)
        except AeronError as exc:
            typed = translate(exc)
            if "authentication rejected" in str(exc):  # the C client's words; its code is EINVAL
                typed = AuthenticationRejectedError(str(exc))
            raised = type(typed)(f"cannot connect to the Archive at {options['control_request_channel']!r} "
                                 f"within {timeout:g} s: {exc}")
            raised.errcode, raised.cause_code = exc.errcode, exc.cause_code
            raise raised from None
        return cls(raw, aeron, on_recording_signal, error_handler)

    # --- the session ---------------------------------------------------------------------
    @property
    def archive_id(self) -> int:
        """The Archive's id (``aeron.archive.id`` of the Java Archive)."""
        return self._call(self._raw.archive_id)

    @property
    def control_session_id(self) -> int:
        """This connection's session id at the Archive."""
        return self._call(self._raw.control_session_id)

    @property
    def is_closed(self) -> bool:
        """True once closed, by :meth:`close` or with its Aeron client."""
        closed: bool = self._raw.is_closed
        return closed

    def close(self) -> None:
        """``aeron_archive_close``: ends the session; waits for a call in progress. Idempotent."""
        self._raw.close()

    def __enter__(self) -> "AeronArchive":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<AeronArchive{' closed' if self.is_closed else ''} client={self._aeron.dir!r}>"

    # --- recording -----------------------------------------------------------------------
    def start_recording(self, channel: object, stream_id: int, *,
                        source: SourceLocation = SourceLocation.LOCAL, auto_stop: bool = False) -> int:
        """Record every publication on ``channel`` and ``stream_id``; returns the recording
        subscription's id (for :meth:`stop_recording`). ``auto_stop``: stop when the
        recorded image goes. Each new image (publication) becomes its own recording."""
        return self._call(self._raw.start_recording, channel_text(channel, "channel"), stream_id,
                          SourceLocation(source) == SourceLocation.REMOTE, bool(auto_stop))

    def extend_recording(self, recording_id: int, channel: object, stream_id: int, *,
                         source: SourceLocation = SourceLocation.LOCAL, auto_stop: bool = False) -> int:
        """Append to the stopped recording ``recording_id`` what ``channel`` / ``stream_id`` carries:
        a publication that continues it (same session id, and ``init-term-id``, ``term-id``
        and ``term-offset`` at its stop position). Returns the recording subscription's id."""
        return self._call(self._raw.extend_recording, recording_id, channel_text(channel, "channel"), stream_id,
                          SourceLocation(source) == SourceLocation.REMOTE, bool(auto_stop))

    def add_recorded_publication(self, channel: object, stream_id: int, *,
                                 exclusive: bool = False) -> Publication | ExclusivePublication:
        """A publication of this connection's client whose stream the Archive records (its
        session only): ``aeron_archive_add_recorded_(exclusive_)publication``."""
        raw = self._call(self._raw.add_recorded_publication, channel_text(channel, "channel"), stream_id, bool(exclusive))
        return ExclusivePublication(raw) if exclusive else Publication(raw)

    def recording_counter_id(self, *, recording_id: int | None = None, session_id: int | None = None) -> int | None:
        """The id of the Archive's recording-position counter of an active recording (by
        recording id, or by the recorded session id), read from this client's counters; None
        when the recording is not active. Use it as ``bounding_counter_id`` of a replay."""
        found = self._call(self._raw.recording_counter_id, recording_id, session_id)
        return None if found < 0 else found

    def recording_of_counter(self, counter_id: int) -> int | None:
        """The recording a recording-position counter tracks (None: not such a counter, or
        the recording ended and the counter was freed)."""
        return self._call(self._raw.recording_pos_recording_id, require_int("counter_id", counter_id))

    def counter_source_identity(self, counter_id: int) -> str | None:
        """The source identity of a recording-position counter's image (``aeron:ipc``, or the
        sender's ``address:port``); None: not such a counter."""
        return self._call(self._raw.recording_pos_source_identity, require_int("counter_id", counter_id))

    def counter_is_active(self, counter_id: int, recording_id: int) -> bool:
        """Whether ``counter_id`` is still the live position counter of ``recording_id``."""
        return self._call(self._raw.recording_pos_is_active, require_int("counter_id", counter_id),
                          require_int("recording_id", recording_id))

    def stop_recording(self, subscription_id: int) -> None:
        """Stop the recording subscription ``subscription_id`` (UnknownSubscriptionError if none)."""
        self._call(self._raw.stop_recording_subscription, subscription_id)

    def try_stop_recording(self, subscription_id: int) -> bool:
        """Like :meth:`stop_recording`; False instead of an error when there is none."""
        return self._call(self._raw.try_stop_recording_subscription, subscription_id)

    def stop_recording_channel(self, channel: object, stream_id: int) -> None:
        """Stop recording ``channel`` and ``stream_id`` (as given to :meth:`start_recording`)."""
        self._call(self._raw.stop_recording_channel_and_stream, channel_text(channel, "channel"), stream_id)

    def try_stop_recording_channel(self, channel: object, stream_id: int) -> bool:
        """Like :meth:`stop_recording_channel`; False instead of an error when that channel and
        stream are not being recorded."""
        return self._call(self._raw.try_stop_recording_channel_and_stream, channel_text(channel, "channel"), stream_id)

    def stop_recording_publication(self, publication: Publication) -> None:
        """Stop recording ``publication`` (one made by :meth:`add_recorded_publication`, or any
        recorded publication of this client): its session only, by channel, stream and
        ``session-id`` (what ``aeron_archive_stop_recording_publication`` sends)."""
        if not isinstance(publication, Publication):
            raise TypeError(f"publication must be an aeron_py Publication, got {type(publication).__name__}")
        channel = ChannelUri.parse(publication.channel).with_("session-id", publication.session_id)
        self.stop_recording_channel(channel, publication.stream_id)

    def try_stop_recording_by_identity(self, recording_id: int) -> bool:
        """Stop the recording ``recording_id``; False if it was not active."""
        return self._call(self._raw.try_stop_recording_by_identity, recording_id)

    # --- positions and the catalog ---------------------------------------------------------
    def recording_position(self, recording_id: int) -> int:
        """How far an active recording has got; -1 (NULL_POSITION) if it is not active."""
        return self._call(self._raw.position, "recording", recording_id)

    def start_position(self, recording_id: int) -> int:
        return self._call(self._raw.position, "start", recording_id)

    def stop_position(self, recording_id: int) -> int:
        """Where a recording stopped; -1 while it is active."""
        return self._call(self._raw.position, "stop", recording_id)

    def max_recorded_position(self, recording_id: int) -> int:
        """The recording's end: its stop position, or how far it has got if active."""
        return self._call(self._raw.position, "max_recorded", recording_id)

    def list_recordings(self, from_recording_id: int = 0, count: int = 100, *,
                        channel_fragment: str | None = None,
                        stream_id: int | None = None) -> list[RecordingDescriptor]:
        """Up to ``count`` recordings from ``from_recording_id`` on; with ``channel_fragment``
        and ``stream_id``, only recordings of that stream whose channel contains the fragment."""
        if (channel_fragment is None) != (stream_id is None):
            raise ValueError("give both channel_fragment and stream_id, or neither")
        rows = self._call(self._raw.list_recordings, from_recording_id, count, channel_fragment, stream_id or 0)
        return [RecordingDescriptor(*row) for row in rows]

    def recording(self, recording_id: int) -> RecordingDescriptor | None:
        """The descriptor of ``recording_id``, None if the Archive has none."""
        row = self._call(self._raw.list_recording, recording_id)
        return None if row is None else RecordingDescriptor(*row)

    def find_last_matching_recording(self, channel_fragment: str, stream_id: int, session_id: int, *,
                                     min_recording_id: int = 0) -> int | None:
        """The id of the newest recording of that stream and session whose channel contains
        ``channel_fragment``; None if there is none."""
        found = self._call(self._raw.find_last_matching_recording, min_recording_id, channel_fragment,
                           stream_id, session_id)
        return None if found < 0 else found

    def list_recording_subscriptions(self, channel_fragment: str = "", stream_id: int | None = None, *,
                                     pseudo_index: int = 0, count: int = 100) -> list[RecordingSubscription]:
        """The Archive's recording subscriptions whose channel contains ``channel_fragment``
        (and on ``stream_id``, if given)."""
        rows = self._call(self._raw.list_recording_subscriptions, pseudo_index, count, channel_fragment, stream_id)
        return [RecordingSubscription(*row) for row in rows]

    # --- replay ----------------------------------------------------------------------------
    def start_replay(self, recording_id: int, channel: object, stream_id: int, *, position: int | None = None,
                     length: int | None = None, bounding_counter_id: int | None = None,
                     file_io_max_length: int | None = None) -> int:
        """Ask the Archive to replay ``recording_id`` on ``channel`` / ``stream_id``; returns the
        replay session id (its low 32 bits are the replay image's session id).

        ``position``: where to start (default: the recording's start). ``length``: how many
        bytes (default: all that is recorded; :data:`FOLLOW` follows a live recording).
        ``bounding_counter_id``: a counter whose value bounds an open-ended replay."""
        return self._call(self._raw.start_replay, recording_id, channel_text(channel, "channel"), stream_id,
                          *self._replay_args(position, length, bounding_counter_id, file_io_max_length))

    def replay(self, recording_id: int, channel: object, stream_id: int, *, position: int | None = None,
               length: int | None = None, bounding_counter_id: int | None = None,
               file_io_max_length: int | None = None) -> Subscription:
        """Subscribe to ``channel`` / ``stream_id`` and replay the recording onto it (see
        :meth:`start_replay`); returns the subscription. A UDP ``endpoint`` with port 0 is
        bound first, and the Archive replays to the port it got."""
        uri = channel_text(channel, "channel")
        args = self._replay_args(position, length, bounding_counter_id, file_io_max_length)
        if not _ANY_PORT.search(uri):
            sub: Subscription = self._call(self._raw.replay, recording_id, uri, stream_id, *args)
            return sub
        sub = self._aeron.add_subscription(uri, stream_id)
        try:
            deadline = time.monotonic() + RESOLVE_TIMEOUT_S
            while (resolved := sub.resolved_channel()) is None:
                if time.monotonic() > deadline:
                    raise ArchiveTimeoutError(f"replay: {uri} was not bound within {RESOLVE_TIMEOUT_S:g} s")
                time.sleep(0.001)
            self._call(self._raw.start_replay, recording_id, resolved, stream_id, *args)
        except BaseException:
            sub.close()
            raise
        return sub

    def replay_merge(self, recording_id: int, *, live_destination: str,
                     replay_destination: str = "aeron:udp?endpoint=localhost:0",
                     replay_channel: str | None = None, start_position: int | None = None,
                     progress_timeout: float = DEFAULT_PROGRESS_TIMEOUT_S) -> ReplayMerge:
        """Replay ``recording_id`` from ``start_position`` (default: its start) and merge into
        its live stream (see :mod:`aeron_py.archive.replay_merge`).

        ``live_destination``: how this subscriber joins the live publication's dynamic MDC,
        e.g. ``aeron:udp?endpoint=127.0.0.1:0|control=127.0.0.1:40456`` (its control
        endpoint). ``replay_destination``: where the replay arrives (port 0: any).
        ``replay_channel``: what the Archive replays to (default: UDP, the recording's
        session id). The subscription (manual control, the recording's session and stream)
        is made here and owned by the returned :class:`ReplayMerge`."""
        descriptor = self.recording(recording_id)
        if descriptor is None:
            raise UnknownRecordingError(f"replay_merge: the Archive has no recording {recording_id}")
        session = descriptor.session_id
        subscription = self._aeron.add_subscription(
            f"aeron:udp?control-mode=manual|session-id={session}", descriptor.stream_id)
        try:
            raw = self._call(self._raw.replay_merge, subscription,
                             replay_channel or f"aeron:udp?session-id={session}",
                             channel_text(replay_destination, "replay_destination"),
                             channel_text(live_destination, "live_destination"), recording_id,
                             descriptor.start_position if start_position is None else start_position,
                             int(progress_timeout * 1000))
        except BaseException:
            subscription.close()
            raise
        return ReplayMerge(raw, subscription)

    def stop_replay(self, replay_session_id: int) -> None:
        self._call(self._raw.stop_replay, replay_session_id)

    def stop_all_replays(self, recording_id: int | None = None) -> None:
        """Stop the replays of ``recording_id``, or every replay when None."""
        self._call(self._raw.stop_all_replays, _optional(recording_id))

    # --- removing ------------------------------------------------------------------------
    def truncate_recording(self, recording_id: int, position: int) -> int:
        """Cut a stopped recording back to ``position`` (a frame boundary); returns the number
        of segment files deleted."""
        return self._call(self._raw.truncate_recording, recording_id, position)

    def purge_recording(self, recording_id: int) -> int:
        """Delete a stopped recording and its files; returns the number of segment files deleted."""
        return self._call(self._raw.purge_recording, recording_id)

    # --- segments ------------------------------------------------------------------------
    # A recording's files are segments of ``segment_file_length`` bytes of stream (a whole number of
    # terms); positions here are segment boundaries (:func:`segment_file_base_position`).
    def detach_segments(self, recording_id: int, new_start_position: int) -> None:
        """Detach the segment files before ``new_start_position`` from a recording (its start
        position moves there; the files stay on disk until deleted or attached again)."""
        self._call(self._raw.detach_segments, recording_id, new_start_position)

    def delete_detached_segments(self, recording_id: int) -> int:
        """Delete the segment files detached from a recording; returns how many."""
        return self._call(self._raw.delete_detached_segments, recording_id)

    def purge_segments(self, recording_id: int, new_start_position: int) -> int:
        """Detach and delete the segment files before ``new_start_position``; returns how many."""
        return self._call(self._raw.purge_segments, recording_id, new_start_position)

    def attach_segments(self, recording_id: int) -> int:
        """Attach detached segment files that join the recording's start again; returns how many."""
        return self._call(self._raw.attach_segments, recording_id)

    def migrate_segments(self, src_recording_id: int, dst_recording_id: int) -> int:
        """Move a stopped recording's segments to the front of a recording that continues it
        (same stream and lengths; the source's stop position is the destination's start, on a
        segment boundary); the source is left empty. Returns the number of segments moved."""
        return self._call(self._raw.migrate_segments, src_recording_id, dst_recording_id)

    def update_channel(self, recording_id: int, channel: object) -> None:
        """Replace the channel the catalog records for a recording (original and stripped)."""
        self._call(self._raw.update_channel, recording_id, str(channel))

    # --- replication (this connection's Archive copies from another) ------------------------
    def replicate(self, src_recording_id: int, src_control_channel: object, src_control_stream_id: int = 10, *,
                  dst_recording_id: int | None = None, stop_position: int | None = None,
                  live_destination: str = "", replication_channel: object = "", src_response_channel: object = "",
                  channel_tag_id: int | None = None, subscription_tag_id: int | None = None,
                  file_io_max_length: int | None = None, replication_session_id: int | None = None,
                  credentials: bytes | None = None) -> int:
        """Copy recording ``src_recording_id`` from the Archive answering on ``src_control_channel``
        into this connection's Archive (``aeron_archive_replicate``); returns the replication id.

        It runs in the Archive, after this call returns: a stopped recording is copied up to its
        stop position, an active one is followed while it records (until ``stop_position``, if
        given, or :meth:`stop_replication`). Progress and the end come as recording signals
        (``REPLICATE``, ``EXTEND``, ``SYNC``, ``REPLICATE_END``; see ``on_recording_signal``); a
        failure as an error response (:meth:`check_error_response`). ``dst_recording_id`` extends
        a recording of this Archive instead of making a new one; ``live_destination`` merges the
        copy with the live stream once caught up; ``channel_tag_id``/``subscription_tag_id`` tag
        the replication subscription (tagged replication); ``credentials``: for a source Archive
        that authenticates (simple credentials only). ``replication_channel`` "": the Archive's own."""
        if credentials is not None and not isinstance(credentials, bytes):
            raise TypeError(f"credentials must be bytes, got {type(credentials).__name__}")
        return self._call(
            self._raw.replicate, require_int("src_recording_id", src_recording_id, min=0),
            require_int("src_control_stream_id", src_control_stream_id), channel_text(src_control_channel,
                                                                                      "src_control_channel"),
            _optional(dst_recording_id), _optional(stop_position), str(live_destination), str(replication_channel),
            str(src_response_channel), _optional(channel_tag_id), _optional(subscription_tag_id),
            _optional(file_io_max_length), _optional(replication_session_id), credentials)

    def stop_replication(self, replication_id: int) -> None:
        """Stop a replication (UnknownReplicationError when it is not running); what was copied stays."""
        self._call(self._raw.stop_replication, replication_id)

    def try_stop_replication(self, replication_id: int) -> bool:
        """Like :meth:`stop_replication`; False instead of an error when it is not running."""
        return self._call(self._raw.try_stop_replication, replication_id)

    # --- error responses -------------------------------------------------------------------
    def poll_error_response(self) -> str | None:
        """Read the control stream once (``aeron_archive_poll_for_error_response``): the error
        message the Archive sent for no call in progress (a failed replication, say), or None.
        A recording signal read meanwhile is delivered; any other message is skipped, so call it
        only between calls."""
        return self._call(self._raw.poll_for_error_response)

    def check_error_response(self) -> None:
        """Like :meth:`poll_error_response`, raising :class:`ArchiveError` with the message."""
        message = self.poll_error_response()
        if message is not None:
            raise ArchiveError(f"the Archive reports: {message}")

    # --- signals -------------------------------------------------------------------------
    def poll_recording_signals(self) -> list[RecordingSignalEvent]:
        """Read what the Archive sent (``aeron_archive_poll_for_recording_signals``) and return
        the recording signals not yet given to ``on_recording_signal`` (oldest first)."""
        self._call(self._raw.poll_for_recording_signals)
        kept = list(self._signals)
        self._signals.clear()
        return kept

    # --- plumbing ------------------------------------------------------------------------
    @staticmethod
    def _replay_args(position: int | None, length: int | None, bounding_counter_id: int | None,
                     file_io_max_length: int | None) -> tuple[int, int, int, int]:
        return (_optional(position), _optional(length), _optional(bounding_counter_id),
                _optional(file_io_max_length))

    def _call(self, method: Callable[..., T], *args: Any) -> T:
        """One binding call: typed errors, then the signals and errors it brought delivered."""
        try:
            return typed(lambda: method(*args))
        finally:
            self._deliver()

    def _deliver(self) -> None:
        signals, errors, lost = self._raw.take_events()
        if lost:
            logger.warning("aeron archive: %d recording signals lost (more than one call can queue)", lost)
        for row in signals:
            event = RecordingSignalEvent(*row)
            if self._on_signal is None:
                self._signals.append(event)
            else:
                self._on_signal(event)
        for errcode, message in errors:
            if self._on_error is not None:
                self._on_error(errcode, message)


__all__ = ["AeronArchive", "FOLLOW", "MAX_KEPT_SIGNALS"]
