"""The start-up warning for duologue ports inside the kernel's ephemeral range."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from aeron_py.duologue.server.ephemeral_ports import ephemeral_range, reserved_ports, warn_if_ephemeral

pytestmark = pytest.mark.timeout(30)


def files(tmp_path: Path, span: str, reserved: str = "") -> tuple[Path, Path]:
    (tmp_path / "range").write_text(span + "\n")
    (tmp_path / "reserved").write_text(reserved + "\n")
    return tmp_path / "range", tmp_path / "reserved"


def test_ports_below_the_range_need_no_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    span, reserved = files(tmp_path, "32768\t60999")
    assert warn_if_ephemeral(9010, 128, span, reserved) == 0
    assert warn_if_ephemeral(22768, 10000, span, reserved) == 0  # ends at 32767
    assert not caplog.records


def test_an_overlap_is_named_with_what_to_do(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    span, reserved = files(tmp_path, "32768\t60999")
    with caplog.at_level(logging.WARNING):
        assert warn_if_ephemeral(41010, 10000, span, reserved) == 10000
    (record,) = caplog.records
    assert "41010-51009" in record.getMessage() and "--base-port" in record.getMessage()
    assert "ip_local_reserved_ports=41010-51009" in record.getMessage()


def test_reserved_ports_are_not_exposed(tmp_path: Path) -> None:
    span, reserved = files(tmp_path, "32768 60999", "41010-51009,60000")
    assert reserved_ports(reserved) == set(range(41010, 51010)) | {60000}
    assert warn_if_ephemeral(41010, 10000, span, reserved) == 0
    assert warn_if_ephemeral(41000, 20, span, reserved) == 10


def test_an_unreadable_or_odd_range_is_no_warning(tmp_path: Path) -> None:
    assert ephemeral_range(tmp_path / "missing") is None
    span, reserved = files(tmp_path, "not numbers", "x-y")
    assert ephemeral_range(span) is None and reserved_ports(reserved) == set()
    assert warn_if_ephemeral(41010, 10, span, reserved) == 0
