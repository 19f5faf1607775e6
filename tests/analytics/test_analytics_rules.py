"""Abuse rules and the per-key / per-minute aggregations (source keys: test_source_key.py, RTT:
test_analytics_rtt.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from aeron_py.analytics.job import build_per_ip, build_timeseries
from aeron_py.analytics.rules import AbuseRules, RulesError, apply_rules
from aeron_py.analytics.schema import analysed, load_events
from aeron_py.analytics.session import build_session
from aeron_py.telemetry.writer import EventWriter

pytestmark = [pytest.mark.spark, pytest.mark.timeout(120)]

T = 1_767_225_600.0  # a minute boundary


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    session = build_session("local[1]", log_level="ERROR", driver_memory="1g")
    yield session
    session.stop()


# -- rules configuration --------------------------------------------------------------

def test_rules_defaults_and_partial_override(spark: SparkSession, tmp_path: Path) -> None:  # checks() builds Columns
    assert AbuseRules().to_dict() == {
        "min_hellos_without_connect": 20, "max_bad_messages": 5, "max_wrong_ip_connects": 3,
        "max_reject_rate": 0.5, "min_hellos": 20,
    }
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"max_bad_messages": 10, "max_wrong_ip_connects": None}))
    rules = AbuseRules.from_json(path)
    assert rules.max_bad_messages == 10 and rules.max_wrong_ip_connects is None
    assert rules.min_hellos_without_connect == 20
    assert [name for name, _, _ in rules.checks()] == [
        "min_hellos_without_connect", "max_bad_messages", "max_reject_rate",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"max_bad_mesages": 3}', "unknown rule(s) max_bad_mesages"),
        ('{"max_bad_messages": -1}', "max_bad_messages must be a non-negative integer or null"),
        ('{"max_bad_messages": 2.5}', "max_bad_messages must be a non-negative integer"),
        ('{"max_reject_rate": 1.5}', "max_reject_rate must be a number in [0, 1]"),
        ('{"min_hellos": null}', "min_hellos must be a non-negative integer, got None"),
        ('{"max_bad_messages": true}', "max_bad_messages must be"),
        ("[1]", "expected a JSON object"),
        ("{oops", "is not valid JSON"),
    ],
)
def test_bad_rules_files_are_clear_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "rules.json"
    path.write_text(content)
    with pytest.raises(RulesError) as info:
        AbuseRules.from_json(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_missing_rules_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RulesError, match="cannot read rules file"):
        AbuseRules.from_json(tmp_path / "nope.json")


# -- apply_rules ----------------------------------------------------------------------

SUMMARY_COLUMNS = "key string, hellos long, hellos_without_connect long, bad_messages long, " \
                  "wrong_ip_connects long, reject_rate double"


def _verdicts(spark: SparkSession, rows: list[tuple], rules: AbuseRules) -> dict[str, tuple[str, list[str]]]:
    frame = apply_rules(spark.createDataFrame(rows, SUMMARY_COLUMNS), rules)
    return {r["key"]: (r["verdict"], r["rules_fired"], r["evidence"]) for r in frame.collect()}


def test_rules_fire_at_their_thresholds(spark: SparkSession) -> None:
    rows = [
        ("quiet", 3, 1, 0, 0, 0.0),
        ("flood-edge", 20, 20, 0, 0, 0.0),
        ("flood-below", 19, 19, 0, 0, 0.0),
        ("bad-edge", 1, 0, 5, 0, 0.0),
        ("bad-over", 1, 0, 6, 0, 0.0),
        ("guesser", 0, 0, 0, 4, None),
        ("rejected-floor", 19, 0, 0, 0, 1.0),
        ("rejected", 20, 0, 0, 0, 0.55),
        ("many", 30, 25, 9, 9, 0.9),
    ]
    got = _verdicts(spark, rows, AbuseRules())
    assert {k: v[1] for k, v in got.items()} == {
        "quiet": [], "flood-edge": ["min_hellos_without_connect"], "flood-below": [], "bad-edge": [],
        "bad-over": ["max_bad_messages"], "guesser": ["max_wrong_ip_connects"], "rejected-floor": [],
        "rejected": ["max_reject_rate"],
        "many": ["min_hellos_without_connect", "max_bad_messages", "max_wrong_ip_connects", "max_reject_rate"],
    }
    assert {k for k, v in got.items() if v[0] == "block"} == {
        "flood-edge", "bad-over", "guesser", "rejected", "many",
    }
    assert got["rejected"][2] == ["reject_rate=0.55>0.50 over 20 hellos"]
    assert got["bad-over"][2] == ["bad_messages=6>5"]


def test_disabled_rules_never_fire(spark: SparkSession) -> None:
    none = AbuseRules(None, None, None, None)
    got = _verdicts(spark, [("many", 30, 25, 9, 9, 0.9)], none)
    assert got["many"] == ("ok", [], [])


# -- aggregations on a hand-made event log --------------------------------------------

@pytest.fixture(scope="module")
def crafted(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> DataFrame:
    directory = tmp_path_factory.mktemp("crafted")
    with EventWriter(directory, source="server", server_id="echo-1") as w, \
            EventWriter(directory, source="load", server_id="echo-1", prefix="load") as load:
        a = "10.0.0.1"
        w.emit("hello", ts=T + 1, initial_session=-1, ip=a, port=40000, key_valid=True)
        w.emit("duologue_created", ts=T + 1.1, session=1, owner_ip=a, data_port=9010, control_port=9011)
        w.emit("client_connected", ts=T + 1.5, session=1, ip=a, wrong_ip=False)
        for seq, rtt in enumerate((500, 700, 900)):
            load.emit("rtt_sample", ts=T + 2 + seq, client_ip=a, rtt_us=rtt, seq=seq)
        w.emit("hello", ts=T + 2, initial_session=-2, ip="::ffff:10.0.0.1", port=40001, key_valid=True)
        for n in (1, 2, 3):
            w.emit("hello", ts=T + 3, initial_session=-10 - n, ip=f"2001:db8:1:2::{n}", port=1, key_valid=True)
        w.emit("hello", ts=T + 4, initial_session=-20, ip="2001:db8:1:3::1", port=1, key_valid=False)
        w.emit("driver_snapshot", ts=T + 5, counters={"Bytes sent": 1}, new_loss=[], new_errors=[])
        bad = "203.0.113.5"
        for n in (1, 2):
            w.emit("hello", ts=T + 9 + n, initial_session=-30 - n, ip=bad, port=1, key_valid=True)
            w.emit("reject", ts=T + 9.5 + n, initial_session=-30 - n, ip=bad, reason="too_many_for_ip")
        w.emit("hello", ts=T + 12, initial_session=-40, ip=bad, port=1, key_valid=False)
        w.emit("bad_message", ts=T + 12, session=-40, ip=bad, where="initial")
        w.emit("reject", ts=T + 12, initial_session=-40, ip=bad, reason="bad_message")
        w.emit("client_connected", ts=T + 13, session=1, ip=bad, wrong_ip=True)
        w.emit("blocklist_hit", ts=T + 14, ip=bad, rule=bad)
        w.emit("duologue_closed", ts=T + 61, session=99, owner_ip="10.0.0.9", reason="idle", lifetime_s=100.0,
               msgs_in=0, msgs_out=0, bytes_in=0, bytes_out=0)
        w.emit("duologue_closed", ts=T + 70, session=1, owner_ip=a, reason="client_gone", lifetime_s=68.9,
               msgs_in=3, msgs_out=3, bytes_in=63, bytes_out=63)
    loaded = analysed(load_events(spark, directory))
    return loaded.filter(F.col("status") == "ok").drop("status")


CRAFTED_RULES = AbuseRules(
    min_hellos_without_connect=3, max_bad_messages=0, max_wrong_ip_connects=0, max_reject_rate=0.5, min_hellos=3
)


def test_per_ip_summary_counts_and_aggregates(crafted: DataFrame) -> None:
    rows = {r["key"]: r.asDict() for r in build_per_ip(crafted, 64, CRAFTED_RULES).collect()}
    assert set(rows) == {"10.0.0.1", "2001:db8:1:2::/64", "2001:db8:1:3::/64", "203.0.113.5", "10.0.0.9"}
    a = rows["10.0.0.1"]
    assert {k: a[k] for k in ("family", "addresses", "hellos", "connects", "duologues_created",
                              "duologues_closed", "rtt_samples", "msgs_in", "bytes_out",
                              "hellos_without_connect", "rejects", "verdict")} == {
        "family": "ipv4", "addresses": 2, "hellos": 2, "connects": 1, "duologues_created": 1,
        "duologues_closed": 1, "rtt_samples": 3, "msgs_in": 3, "bytes_out": 63,
        "hellos_without_connect": 1, "rejects": 0, "verdict": "ok",
    }
    v6 = rows["2001:db8:1:2::/64"]
    assert (v6["family"], v6["addresses"], v6["hellos"], v6["rules_fired"]) == (
        "ipv6", 3, 3, ["min_hellos_without_connect"],
    )
    assert rows["2001:db8:1:3::/64"]["hellos_bad_key"] == 1
    bad = rows["203.0.113.5"]
    assert {k: bad[k] for k in ("hellos", "hellos_bad_key", "rejects", "rejects_too_many_for_ip",
                                "rejects_bad_message", "bad_messages", "wrong_ip_connects",
                                "blocklist_hits", "reject_rate", "hellos_without_connect", "verdict")} == {
        "hellos": 3, "hellos_bad_key": 1, "rejects": 3, "rejects_too_many_for_ip": 2, "rejects_bad_message": 1,
        "bad_messages": 1, "wrong_ip_connects": 1, "blocklist_hits": 1, "reject_rate": 1.0,
        "hellos_without_connect": 3, "verdict": "block",
    }
    assert bad["rules_fired"] == [
        "min_hellos_without_connect", "max_bad_messages", "max_wrong_ip_connects", "max_reject_rate",
    ]
    assert bad["first_ts"] == T + 10 and bad["last_ts"] == T + 14
    # Default rules: nothing in this small log is abusive.
    assert {r["verdict"] for r in build_per_ip(crafted, 64, AbuseRules()).collect()} == {"ok"}


def test_ipv6_prefix_changes_the_aggregation(crafted: DataFrame) -> None:
    keys = {r["key"]: r["addresses"] for r in build_per_ip(crafted, 48, CRAFTED_RULES).collect()}
    assert keys["2001:db8:1::/48"] == 4


def _series(frame: DataFrame) -> list[dict]:
    return [r.asDict() for r in frame.orderBy("minute").collect()]


def test_timeseries_counts_and_active_duologues(crafted: DataFrame) -> None:
    series = _series(build_timeseries(crafted, T + 1))
    assert [r["minute"] for r in series] == [int(T), int(T) + 60]
    first, second = series
    assert (first["hellos"], first["rejects"], first["rejects_too_many_for_ip"], first["rejects_bad_message"]) == (
        9, 3, 2, 1,
    )
    assert (first["duologues_created"], first["wrong_ip_connects"], first["blocklist_hits"]) == (1, 1, 1)
    # One duologue was open before the log started, one was created: 2 open, then both close.
    assert (first["active_duologues"], second["duologues_closed"], second["active_duologues"]) == (2, 2, 0)


def test_timeseries_fills_gaps(spark: SparkSession, tmp_path: Path) -> None:
    with EventWriter(tmp_path, source="server", server_id="echo-1") as w:
        w.emit("duologue_created", ts=T + 1, session=1, owner_ip="10.0.0.1", data_port=1, control_port=2)
        w.emit("duologue_closed", ts=T + 250, session=1, owner_ip="10.0.0.1", reason="expired",
               lifetime_s=249.0, msgs_in=0, msgs_out=0, bytes_in=0, bytes_out=0)
    events = analysed(load_events(spark, tmp_path))
    series = _series(build_timeseries(events, T + 1))
    assert [(r["minute"] - int(T)) // 60 for r in series] == [0, 1, 2, 3, 4]
    assert [r["active_duologues"] for r in series] == [1, 1, 1, 1, 0]
    assert [r["duologues_expired"] for r in series] == [0, 0, 0, 0, 1]


def test_timeseries_is_not_filled_beyond_the_limit(spark: SparkSession) -> None:
    rows = [("hello", float(T)), ("hello", T + 61.0), ("hello", T + 600.0)]
    frame = spark.createDataFrame(rows, "kind string, ts double").select(
        "kind", "ts", *[F.lit(None).cast(t).alias(c) for c, t in (
            ("key_valid", "boolean"), ("reason", "string"), ("wrong_ip", "boolean"), ("lifetime_s", "double"),
            ("msgs_in", "long"), ("msgs_out", "long"), ("bytes_in", "long"), ("bytes_out", "long"),
            ("rtt_us", "double"))])
    assert [r["minute"] - int(T) for r in _series(build_timeseries(frame, T, max_filled_minutes=10))] == [
        60 * m for m in range(11)]
    assert [r["minute"] - int(T) for r in _series(build_timeseries(frame, T, max_filled_minutes=9))] == [0, 60, 600]
