"""Aeron channel URIs: build, parse, validate and render them in pure Python.

Nothing here imports Aeron. The grammar accepted by :meth:`ChannelUri.parse`::

    uri    = ["aeron-spy:"] "aeron:" media ["?" param *("|" param)]
    media  = "udp" | "ipc"            (spies only for udp)
    param  = key "=" value
    key    = lowercase words of [a-z0-9] joined by "-"   (e.g. "control-mode")
    value  = one or more characters, no "|" and no control characters

Keys are unique and keep their insertion order when rendered, so
``str(ChannelUri.parse(s)) == s`` for every string that parses. Values of the keys
Aeron defines (see ``KNOWN_KEYS``) are checked the way Aeron reads them (sizes may
carry ``k``/``m``/``g``, durations ``ns``/``us``/``ms``/``s``); other keys pass
through with only the syntax check. Every problem raises :class:`ChannelUriError`,
which names the URI, the position and what is wrong.

Addresses: IPv6 literals are bracketed (``[::1]:9000``); ``host:port`` text is split
at the LAST colon (:func:`split_endpoint`, :func:`format_endpoint`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Final

from .validation import require_int

__all__ = [
    "ChannelUri",
    "ChannelUriError",
    "KNOWN_KEYS",
    "MAX_URI_LENGTH",
    "format_endpoint",
    "split_endpoint",
]

AERON_PREFIX: Final = "aeron:"
SPY_PREFIX: Final = "aeron-spy:"
MEDIA: Final = ("udp", "ipc")
#: Aeron's C client copies a URI into a 4096-byte buffer (including the NUL).
MAX_URI_LENGTH: Final = 4095
CONTROL_MODES: Final = ("dynamic", "manual", "response")
MIN_TERM_LENGTH: Final = 64 * 1024
MAX_TERM_LENGTH: Final = 1024 * 1024 * 1024
MIN_MTU: Final = 32
MAX_MTU: Final = 65504
FRAME_ALIGNMENT: Final = 32
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# Keys that only mean something for UDP media.
_UDP_ONLY: Final = frozenset({"endpoint", "control", "interface", "response-endpoint", "ttl"})
# Python keyword -> Aeron key where the plain "_" -> "-" rule does not apply.
_PY_ALIASES: Final = {
    "congestion_control": "cc",
    "flow_control": "fc",
    "group_tag": "gtag",
    "spies_simulate_connection": "ssc",
}
# Keys people write that Aeron would silently ignore.
_WRONG_KEYS: Final = {"congestion-control": "cc", "flow-control": "fc"}

_KEY_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_BAD_CHAR_RE = re.compile(r"[\x00-\x1f\x7f-\x9f|]")
_INT_RE = re.compile(r"-?[0-9]+")
_SIZE_RE = re.compile(r"([0-9]+)([kmgKMG]?)")
_DURATION_RE = re.compile(r"([0-9]+)(ns|us|ms|s)?", re.IGNORECASE)
_HOST_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?"
_HOST_RE = re.compile(rf"{_HOST_LABEL}(?:\.{_HOST_LABEL})*")
_SIZE_UNITS: Final = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
# Order in which the builders render their named arguments.
_BUILDER_ORDER: Final = (
    "endpoint", "control", "control-mode", "interface", "reliable", "session-id",
    "term-length", "mtu", "linger", "ttl", "tags", "alias",
)


class ChannelUriError(ValueError):
    """A channel URI, one of its values, or an address is invalid.

    Attributes: ``reason`` (what is wrong), ``text`` (the whole URI, if one was being
    parsed) and ``position`` (0-based index into ``text``, or into the value or
    address being checked when ``text`` is None).
    """

    def __init__(self, reason: str, text: str | None = None, position: int | None = None) -> None:
        self.reason = reason
        self.text = text
        self.position = position
        if text is not None:
            where = "" if position is None else f" at position {position}"
            message = f"invalid channel URI {text!r}{where}: {reason}"
        elif position is not None:
            message = f"{reason} (at position {position})"
        else:
            message = reason
        super().__init__(message)


# --------------------------------------------------------------------------- addresses


def _check_ipv6(host: str, address: str) -> None:
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        raise ChannelUriError(
            f"address {address!r}: {host!r} is not an IPv6 address", position=1
        ) from None


def _check_host(host: str, address: str) -> None:
    if not host:
        raise ChannelUriError(f"address {address!r}: empty host", position=0)
    if re.fullmatch(r"[0-9.]+", host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise ChannelUriError(
                f"address {address!r}: {host!r} is not an IPv4 address", position=0
            ) from None
    elif not _HOST_RE.fullmatch(host):
        raise ChannelUriError(f"address {address!r}: {host!r} is not a valid host name", position=0)


def _parse_port(port_text: str, address: str, position: int) -> int:
    if not re.fullmatch(r"[0-9]{1,5}", port_text) or int(port_text) > 65535:
        raise ChannelUriError(
            f"address {address!r}: port {port_text!r} is not in [0, 65535]", position=position
        )
    return int(port_text)


def _split_host_port(text: str, require_port: bool) -> tuple[str, int | None]:
    """Split ``host[:port]`` / ``[v6][:port]`` at the last colon; brackets are stripped."""
    if not isinstance(text, str):
        raise ChannelUriError(f"address must be a str, got {type(text).__name__} ({text!r})")
    port_text: str | None
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            raise ChannelUriError(f"address {text!r}: '[' has no matching ']'", position=0)
        host, rest = text[1:close], text[close + 1 :]
        _check_ipv6(host, text)
        if rest and not rest.startswith(":"):
            raise ChannelUriError(f"address {text!r}: expected ':port' after ']'", position=close + 1)
        port_text, port_pos = (rest[1:], close + 2) if rest else (None, close + 1)
    else:
        for bracket, other in (("]", "["), ("[", "]")):
            if bracket in text:
                raise ChannelUriError(
                    f"address {text!r}: {bracket!r} has no matching {other!r}"
                    " (IPv6 literals are written as '[addr]:port')",
                    position=text.index(bracket),
                )
        host, colon, port_text_or_host = text.rpartition(":")
        if not colon:
            host, port_text, port_pos = text, None, len(text)
        else:
            port_text, port_pos = port_text_or_host, len(host) + 1
        if ":" in host:
            raise ChannelUriError(
                f"address {text!r}: IPv6 literal must be in brackets, e.g. '[::1]:9000'", position=0
            )
        _check_host(host, text)
    if port_text is None:
        if require_port:
            raise ChannelUriError(f"address {text!r}: missing ':port'", position=port_pos)
        return host, None
    return host, _parse_port(port_text, text, port_pos)


def split_endpoint(text: str) -> tuple[str, int]:
    """Split ``"a.b.c.d:port"``, ``"[v6]:port"`` or ``"host:port"`` into ``(host, port)``.

    Splits at the LAST colon and strips IPv6 brackets. An unbracketed IPv6 literal,
    unbalanced brackets, a missing or out-of-range port raise :class:`ChannelUriError`.
    Port 0 (ephemeral) is accepted.
    """
    host, port = _split_host_port(text, require_port=True)
    assert port is not None
    return host, port


def format_endpoint(host: str | ipaddress.IPv4Address | ipaddress.IPv6Address, port: int) -> str:
    """Render ``host`` and ``port`` as an Aeron address, bracketing IPv6 literals.

    >>> format_endpoint("::1", 9000)
    '[::1]:9000'
    """
    require_int(f"host {str(host)!r}: port", port, min=0, max=65535, error=ChannelUriError)
    text = str(host)
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    address = f"[{text}]:{port}" if ":" in text else f"{text}:{port}"
    if ":" in text:
        _check_ipv6(text, address)
    else:
        _check_host(text, address)
    return address


def _split_interface(text: str) -> tuple[str, int | None, int | None]:
    """Split ``host[:port][/prefix]`` (``[v6][:port][/prefix]``) into its three parts."""
    address, slash, prefix_text = text.rpartition("/") if "/" in text else (text, "", "")
    host, port = _split_host_port(address, require_port=False)
    if not slash:
        return host, port, None
    limit = 128 if ":" in host else 32
    if not re.fullmatch(r"[0-9]{1,3}", prefix_text) or int(prefix_text) > limit:
        raise ChannelUriError(
            f"address {text!r}: prefix {prefix_text!r} is not in [0, {limit}]", position=len(address) + 1
        )
    return host, port, int(prefix_text)


# --------------------------------------------------------------------------- values


def _int_in(value: str, low: int, high: int) -> int:
    if not _INT_RE.fullmatch(value) or not low <= int(value) <= high:
        raise ChannelUriError(f"{value!r} is not a decimal integer in [{low}, {high}]")
    return int(value)


def _size(value: str) -> int:
    match = _SIZE_RE.fullmatch(value)
    if not match:
        raise ChannelUriError(f"{value!r} is not a size (digits with optional k, m or g suffix)")
    return int(match[1]) * _SIZE_UNITS[match[2].lower()]


def _check_bool(value: str) -> None:
    if value not in ("true", "false"):
        raise ChannelUriError(f"{value!r} is not 'true' or 'false'")


def _check_group(value: str) -> None:
    if value not in ("true", "false", "infer"):
        raise ChannelUriError(f"{value!r} is not 'true', 'false' or 'infer'")


def _check_int32(value: str) -> None:
    _int_in(value, INT32_MIN, INT32_MAX)


def _check_int64(value: str) -> None:
    _int_in(value, INT64_MIN, INT64_MAX)


def _check_positive_int32(value: str) -> None:
    _int_in(value, 1, INT32_MAX)


def _check_session_id(value: str) -> None:
    """A signed 32-bit id, or ``tag:<n>`` naming another publication's tag."""
    if value.startswith("tag:"):
        _check_int64(value[4:])
    else:
        _check_int32(value)


