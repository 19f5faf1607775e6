"""EndpointGuard: the server's side of the driver's endpoint filter (a no-op on a driver without one)."""
from __future__ import annotations

from typing import Any

import pytest

from aeron_py.echo.blocklist import Blocklist, Entry
from aeron_py.echo.server.endpoint_guard import EndpointGuard, FilterLimits
from aeron_py.endpoint_filter import EndpointFilterConfig

pytestmark = pytest.mark.timeout(30)


class RecordingFilter:
    """Stands in for ``driver.endpoint_filter`` (its documented three methods)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def set_blocklist(self, entries: Any) -> None:
        self.calls.append(("set_blocklist", sorted(entries)))

    def set_port_owner(self, port: int, address: str | None) -> None:
        self.calls.append(("set_port_owner", (port, address)))

    def counters(self) -> dict[str, int]:
        return {"term_too_long": 3}


class Driver:
    def __init__(self, endpoint_filter: Any = None) -> None:
        if endpoint_filter is not None:
            self.endpoint_filter = endpoint_filter


def test_without_a_filter_everything_is_a_no_op() -> None:
    guard = EndpointGuard(Driver())
    guard.set_blocklist(Blocklist([Entry.create("10.0.0.1", None, "x")]))
    guard.own_port(9010, "10.0.0.2")
    guard.refresh()
    assert not guard.active and guard.counters() == {}
    config = FilterLimits(max_term_length=65536).driver_option()["endpoint_filter"]
    assert isinstance(config, EndpointFilterConfig) and config.max_setup_term_length == 65536


def test_blocklist_ports_and_counters_reach_the_filter() -> None:
    recorder = RecordingFilter()
    guard = EndpointGuard(Driver(recorder))
    blocklist = Blocklist([Entry.create("10.0.0.1", None, "forever"), Entry.create("10.1.0.0/16", 2000.0, "soon"),
                           Entry.create("10.2.0.0/16", 500.0, "already expired")])
    guard.set_blocklist(blocklist, now=1000.0)
    guard.refresh(now=1500.0)  # nothing expired since
    guard.refresh(now=2000.0)  # 10.1.0.0/16 expires: the table is reloaded without it
    guard.own_port(9010, "10.0.0.2")
    guard.own_port(9010, None)
    assert recorder.calls == [("set_blocklist", ["10.0.0.1", "10.1.0.0/16"]), ("set_blocklist", ["10.0.0.1"]),
                              ("set_port_owner", (9010, "10.0.0.2")), ("set_port_owner", (9010, None))]
    assert guard.active and guard.counters() == {"filter: term_too_long": 3}


def test_a_failing_filter_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(RecordingFilter):
        def set_port_owner(self, port: int, address: str | None) -> None:
            raise ValueError("table full")

    EndpointGuard(Driver(Broken())).own_port(9010, "10.0.0.2")
    assert "set_port_owner" in caplog.text and "table full" in caplog.text
