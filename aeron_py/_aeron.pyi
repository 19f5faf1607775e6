# Generated from the built extension by .ci/stubs (pybind11-stubgen + .ci/stub_fixups.py); do not edit by hand.
"""
Thin bindings over Aeron's C client (aeronc.h) and embedded C media driver (aeronmd.h).
"""
from __future__ import annotations
import collections.abc
import typing
import typing_extensions
class AeronError(RuntimeError):
    """
    A call into the Aeron C library failed. `errcode` is aeron_errcode(); the message is aeron_errmsg().
    `cause_code` is the failure's most specific code: for an error the media driver reported (errcode
    -11, 'generic error') the driver's own code from its message, e.g. 98 (EADDRINUSE); ETIMEDOUT for
    an archive connect that timed out (errcode -1); otherwise errcode. Both are None on an AeronError
    made in Python. The subclasses name the failures code acts on.
    """
    cause_code: int | None = None
    errcode: int | None = None
class AddressInUseError(AeronError):
    """
    The media driver could not bind the channel's address: another socket holds it (EADDRINUSE;
    `cause_code` 98 on Linux; errcode is -11, the driver's 'generic error'). Use another port, or
    retry once whoever holds it (possibly an endpoint of this driver still closing) lets go.
    """
class DriverTimeoutError(AeronError):
    """
    No answer from the media driver in the client's driver timeout (errcode
    -AERON_CLIENT_ERROR_DRIVER_TIMEOUT, -1000): no driver at the directory, a driver whose
    heartbeat stopped, or an add the client gave up waiting for (the driver may still make it).
    """
class RetryLaterError(AeronError):
    """
    The media driver refused an add for now (errcode -AERON_ERROR_CODE_RESOURCE_TEMPORARILY_UNAVAILABLE,
    -10): an endpoint of the same channel is still closing ('... found in CLOSING state, please
    retry'). The same add succeeds once it is gone; Aeron.add_* retries it until its timeout.
    """
class Header:
    """
    A copy of aeron_header_values_t for one fragment (aeron_header_values).
    """
    def __repr__(self) -> str:
        ...
    def copy(self) -> Header:
        """
        Another detached Header.
        """
    @property
    def flags(self) -> int:
        ...
    @property
    def frame_length(self) -> int:
        ...
    @property
    def initial_term_id(self) -> int:
        ...
    @property
    def next_term_offset(self) -> int:
        """
        aeron_header_next_term_offset: the term offset of the frame after this one
        """
    @property
    def position(self) -> int:
        """
        aeron_header_position
        """
    @property
    def position_bits_to_shift(self) -> int:
        """
        aeron_header_position_bits_to_shift: log2 of the term length
        """
    @property
    def reserved_value(self) -> int:
        ...
    @property
    def session_id(self) -> int:
        ...
    @property
    def stream_id(self) -> int:
        ...
    @property
    def term_id(self) -> int:
        ...
    @property
    def term_offset(self) -> int:
        ...
    @property
    def type(self) -> int:
        ...
@typing.final
class HeaderView:
    """
    The header of the fragment being handled (aeron_header_t); valid only during the handler call.
    """
    def __repr__(self) -> str:
        """
        Return repr(self).
        """
    def copy(self, /) -> Header:
        """
        A detached Header (aeron_header_values + aeron_header_position).
        """
    @property
    def session_id(self) -> int:
        ...
    @property
    def stream_id(self) -> int:
        ...
    @property
    def term_id(self) -> int:
        ...
    @property
    def term_offset(self) -> int:
        ...
    @property
    def frame_length(self) -> int:
        ...
    @property
    def flags(self) -> int:
        ...
    @property
    def type(self) -> int:
        ...
    @property
    def reserved_value(self) -> int:
        ...
    @property
    def initial_term_id(self) -> int:
        ...
    @property
    def position(self) -> int:
        """
        aeron_header_position
        """
    @property
    def next_term_offset(self) -> int:
        """
        aeron_header_next_term_offset: the term offset of the frame after this one
        """
    @property
    def position_bits_to_shift(self) -> int:
        """
        aeron_header_position_bits_to_shift: log2 of the term length
        """
    @property
    def is_valid(self) -> bool:
        """
        True during the handler call only.
        """