def _check_term_length(value: str) -> None:
    length = _size(value)
    if not MIN_TERM_LENGTH <= length <= MAX_TERM_LENGTH or length & (length - 1):
        raise ChannelUriError(
            f"{value!r} ({length} bytes) is not a power of two in"
            f" [{MIN_TERM_LENGTH} (64 KiB), {MAX_TERM_LENGTH} (1 GiB)]"
        )


def _check_mtu(value: str) -> None:
    mtu = _size(value)
    if not MIN_MTU <= mtu <= MAX_MTU or mtu % FRAME_ALIGNMENT:
        raise ChannelUriError(
            f"{value!r} ({mtu} bytes) is not a multiple of {FRAME_ALIGNMENT} in [{MIN_MTU}, {MAX_MTU}]"
        )


def _check_buffer_size(value: str) -> None:
    if _size(value) <= 0:
        raise ChannelUriError(f"{value!r} must be a positive size")


def _check_duration(value: str) -> None:
    if not _DURATION_RE.fullmatch(value):
        raise ChannelUriError(f"{value!r} is not a duration (digits with optional ns, us, ms or s suffix)")


def _check_ttl(value: str) -> None:
    """An unsigned byte (multicast ``ttl``, ``so-tos``)."""
    _int_in(value, 0, 255)


