"""Every driver setting of aeronmd.h with a plain value: set, read back, checked, used by a real driver."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aeron_py import Aeron, AeronError, MediaDriver, _aeron
from aeron_py.driver import OPTIONS
from conftest import wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


def _getters(context: Any) -> dict[str, Any]:
    return {name[len("get_"):]: getattr(context, name)() for name in dir(context) if name.startswith("get_")}


def test_every_getter_reads_a_fresh_context_and_every_default_round_trips() -> None:
    context = _aeron.DriverContext()
    defaults = _getters(context)
    assert len(defaults) >= 90, sorted(defaults)
    round_tripped = 0
    for name, value in defaults.items():
        if name not in OPTIONS or value is None or name in ("dir", "keepalive_interval_ns") or (
                isinstance(value, int) and not isinstance(value, bool) and value < 0):
            continue  # no setter of that name; unset (no default string, or -1 where the setter is unsigned); 0 = off
        getattr(context, f"set_{name}")(value)
        assert getattr(context, f"get_{name}")() == value, name
        round_tripped += 1
    assert round_tripped >= 75


def test_new_settings_take_their_values() -> None:
    context = _aeron.DriverContext()
    context.set_max_resend(4)
    context.set_nak_unicast_delay_ns(20_000)
    context.set_untethered_window_limit_timeout_ns(3_000_000_000)
    context.set_receiver_wildcard_port_range((40100, 40199))
    context.set_thread_naming("new")
    context.set_receiver_group_consideration("true")
    context.set_receiver_group_tag(77)
    assert (context.get_max_resend(), context.get_nak_unicast_delay_ns(),
            context.get_untethered_window_limit_timeout_ns()) == (4, 20_000, 3_000_000_000)
    assert context.get_receiver_wildcard_port_range() == (40100, 40199)
    assert (context.get_thread_naming(), context.get_receiver_group_consideration()) == ("new", "true")
    assert context.get_receiver_group_tag_is_present() and context.get_receiver_group_tag_value() == 77
    context.set_receiver_group_tag(None)
    assert not context.get_receiver_group_tag_is_present()


def test_bad_values_raise_and_change_nothing() -> None:
    context = _aeron.DriverContext()
    with pytest.raises(ValueError, match="low <= high"):
        context.set_sender_wildcard_port_range((200, 100))
    with pytest.raises(TypeError):
        context.set_sender_wildcard_port_range((70000, 70001))  # not 16-bit ports
    with pytest.raises(ValueError, match="'classic' or 'new'"):
        context.set_thread_naming("fancy")
    with pytest.raises(ValueError, match="'false', 'true' or 'infer'"):
        context.set_receiver_group_consideration("maybe")
    with pytest.raises(TypeError):
        context.set_max_resend(-1)  # uint32_t
    with pytest.raises(TypeError):
        context.set_socket_multicast_ttl(300)  # uint8_t
    assert context.get_sender_wildcard_port_range() == (0, 0) and context.get_thread_naming() == "classic"
    with pytest.raises(TypeError, match="unknown option"):
        MediaDriver(no_such_setting=1)


def test_a_driver_runs_with_new_settings() -> None:
    with MediaDriver(max_resend=4, nak_unicast_delay_ns=20_000, publication_term_window_length=65536,
                     untethered_window_limit_timeout_ns=2_000_000_000, thread_naming="new",
                     receiver_group_consideration="infer") as driver, Aeron(driver=driver) as aeron:
        assert driver.options["max_resend"] == 4
        sub = aeron.add_subscription("aeron:ipc", 31)
        pub = aeron.add_publication("aeron:ipc", 31)
        wait_until(lambda: pub.is_connected, 5, "connect")
        pub.offer_until(b"with new settings", timeout=5)
        got: list[bytes] = []
        wait_until(lambda: sub.poll(lambda data, header: got.append(data), 10) >= 0 and got, 5, "delivery")
        assert got == [b"with new settings"]


def test_a_context_given_to_a_driver_refuses_setters(tmp_path: Path) -> None:
    context = _aeron.DriverContext()
    context.set_dir(str(tmp_path / "driver"))
    context.set_dir_delete_on_start(True)
    driver = _aeron.Driver(context)
    try:
        with pytest.raises(AeronError, match="belongs to a driver already"):
            context.set_max_resend(3)
        assert context.get_max_resend() > 0  # reading while it runs is allowed
    finally:
        driver.close()
    with pytest.raises(AeronError, match="closed with its driver"):
        context.get_max_resend()
