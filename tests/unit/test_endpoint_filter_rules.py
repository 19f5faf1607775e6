"""The Python side of the endpoint filter's rules: source keys and blocklist entries."""
from __future__ import annotations

import pytest

from aeron_py.addresses import source_key
from aeron_py.endpoint_filter import EndpointFilterConfig


@pytest.mark.parametrize("ip, v4, v6, key", [
    ("192.0.2.7", 32, 64, "192.0.2.7"),
    ("::ffff:192.0.2.7", 32, 64, "192.0.2.7"),
    ("192.0.2.7", 24, 64, "192.0.2.0/24"),
    ("2001:db8:1:2:3:4:5:6", 32, 64, "2001:db8:1:2::/64"),
    ("[2001:db8:1:2:3:4:5:6]", 32, 48, "2001:db8:1::/48"),
    ("::1", 32, 128, "::1/128"),
])
def test_source_key(ip, v4, v6, key):
    assert source_key(ip, v4, v6) == key


def test_source_key_is_the_echo_per_ip_rule():
    from aeron_py.duologue.core.per_ip import PerIpCounter

    counter = PerIpCounter()
    for ip in ("198.51.100.3", "::ffff:198.51.100.3", "2001:db8:aa:bb::1"):
        assert source_key(ip) == counter.source_key(ip)


def test_blocklist_networks_are_canonical():
    from aeron_py.addresses import parse_network

    assert str(parse_network("::ffff:192.0.2.0/120")) == "192.0.2.0/24"
    with pytest.raises(ValueError, match="did you mean 192.0.2.0/24"):
        parse_network("192.0.2.7/24")


def test_config_defaults_are_permissive():
    config = EndpointFilterConfig()
    assert config.max_setup_term_length is None and config.setup_rate is None
    assert config.max_images_per_source is None and config.max_images_total is None
    assert (config.ipv4_prefix, config.ipv6_prefix) == (32, 64)
