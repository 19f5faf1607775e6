"""LogSummary: repeated log lines folded into one line per reason per interval."""
from __future__ import annotations

import logging

import pytest

from aeron_py.duologue.core.log_summary import LogSummary

pytestmark = pytest.mark.timeout(30)


def test_first_line_at_once_then_one_summary_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    summary = LogSummary(logging.getLogger("test.summary"), interval=10.0)
    with caplog.at_level(logging.INFO, logger="test.summary"):
        for i in range(1000):
            summary.log(logging.INFO, "refuse:max_clients", i * 0.001, "refusing %s", f"10.0.0.{i % 250}")
        summary.log(logging.WARNING, "other", 0.5, "something else")
        summary.flush(5.0)  # interval not over: nothing more
        assert [r.getMessage() for r in caplog.records] == ["refusing 10.0.0.0", "something else"]
        summary.flush(10.0)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3
    assert lines[2] == "999 more 'refuse:max_clients' in 10.0 s (last: refusing 10.0.0.249)"
    assert summary.suppressed == {"refuse:max_clients": 999}


def test_a_new_window_logs_its_first_line_again(caplog: pytest.LogCaptureFixture) -> None:
    summary = LogSummary(logging.getLogger("test.summary2"), interval=1.0)
    with caplog.at_level(logging.INFO, logger="test.summary2"):
        summary.log(logging.INFO, "r", 0.0, "one")
        summary.flush(2.0)  # no repeats: no summary line
        summary.log(logging.INFO, "r", 2.1, "two")
        summary.log(logging.ERROR, "r", 2.2, "three")
        summary.flush(0.0, force=True)
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.INFO, "one"), (logging.INFO, "two"),
        (logging.ERROR, "1 more 'r' in 0.0 s (last: three)")]


def test_bad_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="interval"):
        LogSummary(logging.getLogger("x"), interval=0)
