"""One definition of a source key: Spark's ``with_source_key`` is ``aeron_py.addresses.source_key``.

The Spark expression is compared with the Python function, text for text, on random
IPv4, IPv6 (every spelling: compressed anywhere, exploded, upper case, dotted-quad
tail, brackets, zones) and IPv4-mapped addresses, near-misses made by mutating them,
and junk, at random IPv6 prefix lengths (hypothesis). Each example is one Spark query
over a batch of addresses, so a few dozen examples cover thousands of addresses.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from aeron_py.addresses import source_key
from aeron_py.analytics.rules import RulesError, with_source_key
from aeron_py.analytics.session import build_session

pytestmark = [pytest.mark.spark, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    session = build_session("local[1]", log_level="ERROR", driver_memory="1g")
    yield session
    session.stop()


def expected(ip: str, prefix: int) -> tuple[str, str]:
    """(key, family) by the one Python definition; text it refuses is kept, family ``other``."""
    try:
        key = source_key(ip, 32, prefix)
    except ValueError:
        return ip, "other"
    return key, "ipv6" if "/" in key else "ipv4"


def spark_keys(spark: SparkSession, ips: list[str], prefix: int) -> list[tuple[str, str]]:
    frame = spark.createDataFrame([(i, ip) for i, ip in enumerate(ips)], "i int, ip string")
    rows = with_source_key(frame, "ip", prefix).orderBy("i").collect()
    assert [r["i"] for r in rows] == list(range(len(ips)))
    return [(r["key"], r["family"]) for r in rows]


# -- address spellings ------------------------------------------------------------------

ipv4 = st.integers(0, 2**32 - 1).map(lambda n: str(ipaddress.IPv4Address(n)))
# Hextets biased to zero so that zero runs of every length and position occur.
hextet = st.one_of(st.just(0), st.just(0), st.integers(0, 0xFFFF), st.sampled_from([1, 0xFFFF, 0x10, 0xF00]))


@st.composite
def ipv6_text(draw: st.DrawFn) -> str:
    """Any valid spelling of a random IPv6 address."""
    groups = draw(st.lists(hextet, min_size=8, max_size=8))
    if draw(st.booleans()):
        groups[:6] = [0, 0, 0, 0, 0, 0xFFFF]  # IPv4-mapped
    words = [f"{g:x}".zfill(draw(st.integers(1, 4))) for g in groups]
    if draw(st.booleans()):
        words = [w.upper() for w in words]
    tail: list[str] = []
    if draw(st.integers(0, 3)) == 0:  # the last 32 bits as a dotted quad
        tail = [str(ipaddress.IPv4Address((groups[6] << 16) | groups[7]))]
        words = words[:6]
    zero_runs = [(i, j) for i in range(len(words)) for j in range(i + 1, len(words) + 1)
                 if all(groups[k] == 0 for k in range(i, j))]
    if zero_runs and draw(st.booleans()):  # "::" for any run of zero groups, not only the longest
        i, j = draw(st.sampled_from(zero_runs))
        text = ":".join(words[:i]) + "::" + ":".join(words[j:] + tail)
    else:
        text = ":".join(words + tail)
    return text


@st.composite
def decorated(draw: st.DrawFn) -> str:
    """An address as it may appear in telemetry, valid or nearly so."""
    text = draw(st.one_of(ipv4, ipv6_text(), ipv6_text()))
    choice = draw(st.integers(0, 9))
    if choice == 0:
        text = f"[{text}]"
    elif choice == 1:
        text = text + draw(st.sampled_from(["%eth0", "%1", "%", "%a%b", "%x:y"]))
    elif choice == 2:
        text = draw(st.sampled_from(["[", "]", " ", "\n", "/64", "0", ":", "."])) + text
    elif choice == 3:
        text = text + draw(st.sampled_from(["[", "]", " ", "\n", "/64", "0", ":", ".", "::", ":0"]))
    elif choice == 4 and text:  # delete, duplicate or replace one character
        at = draw(st.integers(0, len(text) - 1))
        new = draw(st.sampled_from(["", text[at] * 2, ":", ".", "0", "g", "%", "1"]))
        text = text[:at] + new + text[at + 1:]
    return text


junk = st.text(alphabet="0123456789abcdefABCDEF:.[]%/ g\n", max_size=45)
addresses = st.lists(st.one_of(decorated(), decorated(), decorated(), junk), min_size=1, max_size=400)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(ips=addresses, prefix=st.one_of(st.integers(0, 128), st.sampled_from([0, 1, 47, 48, 56, 63, 64, 65, 96, 127, 128])))
def test_spark_key_is_source_key(spark: SparkSession, ips: list[str], prefix: int) -> None:
    assert spark_keys(spark, ips, prefix) == [expected(ip, prefix) for ip in ips]


# -- known cases --------------------------------------------------------------------

CASES = [
    # (address, prefix, key, family)
    ("192.0.2.7", 64, "192.0.2.7", "ipv4"),
    ("[192.0.2.7]", 64, "192.0.2.7", "ipv4"),
    ("::ffff:10.1.2.3", 64, "10.1.2.3", "ipv4"),
    ("::FFFF:A01:203", 64, "10.1.2.3", "ipv4"),
    ("2001:db8:bad:1:dead::1", 64, "2001:db8:bad:1::/64", "ipv6"),
    ("2001:0db8:0000:0001::9", 64, "2001:db8:0:1::/64", "ipv6"),
    ("fe80::1%eth0", 64, "fe80::/64", "ipv6"),
    ("[2001:db8::1]", 48, "2001:db8::/48", "ipv6"),
    ("2001:0:0:1:0:0:0:1", 128, "2001:0:0:1::1/128", "ipv6"),  # the longest zero run is compressed
    ("1:0:0:2:0:0:3:4", 128, "1::2:0:0:3:4/128", "ipv6"),  # the first of equal runs
    ("1:2:3:4:5:6:7:8", 17, "1::/17", "ipv6"),
    ("::", 0, "::/0", "ipv6"),
    # refused by source_key, so kept as they are
    (" 10.0.0.1 ", 64, " 10.0.0.1 ", "other"),
    ("010.0.0.1", 64, "010.0.0.1", "other"),
    ("1.2.3.4%eth0", 64, "1.2.3.4%eth0", "other"),
    ("1:2:3:4::5:6:7:8", 64, "1:2:3:4::5:6:7:8", "other"),  # '::' must stand for a group
    ("::ffff:1.2.3.256", 64, "::ffff:1.2.3.256", "other"),
    ("[::1", 64, "[::1", "other"),
    ("fe80::1%", 64, "fe80::1%", "other"),
    ("1.2.3.4\n", 64, "1.2.3.4\n", "other"),
    ("garbage", 64, "garbage", "other"),
    ("", 64, "", "other"),
]


def test_known_cases(spark: SparkSession) -> None:
    assert [expected(ip, prefix) for ip, prefix, *_ in CASES] == [tuple(c[2:]) for c in CASES]  # the table is right
    got = {prefix: iter(spark_keys(spark, [c[0] for c in CASES if c[1] == prefix], prefix))
           for prefix in sorted({c[1] for c in CASES})}
    assert [next(got[prefix]) for _, prefix, *_ in CASES] == [tuple(c[2:]) for c in CASES]


def test_null_address_is_other(spark: SparkSession) -> None:
    frame = spark.createDataFrame([(None,)], "ip string")
    assert [tuple(r) for r in with_source_key(frame, "ip").select("key", "family").collect()] == [(None, "other")]


def test_bad_ipv6_prefix_is_refused(spark: SparkSession) -> None:
    frame = spark.createDataFrame([("::1",)], "ip string")
    with pytest.raises(RulesError, match=r"\[0, 128\]"):
        with_source_key(frame, "ip", 129)