def _check_tags(value: str) -> None:
    parts = value.split(",")
    if len(parts) > 2:
        raise ChannelUriError(f"{value!r} has more than two tags (channel tag[,entity tag])")
    for part in parts:
        _check_int64(part)


def _check_term_offset(value: str) -> None:
    if _int_in(value, 0, MAX_TERM_LENGTH) % FRAME_ALIGNMENT:
        raise ChannelUriError(f"{value!r} is not a multiple of {FRAME_ALIGNMENT}")


def _check_response_correlation_id(value: str) -> None:
    if value != "prototype":
        _check_int64(value)


def _check_control_mode(value: str) -> None:
    if value not in CONTROL_MODES:
        raise ChannelUriError(f"{value!r} is not one of {', '.join(CONTROL_MODES)}")


def _no_check(value: str) -> None:
    """Keys whose values Aeron interprets freely (names, strategies)."""


#: Aeron keys this module knows, each with the check its value must pass.
KNOWN_KEYS: Final[Mapping[str, Callable[[str], object]]] = MappingProxyType({
    "endpoint": split_endpoint,
    "control": split_endpoint,
    "interface": _split_interface,
    "control-mode": _check_control_mode,
    "session-id": _check_session_id,
    "reliable": _check_bool,
    "sparse": _check_bool,
    "eos": _check_bool,
    "tether": _check_bool,
    "rejoin": _check_bool,
    "ssc": _check_bool,
    "ats": _check_bool,
    "group": _check_group,
    "term-length": _check_term_length,
    "mtu": _check_mtu,
    "linger": _check_duration,
    "nak-delay": _check_duration,
    "untethered-window-limit-timeout": _check_duration,
    "untethered-resting-timeout": _check_duration,
    "untethered-linger-timeout": _check_duration,
    "ttl": _check_ttl,
    "tags": _check_tags,
    "gtag": _check_int64,
    "alias": _no_check,
    "cc": _no_check,
    "fc": _no_check,
    "so-sndbuf": _check_buffer_size,
    "so-rcvbuf": _check_buffer_size,
    "rcv-wnd": _check_buffer_size,
    "pub-wnd": _check_buffer_size,
    "so-tos": _check_ttl,
    "response-endpoint": split_endpoint,
    "init-term-id": _check_int32,
    "term-id": _check_int32,
    "term-offset": _check_term_offset,
    "response-correlation-id": _check_response_correlation_id,
    "max-resend": _check_positive_int32,
    "stream-id": _check_int32,
})


