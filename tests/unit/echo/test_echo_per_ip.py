"""Tests for aeron_py.duologue.core.per_ip (docs/spec/echo2.md §3 "Per-IP counter", §4 decision 9)."""

from __future__ import annotations

import pytest

from aeron_py.addresses import canonical_ip, source_key
from aeron_py.duologue.core.per_ip import PerIpCounter

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize(("ip", "prefix", "key"), [
    ("192.0.2.7", 64, "192.0.2.7"),
    ("2001:db8:1:2:3:4:5:6", 64, "2001:db8:1:2::/64"),
    ("2001:db8:1:2:ffff::1", 64, "2001:db8:1:2::/64"),
    ("2001:db8:1:3::1", 64, "2001:db8:1:3::/64"),
    ("2001:db8:1:2:3:4:5:6", 48, "2001:db8:1::/48"),
    ("2001:db8::1", 128, "2001:db8::1/128"),
    ("2001:db8::1", 0, "::/0"),
    ("::ffff:192.0.2.7", 64, "192.0.2.7"),
    ("[::1]", 64, "::/64"),
    ("fe80::1%eth0", 64, "fe80::/64"),
])
def test_per_ip_key(ip: str, prefix: int, key: str) -> None:
    assert source_key(ip, 32, prefix) == key == PerIpCounter(prefix).source_key(ip)


@pytest.mark.parametrize("ip", ["", "localhost", "1.2.3.256", "::g"])
def test_source_key_rejects_non_addresses(ip: str) -> None:
    with pytest.raises(ValueError, match=repr(ip).replace("[", "\\[")):
        source_key(ip)


@pytest.mark.parametrize("prefix", [-1, 129, True])
def test_source_key_rejects_bad_prefix(prefix: int) -> None:
    with pytest.raises(ValueError, match="prefix"):
        source_key("::1", 32, prefix)
    with pytest.raises(ValueError, match="prefix"):
        PerIpCounter(prefix)


def test_canonical_ip() -> None:
    assert canonical_ip("2001:0db8:0:0::1") == "2001:db8::1"
    assert canonical_ip("::ffff:10.0.0.1") == "10.0.0.1"
    assert canonical_ip("[::1]") == "::1"


def test_counter_counts_and_removes_at_zero() -> None:
    counter = PerIpCounter()
    assert counter.count("10.0.0.1") == 0 and len(counter) == 0
    assert counter.increment("10.0.0.1") == 1
    assert counter.increment("10.0.0.1") == 2
    assert counter.increment("10.0.0.2") == 1
    assert len(counter) == 2
    assert counter.decrement("10.0.0.1") == 1
    assert counter.decrement("10.0.0.1") == 0
    assert len(counter) == 1 and counter.count("10.0.0.1") == 0


def test_decrement_never_goes_below_zero() -> None:
    counter = PerIpCounter()
    assert counter.decrement("10.0.0.9") == 0
    assert counter.count("10.0.0.9") == 0 and len(counter) == 0
    counter.increment("10.0.0.9")
    counter.decrement("10.0.0.9")
    assert counter.decrement("10.0.0.9") == 0 and len(counter) == 0


def test_ipv6_aggregated_by_prefix_and_mapped_ipv4_shared() -> None:
    counter = PerIpCounter(ipv6_prefix=64)
    counter.increment("2001:db8:0:1::1")
    counter.increment("2001:db8:0:1::2")
    counter.increment("2001:db8:0:2::1")
    assert counter.count("2001:db8:0:1::ffff") == 2
    assert counter.count("2001:db8:0:2::") == 1
    counter.increment("::ffff:192.0.2.1")
    assert counter.count("192.0.2.1") == 1
    assert len(counter) == 3
