"""EndpointGuard: the server's side of the driver's endpoint filter (a no-op on a driver without one)."""
from __future__ import annotations

from typing import Any

import pytest

import ipaddress
import logging

from aeron_py.duologue.blocklist import Blocklist, Entry
from aeron_py.duologue.core.contract import ServerConfig
from aeron_py.duologue.server.endpoint_guard import TERM_DROP_REPORT_INTERVAL, EndpointGuard, FilterLimits
from aeron_py.endpoint_filter import EndpointFilterConfig, TermDrop

CONFIG = ServerConfig(max_clients=4, clients_base_port=9000)
LIMITS = dict(max_term_length=16 << 20, large_term_length=65536, max_large_images=4, max_large_images_per_source=2)

pytestmark = pytest.mark.timeout(30)


class RecordingFilter:
    """Stands in for ``driver.endpoint_filter`` (the documented methods the guard calls)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def set_blocklist(self, entries: Any) -> None:
        self.calls.append(("set_blocklist", sorted(entries)))

    def set_port_owner(self, port: int, address: str | None) -> None:
        self.calls.append(("set_port_owner", (port, address)))

    def set_port_owners(self, owners: dict[int, str]) -> None:
        self.calls.append(("set_port_owners", dict(owners)))

    def counters(self) -> dict[str, int]:
        return {"term_too_long": 3}

    def last_term_drop(self) -> TermDrop | None:
        return None


class Driver:
    def __init__(self, endpoint_filter: Any = None) -> None:
        if endpoint_filter is not None:
            self.endpoint_filter = endpoint_filter


def test_without_a_filter_everything_is_a_no_op() -> None:
    guard = EndpointGuard(Driver(), CONFIG)
    guard.set_blocklist(Blocklist([Entry.create("10.0.0.1", None, "x")]))
    guard.own_port(9010, "10.0.0.2")
    guard.disown_all()
    guard.refresh()
    assert not guard.active and guard.counters() == {}
    guard.report_term_drops(now=1.0)
    config = FilterLimits(**LIMITS).driver_option()["endpoint_filter"]
    assert isinstance(config, EndpointFilterConfig) and config.max_setup_term_length == 16 << 20
    assert (config.large_term_length, config.max_large_images_total, config.max_large_images_per_source) == (
        65536, 4, 2)


def test_no_large_term_images_caps_terms_at_the_large_term_length() -> None:
    config = FilterLimits(**{**LIMITS, "max_large_images": 0}).driver_option()["endpoint_filter"]
    assert config.max_setup_term_length == 65536


class TermDropping(RecordingFilter):
    def __init__(self) -> None:
        super().__init__()
        self.dropped = {"setup_term_length": 0, "source_large_terms": 0, "total_large_terms": 0, "blocklist": 9}
        self.last: TermDrop | None = None

    def counters(self) -> dict[str, int]:
        return dict(self.dropped)

    def last_term_drop(self) -> TermDrop | None:
        return self.last


def test_term_drops_are_reported_once_per_interval_with_who_and_the_option(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "aeron_py.duologue.server.endpoint_guard")
    fake = TermDropping()
    guard = EndpointGuard(Driver(fake), CONFIG)
    guard.report_term_drops(now=100.0)
    assert "SETUP" not in caplog.text  # nothing dropped yet
    fake.dropped["source_large_terms"] = 12
    fake.last = TermDrop(ipaddress.ip_address("127.0.0.5"), 16 << 20, "source_large_terms")
    guard.report_term_drops(now=101.0)
    assert caplog.text.count("dropped 12 SETUP(s)") == 1
    assert "127.0.0.5" in caplog.text and str(16 << 20) in caplog.text
    assert "--large-term-images-per-ip 7" in caplog.text  # the default: 2 x --max-per-ip 3 + 1
    fake.dropped["setup_term_length"] = 5
    fake.last = TermDrop(ipaddress.ip_address("::1"), 1 << 30, "setup_term_length")
    guard.report_term_drops(now=101.0 + TERM_DROP_REPORT_INTERVAL / 2)
    assert "dropped 5" not in caplog.text  # summarised: not again within the interval
    guard.report_term_drops(now=101.0 + TERM_DROP_REPORT_INTERVAL)
    assert "dropped 5 SETUP(s)" in caplog.text and f"--max-image-term-length {16 << 20}" in caplog.text


def test_blocklist_ports_and_counters_reach_the_filter() -> None:
    recorder = RecordingFilter()
    guard = EndpointGuard(Driver(recorder), CONFIG)
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
    guard.disown_all()  # a shutdown: one publication for every port
    assert recorder.calls[-1] == ("set_port_owners", {})


def test_a_failing_filter_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(RecordingFilter):
        def set_port_owner(self, port: int, address: str | None) -> None:
            raise ValueError("table full")

    EndpointGuard(Driver(Broken()), CONFIG).own_port(9010, "10.0.0.2")
    assert "set_port_owner" in caplog.text and "table full" in caplog.text


def test_penalties_join_the_blocklist_in_one_load_and_leave_when_they_end() -> None:
    recording = RecordingFilter()
    guard = EndpointGuard(Driver(recording), CONFIG)
    guard.set_blocklist(Blocklist([Entry.create("10.0.0.1", None, "operator")]), now=1000.0)
    for i in range(2, 12):
        guard.block(f"127.0.0.{i}", 60.0, now=1000.0)
    assert guard.penalised == 10
    assert len(recording.calls) == 1  # nothing loaded until the next refresh
    guard.refresh(now=1000.1)
    assert recording.calls[-1] == ("set_blocklist", sorted(["10.0.0.1", *[f"127.0.0.{i}" for i in range(2, 12)]]))
    guard.refresh(now=1000.2)
    assert len(recording.calls) == 2  # nothing new: no load
    guard.refresh(now=1060.0)  # the penalties are over; the operator's entry stays
    assert recording.calls[-1] == ("set_blocklist", ["10.0.0.1"]) and guard.penalised == 0


def test_without_a_filter_a_penalty_is_a_no_op() -> None:
    guard = EndpointGuard(Driver(), CONFIG)
    guard.block("127.0.0.2", 60.0)
    guard.refresh()
    assert guard.penalised == 0
