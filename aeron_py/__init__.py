"""aeron_py: Python bindings over the real Aeron C client and embedded C media driver.

>>> import aeron_py
>>> with aeron_py.MediaDriver() as driver, aeron_py.Aeron(driver=driver) as aeron:
...     sub = aeron.add_subscription("aeron:ipc", 10)
...     pub = aeron.add_publication("aeron:ipc", 10)

The compiled backend ``aeron_py._aeron`` mirrors the C API; this package adds
ownership (context managers, idempotent close), bounded waits, typed errors,
a channel URI builder, idle strategies and driver introspection.
"""
from __future__ import annotations

# --- import guard: say "not built" instead of Python's circular-import message ------------
try:
    from . import _aeron

    if getattr(_aeron, "__file__", None) is None:
        # no extension, only the folder of its submodules' stubs (_aeron/crypto.pyi), which
        # Python imports as a namespace package
        raise ImportError(f"{__name__}._aeron is not built", name=f"{__name__}._aeron")
except ImportError:
    import importlib.util as _util

    _spec = _util.find_spec(f"{__name__}._aeron")
    if _spec is not None and _spec.origin is not None:
        raise  # the extension is there but does not load (ABI, symbols): keep Python's message
    raise ImportError(
        f"aeron_py is not built: its compiled extension aeron_py._aeron is missing from "
        f"{__path__[0]}, which holds only the Python sources. Build it from the source tree "
        "with `pip install -e .` (a C/C++ compiler and CMake; see README), then run Python "
        "from that environment; or install a built wheel of aeron_py.",
        name=f"{__name__}._aeron",
    ) from None
# --- end of the import guard --------------------------------------------------------------
from .channel import ChannelUri, ChannelUriError
from .driver import MediaDriver, ThreadingMode
from .errors import (
    AddressInUseError,
    AdminActionError,
    AeronError,
    AeronTimeoutError,
    BackPressuredError,
    ClientClosedError,
    DriverTimeoutError,
    MaxPositionExceededError,
    NotConnectedError,
    OfferError,
    PublicationClosedError,
    PublicationError,
    RetryLaterError,
)
from .client import Aeron, ClientCounter, PendingAdd
from .client_callbacks import PublicationErrorFrame
from .endpoint_filter import EndpointFilter, EndpointFilterConfig
from .idle import (
    BackoffIdleStrategy,
    BusySpinIdleStrategy,
    IdleStrategy,
    NoOpIdleStrategy,
    SleepingIdleStrategy,
    YieldingIdleStrategy,
)
from .publication import (
    ADMIN_ACTION,
    BACK_PRESSURED,
    CLOSED,
    ERROR,
    MAX_POSITION_EXCEEDED,
    NOT_CONNECTED,
    Claim,
    ExclusivePublication,
    Publication,
)
from .driver_dir import driver_active
from .poll_set import PollSet
from .stat import Counter, DriverStat, ErrorEntry, LossEntry
from .subscription import Action, Header, HeaderView, Image, ImageSnapshotError, Subscription
from .traffic import QuietIdle, TrafficBell

__version__ = "0.1.0"


def aeron_version() -> str:
    """The Aeron C library version linked into this build (``aeron_version_text``), e.g. '1.54.0'."""
    return _aeron.version_text()


__all__ = [
    "ADMIN_ACTION", "BACK_PRESSURED", "CLOSED", "ERROR", "MAX_POSITION_EXCEEDED", "NOT_CONNECTED",
    "Action", "AddressInUseError", "AdminActionError", "Aeron", "AeronError", "AeronTimeoutError",
    "BackPressuredError", "BackoffIdleStrategy", "BusySpinIdleStrategy", "ChannelUri", "ChannelUriError", "Claim",
    "ClientClosedError", "ClientCounter", "Counter", "DriverStat", "DriverTimeoutError", "EndpointFilter", "EndpointFilterConfig", "ErrorEntry", "ExclusivePublication", "Header", "HeaderView",
    "IdleStrategy", "Image", "ImageSnapshotError", "LossEntry", "MaxPositionExceededError", "MediaDriver",
    "NoOpIdleStrategy", "NotConnectedError", "OfferError", "PendingAdd", "PollSet", "Publication", "PublicationClosedError", "PublicationErrorFrame",
    "PublicationError", "QuietIdle", "RetryLaterError", "SleepingIdleStrategy", "Subscription", "ThreadingMode", "TrafficBell",
    "YieldingIdleStrategy",
    "aeron_version", "driver_active",
]
