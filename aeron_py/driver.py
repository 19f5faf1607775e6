"""The embedded C media driver (``aeronmd.h``) as a context manager.

>>> with MediaDriver() as driver, Aeron(dir=driver.dir) as aeron:
...     ...

Defaults for this package (2-core friendly): SHARED threading mode, a 4 MiB conductor
command queue (Aeron's 128 KiB can fill and hang a SHARED driver), Aeron's
``backoff`` idle strategy for every agent, and — when ``dir`` is omitted — a unique
directory under /dev/shm that is deleted when the driver closes.
"""
from __future__ import annotations

import atexit
import enum
import logging
import os
import tempfile
import time
import uuid
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _aeron
from .endpoint_filter import EndpointFilter, EndpointFilterConfig
from .secure import SecureTransport
from .driver_dir import check_driver_dir
from .errors import AeronError
from .traffic import QuietIdle, TrafficBell
from .validation import optional_int, optional_positive

if TYPE_CHECKING:
    from .stat import DriverStat

logger = logging.getLogger(__name__)


class ThreadingMode(enum.IntEnum):
    """``aeron_threading_mode_t``."""

    DEDICATED = _aeron.THREADING_MODE_DEDICATED
    SHARED_NETWORK = _aeron.THREADING_MODE_SHARED_NETWORK
    SHARED = _aeron.THREADING_MODE_SHARED
    INVOKER = _aeron.THREADING_MODE_INVOKER


#: Option name -> the ``DriverContext`` setter it calls (``aeron_driver_context_set_<name>``).
#: Durations are in the unit their name says (``_ns``/``_ms``), sizes in bytes.
OPTIONS: tuple[str, ...] = tuple(
    sorted(name[len("set_"):] for name in dir(_aeron.DriverContext) if name.startswith("set_"))
)

#: The conductor's command ring (Aeron's own is 128 KiB): in the SHARED threading mode a full
#: ring never drains and the driver spins forever (see
#: cpp/plugins/driver_queues/driver_queues.h). 4 MiB holds about 13,000 create-image
#: commands, far above what the endpoint filter admits at once. It replaces a ring inside
#: Aeron 1.54's driver context (a plug-in on its internals), so it is the default only while
#: ``_aeron.TRICKS`` is on: under ``AERON_PY_NO_TRICKS=1`` a driver keeps Aeron's own ring
#: unless ``conductor_queue_capacity`` is given (docs/development.md).
CONDUCTOR_QUEUE_CAPACITY = 4 * 1024 * 1024

#: ``keepalive_interval_ns`` bounds: Aeron's own heartbeat interval (100 ms) up to 2 s, well
#: inside the 5 s a publication waits for a status message and the 10 s an image waits for
#: a heartbeat by Aeron's defaults (see
#: cpp/plugins/keepalive_thinning/keepalive_thinning.h).
KEEPALIVE_INTERVAL_RANGE_NS = (100_000_000, 2_000_000_000)

#: How long :meth:`MediaDriver.close` waits for the driver's threads by default (seconds).
DEFAULT_CLOSE_TIMEOUT = 30.0

_IDLE_AGENTS = ("conductor", "sender", "receiver", "sharednetwork", "shared")
_live: "weakref.WeakSet[MediaDriver]" = weakref.WeakSet()


def _default_dir() -> str:
    base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    return os.path.join(base, f"aeron-py-{os.getpid()}-{uuid.uuid4().hex[:12]}")


