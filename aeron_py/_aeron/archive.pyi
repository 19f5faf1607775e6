# Generated from the built extension by .ci/stubs (pybind11-stubgen + .ci/stub_fixups.py); do not edit by hand.
"""
The Aeron Archive C client (aeron_archive.h); see aeron_py.archive for the Pythonic layer.
"""
from __future__ import annotations
import typing
class ReplayMerge:
    """
    aeron_archive_replay_merge_t: a replay merging into a live stream on one MDS subscription.
    """
    def close(self) -> None:
        """
        aeron_archive_replay_merge_close (idempotent; also done with the archive).
        """
    def do_work(self) -> int:
        """
        aeron_archive_replay_merge_do_work: the work count.
        """
    @property
    def has_failed(self) -> bool:
        """
        aeron_archive_replay_merge_has_failed
        """
    @property
    def is_closed(self) -> bool:
        ...
    @property
    def is_live_added(self) -> bool:
        """
        aeron_archive_replay_merge_is_live_added
        """
    @property
    def is_merged(self) -> bool:
        """
        aeron_archive_replay_merge_is_merged
        """
class Archive:
    """
    aeron_archive_t: one client's connection to an Aeron Archive.
    """
    def add_recorded_publication(self, channel: str, stream_id: typing.SupportsInt | typing.SupportsIndex, exclusive: bool) -> typing.Any:
        """
        aeron_archive_add_recorded_(exclusive_)publication
        """
    def archive_id(self) -> int:
        """
        aeron_archive_get_archive_id
        """
    def attach_segments(self, recording_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def close(self) -> None:
        """
        aeron_archive_close (idempotent; also done when the client closes).
        """
    def control_session_id(self) -> int:
        """
        aeron_archive_control_session_id
        """
    def delete_detached_segments(self, recording_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def detach_segments(self, recording_id: typing.SupportsInt | typing.SupportsIndex, new_start_position: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def extend_recording(self, recording_id: typing.SupportsInt | typing.SupportsIndex, channel: str, stream_id: typing.SupportsInt | typing.SupportsIndex, remote: bool, auto_stop: bool) -> int:
        """
        aeron_archive_extend_recording: the recording subscription id.
        """
    def find_last_matching_recording(self, min_recording_id: typing.SupportsInt | typing.SupportsIndex, channel_fragment: str, stream_id: typing.SupportsInt | typing.SupportsIndex, session_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def list_recording(self, recording_id: typing.SupportsInt | typing.SupportsIndex) -> typing.Any:
        ...
    def list_recording_subscriptions(self, pseudo_index: typing.SupportsInt | typing.SupportsIndex, count: typing.SupportsInt | typing.SupportsIndex, channel_fragment: str, stream_id: typing.SupportsInt | typing.SupportsIndex | None) -> list[typing.Any]:
        ...
    def list_recordings(self, from_recording_id: typing.SupportsInt | typing.SupportsIndex, count: typing.SupportsInt | typing.SupportsIndex, channel_fragment: str | None, stream_id: typing.SupportsInt | typing.SupportsIndex) -> list[typing.Any]:
        """
        aeron_archive_list_recordings(_for_uri): descriptor tuples.
        """
    def migrate_segments(self, src_recording_id: typing.SupportsInt | typing.SupportsIndex, dst_recording_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def poll_for_error_response(self) -> str | None:
        """
        aeron_archive_poll_for_error_response: the Archive's error message, or None.
        """
    def poll_for_recording_signals(self) -> int:
        ...
    def position(self, which: str, recording_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        aeron_archive_get_{recording,start,stop,max_recorded}_position
        """
    def purge_recording(self, recording_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def purge_segments(self, recording_id: typing.SupportsInt | typing.SupportsIndex, new_start_position: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def recording_counter_id(self, recording_id: typing.SupportsInt | typing.SupportsIndex | None = None, session_id: typing.SupportsInt | typing.SupportsIndex | None = None) -> int:
        """
        aeron_archive_recording_pos_find_counter_id_by_{recording,session}_id in the client's counters; -1: none.
        """
    def recording_pos_is_active(self, counter_id: typing.SupportsInt | typing.SupportsIndex, recording_id: typing.SupportsInt | typing.SupportsIndex) -> bool:
        """
        aeron_archive_recording_pos_is_active
        """
    def recording_pos_recording_id(self, counter_id: typing.SupportsInt | typing.SupportsIndex) -> int | None:
        """
        aeron_archive_recording_pos_get_recording_id; None: not a recording counter.
        """
    def recording_pos_source_identity(self, counter_id: typing.SupportsInt | typing.SupportsIndex) -> str | None:
        """
        aeron_archive_recording_pos_get_source_identity; None: not a recording counter.
        """
    def replay(self, recording_id: typing.SupportsInt | typing.SupportsIndex, channel: str, stream_id: typing.SupportsInt | typing.SupportsIndex, position: typing.SupportsInt | typing.SupportsIndex, length: typing.SupportsInt | typing.SupportsIndex, bounding_counter_id: typing.SupportsInt | typing.SupportsIndex, file_io_max_length: typing.SupportsInt | typing.SupportsIndex) -> typing.Any:
        ...
    def replay_merge(self, subscription: typing.Any, replay_channel: str, replay_destination: str, live_destination: str, recording_id: typing.SupportsInt | typing.SupportsIndex, start_position: typing.SupportsInt | typing.SupportsIndex, progress_timeout_ms: typing.SupportsInt | typing.SupportsIndex) -> typing.Any:
        """
        aeron_archive_replay_merge_init over a manual-control MDS subscription of the same client.
        """
    def replicate(self, src_recording_id: typing.SupportsInt | typing.SupportsIndex, src_control_stream_id: typing.SupportsInt | typing.SupportsIndex, src_control_channel: str, dst_recording_id: typing.SupportsInt | typing.SupportsIndex, stop_position: typing.SupportsInt | typing.SupportsIndex, live_destination: str, replication_channel: str, src_response_channel: str, channel_tag_id: typing.SupportsInt | typing.SupportsIndex, subscription_tag_id: typing.SupportsInt | typing.SupportsIndex, file_io_max_length: typing.SupportsInt | typing.SupportsIndex, replication_session_id: typing.SupportsInt | typing.SupportsIndex, credentials: bytes | None) -> int:
        """
        aeron_archive_replicate (aeron_archive_replication_params_t from the arguments; -1: Aeron's null value, "": the default): the replication id.
        """
    def start_recording(self, channel: str, stream_id: typing.SupportsInt | typing.SupportsIndex, remote: bool, auto_stop: bool) -> int:
        """
        aeron_archive_start_recording: the recording subscription id.
        """
    def start_replay(self, recording_id: typing.SupportsInt | typing.SupportsIndex, channel: str, stream_id: typing.SupportsInt | typing.SupportsIndex, position: typing.SupportsInt | typing.SupportsIndex, length: typing.SupportsInt | typing.SupportsIndex, bounding_counter_id: typing.SupportsInt | typing.SupportsIndex, file_io_max_length: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def stop_all_replays(self, recording_id: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def stop_recording_channel_and_stream(self, channel: str, stream_id: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def stop_recording_subscription(self, subscription_id: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def stop_replay(self, replay_session_id: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def stop_replication(self, replication_id: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def take_events(self) -> tuple[typing.Any, ...]:
        """
        (signals, errors, lost_signals) reported by the C client since the last take.
        """
    def truncate_recording(self, recording_id: typing.SupportsInt | typing.SupportsIndex, position: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def try_stop_recording_by_identity(self, recording_id: typing.SupportsInt | typing.SupportsIndex) -> bool:
        ...
    def try_stop_recording_channel_and_stream(self, channel: str, stream_id: typing.SupportsInt | typing.SupportsIndex) -> bool:
        ...
    def try_stop_recording_subscription(self, subscription_id: typing.SupportsInt | typing.SupportsIndex) -> bool:
        ...
    def try_stop_replication(self, replication_id: typing.SupportsInt | typing.SupportsIndex) -> bool:
        ...
    def update_channel(self, recording_id: typing.SupportsInt | typing.SupportsIndex, channel: str) -> None:
        ...
    @property
    def is_closed(self) -> bool:
        ...
class PersistentSubscription:
    """
    aeron_archive_persistent_subscription_t: replay, then live, then replay again when it falls behind.
    """
    def close(self) -> None:
        """
        Idempotent; from a handler, after the poll returns.
        """
    def counter_ids(self) -> tuple[typing.Any, ...]:
        """
        aeron_archive_persistent_subscription_context_get_{state,join_difference,live_left,live_joined}_counter: their counter ids (-1: none).
        """
    def failure(self) -> typing.Any:
        """
        (errcode, message) once failed, else None.
        """
    def poll(self, handler: typing.Any, fragment_limit: typing.SupportsInt | typing.SupportsIndex = 10) -> int:
        """
        aeron_archive_persistent_subscription_controlled_poll: handler(data, header) per message.
        """
    def take_events(self) -> list[typing.Any]:
        ...
    @property
    def has_failed(self) -> bool:
        ...
    @property
    def is_closed(self) -> bool:
        ...
    @property
    def is_live(self) -> bool:
        ...
    @property
    def is_replaying(self) -> bool:
        ...
def connect(client: typing.Any, control_request_channel: str, control_request_stream_id: typing.SupportsInt | typing.SupportsIndex, control_response_channel: str, control_response_stream_id: typing.SupportsInt | typing.SupportsIndex, recording_events_channel: str, recording_events_stream_id: typing.SupportsInt | typing.SupportsIndex, message_timeout_ns: typing.SupportsInt | typing.SupportsIndex, client_name: str, control_term_length: typing.SupportsInt | typing.SupportsIndex = 0, control_mtu_length: typing.SupportsInt | typing.SupportsIndex = 0, control_sparse: typing.SupportsInt | typing.SupportsIndex = -1, message_retry_attempts: typing.SupportsInt | typing.SupportsIndex = 0, idle_strategy: str = '', idle_args: str = '', credentials: bytes | None = None, on_challenge: typing.Any | None = None) -> Archive:
    """
    aeron_archive_connect over the client's aeron_t; waits up to the message timeout (GIL released). The control stream's term length, MTU, sparseness and the retry attempts: 0 (sparse: -1) keeps Aeron's default. idle_strategy (aeron_idle_strategy_load's names; "": Aeron's backoff) is what the blocking calls wait with; credentials are sent with the connect, on_challenge(bytes) -> bytes answers the Archive's challenge (called on this thread, during the connect).
    """
def persistent_subscription(client: typing.Any, control_request_channel: str, control_request_stream_id: typing.SupportsInt | typing.SupportsIndex, control_response_channel: str, control_response_stream_id: typing.SupportsInt | typing.SupportsIndex, message_timeout_ns: typing.SupportsInt | typing.SupportsIndex, client_name: str, recording_id: typing.SupportsInt | typing.SupportsIndex, live_channel: str, live_stream_id: typing.SupportsInt | typing.SupportsIndex, replay_channel: str, replay_stream_id: typing.SupportsInt | typing.SupportsIndex, start_position: typing.SupportsInt | typing.SupportsIndex) -> typing.Any:
    """
    aeron_archive_persistent_subscription_create over the client's aeron_t (its own archive connection).
    """
def segment_file_base_position(start_position: typing.SupportsInt | typing.SupportsIndex, position: typing.SupportsInt | typing.SupportsIndex, term_length: typing.SupportsInt | typing.SupportsIndex, segment_length: typing.SupportsInt | typing.SupportsIndex) -> int:
    """
    aeron_archive_segment_file_base_position; ValueError for lengths it cannot take.
    """
NULL_COUNTER_ID: int = -1
NULL_LENGTH: int = -1
NULL_POSITION: int = -1
PERSISTENT_FROM_LIVE: int = -2
PERSISTENT_FROM_START: int = -1
REPLAY_ALL_AND_FOLLOW: int = 9223372036854775807
