"""``--record``: the server's telemetry on an Aeron stream that an Aeron Archive records.

Every telemetry line the server writes (``--events``) is also offered, as one message, on
a UDP stream (``--record-channel``, by default to ``127.0.0.1:9110``) that the Archive at
``--record`` records: the Archive subscribes to it on its own media driver, wherever that
runs. An operator can then look
back at an attack from the Archive, long after the telemetry files have rotated away:
``python -m aeron_py.telemetry.replay`` writes a recorded window back as telemetry files for
the analytics' batch mode (:mod:`aeron_py.telemetry.replay`).

Runs on the telemetry writer thread (the writer's ``mirror``), never on the server's loop,
through an Aeron client of its own (the server's runs in invoker mode, which the archive
client cannot use). An offer never waits: a line the stream does not take (not connected,
back pressure, too long) is counted in ``dropped`` and left out. Only a rotation (once per
``max_bytes``) waits, for the Archive to join the new session (at most 10 s, on the writer
thread: the server's loop never waits; a full telemetry queue meanwhile drops and counts).

Bounded on the Archive's disk: a recording holds at most ``max_bytes``; then the
publication is replaced (a new session, so the Archive starts a new recording) and the
oldest stopped recordings of the stream beyond ``keep`` are purged. The recorded telemetry
is itself rate-bounded (the telemetry budgets), so a flood costs at most
``keep * max_bytes`` there.
"""
from __future__ import annotations

import logging
import time

from ...archive import AeronArchive, ArchiveError, SourceLocation
from ...client import Aeron
from ...driver import MediaDriver
from ...errors import AeronError
from ...publication import ExclusivePublication

logger = logging.getLogger(__name__)

#: The recorded stream: where the Archive's driver receives it; terms of 1 MiB (messages up to
#: 128 KiB, the longest telemetry line).
DEFAULT_CHANNEL = "aeron:udp?endpoint=127.0.0.1:9110|term-length=1m"
DEFAULT_STREAM_ID = 9100
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_KEEP = 8
#: How long the start waits for the Archive to join the stream.
CONNECT_TIMEOUT_S = 10.0
#: How long the close waits for the Archive to record the last lines.
DRAIN_TIMEOUT_S = 5.0


class TelemetryRecording:
    """Offers telemetry lines on :data:`CHANNEL` / ``stream_id``, recorded by the Archive at
    ``control_channel``. Raises :class:`~aeron_py.archive.ArchiveError` (or AeronError) at
    start when the Archive cannot be reached or refuses; never from :meth:`offer`."""

    def __init__(self, driver: MediaDriver, control_channel: str, *, channel: str = DEFAULT_CHANNEL,
                 stream_id: int = DEFAULT_STREAM_ID,
                 max_bytes: int = DEFAULT_MAX_BYTES, keep: int = DEFAULT_KEEP,
                 response_channel: str = "aeron:udp?endpoint=localhost:0", message_timeout: float = 10.0) -> None:
        if max_bytes < 1 << 20:
            raise ValueError(f"--record-max-bytes must be at least 1 MiB, got {max_bytes}")
        if keep < 1:
            raise ValueError(f"--record-keep must be at least 1, got {keep}")
        self.channel, self.stream_id, self.max_bytes, self.keep = channel, stream_id, max_bytes, keep
        self.dropped = 0
        self.rotations = 0
        self._aeron = Aeron(driver=driver, client_name="echo-server-recorder")
        try:
            self._archive = AeronArchive.connect(self._aeron, control_channel=control_channel,
                                                 response_channel=response_channel, message_timeout=message_timeout)
            self._subscription_id = self._archive.start_recording(
                channel, stream_id, source=SourceLocation.LOCAL if channel.startswith("aeron:ipc") else SourceLocation.REMOTE)
            self._pub = self._open()
        except BaseException:
            self._aeron.close()
            raise
        logger.info("recording telemetry to the Archive at %s (archive id %d), %s stream %d",
                    control_channel, self._archive.archive_id, channel, stream_id)

    def _open(self) -> ExclusivePublication:
        """A new publication (session) on the recorded stream, once the Archive has joined it."""
        pub = self._aeron.add_exclusive_publication(self.channel, self.stream_id)
        deadline = time.monotonic() + CONNECT_TIMEOUT_S
        while not pub.is_connected:
            if time.monotonic() > deadline:
                pub.close()
                raise ArchiveError(f"the Archive did not join {self.channel} stream {self.stream_id} "
                                   f"within {CONNECT_TIMEOUT_S:g} s")
            time.sleep(0.005)
        return pub

    def offer(self, line: bytes) -> None:
        """The writer's mirror: one line, one message; never raises, never waits."""
        try:
            position = self._pub.offer(line)
        except (AeronError, ValueError):  # closed, too long
            self.dropped += 1
            return
        if position < 0:
            self.dropped += 1
        elif position >= self.max_bytes:
            self._rotate()

    def _rotate(self) -> None:
        """A new recording for what comes next; the oldest beyond ``keep`` purged."""
        try:
            old, self._pub = self._pub, self._open()
            old.close()
            self.rotations += 1
            stopped = [d for d in self._archive.list_recordings(channel_fragment="aeron:", stream_id=self.stream_id,
                                                                count=10_000)
                       if not d.is_active]
            for descriptor in stopped[:max(0, len(stopped) - (self.keep - 1))]:
                self._archive.purge_recording(descriptor.recording_id)
        except (AeronError, ValueError) as exc:  # the Archive went away: keep the server going
            logger.error("telemetry recording: could not start a new recording: %s", exc)

    def _drain(self) -> None:
        """Wait (bounded) until the Archive has recorded what was offered: the last lines
        are still on their way when the server stops."""
        target = self._pub.position
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        recording_id = None
        while time.monotonic() < deadline:
            if recording_id is None:
                recording_id = self._archive.find_last_matching_recording("aeron:", self.stream_id,
                                                                          self._pub.session_id)
            elif self._archive.recording_position(recording_id) >= target:
                return
            time.sleep(0.005)
        logger.warning("telemetry recording: the Archive had not recorded the last lines %g s after the "
                       "server stopped (recording %s, position %d)", DRAIN_TIMEOUT_S, recording_id, target)

    def close(self) -> None:
        """Let the Archive record the last lines (bounded), stop recording, close the connection
        and the client (each even if one before fails)."""
        try:
            self._drain()
            self._archive.try_stop_recording(self._subscription_id)
        except AeronError as exc:
            logger.warning("telemetry recording: stopping the recording failed: %s", exc)
        finally:
            self._pub.close()
            self._archive.close()
            self._aeron.close()


__all__ = ["DEFAULT_CHANNEL", "DEFAULT_KEEP", "DEFAULT_MAX_BYTES", "DEFAULT_STREAM_ID", "TelemetryRecording"]
