"""The endpoint filter's large-term budget on real UDP loopback: forged 16 MiB-term SETUPs from
raw sockets bound to 127.0.0.x, the real C driver, and the last term-length drop it names."""
from __future__ import annotations

import ipaddress

import pytest

from aeron_py import AeronError, _aeron
from aeron_py.endpoint_filter import TERM_REASONS, EndpointFilterConfig, TermDrop
from conftest import free_udp_port, wait_until
from forged import raw_socket
from test_endpoint_filter import STREAM, TERM, deliver, filtered, outcomes, publication_from, setup_frame

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

LARGE = 16 * 1024 * 1024
BUDGET = EndpointFilterConfig(max_setup_term_length=LARGE, large_term_length=TERM, max_large_images_per_source=1,
                              max_large_images_total=2)


def test_large_terms_are_admitted_within_the_budget_and_the_last_drop_is_named():
    port = free_udp_port()
    with filtered(BUDGET) as (driver, aeron):
        sub = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", STREAM)
        filt = driver.endpoint_filter
        assert filt.last_term_drop() is None
        with raw_socket("127.0.0.3") as first, raw_socket("127.0.0.4") as second, \
                raw_socket("127.0.0.5") as third:
            for session in range(1, 21):  # one place for this source, then drops
                deliver(first, setup_frame(session, term_length=LARGE), port, outcomes(driver, sub))
            deliver(second, setup_frame(100, term_length=LARGE), port, outcomes(driver, sub))
            deliver(third, setup_frame(200, term_length=LARGE), port, outcomes(driver, sub))
        counters = filt.counters()
        assert (counters["source_large_terms"], counters["total_large_terms"]) == (19, 1)
        assert sub.image_count == 2
        assert filt.last_term_drop() == TermDrop(ipaddress.ip_address("127.0.0.5"), LARGE, "total_large_terms")
        pub = publication_from(aeron, "127.0.0.6", port)  # 64 KiB terms: outside the budget
        wait_until(lambda: pub.is_connected and sub.image_count == 3, 10, "the small-term publication")
        assert set(TERM_REASONS) <= set(counters)


def test_the_term_cap_drop_is_named_too():
    port = free_udp_port()
    with filtered(BUDGET) as (driver, aeron):
        sub = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", STREAM)
        with raw_socket("127.0.0.7") as attacker:
            deliver(attacker, setup_frame(1, term_length=1 << 30), port, outcomes(driver, sub))
        assert driver.endpoint_filter.last_term_drop() == TermDrop(ipaddress.ip_address("127.0.0.7"), 1 << 30,
                                                                    "setup_term_length")


def test_after_close_and_bad_budgets():
    with filtered(BUDGET) as (driver, _):
        filt = driver.endpoint_filter
    with pytest.raises(AeronError, match="closed"):
        filt.last_term_drop()
    for bad in ({"large_term_length": -1}, {"max_large_images_total": 0}, {"max_large_images_per_source": 1.5},
                {"large_term_length": 2**31}):
        with pytest.raises((ValueError, TypeError), match=next(iter(bad))):
            EndpointFilterConfig(**bad)
    with pytest.raises((ValueError, AeronError)):
        _aeron.EndpointFilter(0, 0.0, 1.0, 0, 0, 32, 64, 16, 16, 10**9, large_term_length=-1)