def _aeron_key(name: str) -> str:
    """Map a Python keyword (``control_mode``) or an Aeron key to the Aeron key."""
    if not isinstance(name, str):
        raise ChannelUriError(f"key must be a str, got {type(name).__name__} ({name!r})")
    return _PY_ALIASES.get(name, name.replace("_", "-"))


def _check_key(media: str, key: str) -> None:
    """Check a key's syntax and that it applies to ``media``."""
    if not key:
        raise ChannelUriError("empty key")
    if key in _WRONG_KEYS:
        raise ChannelUriError(f"Aeron has no key {key!r}; its key is {_WRONG_KEYS[key]!r}")
    if not _KEY_RE.fullmatch(key):
        raise ChannelUriError(f"key {key!r} is not lowercase words of [a-z0-9] joined by '-'")
    if media == "ipc" and key in _UDP_ONLY:
        raise ChannelUriError(f"key {key!r} is only meaningful for aeron:udp, not aeron:ipc")


def _check_value(media: str, key: str, value: str) -> None:
    """Check one rendered value; ``ChannelUriError.position`` is relative to the value."""
    if not value:
        raise ChannelUriError(f"empty value for key {key!r}")
    bad = _BAD_CHAR_RE.search(value)
    if bad:
        raise ChannelUriError(f"value of {key!r} contains {bad[0]!r}", position=bad.start())
    if media == "ipc" and key == "control-mode" and value != "response":
        raise ChannelUriError(f"aeron:ipc only supports control-mode=response, not {value!r}")
    try:
        KNOWN_KEYS.get(key, _no_check)(value)
    except ChannelUriError as error:
        raise ChannelUriError(f"{key}: {error.reason}", position=error.position) from None


