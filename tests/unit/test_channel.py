"""Tests for aeron_py.channel: ChannelUri parsing, building, rendering, addresses."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aeron_py.channel import (
    KNOWN_KEYS,
    MAX_URI_LENGTH,
    ChannelUri,
    ChannelUriError,
    format_endpoint,
    split_endpoint,
)

pytestmark = pytest.mark.timeout(60)

SRV_V4 = "127.0.0.1"
SRV_V6 = "::1"
PORT, CONTROL_PORT, D_DATA, D_CONTROL = 9000, 9001, 9010, 9011
S = 1938340545  # duologue session id (guide's worked example)
K = -555798973  # a signed client-side session id


# --------------------------------------------------------------------------- docs/spec/echo2.md §2


def _section2(srv: str) -> list[tuple[ChannelUri, str]]:
    """Each docs/spec/echo2.md §2 row: (URI built with the builder, expected text)."""
    a = f"[{srv}]" if ":" in srv else srv
    return [
        (  # server all-clients publication
            ChannelUri.udp(control=(srv, CONTROL_PORT), control_mode="dynamic", reliable=True),
            f"aeron:udp?control={a}:{CONTROL_PORT}|control-mode=dynamic|reliable=true",
        ),
        (  # server all-clients subscription / client initial publication
            ChannelUri.udp((srv, PORT), reliable=True),
            f"aeron:udp?endpoint={a}:{PORT}|reliable=true",
        ),
        (  # duologue publication (server)
            ChannelUri.udp(control=(srv, D_CONTROL), control_mode="dynamic", reliable=True, session_id=S),
            f"aeron:udp?control={a}:{D_CONTROL}|control-mode=dynamic|reliable=true|session-id={S}",
        ),
        (  # duologue subscription (server)
            ChannelUri.udp((srv, D_DATA), reliable=True, session_id=S),
            f"aeron:udp?endpoint={a}:{D_DATA}|reliable=true|session-id={S}",
        ),
        (  # client initial subscription
            ChannelUri.udp(control=f"{a}:{CONTROL_PORT}", control_mode="dynamic", reliable=True),
            f"aeron:udp?control={a}:{CONTROL_PORT}|control-mode=dynamic|reliable=true",
        ),
        (  # client duologue publication
            ChannelUri.udp(f"{a}:{D_DATA}", reliable=True, session_id=K),
            f"aeron:udp?endpoint={a}:{D_DATA}|reliable=true|session-id={K}",
        ),
        (  # client duologue subscription
            ChannelUri.udp(control=(srv, D_CONTROL), control_mode="dynamic", reliable=True, session_id=K),
            f"aeron:udp?control={a}:{D_CONTROL}|control-mode=dynamic|reliable=true|session-id={K}",
        ),
    ]


@pytest.mark.parametrize("srv", [SRV_V4, SRV_V6])
def test_echo2_section2_uris_build_and_parse(srv: str) -> None:
    for built, expected in _section2(srv):
        assert str(built) == expected
        parsed = ChannelUri.parse(expected)
        assert parsed == built
        assert hash(parsed) == hash(built)
        assert str(parsed) == expected


def test_guide_mdc_uri_with_endpoint_and_control() -> None:
    expected = "aeron:udp?endpoint=5.6.7.8:9000|control=5.6.7.8:9001|control-mode=dynamic|reliable=true"
    built = ChannelUri.udp("5.6.7.8:9000", control="5.6.7.8:9001", control_mode="dynamic", reliable=True)
    assert str(built) == expected
    assert split_endpoint(built.get("control") or "") == ("5.6.7.8", 9001)


# --------------------------------------------------------------------------- parsing


def test_parse_reads_media_spy_and_params_in_order() -> None:
    uri = ChannelUri.parse("aeron-spy:aeron:udp?endpoint=[::1]:40123|tags=1,2|alias=x y=z?")
    assert uri.media == "udp"
    assert uri.is_spy
    assert uri.params == {"endpoint": "[::1]:40123", "tags": "1,2", "alias": "x y=z?"}
    assert list(uri.params) == ["endpoint", "tags", "alias"]
    assert uri.get("alias") == "x y=z?"
    assert uri.get("missing") is None
    assert uri.get("missing", "d") == "d"
    assert "tags" in uri and "ttl" not in uri


def test_parse_ipc_without_params() -> None:
    uri = ChannelUri.parse("aeron:ipc")
    assert (uri.media, uri.is_spy, uri.params) == ("ipc", False, {})
    assert str(uri) == "aeron:ipc"


@pytest.mark.parametrize(
    "text",
    [
        "aeron:udp",
        "aeron:udp?term-length=64k|mtu=8k|linger=5s|nak-delay=100us|so-rcvbuf=2M",
        "aeron:udp?session-id=tag:7|tags=-1,9223372036854775807|gtag=-3",
        "aeron:udp?interface=192.168.0.0/24|endpoint=224.0.1.1:40456|ttl=16",
        "aeron:udp?interface=[fe80::1%eth0]:0/64|endpoint=localhost:0",
        "aeron:udp?control=ctl.example-host.net:9001|control-mode=manual|group=infer",
        "aeron:udp?init-term-id=-7|term-id=-5|term-offset=1024|term-length=1g",
        "aeron:udp?response-correlation-id=prototype|max-resend=3|stream-id=-1",
        "aeron:udp?untethered-window-limit-timeout=10ms|untethered-resting-timeout=1S|eos=false",
        "aeron:ipc?control-mode=response|response-correlation-id=42|sparse=true",
        "aeron:udp?cc=cubic|fc=min,g:123/5|ssc=true|my-own-key=anything goes=here",
        "aeron:udp?control-mode=response|response-endpoint=[::1]:0|pub-wnd=256k|so-tos=184",
        "aeron-spy:aeron:udp?endpoint=10.0.0.1:1|rejoin=false|tether=true",
    ],
)
def test_valid_uris_round_trip(text: str) -> None:
    uri = ChannelUri.parse(text)
    assert str(uri) == text
    assert ChannelUri.parse(str(uri)) == uri


# (text, position, fragment of the reason)
BAD_URIS = [
    ("", 0, "missing 'aeron:' prefix"),
    ("udp?endpoint=1.2.3.4:5", 0, "missing 'aeron:' prefix"),
    (" aeron:udp", 0, "missing 'aeron:' prefix"),
    ("aeron-spy:udp", 10, "missing 'aeron:' prefix"),
    ("aeron:tcp?endpoint=1.2.3.4:5", 6, "unknown media 'tcp'"),
    ("aeron:UDP", 6, "unknown media 'UDP'"),
    ("aeron:", 6, "unknown media ''"),
    ("aeron-spy:aeron:ipc", 0, "spies only exist for aeron:udp"),
    ("aeron:udp?", 10, "empty parameter"),
    ("aeron:udp?reliable=true|", 24, "empty parameter"),
    ("aeron:udp?reliable=true||ttl=1", 24, "empty parameter"),
    ("aeron:udp?=true", 10, "empty key"),
    ("aeron:udp?endpoint", 10, "parameter 'endpoint' is missing '='"),
    ("aeron:udp?reliable=true|ttl", 24, "parameter 'ttl' is missing '='"),
    ("aeron:udp?reliable=true|reliable=false", 24, "duplicate key 'reliable' (first at position 10)"),
    ("aeron:udp?ttl=", 14, "empty value for key 'ttl'"),
    ("aeron:udp?Endpoint=1.2.3.4:5", 10, "key 'Endpoint' is not lowercase"),
    ("aeron:udp?session_id=5", 10, "key 'session_id' is not lowercase"),
    ("aeron:udp?congestion-control=cubic", 10, "its key is 'cc'"),
    ("aeron:ipc?endpoint=1.2.3.4:5", 10, "only meaningful for aeron:udp"),
    ("aeron:ipc?control-mode=dynamic", 23, "only supports control-mode=response"),
    ("aeron:udp?alias=a\nb", 17, "contains '\\n'"),
    ("aeron:udp?endpoint=[::1:9000", 19, "'[' has no matching ']'"),
    ("aeron:udp?control=::1]:9000", 21, "']' has no matching '['"),
    ("aeron:udp?interface=[fe80::1/64", 20, "'[' has no matching ']'"),
    ("aeron:udp?interface=fe80::1]/64", 27, "']' has no matching '['"),
    ("aeron:udp?endpoint=a[b:1", 20, "'[' has no matching ']'"),
    ("aeron:udp?endpoint=::1:9000", 19, "IPv6 literal must be in brackets"),
    ("aeron:udp?endpoint=[::1]9000", 24, "expected ':port' after ']'"),
    ("aeron:udp?endpoint=[1.2.3.4]:9", 20, "is not an IPv6 address"),
    ("aeron:udp?endpoint=1.2.3.4", 26, "missing ':port'"),
    ("aeron:udp?endpoint=1.2.3.4:65536", 27, "port '65536' is not in [0, 65535]"),
    ("aeron:udp?endpoint=1.2.3.999:1", 19, "'1.2.3.999' is not an IPv4 address"),
    ("aeron:udp?endpoint=:1", 19, "empty host"),
    ("aeron:udp?endpoint=bad_host-.x:1", 19, "is not a valid host name"),
    ("aeron:udp?interface=10.0.0.0/33", 29, "prefix '33' is not in [0, 32]"),
    ("aeron:udp?term-length=1000", 22, "not a power of two in [65536 (64 KiB), 1073741824 (1 GiB)]"),
    ("aeron:udp?term-length=32k", 22, "not a power of two"),
    ("aeron:udp?term-length=2g", 22, "not a power of two"),
    ("aeron:udp?term-length=64kb", 22, "is not a size"),
    ("aeron:udp?mtu=33", 14, "not a multiple of 32 in [32, 65504]"),
    ("aeron:udp?mtu=65536", 14, "not a multiple of 32"),
    ("aeron:udp?control-mode=static", 23, "is not one of dynamic, manual, response"),
    ("aeron:udp?session-id=2147483648", 21, "not a decimal integer in [-2147483648, 2147483647]"),
    ("aeron:udp?session-id=+5", 21, "not a decimal integer"),
    ("aeron:udp?session-id=tag:x", 21, "not a decimal integer"),
    ("aeron:udp?reliable=yes", 19, "is not 'true' or 'false'"),
    ("aeron:udp?reliable=True", 19, "is not 'true' or 'false'"),
    ("aeron:udp?group=maybe", 16, "'infer'"),
    ("aeron:udp?ttl=256", 14, "in [0, 255]"),
    ("aeron:ipc?response-endpoint=h:1", 10, "only meaningful for aeron:udp"),
    ("aeron:udp?tags=1,2,3", 15, "more than two tags"),
    ("aeron:udp?tags=1,", 15, "not a decimal integer"),
    ("aeron:udp?linger=5 s", 17, "is not a duration"),
    ("aeron:udp?term-offset=33", 22, "not a multiple of 32"),
    ("aeron:udp?so-sndbuf=0", 20, "positive size"),
    ("aeron:udp?max-resend=0", 21, "in [1, 2147483647]"),
    ("aeron:udp?response-correlation-id=proto", 34, "not a decimal integer"),
    ("aeron:udp?stream-id=٣", 20, "not a decimal integer"),  # Unicode digit
]


@pytest.mark.parametrize(("text", "position", "fragment"), BAD_URIS)
def test_parse_rejects_with_what_and_where(text: str, position: int, fragment: str) -> None:
    with pytest.raises(ChannelUriError) as info:
        ChannelUri.parse(text)
    error = info.value
    assert isinstance(error, ValueError)
    assert error.text == text
    assert error.position == position, str(error)
    assert fragment in error.reason, str(error)
    assert repr(text) in str(error)
    assert f"at position {position}" in str(error)


def test_parse_rejects_overlong_uri_and_non_str() -> None:
    long_alias = "x" * MAX_URI_LENGTH
    with pytest.raises(ChannelUriError, match="Aeron's limit is 4095"):
        ChannelUri.parse("aeron:udp?alias=" + long_alias)
    with pytest.raises(ChannelUriError, match="Aeron's limit is 4095"):
        ChannelUri.udp(alias=long_alias)
    with pytest.raises(ChannelUriError, match="must be a str, got bytes"):
        ChannelUri.parse(b"aeron:udp")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- builder


def test_builder_maps_python_names_and_renders_values() -> None:
    uri = ChannelUri.udp(
        ("10.0.0.1", 5000),
        interface="10.0.0.0/8",
        session_id=-1,
        reliable=False,
        term_length=65536,
        mtu=1408,
        linger=0,
        ttl=8,
        tags=(1, 2),
        alias="duo",
        so_sndbuf="1m",
        rcv_wnd=131072,
        congestion_control="cubic",
        flow_control="max",
        sparse=True,
        untethered_window_limit_timeout="5s",
    )
    assert str(uri) == (
        "aeron:udp?endpoint=10.0.0.1:5000|interface=10.0.0.0/8|reliable=false|session-id=-1"
        "|term-length=65536|mtu=1408|linger=0|ttl=8|tags=1,2|alias=duo|so-sndbuf=1m"
        "|rcv-wnd=131072|cc=cubic|fc=max|sparse=true|untethered-window-limit-timeout=5s"
    )
    assert uri.get("session_id") == "-1"
    assert uri.get("term-length") == "65536"


def test_builder_accepts_bounds_and_ipv6_tuples() -> None:
    low = ChannelUri.udp(("::1", 0), term_length=64 * 1024, mtu=32, session_id=-(2**31))
    high = ChannelUri.udp(("[fe80::1]", 65535), term_length=2**30, mtu=65504, session_id=2**31 - 1)
    assert low.get("endpoint") == "[::1]:0"
    assert high.get("endpoint") == "[fe80::1]:65535"
    assert ChannelUri.udp(interface=(ipaddress.IPv6Address("::1"), 7)).get("interface") == "[::1]:7"


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"term_length": 1000}, "term-length: '1000' (1000 bytes) is not a power of two in [65536"),
        ({"term_length": 2**31}, "is not a power of two"),
        ({"term_length": 32768}, "is not a power of two"),
        ({"mtu": 0}, "mtu: '0' (0 bytes) is not a multiple of 32 in [32, 65504]"),
        ({"mtu": 1400}, "is not a multiple of 32"),
        ({"mtu": 65536}, "is not a multiple of 32"),
        ({"control_mode": "Dynamic", "control": "1.2.3.4:5"}, "is not one of dynamic, manual, response"),
        ({"session_id": 2**31}, "session-id: '2147483648' is not a decimal integer in [-2147483648"),
        ({"session_id": -(2**31) - 1}, "is not a decimal integer"),
        ({"session_id": True}, "is not a decimal integer"),
        ({"reliable": 1}, "reliable: '1' is not 'true' or 'false'"),
        ({"ttl": 1.5}, "ttl: unsupported value 1.5 of type float"),
        ({"endpoint": ("1.2.3.4", 70000)}, "port must be an int in [0, 65535], got 70000"),
        ({"endpoint": ("1.2.3.4", "80")}, "port must be an int"),
        ({"endpoint": ("::1", True)}, "port must be an int"),
        ({"endpoint": "::1:80"}, "IPv6 literal must be in brackets"),
        ({"alias": "a|b"}, "value of 'alias' contains '|'"),
        ({"alias": ""}, "empty value for key 'alias'"),
        ({"control": "1.2.3.4:5"}, "control= needs endpoint= or control-mode="),
        ({"session_id": 1, "**": {"session-id": 2}}, "duplicate key 'session-id'"),
    ],
)
def test_builder_rejects_bad_values(kwargs: dict[str, object], fragment: str) -> None:
    extra = kwargs.pop("**", {})
    with pytest.raises(ChannelUriError) as info:
        ChannelUri.udp(**kwargs, **extra)  # type: ignore[arg-type]
    assert fragment in str(info.value)


def test_builder_skips_none_and_orders_extras_last() -> None:
    uri = ChannelUri.udp(None, reliable=None, session_id=3, eos=None, rejoin=False, alias=None)
    assert str(uri) == "aeron:udp?session-id=3|rejoin=false"


def test_ipc_builder() -> None:
    uri = ChannelUri.ipc(term_length="64k", session_id=5, alias="loop", sparse=True)
    assert str(uri) == "aeron:ipc?session-id=5|term-length=64k|alias=loop|sparse=true"
    assert ChannelUri.ipc() == ChannelUri.parse("aeron:ipc")
    assert str(ChannelUri.ipc(control_mode="response")) == "aeron:ipc?control-mode=response"
    with pytest.raises(ChannelUriError, match="only meaningful for aeron:udp"):
        ChannelUri.ipc(endpoint="1.2.3.4:5")
    with pytest.raises(ChannelUriError, match="only supports control-mode=response"):
        ChannelUri.ipc(control_mode="dynamic")


def test_constructor_checks_media_and_spy() -> None:
    with pytest.raises(ChannelUriError, match="unknown media 'tcp'"):
        ChannelUri("tcp")
    with pytest.raises(ChannelUriError, match="spies only exist for aeron:udp"):
        ChannelUri("ipc", spy=True)
    assert str(ChannelUri("udp", {"endpoint": "h:1"}, spy=True)) == "aeron-spy:aeron:udp?endpoint=h:1"


# --------------------------------------------------------------------------- immutability


def test_with_returns_new_instance_and_keeps_position() -> None:
    base = ChannelUri.parse("aeron:udp?endpoint=1.2.3.4:5|reliable=true|session-id=1")
    changed = base.with_("reliable", False)
    assert str(changed) == "aeron:udp?endpoint=1.2.3.4:5|reliable=false|session-id=1"
    assert str(base) == "aeron:udp?endpoint=1.2.3.4:5|reliable=true|session-id=1"
    appended = base.with_("term_length", 128 * 1024)
    assert str(appended).endswith("|session-id=1|term-length=131072")
    assert str(base.with_("session-id", None)) == "aeron:udp?endpoint=1.2.3.4:5|reliable=true"
    assert str(base.without("reliable", "absent")) == "aeron:udp?endpoint=1.2.3.4:5|session-id=1"
    assert base.with_params(session_id=2, mtu=1408).params == {
        "endpoint": "1.2.3.4:5", "reliable": "true", "session-id": "2", "mtu": "1408",
    }
    assert base.as_spy().is_spy and not base.as_spy().as_spy(False).is_spy
    with pytest.raises(ChannelUriError, match="term-length"):
        base.with_("term-length", 12345)
    with pytest.raises(ChannelUriError, match="empty key"):
        base.with_("", "x")


def test_immutable_hashable_and_order_sensitive_equality() -> None:
    a = ChannelUri.parse("aeron:udp?endpoint=h:1|reliable=true")
    b = ChannelUri.udp("h:1", reliable=True)
    c = ChannelUri.parse("aeron:udp?reliable=true|endpoint=h:1")
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert a != a.as_spy()
    assert a != "aeron:udp?endpoint=h:1|reliable=true"
    assert len({a, b, c}) == 2
    with pytest.raises(AttributeError, match="immutable"):
        a._media = "ipc"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        a.media = "ipc"  # type: ignore[misc]
    a.params["endpoint"] = "changed"
    assert a.get("endpoint") == "h:1"
    assert repr(a) == "ChannelUri.parse('aeron:udp?endpoint=h:1|reliable=true')"


# --------------------------------------------------------------------------- addresses


@pytest.mark.parametrize(
    ("host", "port", "text"),
    [
        ("127.0.0.1", 9000, "127.0.0.1:9000"),
        ("::1", 9000, "[::1]:9000"),
        ("[::1]", 1, "[::1]:1"),
        ("fe80::1%eth0", 0, "[fe80::1%eth0]:0"),
        ("localhost", 65535, "localhost:65535"),
        (ipaddress.IPv4Address("10.1.2.3"), 7, "10.1.2.3:7"),
    ],
)
def test_format_and_split_endpoint(host: object, port: int, text: str) -> None:
    assert format_endpoint(host, port) == text  # type: ignore[arg-type]
    assert split_endpoint(text) == (str(host).strip("[]"), port)


@pytest.mark.parametrize(
    ("host", "port", "fragment"),
    [
        ("1.2.3.4", -1, "port must be an int in [0, 65535], got -1"),
        ("1.2.3.4", 65536, "got 65536"),
        ("::zz", 1, "'::zz' is not an IPv6 address"),
        ("", 1, "empty host"),
        ("a b", 1, "is not a valid host name"),
        ("256.1.1.1", 1, "is not an IPv4 address"),
    ],
)
def test_format_endpoint_rejects(host: str, port: int, fragment: str) -> None:
    with pytest.raises(ChannelUriError) as info:
        format_endpoint(host, port)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("1.2.3.4", "missing ':port'"),
        ("[::1]", "missing ':port'"),
        ("::1:80", "IPv6 literal must be in brackets"),
        ("[::1:80", "'[' has no matching ']'"),
        ("::1]:80", "']' has no matching '['"),
        ("h:99999", "port '99999' is not in [0, 65535]"),
        ("h:", "port '' is not in [0, 65535]"),
        ("h:-1", "port '-1'"),
    ],
)
def test_split_endpoint_rejects(text: str, fragment: str) -> None:
    with pytest.raises(ChannelUriError) as info:
        split_endpoint(text)
    assert fragment in str(info.value)
    assert repr(text) in str(info.value)


# --------------------------------------------------------------------------- properties

_INT32 = st.integers(-(2**31), 2**31 - 1).map(str)
_INT64 = st.integers(-(2**63), 2**63 - 1).map(str)
_HOSTNAME = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?(\.[a-z][a-z0-9]{0,5}){0,3}", fullmatch=True)
_HOST = st.one_of(
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(str),
    _HOSTNAME.filter(lambda h: not all(c in "0123456789." for c in h)),
)
_ADDRESS = st.builds(format_endpoint, _HOST, st.integers(0, 65535))
_SIZE_SUFFIX = st.sampled_from(["", "k", "K", "m", "M"])
_FREE_TEXT = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="|"), min_size=1, max_size=20
)
_VALUES: dict[str, st.SearchStrategy[str]] = {
    "endpoint": _ADDRESS,
    "control": _ADDRESS,
    "response-endpoint": _ADDRESS,
    "interface": st.one_of(
        _ADDRESS,
        st.tuples(st.ip_addresses(v=4), st.integers(0, 32)).map(lambda t: f"{t[0]}/{t[1]}"),
        st.tuples(st.ip_addresses(v=6), st.integers(0, 128)).map(lambda t: f"[{t[0]}]/{t[1]}"),
    ),
    "control-mode": st.sampled_from(["dynamic", "manual", "response"]),
    "session-id": st.one_of(_INT32, _INT64.map(lambda v: f"tag:{v}")),
    "reliable": st.sampled_from(["true", "false"]),
    "group": st.sampled_from(["true", "false", "infer"]),
    "term-length": st.integers(16, 30).map(lambda e: str(2**e)),
    "mtu": st.integers(1, 2047).map(lambda n: str(32 * n)),
    "linger": st.tuples(st.integers(0, 10**12), st.sampled_from(["", "ns", "us", "ms", "s"])).map(
        lambda t: f"{t[0]}{t[1]}"
    ),
    "ttl": st.integers(0, 255).map(str),
    "tags": st.lists(_INT64, min_size=1, max_size=2).map(",".join),
    "alias": _FREE_TEXT,
    "so-sndbuf": st.tuples(st.integers(1, 4096), _SIZE_SUFFIX).map(lambda t: f"{t[0]}{t[1]}"),
    "init-term-id": _INT32,
    "term-offset": st.integers(0, 2**25).map(lambda n: str(32 * n)),
    "response-correlation-id": st.one_of(_INT64, st.just("prototype")),
    "max-resend": st.integers(1, 2**31 - 1).map(str),
}
_UNKNOWN_KEY = st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}", fullmatch=True).filter(
    lambda k: k not in KNOWN_KEYS and k not in ("congestion-control", "flow-control")
)


@st.composite
def _uris(draw: st.DrawFn) -> str:
    """Canonical URI strings: valid values for known keys plus free unknown keys."""
    media = draw(st.sampled_from(["udp", "ipc"]))
    spy = media == "udp" and draw(st.booleans())
    keys = draw(st.lists(st.sampled_from(sorted(_VALUES)), unique=True, max_size=8))
    if media == "ipc":
        udp_only = ("endpoint", "control", "interface", "ttl", "control-mode", "response-endpoint")
        keys = [k for k in keys if k not in udp_only]
    pairs = [(k, draw(_VALUES[k])) for k in keys]
    unknown = draw(st.lists(_UNKNOWN_KEY, unique=True, max_size=3))
    pairs += [(k, draw(_FREE_TEXT)) for k in unknown]
    order = draw(st.permutations(pairs))
    head = ("aeron-spy:" if spy else "") + "aeron:" + media
    return head + ("?" + "|".join(f"{k}={v}" for k, v in order) if order else "")


@settings(max_examples=300, deadline=None)
@given(_uris())
def test_property_round_trip(text: str) -> None:
    uri = ChannelUri.parse(text)
    assert str(uri) == text
    assert ChannelUri(uri.media, uri.params, spy=uri.is_spy) == uri
    rebuilt = ChannelUri.parse(text).with_("alias", None)
    assert "alias" not in rebuilt


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=60),
        _uris().map(lambda s: s[: len(s) // 2]),
        st.text("aeron:udp?=|[]:.1", max_size=40),
    )
)
def test_property_parse_fails_only_with_channel_uri_error(text: str) -> None:
    try:
        uri = ChannelUri.parse(text)
    except ChannelUriError as error:
        assert error.text == text
        assert error.position is not None and 0 <= error.position <= len(text)
    else:
        assert str(uri) == text


@settings(max_examples=200, deadline=None)
@given(_HOST, st.integers(0, 65535))
def test_property_format_split_endpoint(host: str, port: int) -> None:
    text = format_endpoint(host, port)
    assert split_endpoint(text) == (host, port)
    assert text.count("[") == text.count("]") == (1 if ":" in host else 0)
    assert str(ChannelUri.udp((host, port), reliable=True)) == f"aeron:udp?endpoint={text}|reliable=true"
