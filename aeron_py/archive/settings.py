"""How an archive connection is set up: Aeron's defaults, the ``AERON_ARCHIVE_*`` environment
variables that override them (the names of Aeron's C client), and the checks on what a
caller passes to :meth:`~aeron_py.archive.AeronArchive.connect` and
:meth:`~aeron_py.archive.PersistentSubscription.create`."""
from __future__ import annotations

import os
from typing import Any

from ..validation import require_int

#: Aeron's defaults (``aeron_archive_context.h``), each overridden by its environment variable.
DEFAULT_CONTROL_CHANNEL = "aeron:udp?endpoint=localhost:8010"
DEFAULT_CONTROL_STREAM_ID = 10
DEFAULT_RESPONSE_CHANNEL = "aeron:udp?endpoint=localhost:0"
DEFAULT_RESPONSE_STREAM_ID = 20
DEFAULT_RECORDING_EVENTS_CHANNEL = "aeron:udp?control-mode=dynamic|control=localhost:8030"
DEFAULT_RECORDING_EVENTS_STREAM_ID = 30
DEFAULT_MESSAGE_TIMEOUT_S = 10.0


def _env(name: str, default: str) -> str:
    return os.environ.get(name) or default


def or_env(value: object | None, env: str, default: object) -> str:
    """``value``, else the environment variable ``env`` (Aeron's C client's name), else ``default``."""
    return str(value) if value is not None else _env(env, str(default))


def control_options(control_channel: object | None, control_stream_id: int | None, response_channel: object | None,
                    response_stream_id: int | None) -> dict[str, Any]:
    """The control request / response channels and stream ids of an archive connection."""
    return dict(
        control_request_channel=channel_text(or_env(control_channel, "AERON_ARCHIVE_CONTROL_CHANNEL",
                                                    DEFAULT_CONTROL_CHANNEL), "control_channel"),
        control_request_stream_id=int(or_env(control_stream_id, "AERON_ARCHIVE_CONTROL_STREAM_ID",
                                             DEFAULT_CONTROL_STREAM_ID)),
        control_response_channel=channel_text(or_env(response_channel, "AERON_ARCHIVE_CONTROL_RESPONSE_CHANNEL",
                                                     DEFAULT_RESPONSE_CHANNEL), "response_channel"),
        control_response_stream_id=int(or_env(response_stream_id, "AERON_ARCHIVE_CONTROL_RESPONSE_STREAM_ID",
                                              DEFAULT_RESPONSE_STREAM_ID)))


def control_tuning(term_length: int | None, mtu: int | None, sparse: bool | None,
                   retry_attempts: int | None) -> dict[str, int]:
    """``connect``'s control-stream settings, checked, as the binding takes them (0 / -1: default)."""
    out = {"control_term_length": 0, "control_mtu_length": 0, "control_sparse": -1, "message_retry_attempts": 0}
    if term_length is not None:
        length = require_int("control_term_length", term_length, min=64 * 1024, max=1 << 30)
        if length & (length - 1):
            raise ValueError(f"control_term_length must be a power of two, got {length}")
        out["control_term_length"] = length
    if mtu is not None:
        out["control_mtu_length"] = require_int("control_mtu", mtu, min=32, max=65504)
        if mtu % 32:
            raise ValueError(f"control_mtu must be a multiple of 32, got {mtu}")
    if sparse is not None:
        if not isinstance(sparse, bool):
            raise ValueError(f"control_sparse must be True, False or None, got {sparse!r}")
        out["control_sparse"] = int(sparse)
    if retry_attempts is not None:
        out["message_retry_attempts"] = require_int("message_retry_attempts", retry_attempts, min=1, max=2**32 - 1)
    return out


#: Aeron's idle strategies (``aeron_idle_strategy_load``), for ``connect(idle_strategy=...)``.
IDLE_STRATEGIES = ("sleeping", "yield", "backoff", "noop", "spin")


def idle_options(idle_strategy: str | None) -> dict[str, str]:
    """``connect``'s idle strategy, checked: ``name`` or ``name:args`` (None: Aeron's default)."""
    if idle_strategy is None:
        return {"idle_strategy": "", "idle_args": ""}
    if not isinstance(idle_strategy, str):
        raise TypeError(f"idle_strategy must be a str, got {type(idle_strategy).__name__}")
    name, _, args = idle_strategy.partition(":")
    if name not in IDLE_STRATEGIES:
        raise ValueError(f"idle_strategy must be one of {', '.join(IDLE_STRATEGIES)} (optionally 'name:args', "
                         f"e.g. 'sleeping:1ms'), got {idle_strategy!r}")
    return {"idle_strategy": name, "idle_args": args}


def credential_options(credentials: bytes | None, on_challenge: object | None) -> dict[str, Any]:
    """``connect``'s credentials, checked (bytes; ``on_challenge`` callable and only with them)."""
    if credentials is None:
        if on_challenge is not None:
            raise ValueError("on_challenge answers the Archive's challenge to credentials: pass credentials too")
        return {}
    if not isinstance(credentials, bytes):
        raise TypeError(f"credentials must be bytes, got {type(credentials).__name__}")
    if on_challenge is not None and not callable(on_challenge):
        raise TypeError("on_challenge must be callable: (challenge: bytes) -> bytes")
    return {"credentials": credentials, "on_challenge": on_challenge}


def channel_text(value: object, what: str) -> str:
    """``value`` as a channel string (ValueError when empty, naming ``what``)."""
    text = str(value)
    if not text:
        raise ValueError(f"{what} must not be empty (e.g. 'aeron:udp?endpoint=127.0.0.1:8010')")
    return text


__all__ = ["DEFAULT_CONTROL_CHANNEL", "DEFAULT_CONTROL_STREAM_ID", "DEFAULT_MESSAGE_TIMEOUT_S",
           "DEFAULT_RECORDING_EVENTS_CHANNEL", "DEFAULT_RECORDING_EVENTS_STREAM_ID", "DEFAULT_RESPONSE_CHANNEL",
           "DEFAULT_RESPONSE_STREAM_ID", "IDLE_STRATEGIES", "channel_text", "control_options", "control_tuning",
           "credential_options", "idle_options", "or_env"]