def _render_value(key: str, value: object) -> str:
    """Turn a Python value into URI text: bools as true/false, ints in decimal,
    ``(host, port)`` tuples for address keys, sequences of ints for ``tags``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    if key in ("endpoint", "control", "interface") and isinstance(value, tuple) and len(value) == 2:
        return format_endpoint(value[0], value[1])
    if key == "tags" and isinstance(value, (tuple, list)):
        return ",".join(_render_value(key, tag) for tag in value)
    raise ChannelUriError(f"{key}: unsupported value {value!r} of type {type(value).__name__}")


# --------------------------------------------------------------------------- the URI


class ChannelUri:
    """An immutable, hashable Aeron channel URI.

    Equality and hashing take parameter order into account (two URIs are equal exactly
    when they render to the same string). Build with :meth:`udp` / :meth:`ipc`, read
    with :meth:`parse`, derive with :meth:`with_`, :meth:`with_params`,
    :meth:`without` and :meth:`as_spy`.
    """

    __slots__ = ("_media", "_params", "_spy")
    _media: str
    _params: tuple[tuple[str, str], ...]
    _spy: bool

    def __init__(
        self,
        media: str,
        params: Mapping[str, object] | Iterable[tuple[str, object]] = (),
        *,
        spy: bool = False,
    ) -> None:
        """Create a URI from ``media`` ("udp"/"ipc") and ``(key, value)`` pairs.

        Keys may be Aeron keys or Python names (``session_id``); ``None`` values are
        skipped; other values are rendered as described in the module docstring.
        """
        if media not in MEDIA:
            raise ChannelUriError(f"unknown media {media!r}; expected one of {', '.join(MEDIA)}")
        if spy and media != "udp":
            raise ChannelUriError(f"spies only exist for aeron:udp, not aeron:{media}")
        items = params.items() if isinstance(params, Mapping) else params
        rendered: dict[str, str] = {}
        for name, value in items:
            if value is None:
                continue
            key = _aeron_key(name)
            if key in rendered:
                raise ChannelUriError(f"duplicate key {key!r}")
            _check_key(media, key)
            text = _render_value(key, value)
            _check_value(media, key, text)
            rendered[key] = text
        object.__setattr__(self, "_media", media)
        object.__setattr__(self, "_params", tuple(rendered.items()))
        object.__setattr__(self, "_spy", bool(spy))
        if len(str(self)) > MAX_URI_LENGTH:
            raise ChannelUriError(f"URI is {len(str(self))} characters; Aeron's limit is {MAX_URI_LENGTH}")

    # -- construction ---------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> ChannelUri:
        """Parse ``text`` strictly; raise :class:`ChannelUriError` naming what and where."""
        if not isinstance(text, str):
            raise ChannelUriError(f"channel URI must be a str, got {type(text).__name__} ({text!r})")
        if len(text) > MAX_URI_LENGTH:
            raise ChannelUriError(f"URI is {len(text)} characters; Aeron's limit is {MAX_URI_LENGTH}", text)
        spy = text.startswith(SPY_PREFIX)
        pos = len(SPY_PREFIX) if spy else 0
        if not text.startswith(AERON_PREFIX, pos):
            raise ChannelUriError(f"missing {AERON_PREFIX!r} prefix", text, pos)
        pos += len(AERON_PREFIX)
        query = text.find("?", pos)
        media = text[pos:] if query < 0 else text[pos:query]
        if media not in MEDIA:
            raise ChannelUriError(f"unknown media {media!r}; expected one of {', '.join(MEDIA)}", text, pos)
        if spy and media != "udp":
            raise ChannelUriError(f"spies only exist for aeron:udp, not aeron:{media}", text, 0)
        pairs: list[tuple[str, str]] = []
        seen: dict[str, int] = {}
        for start, segment in _segments(text, query):
            key, equals, value = segment.partition("=")
            if not segment:
                raise ChannelUriError("empty parameter (expected key=value)", text, start)
            if not equals:
                raise ChannelUriError(f"parameter {segment!r} is missing '='", text, start)
            if key in seen:
                raise ChannelUriError(f"duplicate key {key!r} (first at position {seen[key]})", text, start)
            try:
                _check_key(media, key)
            except ChannelUriError as error:
                raise ChannelUriError(error.reason, text, start) from None
            value_pos = start + len(key) + 1
            try:
                _check_value(media, key, value)
            except ChannelUriError as error:
                raise ChannelUriError(error.reason, text, value_pos + (error.position or 0)) from None
            seen[key] = start
            pairs.append((key, value))
        return cls(media, pairs, spy=spy)

    @classmethod
    def udp(
        cls,
        endpoint: str | tuple[str, int] | None = None,
        *,
        control: str | tuple[str, int] | None = None,
        control_mode: str | None = None,
        interface: str | tuple[str, int] | None = None,
        session_id: int | str | None = None,
        reliable: bool | None = None,
        term_length: int | str | None = None,
        mtu: int | str | None = None,
        linger: int | str | None = None,
        ttl: int | None = None,
        tags: int | str | tuple[int, ...] | list[int] | None = None,
        alias: str | None = None,
        spy: bool = False,
        **extra: Any,
    ) -> ChannelUri:
        """Build an ``aeron:udp`` URI; ``None`` arguments are left out.

        Rendered order: endpoint, control, control-mode, interface, reliable,
        session-id, term-length, mtu, linger, ttl, tags, alias, then ``extra`` in the
        order given (Python names: ``so_sndbuf`` -> ``so-sndbuf``,
        ``congestion_control`` -> ``cc``). ``linger`` in ints is nanoseconds.
        Like Aeron >= 1.43, ``control`` needs ``endpoint`` or ``control_mode``.
        """
        named = dict(
            endpoint=endpoint, control=control, control_mode=control_mode, interface=interface,
            reliable=reliable, session_id=session_id, term_length=term_length, mtu=mtu,
            linger=linger, ttl=ttl, tags=tags, alias=alias,
        )
        uri = cls("udp", _builder_pairs(named, extra), spy=spy)
        if "control" in uri and "endpoint" not in uri and "control-mode" not in uri:
            raise ChannelUriError(
                f"{str(uri)!r}: control= needs endpoint= or control-mode= (Aeron >= 1.43 rejects it);"
                " pass control_mode='dynamic' or 'manual'"
            )
        return uri

    @classmethod
    def ipc(
        cls,
        *,
        control_mode: str | None = None,
        session_id: int | str | None = None,
        term_length: int | str | None = None,
        mtu: int | str | None = None,
        linger: int | str | None = None,
        tags: int | str | tuple[int, ...] | list[int] | None = None,
        alias: str | None = None,
        **extra: Any,
    ) -> ChannelUri:
        """Build an ``aeron:ipc`` URI (same conventions as :meth:`udp`; address keys,
        ``ttl`` and spies do not apply, ``control_mode`` may only be ``'response'``)."""
        named = dict(
            control_mode=control_mode, session_id=session_id, term_length=term_length, mtu=mtu,
            linger=linger, tags=tags, alias=alias,
        )
        return cls("ipc", _builder_pairs(named, extra))

    # -- derivation -----------------------------------------------------------------

    def with_(self, key: str, value: object) -> ChannelUri:
        """Return a copy with ``key`` set (in place if present, else appended);
        ``value=None`` removes the key."""
        return self.with_params(**{key: value})

    def with_params(self, **params: object) -> ChannelUri:
        """Like :meth:`with_` for several keys at once (Python names allowed)."""
        merged: dict[str, object] = dict(self._params)
        for name, value in params.items():
            key = _aeron_key(name)
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return ChannelUri(self._media, merged, spy=self._spy)

    def without(self, *keys: str) -> ChannelUri:
        """Return a copy without ``keys`` (absent keys are ignored)."""
        return self.with_params(**{key: None for key in keys})

    def as_spy(self, spy: bool = True) -> ChannelUri:
        """Return the ``aeron-spy:`` form of this URI (or the plain form for ``spy=False``)."""
        return ChannelUri(self._media, self._params, spy=spy)

    # -- reading --------------------------------------------------------------------

    @property
    def media(self) -> str:
        """``"udp"`` or ``"ipc"``."""
        return self._media

    @property
    def is_spy(self) -> bool:
        """True for ``aeron-spy:aeron:udp...``."""
        return self._spy

    @property
    def params(self) -> dict[str, str]:
        """A fresh dict of the parameters, in order."""
        return dict(self._params)

    def get(self, key: str, default: str | None = None) -> str | None:
        """The text value of ``key`` (Aeron key or Python name), or ``default``."""
        wanted = _aeron_key(key)
        return next((value for name, value in self._params if name == wanted), default)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __str__(self) -> str:
        head = f"{SPY_PREFIX if self._spy else ''}{AERON_PREFIX}{self._media}"
        if not self._params:
            return head
        return head + "?" + "|".join(f"{key}={value}" for key, value in self._params)

    def __repr__(self) -> str:
        return f"ChannelUri.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChannelUri):
            return NotImplemented
        return (self._media, self._spy, self._params) == (other._media, other._spy, other._params)

    def __hash__(self) -> int:
        return hash((self._media, self._spy, self._params))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(
            f"ChannelUri is immutable; use with_() to derive a new one (tried to set {name!r})"
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"ChannelUri is immutable (tried to delete {name!r})")


def _segments(text: str, query: int) -> Iterator[tuple[int, str]]:
    """Yield ``(position, "key=value")`` for each parameter after the ``?`` at ``query``."""
    if query < 0:
        return
    start = query + 1
    for segment in text[start:].split("|"):
        yield start, segment
        start += len(segment) + 1


def _builder_pairs(named: Mapping[str, object], extra: Mapping[str, object]) -> list[tuple[str, object]]:
    """The builder's parameters in rendering order: ``named`` (Python names) ordered
    by ``_BUILDER_ORDER``, then ``extra`` as given. Duplicates are kept so the
    constructor reports them."""
    keyed = [(_aeron_key(name), value) for name, value in named.items()]
    ordered = sorted(keyed, key=lambda pair: _BUILDER_ORDER.index(pair[0]))
    return [*ordered, *extra.items()]