class Image:
    """
    aeron_image_t: one publication's stream as seen by a subscription.
    """
    def block_poll(self, handler: typing.Any, block_length_limit: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        aeron_image_block_poll: handler(data, session_id, term_id) with the raw frames (headers included) as far as they are contiguous, up to block_length_limit bytes within one term; returns the bytes consumed.
        """
    def bounded_controlled_poll(self, handler: typing.Any, limit_position: typing.SupportsInt | typing.SupportsIndex, fragment_limit: typing.SupportsInt | typing.SupportsIndex = 10, zero_copy: bool = False, with_header: bool = True) -> int:
        """
        aeron_image_bounded_controlled_poll: controlled_poll() up to limit_position; the handler returns an ACTION_* (None = CONTINUE).
        """
    def bounded_poll(self, handler: typing.Any, limit_position: typing.SupportsInt | typing.SupportsIndex, fragment_limit: typing.SupportsInt | typing.SupportsIndex = 10, zero_copy: bool = False, with_header: bool = True) -> int:
        """
        aeron_image_bounded_controlled_poll: poll(), delivering only messages that end at or before limit_position (a stream position, e.g. a recording's stop or another stream's position). Returns the fragment count.
        """
    def close(self) -> None:
        """
        aeron_subscription_image_release; idempotent. Deferred until a poll in progress returns.
        """
    def controlled_poll(self, /, handler: collections.abc.Callable[..., int | None], fragment_limit: int = 10, zero_copy: bool = False, with_header: bool = True) -> int:
        """
        aeron_image_controlled_poll; the handler returns an ACTION_* (None = CONTINUE).
        """
    def poll(self, /, handler: collections.abc.Callable[..., object], fragment_limit: int = 10, zero_copy: bool = False, with_header: bool = True) -> int:
        """
        aeron_image_controlled_poll with reassembly: handler(data, header) per message. data is bytes, or with zero_copy a read-only memoryview dead after the call; header is a view valid during the call.
        """
    def poll_batch(self, /, fragment_limit: int = 100) -> list[bytes]:
        """
        aeron_image_controlled_poll collecting reassembled payloads into a list of bytes.
        """
    def reject(self, reason: str) -> None:
        """
        aeron_image_reject
        """
    @property
    def active_transport_count(self) -> int:
        """
        aeron_image_active_transport_count
        """
    @property
    def correlation_id(self) -> int:
        ...
    @property
    def end_of_stream_position(self) -> int:
        """
        aeron_image_end_of_stream_position
        """
    @property
    def initial_term_id(self) -> int:
        ...
    @property
    def is_closed(self) -> bool:
        """
        aeron_image_is_closed
        """
    @property
    def is_end_of_stream(self) -> bool:
        """
        aeron_image_is_end_of_stream
        """
    @property
    def is_live(self) -> bool:
        """
        False for a callback snapshot or a released image.
        """
    @property
    def is_publication_revoked(self) -> bool:
        """
        aeron_image_is_publication_revoked: its publication was revoked, not closed (a callback snapshot: as it was when the callback was called, e.g. in on_unavailable_image)
        """
    @property
    def join_position(self) -> int:
        ...
    @property
    def mtu_length(self) -> int:
        ...
    @property
    def position(self) -> int:
        """
        aeron_image_position
        """
    @property
    def session_id(self) -> int:
        ...
    @property
    def source_identity(self) -> str:
        ...
    @property
    def term_buffer_length(self) -> int:
        ...
class Subscription:
    """
    aeron_subscription_t (not thread-safe).
    """
    _work: typing.Any
    def async_add_destination(self, uri: str) -> AsyncDestination:
        """
        aeron_subscription_async_add_destination (MDS).
        """
    def async_remove_destination(self, uri: str) -> AsyncDestination:
        """
        aeron_subscription_async_remove_destination
        """
    def block_poll(self, handler: typing.Any, block_length_limit: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        aeron_image_block_poll of each image: handler(data, session_id, term_id) per block of raw frames (headers included, up to block_length_limit bytes, within one term); returns the bytes consumed.
        """
    def close(self) -> None:
        """
        aeron_subscription_close; idempotent. Deferred until a poll in progress returns.
        """
    def controlled_poll(self, /, handler: collections.abc.Callable[..., int | None], fragment_limit: int = 10, zero_copy: bool = False, with_header: bool = True) -> int:
        """
        aeron_subscription_controlled_poll with reassembly; the handler returns an ACTION_* (None = CONTINUE).
        """
    def image_at_index(self, index: typing.SupportsInt | typing.SupportsIndex) -> Image | None:
        """
        aeron_subscription_image_at_index: a retained Image or None.
        """
    def image_by_session_id(self, session_id: typing.SupportsInt | typing.SupportsIndex) -> Image | None:
        """
        aeron_subscription_image_by_session_id: a retained Image or None.
        """
    def images(self) -> list[Image]:
        """
        Retained Images, one per aeron_subscription_image_at_index.
        """
    def local_sockaddrs(self) -> list[str]:
        """
        aeron_subscription_local_sockaddrs (every bound address).
        """
    def poll(self, /, handler: collections.abc.Callable[..., object], fragment_limit: int = 10, zero_copy: bool = False, with_header: bool = True) -> int:
        """
        aeron_subscription_controlled_poll with reassembly: handler(data, header) per message. data is bytes, or with zero_copy a read-only memoryview dead after the call; header is a view valid during the call.
        """
    def poll_batch(self, /, fragment_limit: int = 100) -> list[bytes]:
        """
        aeron_subscription_controlled_poll collecting reassembled payloads into a list of bytes.
        """
    def poll_fragments(self, /, handler: collections.abc.Callable[..., object], fragment_limit: int = 10, zero_copy: bool = False, with_header: bool = True) -> int:
        """
        aeron_subscription_controlled_poll without reassembly: the handler sees raw fragments.
        """
    def resolved_channel(self) -> str | None:
        """
        aeron_subscription_try_resolve_channel_endpoint_port: the channel with an endpoint port 0 replaced by the port bound, or None while not bound yet.
        """
    def resolved_endpoint(self) -> str:
        """
        aeron_subscription_resolved_endpoint
        """
    @property
    def channel(self) -> str:
        ...
    @property
    def channel_status(self) -> int:
        """
        aeron_subscription_channel_status
        """
    @property
    def image_count(self) -> int:
        """
        aeron_subscription_image_count
        """
    @property
    def is_closed(self) -> bool:
        """
        aeron_subscription_is_closed
        """
    @property
    def is_connected(self) -> bool:
        """
        aeron_subscription_is_connected
        """
    @property
    def registration_id(self) -> int:
        ...
    @property
    def stream_id(self) -> int:
        ...
class PollSet:
    """
    Many subscriptions and images polled by one call (not thread-safe; see aeron_py.PollSet).
    """
    def __contains__(self, owner: typing.Any) -> bool:
        ...
    def __init__(self) -> None:
        ...
    def __len__(self) -> int:
        ...
    def add(self, owner: typing.Any, key: typing.Any) -> None:
        """
        Adds a Subscription or a live Image with its key (both held by strong references). ValueError if already in the set, TypeError for anything else, AeronError if closed.
        """
    def clear(self) -> None:
        """
        Removes every entry.
        """
    def end_of_stream(self) -> list[typing.Any]:
        """
        (key, session_id) of each image that reached its end of stream since the last call (aeron_image_is_end_of_stream; a subscription's images are walked with aeron_subscription_for_each_image), each reported once.
        """
    def poll(self, /, fragment_limit: int = 10, max_messages: int | None = None) -> list[tuple[typing.Any, int, bytes]]:
        """
        Polls every entry once (aeron_subscription_controlled_poll / aeron_image_controlled_poll through an aeron_controlled_fragment_assembler_t each: messages are reassembled), up to fragment_limit fragments per entry, and returns the messages as a list of (key, session_id, bytes) in delivery order ([] when nothing arrived). With max_messages, stops once that many were collected; the next poll then starts after the entry that filled it. Entries whose subscription, image or client was closed are dropped first.
        """
    def remove(self, owner: typing.Any) -> bool:
        """
        Removes an entry; False if it is not in the set.
        """
class AsyncDestination:
    """
    aeron_async_destination_t
    """
    def poll(self) -> bool:
        """
        aeron_*_async_destination_poll: True when done.
        """
    @property
    def registration_id(self) -> int:
        """
        aeron_async_destination_get_registration_id: the id the driver registers the destination under (for remove_destination_by_id).
        """
class BufferClaim:
    """
    aeron_buffer_claim_t: a writable window of the log.
    """
    def abort(self, /) -> None:
        """
        aeron_buffer_claim_abort: turn the claimed space into padding.
        """
    def commit(self, /) -> None:
        """
        aeron_buffer_claim_commit: publish the claimed bytes. Raises RuntimeError when already ended, PublicationClosedError / ClientClosedError when its publication / client closed first (it was aborted).
        """
    @property
    def done(self) -> bool:
        """
        True once committed, aborted, or ended by a close.
        """
    @property
    def length(self) -> int:
        """
        Claimed bytes.
        """
    @property
    def position(self) -> int:
        """
        The stream position after this message (try_claim's result).
        """
    @property
    def state(self) -> str:
        """
        'pending', 'committed', 'aborted', 'publication_closed' or 'client_closed'.
        """
    @property
    def data(self) -> memoryview:
        """
        Writable memoryview of the claimed space; it and every slice of it raise ValueError once the claim ends.
        """
class Publication:
    """
    aeron_publication_t (thread-safe) or aeron_exclusive_publication_t (single writer).
    """
    def append_padding(self, length: int, /) -> int:
        """
        aeron_exclusive_publication_append_padding: append a padding frame of `length` bytes (subscribers skip it), e.g. to align the next message; returns and raises as offer(). ExclusivePublication only (TypeError otherwise).
        """
    def async_add_destination(self, uri: str) -> AsyncDestination:
        """
        aeron_publication_async_add_destination (MDC manual control mode).
        """
    def async_remove_destination(self, uri: str) -> AsyncDestination:
        """
        aeron_publication_async_remove_destination
        """
    def async_remove_destination_by_id(self, destination_registration_id: typing.SupportsInt | typing.SupportsIndex) -> AsyncDestination:
        """
        aeron_publication_async_remove_destination_by_id: the destination the driver registered under that id (AsyncDestination.registration_id of its add).
        """
    def close(self) -> None:
        """
        aeron_publication_close; aborts pending claims first. Idempotent.
        """
    def local_sockaddrs(self) -> list[str]:
        """
        aeron_publication_local_sockaddrs (every bound address).
        """
    def offer(self, buffer: typing_extensions.Buffer, /) -> int:
        """
        aeron_publication_offer (or aeron_exclusive_publication_offer): offer one message, zero-copy from bytes or any C-contiguous buffer. Returns the new position (> 0), or NOT_CONNECTED / BACK_PRESSURED / ADMIN_ACTION (negative) to retry later; raises PublicationClosedError, MaxPositionExceededError or PublicationError.
        """
    def offer_batch(self, buffers: collections.abc.Sequence[typing_extensions.Buffer], /) -> int:
        """
        aeron_publication_offer for each buffer in order until one is not accepted. Returns how many were offered (a retryable result stopped the rest); raises the terminal OfferError subclasses, TypeError naming the index of an item that is not bytes-like.
        """
    def offerv(self, parts: collections.abc.Sequence[typing_extensions.Buffer], /) -> int:
        """
        aeron_publication_offerv: offer ONE message gathered from the parts in order (e.g. a header and a body, no concatenation in Python), zero-copy. Returns and raises as offer(); ValueError for no parts or more than 1024.
        """
    def revoke(self) -> None:
        """
        aeron_exclusive_publication_revoke: close now, and end the stream for every subscriber at once (their images go, is_publication_revoked True) instead of letting them drain it; exclusive publications only (TypeError otherwise), AeronError once closed.
        """
    def revoke_on_close(self) -> None:
        """
        aeron_exclusive_publication_revoke_on_close: the next close() revokes (as revoke()), e.g. when the publication is closed by a with block or its client; exclusive publications only.
        """
    def try_claim(self, length: int, /) -> BufferClaim:
        """
        aeron_publication_try_claim: claim `length` bytes of the log to write in place. Returns a Claim (commit() or abort() it, or use it as a context manager); raises the typed OfferError for every negative result (`.retryable` tells which to retry).
        """
    @property
    def _work(self) -> typing.Any:
        """
        The owning client's do_work in conductor-invoker mode, or None.
        """
    @_work.setter
    def _work(self, arg0: typing.Any) -> None:
        ...
    @property
    def channel(self) -> str:
        """
        aeron_publication_constants_t.channel
        """
    @property
    def channel_status(self) -> int:
        """
        aeron_publication_channel_status
        """
    @property
    def initial_term_id(self) -> int:
        ...
    @property
    def is_closed(self) -> bool:
        """
        aeron_publication_is_closed
        """
    @property
    def is_connected(self) -> bool:
        """
        aeron_publication_is_connected
        """
    @property
    def is_exclusive(self) -> bool:
        """
        True for an aeron_exclusive_publication_t.
        """
    @property
    def max_message_length(self) -> int:
        ...
    @property
    def max_payload_length(self) -> int:
        ...
    @property
    def max_possible_position(self) -> int:
        ...
    @property
    def original_registration_id(self) -> int:
        ...
    @property
    def position(self) -> int:
        """
        aeron_publication_position
        """
    @property
    def position_bits_to_shift(self) -> int:
        ...
    @property
    def position_limit(self) -> int:
        """
        aeron_publication_position_limit
        """
    @property
    def registration_id(self) -> int:
        ...
    @property
    def session_id(self) -> int:
        ...
    @property
    def stream_id(self) -> int:
        ...
    @property
    def term_buffer_length(self) -> int:
        ...
class CountersReader:
    """
    aeron_counters_reader_t
    """
    def counters(self) -> list[typing.Any]:
        """
        aeron_counters_reader_foreach_counter: [(counter_id, type_id, label, value, key)].
        """
    def find_by_type_id_and_registration_id(self, type_id: typing.SupportsInt | typing.SupportsIndex, registration_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        aeron_counters_reader_find_by_type_id_and_registration_id
        """
    def free_for_reuse_deadline_ms(self, counter_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        aeron_counters_reader_free_for_reuse_deadline_ms: when a freed slot may be reused (epoch ms)
        """
    def key(self, counter_id: typing.SupportsInt | typing.SupportsIndex) -> bytes:
        """
        aeron_counters_reader_metadata_key: a copy of the counter's key (the full key field)
        """
    def label(self, counter_id: typing.SupportsInt | typing.SupportsIndex) -> str:
        """
        aeron_counters_reader_counter_label
        """
    def owner_id(self, counter_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        aeron_counters_reader_counter_owner_id: the client id that allocated it
        """
    def reference_id(self, counter_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        aeron_counters_reader_counter_reference_id
        """
    def registration_id(self, counter_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        aeron_counters_reader_counter_registration_id
        """
    def state(self, counter_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        aeron_counters_reader_counter_state
        """
    def type_id(self, counter_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        aeron_counters_reader_counter_type_id
        """
    def value(self, counter_id: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        aeron_counters_reader_addr, read atomically. IndexError outside 0..max_counter_id.
        """
    @property
    def max_counter_id(self) -> int:
        """
        aeron_counters_reader_max_counter_id
        """
class ClientCounter:
    """
    aeron_counter_t: a counter this client allocated in the driver's CnC file (seen by every reader of it, e.g. python -m aeron_py.stat). Closed with its client.
    """
    def close(self) -> None:
        """
        aeron_counter_close; idempotent.
        """
    def compare_and_set(self, expected: typing.SupportsInt | typing.SupportsIndex, update: typing.SupportsInt | typing.SupportsIndex) -> bool:
        """
        Set to update if it is expected (atomically); whether it did.
        """
    def increment(self, delta: typing.SupportsInt | typing.SupportsIndex = 1) -> int:
        """
        Add delta atomically; returns the new value.
        """
    @property
    def counter_id(self) -> int:
        """
        aeron_counter_constants_t.counter_id: its slot in the CnC file
        """
    @property
    def is_closed(self) -> bool:
        """
        aeron_counter_is_closed
        """
    @property
    def registration_id(self) -> int:
        """
        aeron_counter_constants_t.registration_id
        """
    @property
    def value(self) -> int:
        """
        The counter's value (an acquire load; set: a release store).
        """
    @value.setter
    def value(self, arg1: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class AsyncAddPublication:
    """
    aeron_async_add_publication_t
    """
    def cancel(self) -> bool:
        """
        aeron_async_add_*_cancel: give the add up (the driver removes what it makes for it); False when it already completed.
        """
    def poll(self) -> Publication | None:
        """
        The new handle, or None while the driver has not answered (aeron_async_add_*_poll).
        """
    @property
    def registration_id(self) -> int:
        ...
class AsyncAddExclusivePublication:
    """
    aeron_async_add_exclusive_publication_t
    """
    def cancel(self) -> bool:
        """
        aeron_async_add_*_cancel: give the add up (the driver removes what it makes for it); False when it already completed.
        """
    def poll(self) -> Publication | None:
        """
        The new handle, or None while the driver has not answered (aeron_async_add_*_poll).
        """
    @property
    def registration_id(self) -> int:
        ...
class AsyncAddSubscription:
    """
    aeron_async_add_subscription_t
    """
    def cancel(self) -> bool:
        """
        aeron_async_add_*_cancel: give the add up (the driver removes what it makes for it); False when it already completed.
        """
    def poll(self) -> Subscription | None:
        """
        The new handle, or None while the driver has not answered (aeron_async_add_*_poll).
        """
    @property
    def registration_id(self) -> int:
        ...
class AsyncAddCounter:
    """
    aeron_async_add_counter_t
    """
    def cancel(self) -> bool:
        """
        aeron_async_add_*_cancel: give the add up (the driver removes what it makes for it); False when it already completed.
        """
    def poll(self) -> typing.Any:
        """
        The new handle, or None while the driver has not answered (aeron_async_add_*_poll).
        """
    @property
    def registration_id(self) -> int:
        ...
class AsyncNextSessionId:
    """
    aeron_async_get_next_available_session_id_t
    """
    def poll(self) -> typing.Any:
        """
        The session id, or None while the driver has not answered.
        """
class Client:
    """
    aeron_t with its aeron_context_t (aeron_init + aeron_start).
    """
    def __init__(self, *, dir: str | None = None, driver_timeout_ms: typing.SupportsInt | typing.SupportsIndex | None = None, keepalive_interval_ns: typing.SupportsInt | typing.SupportsIndex | None = None, resource_linger_duration_ns: typing.SupportsInt | typing.SupportsIndex | None = None, idle_sleep_duration_ns: typing.SupportsInt | typing.SupportsIndex | None = None, pre_touch_mapped_memory: bool | None = None, use_conductor_agent_invoker: bool = False, client_name: str | None = None, error_handler: typing.Any | None = None, publication_error_handler: typing.Any | None = None, counter_handler: typing.Any | None = None, resource_handler: typing.Any | None = None) -> None:
        ...
    def async_add_counter(self, type_id: typing.SupportsInt | typing.SupportsIndex, key: bytes, label: str, registration_id: typing.SupportsInt | typing.SupportsIndex | None = None) -> AsyncAddCounter:
        """
        aeron_async_add_counter, or aeron_async_add_static_counter with a registration_id.
        """
    def async_add_exclusive_publication(self, channel: str, stream_id: typing.SupportsInt | typing.SupportsIndex) -> AsyncAddExclusivePublication:
        """
        aeron_async_add_exclusive_publication
        """
    def async_add_publication(self, channel: str, stream_id: typing.SupportsInt | typing.SupportsIndex) -> AsyncAddPublication:
        """
        aeron_async_add_publication
        """
    def async_add_subscription(self, channel: str, stream_id: typing.SupportsInt | typing.SupportsIndex, on_available_image: typing.Any | None = None, on_unavailable_image: typing.Any | None = None) -> AsyncAddSubscription:
        """
        aeron_async_add_subscription
        """
    def async_next_session_id(self, stream_id: typing.SupportsInt | typing.SupportsIndex) -> AsyncNextSessionId:
        """
        aeron_async_next_session_id
        """
    def close(self) -> None:
        """
        aeron_close + aeron_context_close; idempotent. Deferred until a poll in progress returns.
        """
    def counters_reader(self) -> CountersReader:
        """
        aeron_counters_reader
        """
    def deliver_events(self, timeout: typing.SupportsFloat | typing.SupportsIndex) -> bool:
        """
        Calls the error/image callbacks for events the conductor queued, waiting up to `timeout` s (GIL released) for some. False once the client is closed.
        """
    def main_do_work(self) -> int:
        """
        aeron_main_do_work (conductor agent invoker mode).
        """
    def main_idle_strategy(self, work_count: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_main_idle_strategy (releases the GIL).
        """
    def next_correlation_id(self) -> int:
        """
        aeron_next_correlation_id
        """
    def settings(self) -> dict[typing.Any, typing.Any]:
        """
        The client context's settings: dir, client_name, driver_timeout_ms, keepalive_interval_ns, resource_linger_duration_ns, idle_sleep_duration_ns, pre_touch_mapped_memory, use_conductor_agent_invoker (aeron_context_get_*).
        """
    @property
    def client_id(self) -> int:
        """
        aeron_client_id
        """
    @property
    def dir(self) -> str:
        """
        aeron_context_get_dir
        """
    @property
    def driver_timeout_ms(self) -> int:
        """
        aeron_context_get_driver_timeout_ms
        """
    @property
    def is_closed(self) -> bool:
        """
        aeron_is_closed
        """
    @property
    def lost_events(self) -> int:
        """
        Conductor events dropped because they could not be queued (out of memory).
        """
class EndpointFilter:
    """
    aeron_py_endpoint_filter_t: a receive-side UDP channel interceptor for the embedded driver.
    """
    def __init__(self, max_setup_term_length: typing.SupportsInt | typing.SupportsIndex, setup_rate: typing.SupportsFloat | typing.SupportsIndex, setup_burst: typing.SupportsFloat | typing.SupportsIndex, max_images_per_source: typing.SupportsInt | typing.SupportsIndex, max_images_total: typing.SupportsInt | typing.SupportsIndex, ipv4_prefix: typing.SupportsInt | typing.SupportsIndex, ipv6_prefix: typing.SupportsInt | typing.SupportsIndex, max_sources: typing.SupportsInt | typing.SupportsIndex, max_pending: typing.SupportsInt | typing.SupportsIndex, pending_timeout_ns: typing.SupportsInt | typing.SupportsIndex, large_term_length: typing.SupportsInt | typing.SupportsIndex = 0, max_large_images_per_source: typing.SupportsInt | typing.SupportsIndex = 0, max_large_images_total: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        aeron_py_endpoint_filter_create (0 or less: no limit; large_term_length 0: no large-term budget).
        """
    def counter_ids(self) -> dict[typing.Any, typing.Any]:
        """
        aeron_py_endpoint_filter_counter_id for every reason (-1: not in a CnC file).
        """
    def dropped(self) -> dict[typing.Any, typing.Any]:
        """
        aeron_py_endpoint_filter_dropped for every reason.
        """
    def last_term_drop(self) -> typing.Any:
        """
        aeron_py_endpoint_filter_last_term_drop: None, or (16-byte address, term length, reason) of the last SETUP dropped for its term length (the cap or the large-term budget).
        """
    def last_traffic_ns(self) -> int:
        """
        aeron_py_traffic_bell_last_ns: CLOCK_MONOTONIC ns (time.monotonic_ns) of the latest traffic or touch.
        """
    def publish(self, blocklist: collections.abc.Sequence[tuple[bytes, typing.SupportsInt | typing.SupportsIndex]], owners: collections.abc.Sequence[tuple[typing.SupportsInt | typing.SupportsIndex, bytes]]) -> None:
        """
        aeron_py_endpoint_filter_publish: replace the rule table atomically (GIL released).
        """
    def touch_traffic(self) -> None:
        """
        aeron_py_traffic_bell_touch: count now as traffic for the quiet idle strategy (no wake-up).
        """
    def traffic_fd(self) -> int:
        """
        aeron_py_traffic_bell_fd: the eventfd a waiter sleeps on (readable after a ring while armed).
        """
    def traffic_sequence(self) -> int:
        """
        aeron_py_traffic_bell_sequence: datagrams with application traffic (data, end of stream, SETUP) so far.
        """
    def wait_for_traffic(self, seen: typing.SupportsInt | typing.SupportsIndex, timeout_ns: typing.SupportsInt | typing.SupportsIndex) -> bool:
        """
        aeron_py_traffic_bell_wait: block (GIL released) until the traffic sequence differs from `seen` or `timeout_ns` passes (< 0: no limit); True when it rang. One waiter at a time.
        """
    @property
    def phase(self) -> str:
        ...
class SecureTransport:
    """
    aeron_py_secure_transport_t: per-datagram authenticated encryption of chosen UDP sessions inside the embedded driver.
    """
    def __init__(self) -> None:
        """
        aeron_py_secure_transport_create (no keys).
        """
    def add(self, role: typing.SupportsInt | typing.SupportsIndex, port: typing.SupportsInt | typing.SupportsIndex, stream_id: typing.SupportsInt | typing.SupportsIndex, session_id: typing.SupportsInt | typing.SupportsIndex, key: bytes) -> None:
        """
        aeron_py_secure_transport_add: install (or rotate) a session's 32-byte key (GIL released).
        """
    def counter_ids(self) -> dict[typing.Any, typing.Any]:
        """
        aeron_py_secure_transport_counter_id for every counter (-1: not in a CnC file).
        """
    def counters(self) -> dict[typing.Any, typing.Any]:
        """
        aeron_py_secure_transport_count for every counter.
        """
    def forget_previous(self, role: typing.SupportsInt | typing.SupportsIndex, port: typing.SupportsInt | typing.SupportsIndex, stream_id: typing.SupportsInt | typing.SupportsIndex, session_id: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_py_secure_transport_forget_previous: stop opening with the key before the last rotation.
        """
    def port_count(self) -> int:
        ...
    def remove(self, role: typing.SupportsInt | typing.SupportsIndex, port: typing.SupportsInt | typing.SupportsIndex, stream_id: typing.SupportsInt | typing.SupportsIndex, session_id: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_py_secure_transport_remove: KeyError when absent.
        """
    def session_count(self) -> int:
        ...
    def set_port(self, port: typing.SupportsInt | typing.SupportsIndex, secured: bool) -> None:
        """
        aeron_py_secure_transport_set_port: drop every datagram to this local port that no session opens.
        """
    @property
    def phase(self) -> str:
        ...
class DriverContext:
    """
    aeron_driver_context_t (aeron_driver_context_init).
    """
    def __init__(self) -> None:
        ...
    def get_client_liveness_timeout_ns(self) -> int:
        """
        aeron_driver_context_get_client_liveness_timeout_ns
        """
    def get_conductor_cpu_affinity(self) -> int:
        """
        aeron_driver_context_get_conductor_cpu_affinity
        """
    def get_conductor_idle_strategy(self) -> str:
        """
        aeron_driver_context_get_conductor_idle_strategy
        """
    def get_conductor_idle_strategy_init_args(self) -> str:
        """
        aeron_driver_context_get_conductor_idle_strategy_init_args
        """
    def get_connect_enabled(self) -> int:
        """
        aeron_driver_context_get_connect_enabled
        """
    def get_counters_buffer_length(self) -> int:
        """
        aeron_driver_context_get_counters_buffer_length
        """
    def get_counters_free_to_reuse_timeout_ns(self) -> int:
        """
        aeron_driver_context_get_counters_free_to_reuse_timeout_ns
        """
    def get_dir(self) -> str:
        """
        aeron_driver_context_get_dir
        """
    def get_dir_delete_on_shutdown(self) -> bool:
        """
        aeron_driver_context_get_dir_delete_on_shutdown
        """
    def get_dir_delete_on_start(self) -> bool:
        """
        aeron_driver_context_get_dir_delete_on_start
        """
    def get_dir_warn_if_exists(self) -> bool:
        """
        aeron_driver_context_get_dir_warn_if_exists
        """
    def get_driver_timeout_ms(self) -> int:
        """
        aeron_driver_context_get_driver_timeout_ms
        """
    def get_enable_experimental_features(self) -> int:
        """
        aeron_driver_context_get_enable_experimental_features
        """
    def get_error_buffer_length(self) -> int:
        """
        aeron_driver_context_get_error_buffer_length
        """
    def get_file_page_size(self) -> int:
        """
        aeron_driver_context_get_file_page_size
        """
    def get_flow_control_group_min_size(self) -> int:
        """
        aeron_driver_context_get_flow_control_group_min_size
        """
    def get_flow_control_group_tag(self) -> int:
        """
        aeron_driver_context_get_flow_control_group_tag
        """
    def get_flow_control_receiver_timeout_ns(self) -> int:
        """
        aeron_driver_context_get_flow_control_receiver_timeout_ns
        """
    def get_image_liveness_timeout_ns(self) -> int:
        """
        aeron_driver_context_get_image_liveness_timeout_ns
        """
    def get_ipc_mtu_length(self) -> int:
        """
        aeron_driver_context_get_ipc_mtu_length
        """
    def get_ipc_publication_term_window_length(self) -> int:
        """
        aeron_driver_context_get_ipc_publication_term_window_length
        """
    def get_ipc_term_buffer_length(self) -> int:
        """
        aeron_driver_context_get_ipc_term_buffer_length
        """
    def get_keepalive_interval_ns(self) -> int:
        """
        aeron_py_driver_context_keepalive_interval: 0 when keepalives are not thinned.
        """
    def get_loss_report_buffer_length(self) -> int:
        """
        aeron_driver_context_get_loss_report_buffer_length
        """
    def get_low_file_store_warning_threshold(self) -> int:
        """
        aeron_driver_context_get_low_file_store_warning_threshold
        """
    def get_max_resend(self) -> int:
        """
        aeron_driver_context_get_max_resend
        """
    def get_mtu_length(self) -> int:
        """
        aeron_driver_context_get_mtu_length
        """
    def get_nak_multicast_group_size(self) -> int:
        """
        aeron_driver_context_get_nak_multicast_group_size
        """
    def get_nak_multicast_max_backoff_ns(self) -> int:
        """
        aeron_driver_context_get_nak_multicast_max_backoff_ns
        """
    def get_nak_unicast_delay_ns(self) -> int:
        """
        aeron_driver_context_get_nak_unicast_delay_ns
        """
    def get_nak_unicast_retry_delay_ratio(self) -> int:
        """
        aeron_driver_context_get_nak_unicast_retry_delay_ratio
        """
    def get_name_resolver_init_args(self) -> str:
        """
        aeron_driver_context_get_name_resolver_init_args
        """
    def get_name_resolver_threshold_ns(self) -> int:
        """
        aeron_driver_context_get_name_resolver_threshold_ns
        """
    def get_native_resource_agent_cpu_affinity(self) -> int:
        """
        aeron_driver_context_get_native_resource_agent_cpu_affinity
        """
    def get_native_resource_agent_idle_strategy(self) -> str:
        """
        aeron_driver_context_get_native_resource_agent_idle_strategy
        """
    def get_native_resource_agent_idle_strategy_init_args(self) -> str:
        """
        aeron_driver_context_get_native_resource_agent_idle_strategy_init_args
        """
    def get_network_publication_max_messages_per_send(self) -> int:
        """
        aeron_driver_context_get_network_publication_max_messages_per_send
        """
    def get_perform_storage_checks(self) -> bool:
        """
        aeron_driver_context_get_perform_storage_checks
        """
    def get_print_configuration(self) -> bool:
        """
        aeron_driver_context_get_print_configuration
        """
    def get_publication_connection_timeout_ns(self) -> int:
        """
        aeron_driver_context_get_publication_connection_timeout_ns
        """
    def get_publication_linger_timeout_ns(self) -> int:
        """
        aeron_driver_context_get_publication_linger_timeout_ns
        """
    def get_publication_reserved_session_id_high(self) -> int:
        """
        aeron_driver_context_get_publication_reserved_session_id_high
        """
    def get_publication_reserved_session_id_low(self) -> int:
        """
        aeron_driver_context_get_publication_reserved_session_id_low
        """
    def get_publication_term_window_length(self) -> int:
        """
        aeron_driver_context_get_publication_term_window_length
        """
    def get_publication_unblock_timeout_ns(self) -> int:
        """
        aeron_driver_context_get_publication_unblock_timeout_ns
        """
    def get_rcv_initial_window_length(self) -> int:
        """
        aeron_driver_context_get_rcv_initial_window_length
        """
    def get_rcv_status_message_timeout_ns(self) -> int:
        """
        aeron_driver_context_get_rcv_status_message_timeout_ns
        """
    def get_re_resolution_check_interval_ns(self) -> int:
        """
        aeron_driver_context_get_re_resolution_check_interval_ns
        """
    def get_receiver_cpu_affinity(self) -> int:
        """
        aeron_driver_context_get_receiver_cpu_affinity
        """
    def get_receiver_group_consideration(self) -> str:
        """
        aeron_driver_context_get_receiver_group_consideration: 'false', 'true' or 'infer'
        """
    def get_receiver_group_tag_is_present(self) -> bool:
        """
        aeron_driver_context_get_receiver_group_tag_is_present
        """
    def get_receiver_group_tag_value(self) -> int:
        """
        aeron_driver_context_get_receiver_group_tag_value
        """
    def get_receiver_idle_strategy(self) -> str:
        """
        aeron_driver_context_get_receiver_idle_strategy
        """
    def get_receiver_idle_strategy_init_args(self) -> str:
        """
        aeron_driver_context_get_receiver_idle_strategy_init_args
        """
    def get_receiver_io_vector_capacity(self) -> int:
        """
        aeron_driver_context_get_receiver_io_vector_capacity
        """
    def get_receiver_poll_to_slow_work_ratio(self) -> int:
        """
        aeron_driver_context_get_receiver_poll_to_slow_work_ratio
        """
    def get_receiver_wildcard_port_range(self) -> tuple[int, int]:
        """
        aeron_driver_context_get_receiver_wildcard_port_range: (low, high)
        """
    def get_rejoin_stream(self) -> bool:
        """
        aeron_driver_context_get_rejoin_stream
        """
    def get_reliable_stream(self) -> bool:
        """
        aeron_driver_context_get_reliable_stream
        """
    def get_resolver_bootstrap_neighbor(self) -> str:
        """
        aeron_driver_context_get_resolver_bootstrap_neighbor
        """
    def get_resolver_bootstrap_resolution_interval_ns(self) -> int:
        """
        aeron_driver_context_get_resolver_bootstrap_resolution_interval_ns
        """
    def get_resolver_interface(self) -> str:
        """
        aeron_driver_context_get_resolver_interface
        """
    def get_resolver_name(self) -> str:
        """
        aeron_driver_context_get_resolver_name
        """
    def get_resolver_neighbor_resolution_interval_ns(self) -> int:
        """
        aeron_driver_context_get_resolver_neighbor_resolution_interval_ns
        """
    def get_resolver_neighbor_timeout_ns(self) -> int:
        """
        aeron_driver_context_get_resolver_neighbor_timeout_ns
        """
    def get_resource_free_limit(self) -> int:
        """
        aeron_driver_context_get_resource_free_limit
        """
    def get_retransmit_unicast_delay_ns(self) -> int:
        """
        aeron_driver_context_get_retransmit_unicast_delay_ns
        """
    def get_retransmit_unicast_linger_ns(self) -> int:
        """
        aeron_driver_context_get_retransmit_unicast_linger_ns
        """
    def get_self_resolution_interval_ns(self) -> int:
        """
        aeron_driver_context_get_self_resolution_interval_ns
        """
    def get_send_to_status_poll_ratio(self) -> int:
        """
        aeron_driver_context_get_send_to_status_poll_ratio
        """
    def get_sender_cpu_affinity(self) -> int:
        """
        aeron_driver_context_get_sender_cpu_affinity
        """
    def get_sender_idle_strategy(self) -> str:
        """
        aeron_driver_context_get_sender_idle_strategy
        """
    def get_sender_idle_strategy_init_args(self) -> str:
        """
        aeron_driver_context_get_sender_idle_strategy_init_args
        """
    def get_sender_io_vector_capacity(self) -> int:
        """
        aeron_driver_context_get_sender_io_vector_capacity
        """
    def get_sender_wildcard_port_range(self) -> tuple[int, int]:
        """
        aeron_driver_context_get_sender_wildcard_port_range: (low, high)
        """
    def get_shared_idle_strategy(self) -> str:
        """
        aeron_driver_context_get_shared_idle_strategy
        """
    def get_shared_idle_strategy_init_args(self) -> str:
        """
        aeron_driver_context_get_shared_idle_strategy_init_args
        """
    def get_sharednetwork_idle_strategy(self) -> str:
        """
        aeron_driver_context_get_sharednetwork_idle_strategy
        """
    def get_sharednetwork_idle_strategy_init_args(self) -> str:
        """
        aeron_driver_context_get_sharednetwork_idle_strategy_init_args
        """
    def get_socket_multicast_ttl(self) -> int:
        """
        aeron_driver_context_get_socket_multicast_ttl
        """
    def get_socket_so_rcvbuf(self) -> int:
        """
        aeron_driver_context_get_socket_so_rcvbuf
        """
    def get_socket_so_sndbuf(self) -> int:
        """
        aeron_driver_context_get_socket_so_sndbuf
        """
    def get_socket_tos(self) -> int:
        """
        aeron_driver_context_get_socket_tos
        """
    def get_spies_simulate_connection(self) -> bool:
        """
        aeron_driver_context_get_spies_simulate_connection
        """
    def get_stream_session_limit(self) -> int:
        """
        aeron_driver_context_get_stream_session_limit
        """
    def get_term_buffer_length(self) -> int:
        """
        aeron_driver_context_get_term_buffer_length
        """
    def get_term_buffer_sparse_file(self) -> bool:
        """
        aeron_driver_context_get_term_buffer_sparse_file
        """
    def get_tether_subscriptions(self) -> bool:
        """
        aeron_driver_context_get_tether_subscriptions
        """
    def get_thread_affinity_fail_on_validation_errors(self) -> bool:
        """
        aeron_driver_context_get_thread_affinity_fail_on_validation_errors
        """
    def get_thread_affinity_use_cpuset_offsets(self) -> bool:
        """
        aeron_driver_context_get_thread_affinity_use_cpuset_offsets
        """
    def get_thread_naming(self) -> str:
        """
        aeron_driver_context_get_thread_naming: 'classic' or 'new'
        """
    def get_threading_mode(self) -> int:
        ...
    def get_timer_interval_ns(self) -> int:
        """
        aeron_driver_context_get_timer_interval_ns
        """
    def get_to_clients_buffer_length(self) -> int:
        """
        aeron_driver_context_get_to_clients_buffer_length
        """
    def get_to_conductor_buffer_length(self) -> int:
        """
        aeron_driver_context_get_to_conductor_buffer_length
        """
    def get_udp_channel_transport_poller_iteration_threshold(self) -> int:
        """
        aeron_driver_context_get_udp_channel_transport_poller_iteration_threshold
        """
    def get_udp_channel_transport_poller_socket_poll_limit(self) -> int:
        """
        aeron_driver_context_get_udp_channel_transport_poller_socket_poll_limit
        """
    def get_untethered_linger_timeout_ns(self) -> int:
        """
        aeron_driver_context_get_untethered_linger_timeout_ns
        """
    def get_untethered_resting_timeout_ns(self) -> int:
        """
        aeron_driver_context_get_untethered_resting_timeout_ns
        """
    def get_untethered_window_limit_timeout_ns(self) -> int:
        """
        aeron_driver_context_get_untethered_window_limit_timeout_ns
        """
    def set_client_liveness_timeout_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_client_liveness_timeout_ns
        """
    def set_conductor_cpu_affinity(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_conductor_cpu_affinity
        """
    def set_conductor_idle_strategy(self, value: str) -> None:
        """
        aeron_driver_context_set_conductor_idle_strategy
        """
    def set_conductor_idle_strategy_init_args(self, value: str) -> None:
        """
        aeron_driver_context_set_conductor_idle_strategy_init_args
        """
    def set_conductor_queue_capacity(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_py_driver_context_set_conductor_queue_capacity (driver_queues.h): the conductor's command ring, larger than Aeron's fixed 128 KiB so that a SHARED driver with thousands of channels cannot fill it and spin forever.
        """
    def set_connect_enabled(self, value: bool) -> None:
        """
        aeron_driver_context_set_connect_enabled
        """
    def set_counters_buffer_length(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_counters_buffer_length
        """
    def set_counters_free_to_reuse_timeout_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_counters_free_to_reuse_timeout_ns
        """
    def set_dir(self, value: str) -> None:
        """
        aeron_driver_context_set_dir
        """
    def set_dir_delete_on_shutdown(self, value: bool) -> None:
        """
        aeron_driver_context_set_dir_delete_on_shutdown
        """
    def set_dir_delete_on_start(self, value: bool) -> None:
        """
        aeron_driver_context_set_dir_delete_on_start
        """
    def set_dir_warn_if_exists(self, value: bool) -> None:
        """
        aeron_driver_context_set_dir_warn_if_exists
        """
    def set_driver_timeout_ms(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_driver_timeout_ms
        """
    def set_enable_experimental_features(self, value: bool) -> None:
        """
        aeron_driver_context_set_enable_experimental_features
        """
    def set_error_buffer_length(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_error_buffer_length
        """
    def set_file_page_size(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_file_page_size
        """
    def set_flow_control_group_min_size(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_flow_control_group_min_size
        """
    def set_flow_control_group_tag(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_flow_control_group_tag
        """
    def set_flow_control_receiver_timeout_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_flow_control_receiver_timeout_ns
        """
    def set_image_liveness_timeout_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_image_liveness_timeout_ns
        """
    def set_ipc_mtu_length(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_ipc_mtu_length
        """
    def set_ipc_publication_term_window_length(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_ipc_publication_term_window_length
        """
    def set_ipc_term_buffer_length(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_ipc_term_buffer_length
        """
    def set_keepalive_interval_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_py_driver_context_set_keepalive_interval (keepalive_thinning.h): an idle stream's heartbeats (every 100 ms in Aeron) and unchanged status messages (every status_message_timeout) reach the socket at most once per interval per destination; the rest are counted in 'aeron_py keepalives thinned'.
        """
    def set_keepalive_ports(self, value: tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        aeron_py_driver_context_set_keepalive_ports (keepalive_thinning.h): thin only the keepalives of channels bound to a local port in [low, high] (default: all).
        """
    def set_loss_report_buffer_length(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_loss_report_buffer_length
        """
    def set_low_file_store_warning_threshold(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_low_file_store_warning_threshold
        """
    def set_max_resend(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_max_resend
        """
    def set_mtu_length(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_mtu_length
        """
    def set_nak_multicast_group_size(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_nak_multicast_group_size
        """
    def set_nak_multicast_max_backoff_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_nak_multicast_max_backoff_ns
        """
    def set_nak_unicast_delay_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_nak_unicast_delay_ns
        """
    def set_nak_unicast_retry_delay_ratio(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_nak_unicast_retry_delay_ratio
        """
    def set_name_resolver_init_args(self, value: str) -> None:
        """
        aeron_driver_context_set_name_resolver_init_args
        """
    def set_name_resolver_threshold_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_name_resolver_threshold_ns
        """
    def set_native_resource_agent_cpu_affinity(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_native_resource_agent_cpu_affinity
        """
    def set_native_resource_agent_idle_strategy(self, value: str) -> None:
        """
        aeron_driver_context_set_native_resource_agent_idle_strategy
        """
    def set_native_resource_agent_idle_strategy_init_args(self, value: str) -> None:
        """
        aeron_driver_context_set_native_resource_agent_idle_strategy_init_args
        """
    def set_network_publication_max_messages_per_send(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_network_publication_max_messages_per_send
        """
    def set_perform_storage_checks(self, value: bool) -> None:
        """
        aeron_driver_context_set_perform_storage_checks
        """
    def set_print_configuration(self, value: bool) -> None:
        """
        aeron_driver_context_set_print_configuration
        """
    def set_publication_connection_timeout_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_publication_connection_timeout_ns
        """
    def set_publication_linger_timeout_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_publication_linger_timeout_ns
        """
    def set_publication_reserved_session_id_high(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_publication_reserved_session_id_high
        """
    def set_publication_reserved_session_id_low(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_publication_reserved_session_id_low
        """
    def set_publication_term_window_length(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_publication_term_window_length
        """
    def set_publication_unblock_timeout_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_publication_unblock_timeout_ns
        """
    def set_rcv_initial_window_length(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_rcv_initial_window_length
        """
    def set_rcv_status_message_timeout_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_rcv_status_message_timeout_ns
        """
    def set_re_resolution_check_interval_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_re_resolution_check_interval_ns
        """
    def set_receiver_cpu_affinity(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_receiver_cpu_affinity
        """
    def set_receiver_group_consideration(self, value: str) -> None:
        """
        aeron_driver_context_set_receiver_group_consideration: 'false', 'true' or 'infer'
        """
    def set_receiver_group_tag(self, value: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        """
        aeron_driver_context_set_receiver_group_tag: the tag, or None for none
        """
    def set_receiver_idle_strategy(self, value: str) -> None:
        """
        aeron_driver_context_set_receiver_idle_strategy
        """
    def set_receiver_idle_strategy_init_args(self, value: str) -> None:
        """
        aeron_driver_context_set_receiver_idle_strategy_init_args
        """
    def set_receiver_io_vector_capacity(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_receiver_io_vector_capacity
        """
    def set_receiver_poll_to_slow_work_ratio(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_receiver_poll_to_slow_work_ratio
        """
    def set_receiver_wildcard_port_range(self, value: tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        aeron_driver_context_set_receiver_wildcard_port_range (low, high)
        """
    def set_rejoin_stream(self, value: bool) -> None:
        """
        aeron_driver_context_set_rejoin_stream
        """
    def set_reliable_stream(self, value: bool) -> None:
        """
        aeron_driver_context_set_reliable_stream
        """
    def set_resolver_bootstrap_neighbor(self, value: str) -> None:
        """
        aeron_driver_context_set_resolver_bootstrap_neighbor
        """
    def set_resolver_bootstrap_neighbor_resolution_interval_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_resolver_bootstrap_neighbor_resolution_interval_ns
        """
    def set_resolver_interface(self, value: str) -> None:
        """
        aeron_driver_context_set_resolver_interface
        """
    def set_resolver_name(self, value: str) -> None:
        """
        aeron_driver_context_set_resolver_name
        """
    def set_resolver_neighbor_resolution_interval_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_resolver_neighbor_resolution_interval_ns
        """
    def set_resolver_neighbor_timeout_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_resolver_neighbor_timeout_ns
        """
    def set_resource_free_limit(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_resource_free_limit
        """
    def set_retransmit_unicast_delay_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_retransmit_unicast_delay_ns
        """
    def set_retransmit_unicast_linger_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_retransmit_unicast_linger_ns
        """
    def set_self_resolution_interval_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_self_resolution_interval_ns
        """
    def set_send_to_status_poll_ratio(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_send_to_status_poll_ratio
        """
    def set_sender_cpu_affinity(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_sender_cpu_affinity
        """
    def set_sender_idle_strategy(self, value: str) -> None:
        """
        aeron_driver_context_set_sender_idle_strategy
        """
    def set_sender_idle_strategy_init_args(self, value: str) -> None:
        """
        aeron_driver_context_set_sender_idle_strategy_init_args
        """
    def set_sender_io_vector_capacity(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_sender_io_vector_capacity
        """
    def set_sender_wildcard_port_range(self, value: tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        aeron_driver_context_set_sender_wildcard_port_range (low, high)
        """
    def set_shared_idle_strategy(self, value: str) -> None:
        """
        aeron_driver_context_set_shared_idle_strategy
        """
    def set_shared_idle_strategy_init_args(self, value: str) -> None:
        """
        aeron_driver_context_set_shared_idle_strategy_init_args
        """
    def set_sharednetwork_idle_strategy(self, value: str) -> None:
        """
        aeron_driver_context_set_sharednetwork_idle_strategy
        """
    def set_sharednetwork_idle_strategy_init_args(self, value: str) -> None:
        """
        aeron_driver_context_set_sharednetwork_idle_strategy_init_args
        """
    def set_socket_multicast_ttl(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_socket_multicast_ttl
        """
    def set_socket_so_rcvbuf(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_socket_so_rcvbuf
        """
    def set_socket_so_sndbuf(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_socket_so_sndbuf
        """
    def set_socket_tos(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_socket_tos
        """
    def set_spies_simulate_connection(self, value: bool) -> None:
        """
        aeron_driver_context_set_spies_simulate_connection
        """
    def set_stream_session_limit(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_stream_session_limit
        """
    def set_term_buffer_length(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_term_buffer_length
        """
    def set_term_buffer_sparse_file(self, value: bool) -> None:
        """
        aeron_driver_context_set_term_buffer_sparse_file
        """
    def set_tether_subscriptions(self, value: bool) -> None:
        """
        aeron_driver_context_set_tether_subscriptions
        """
    def set_thread_affinity_fail_on_validation_errors(self, value: bool) -> None:
        """
        aeron_driver_context_set_thread_affinity_fail_on_validation_errors
        """
    def set_thread_affinity_use_cpuset_offsets(self, value: bool) -> None:
        """
        aeron_driver_context_set_thread_affinity_use_cpuset_offsets
        """
    def set_thread_naming(self, value: str) -> None:
        """
        aeron_driver_context_set_thread_naming: 'classic' or 'new'
        """
    def set_threading_mode(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_threading_mode
        """
    def set_timer_interval_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_timer_interval_ns
        """
    def set_to_clients_buffer_length(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_to_clients_buffer_length
        """
    def set_to_conductor_buffer_length(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_to_conductor_buffer_length
        """
    def set_udp_channel_transport_poller_iteration_threshold(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_udp_channel_transport_poller_iteration_threshold
        """
    def set_udp_channel_transport_poller_socket_poll_limit(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_udp_channel_transport_poller_socket_poll_limit
        """
    def set_untethered_linger_timeout_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_untethered_linger_timeout_ns
        """
    def set_untethered_resting_timeout_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_untethered_resting_timeout_ns
        """
    def set_untethered_window_limit_timeout_ns(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_context_set_untethered_window_limit_timeout_ns
        """
class Driver:
    """
    aeron_driver_t (aeron_driver_init + aeron_driver_start).
    """
    def __init__(self, context: DriverContext, manual_main_loop: bool = False, endpoint_filter: typing.Any | None = None, quiet_idle_hot_ns: typing.SupportsInt | typing.SupportsIndex = 0, quiet_idle_period_ns: typing.SupportsInt | typing.SupportsIndex = 0, quiet_idle_deep_ns: typing.SupportsInt | typing.SupportsIndex = 0, quiet_idle_deep_period_ns: typing.SupportsInt | typing.SupportsIndex = 0, secure_transport: typing.Any | None = None) -> None:
        """
        endpoint_filter: an EndpointFilter installed on the context before aeron_driver_init, its counters allocated before aeron_driver_start. quiet_idle_period_ns > 0 makes the SHARED idle strategy aeron_py_quiet_idle (traffic_bell.h): backoff while the filter's bell rang or was touched within quiet_idle_hot_ns, then one duty cycle per period; after quiet_idle_deep_ns (> 0) of silence one per quiet_idle_deep_period_ns. It adds the longest period to the context's cycle thresholds. secure_transport: a SecureTransport appended to the context's interceptors before aeron_driver_init, its counters allocated before aeron_driver_start.
        """
    def close(self, timeout: typing.SupportsFloat | typing.SupportsIndex = -1.0) -> bool:
        """
        aeron_driver_close + aeron_driver_context_close, idempotent. aeron_driver_close waits for the agent threads to end their duty cycle or idle (and for an idle() in flight on another thread); timeout >= 0 waits at most that many seconds and returns False if they had not ended (the close then finishes, and frees everything, on a thread of its own). timeout < 0 waits as long as it takes. True once the driver is closed.
        """
    def do_work(self) -> int:
        """
        aeron_driver_main_do_work (INVOKER threading mode).
        """
    def idle(self, work_count: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_driver_main_idle_strategy (releases the GIL). One thread at a time: a second thread's idle while one is in flight raises RuntimeError.
        """
    @property
    def idling(self) -> bool:
        """
        True while an idle() call is in flight (GIL released); a close waits for it.
        """
    @property
    def is_closed(self) -> bool:
        ...
    @property
    def is_stopped(self) -> bool:
        """
        True once a close has finished (agents ended, everything freed).
        """
class Cnc:
    """
    aeron_cnc_t: a media driver's CnC file, mapped read-only.
    """
    def __init__(self, dir: str, timeout_ms: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        aeron_cnc_init (releases the GIL while waiting for the file).
        """
    def close(self) -> None:
        """
        aeron_cnc_close; idempotent.
        """
    def constants(self) -> dict[typing.Any, typing.Any]:
        """
        aeron_cnc_constants
        """
    def counters_reader(self) -> CountersReader:
        """
        aeron_cnc_counters_reader
        """
    def error_log(self, since_timestamp_ms: typing.SupportsInt | typing.SupportsIndex = 0) -> list[typing.Any]:
        """
        aeron_cnc_error_log_read
        """
    def loss_report(self) -> list[typing.Any]:
        """
        aeron_cnc_loss_reporter_read
        """
    def to_driver_heartbeat(self) -> int:
        """
        aeron_cnc_to_driver_heartbeat (epoch ms).
        """
    @property
    def filename(self) -> str:
        """
        aeron_cnc_filename
        """
class IdleStrategy:
    """
    An Aeron idle strategy (aeron_idle_strategy_load).
    """
    def __init__(self, name: str, init_args: str = '') -> None:
        ...
    def idle(self, /, work_count: int = 0) -> None:
        """
        The loaded aeron_idle_strategy_func_t after a duty cycle that did `work_count` work (> 0 resets any back-off); the GIL is released while it may wait. One thread at a time: a call while another thread waits in it raises RuntimeError.
        """
    @property
    def idling(self) -> bool:
        """
        True while a thread waits in idle() with the GIL released.
        """
    @property
    def name(self) -> str:
        ...
def _adopt_fast_methods(cls: typing.Any) -> None:
    """
    Gives a Python subclass its own descriptor of each fast method it inherits, so CPython specialises the calls (aeron_py calls it for its public classes at import).
    """
def _register_publication(offer_error: typing.Any, client_closed: typing.Any, publication: type, exclusive: type, claim: type) -> None:
    """
    Private: aeron_py registers its public publication/claim classes and typed offer errors.
    """
def _register_subscription_side(subscription: typing.Any, image: typing.Any, snapshot_error: typing.Any) -> None:
    """
    The Python subclasses the extension makes Subscription and Image objects as, and the exception a live operation on a callback's Image snapshot raises (aeron_py registers them at import).
    """
def default_path() -> str:
    """
    aeron_default_path
    """
def epoch_clock() -> int:
    """
    aeron_epoch_clock
    """
def errcode() -> int:
    """
    aeron_errcode(): the last error code on this thread.
    """
def errmsg() -> str:
    """
    aeron_errmsg(): the last error message on this thread.
    """
def is_driver_active(dir: str, timeout_ms: typing.SupportsInt | typing.SupportsIndex) -> bool:
    """
    aeron_is_driver_active (releases the GIL).
    """
def nano_clock() -> int:
    """
    aeron_nano_clock
    """
def properties_buffer_load(text: str) -> None:
    """
    aeron_properties_buffer_load
    """
def properties_file_load(path: str) -> None:
    """
    aeron_properties_file_load
    """
def version_full() -> str:
    """
    aeron_version_full
    """
def version_gitsha() -> str:
    """
    aeron_version_gitsha
    """
def version_text() -> str:
    """
    aeron_version_text
    """
ACTION_ABORT: int = 1
ACTION_BREAK: int = 2
ACTION_COMMIT: int = 3
ACTION_CONTINUE: int = 4
ADMIN_ACTION: int = -3
BACK_PRESSURED: int = -2
COUNTER_RECORD_ALLOCATED: int = 1
ENDPOINT_FILTER_COUNTER_TYPE_ID: int = 9101
LAYOUT_TRICKS: bool = True
MAX_POSITION_EXCEEDED: int = -5
NOT_CONNECTED: int = -1
PUBLICATION_CLOSED: int = -4
PUBLICATION_ERROR: int = -6
SECURE_OVERHEAD: int = 40
SECURE_ROLE_RECEIVE: int = 1
SECURE_ROLE_SEND: int = 0
SECURE_TRANSPORT_COUNTER_TYPE_ID: int = 9103
THREADING_MODE_DEDICATED: int = 0
THREADING_MODE_INVOKER: int = 3
THREADING_MODE_SHARED: int = 2
THREADING_MODE_SHARED_NETWORK: int = 1
TRICKS: bool