class MediaDriver:
    """An embedded Aeron C media driver (``aeron_driver_init`` + ``aeron_driver_start``).

    ``options`` are named after the C setters ``aeron_driver_context_set_<name>``
    (see :data:`OPTIONS`), e.g. ``term_buffer_length=65536``,
    ``publication_linger_timeout_ns=0``, ``publication_reserved_session_id_low=1``.
    Extra conveniences: ``threading_mode`` takes a :class:`ThreadingMode` or its name;
    ``idle_strategy`` (default ``"backoff"``) sets every agent's idle strategy.

    In ``ThreadingMode.INVOKER`` the driver has no threads: call :meth:`do_work`.

    ``endpoint_filter`` (see :mod:`aeron_py.endpoint_filter`): the C interceptor that drops
    hostile datagrams before the driver acts on them. Installed by default with no limits
    (blocklist and port owners empty), so :attr:`endpoint_filter` can be tightened at run
    time and its drop counters are always in the CnC file; ``None`` leaves it out.

    ``quiet_idle`` (a :class:`~aeron_py.traffic.QuietIdle`; SHARED mode and an endpoint
    filter needed): the driver runs one duty cycle per ``period`` once no traffic rang
    its :attr:`traffic` bell for ``after`` seconds (see :mod:`aeron_py.traffic`).

    ``keepalive_interval_ns`` (an option of ours, off by default): an idle Aeron stream
    sends a heartbeat every 100 ms and a status message every ``rcv_status_message_timeout_ns``
    (200 ms); with this set, one of each per interval per destination reaches the socket,
    unless it says something new (the first heartbeat after data, a status message whose
    position, window or flags changed, end of stream, a SETUP request: those always go),
    the rest are counted in the CnC counter ``aeron_py keepalives thinned``. Within
    :data:`KEEPALIVE_INTERVAL_RANGE_NS`. ``keepalive_ports=(low, high)`` limits it to
    channels bound to those local ports: a heartbeat is also what makes a receiver ask
    for SETUP when a new subscription joins a stream its driver already receives, so
    channels with late joiners sharing a driver are better left out. A server with thousands of idle streams saves
    most of its idle system calls; the price: a lost packet whose next keepalive is lost
    too is noticed up to one interval later.

    ``secure_transport=True`` (see :mod:`aeron_py.secure`): the C interceptor that seals and
    opens the datagrams of the sessions given keys in :attr:`secure_transport`; other sessions
    pass untouched. Off by default.
    """

    def __init__(self, dir: str | os.PathLike[str] | None = None, *,
                 threading_mode: ThreadingMode | str = ThreadingMode.SHARED,
                 idle_strategy: str | None = "backoff",
                 endpoint_filter: EndpointFilterConfig | None = EndpointFilterConfig(),
                 quiet_idle: QuietIdle | None = None,
                 secure_transport: bool = False,
                 **options: Any) -> None:
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise TypeError(
                f"MediaDriver: unknown option(s) {', '.join(unknown)}; valid options: {', '.join(OPTIONS)}")
        self._closed: _aeron.Driver | None = None  # the native driver once close() started
        self._owns_dir = dir is None
        self._dir = str(dir) if dir is not None else _default_dir()
        if isinstance(threading_mode, str):
            try:
                threading_mode = ThreadingMode[threading_mode.upper()]
            except KeyError:
                raise ValueError(f"MediaDriver: unknown threading_mode {threading_mode!r}; "
                                 f"one of {', '.join(m.name for m in ThreadingMode)}") from None
        self.threading_mode = ThreadingMode(threading_mode)
        parent = Path(self._dir).parent
        if not parent.is_dir():
            raise FileNotFoundError(f"MediaDriver: parent directory of dir={self._dir!r} does not exist")

        settings: dict[str, Any] = {"conductor_queue_capacity": CONDUCTOR_QUEUE_CAPACITY} if _aeron.TRICKS else {}
        if idle_strategy is not None:
            settings.update({f"{agent}_idle_strategy": idle_strategy for agent in _IDLE_AGENTS})
        if self._owns_dir:
            settings.update(dir_delete_on_start=True, dir_delete_on_shutdown=True)
        elif not options.get("dir_delete_on_start") and check_driver_dir(self._dir):
            settings["dir_delete_on_start"] = True  # a dead driver's stale directory (logged)
        if endpoint_filter is not None and not isinstance(endpoint_filter, EndpointFilterConfig):
            raise TypeError(f"MediaDriver: endpoint_filter must be an EndpointFilterConfig or None, "
                            f"got {type(endpoint_filter).__name__}")
        if endpoint_filter is not None and endpoint_filter.stream_session_limit is not None:
            if "stream_session_limit" in options:
                raise TypeError("MediaDriver: stream_session_limit given both as an option and in endpoint_filter")
            settings["stream_session_limit"] = endpoint_filter.stream_session_limit
        settings.update(options)
        low, high = KEEPALIVE_INTERVAL_RANGE_NS
        optional_int("MediaDriver: keepalive_interval_ns", settings.get("keepalive_interval_ns"), min=low, max=high)

        context = _aeron.DriverContext()
        context.set_dir(self._dir)
        context.set_threading_mode(int(self.threading_mode))
        # Aeron reads an idle strategy's init args when the strategy is set: args first.
        for name, value in sorted(settings.items(), key=lambda item: not item[0].endswith("_init_args")):
            try:
                getattr(context, f"set_{name}")(value)
            except TypeError as exc:
                raise TypeError(f"MediaDriver: bad value {value!r} for option {name}: {exc}") from None
        self.options: dict[str, Any] = dict(settings)
        if quiet_idle is not None:
            if not isinstance(quiet_idle, QuietIdle):
                raise TypeError(f"MediaDriver: quiet_idle must be a QuietIdle or None, got {type(quiet_idle).__name__}")
            if endpoint_filter is None:
                raise ValueError("MediaDriver: quiet_idle needs the endpoint filter (its traffic bell); "
                                 "endpoint_filter=None leaves it out")
            if self.threading_mode is not ThreadingMode.SHARED:
                raise ValueError(f"MediaDriver: quiet_idle needs threading_mode SHARED, not {self.threading_mode.name}")
        self.quiet_idle = quiet_idle
        if not isinstance(secure_transport, bool):
            raise TypeError(f"MediaDriver: secure_transport must be True or False, got {secure_transport!r}")
        native_secure = _aeron.SecureTransport() if secure_transport else None
        native_filter = endpoint_filter._native() if endpoint_filter is not None else None
        self._traffic = TrafficBell(native_filter) if native_filter is not None else None
        self._driver: _aeron.Driver | None = _aeron.Driver(
            context, manual_main_loop=self.threading_mode is ThreadingMode.INVOKER, endpoint_filter=native_filter,
            quiet_idle_hot_ns=quiet_idle.after_ns if quiet_idle else 0,
            quiet_idle_period_ns=quiet_idle.period_ns if quiet_idle else 0,
            quiet_idle_deep_ns=quiet_idle.deep_after_ns if quiet_idle else 0,
            quiet_idle_deep_period_ns=quiet_idle.deep_period_ns if quiet_idle else 0,
            secure_transport=native_secure)
        self._endpoint_filter = (EndpointFilter(native_filter, endpoint_filter, f"the media driver in {self._dir}")
                                 if native_filter is not None and endpoint_filter is not None else None)
        self._secure = (SecureTransport(native_secure, f"the media driver in {self._dir}")
                        if native_secure is not None else None)
        _live.add(self)
        logger.debug("media driver started in %s (%s)", self._dir, self.threading_mode.name)

    @property
    def dir(self) -> str:
        """The driver's directory (where the CnC file and log buffers live)."""
        return self._dir

    @property
    def endpoint_filter(self) -> EndpointFilter:
        """The driver's :class:`~aeron_py.endpoint_filter.EndpointFilter` (blocklist, port owners,
        drop counters). Raises AeronError when the driver was made with ``endpoint_filter=None``."""
        if self._endpoint_filter is None:
            raise AeronError(f"the media driver in {self._dir} has no endpoint filter (endpoint_filter=None)")
        return self._endpoint_filter

    @property
    def secure_transport(self) -> SecureTransport:
        """The driver's :class:`~aeron_py.secure.SecureTransport` (session keys, secured
        ports, counters). Raises AeronError when the driver was made without it."""
        if self._secure is None:
            raise AeronError(f"the media driver in {self._dir} has no secure transport (secure_transport=False)")
        return self._secure

    @property
    def traffic(self) -> TrafficBell:
        """The driver's :class:`~aeron_py.traffic.TrafficBell` (rung by its endpoint filter);
        AeronError when the driver was made with ``endpoint_filter=None``."""
        if self._traffic is None:
            raise AeronError(f"the media driver in {self._dir} has no endpoint filter, so no traffic bell")
        return self._traffic

    @property
    def is_closed(self) -> bool:
        return self._driver is None

    def do_work(self) -> int:
        """One duty cycle in INVOKER mode (``aeron_driver_main_do_work``); returns the work done."""
        return self._require().do_work()

    def idle(self, work_count: int) -> None:
        """The driver's own idle strategy (``aeron_driver_main_idle_strategy``), GIL released."""
        self._require().idle(work_count)

    def stat(self, timeout: float = 1.0) -> "DriverStat":
        """A :class:`~aeron_py.stat.DriverStat` reader of this driver's CnC file."""
        from .stat import DriverStat

        return DriverStat(self._dir, timeout=timeout)

    def close(self, timeout: float | None = DEFAULT_CLOSE_TIMEOUT) -> bool:
        """Stop the driver (``aeron_driver_close``); removes an owned dir. Idempotent.

        A close waits for the driver's agent thread(s) to end their current duty cycle or
        idle. ``timeout`` bounds that wait (seconds; None: as long as it takes). Returns
        True once the driver is stopped; False when its threads had not ended in time:
        then an error is logged naming the driver, and the close finishes on a thread of
        its own, freeing everything (the directory too) when they end; :attr:`is_stopped`
        says when. Either way the driver is closed for this process's use."""
        optional_positive("MediaDriver.close: timeout", timeout, or_zero=True, unit="seconds")
        driver, self._driver = self._driver, None
        if driver is None:
            return self.is_stopped
        self._closed = driver
        _live.discard(self)
        if self._endpoint_filter is not None:
            self._endpoint_filter._close()
        started = time.monotonic()
        if driver.close(-1.0 if timeout is None else float(timeout)):
            logger.debug("media driver in %s closed in %.3f s", self._dir, time.monotonic() - started)
            return True
        logger.error("media driver in %s: its agent thread did not end its duty cycle or idle within %.1f s of "
                     "close(); the close goes on in the background and frees the driver (and removes its "
                     "directory, if owned) when it ends", self._dir, timeout)
        return False

    @property
    def is_stopped(self) -> bool:
        """True once :meth:`close` has finished: the driver's threads ended and it is freed."""
        closed = self._closed
        return closed is not None and closed.is_stopped

    def _require(self) -> _aeron.Driver:
        if self._driver is None:
            raise AeronError(f"the media driver in {self._dir} is closed")
        return self._driver

    def __enter__(self) -> "MediaDriver":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._driver is None else self.threading_mode.name
        return f"<MediaDriver dir={self._dir!r} {state}>"


@atexit.register
def _close_live_drivers() -> None:
    for driver in list(_live):
        driver.close()

