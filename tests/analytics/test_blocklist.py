"""The blocklist file format: parsing, errors, matching, expiry, atomic writes."""

from __future__ import annotations

import ipaddress
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from aeron_py.duologue.blocklist import Blocklist, BlocklistError, Entry

pytestmark = pytest.mark.timeout(30)

T0 = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc).timestamp()
SAMPLE = """\
# operators' blocklist
   # indented comment

203.0.113.7          2026-11-21T13:00:00Z   hello flood # ticket 12
198.51.100.0/24      never                  abusive network
2001:db8:bad:1::/64  2026-11-21T12:30:00+00:00  rotating IPv6 flood
::ffff:192.0.2.1     never                  mapped entry
10.9.0.0/16          2026-11-21T11:00:00Z   long expired
"""


@pytest.fixture
def blocklist() -> Blocklist:
    return Blocklist.parse(SAMPLE, "ops.txt")


def test_parse_reads_entries_comments_and_blank_lines(blocklist: Blocklist) -> None:
    assert len(blocklist) == 5
    first = blocklist.entries[0]
    assert (str(first.network), first.expires, first.reason, first.line) == (
        "203.0.113.7/32", T0 + 3600, "hello flood # ticket 12", 4,
    )
    assert blocklist.entries[1].expires is None
    assert blocklist.entries[2].expires == T0 + 1800
    # IPv4-mapped IPv6 is stored as IPv4.
    assert blocklist.entries[3].network == ipaddress.ip_network("192.0.2.1/32")


@pytest.mark.parametrize(
    ("ip", "expected_line"),
    [
        ("203.0.113.7", 4),
        ("203.0.113.8", None),
        ("198.51.100.200", 5),
        ("::ffff:198.51.100.9", 5),  # mapped query matches the IPv4 prefix
        ("2001:db8:bad:1:dead:beef:0:1", 6),
        ("[2001:db8:bad:1::5]", 6),
        ("2001:db8:bad:2::1", None),
        ("192.0.2.1", 7),
        ("10.9.1.1", None),  # expired
        ("fe80::1%eth0", None),
    ],
)
def test_match(blocklist: Blocklist, ip: str, expected_line: int | None) -> None:
    entry = blocklist.match(ip, T0)
    assert (entry.line if entry else None) == expected_line


def test_expiry_is_exclusive(blocklist: Blocklist) -> None:
    assert blocklist.match("203.0.113.7", T0 + 3599.9) is not None
    assert blocklist.match("203.0.113.7", T0 + 3600) is None
    assert blocklist.match("198.51.100.1", T0 + 10**9) is not None  # never


def test_most_specific_entry_in_force_wins() -> None:
    text = (
        "10.0.0.0/8 never wide\n"
        "10.1.0.0/16 2026-11-21T12:10:00Z narrow\n"
        "10.1.2.3 2026-11-21T11:00:00Z expired host\n"
    )
    blocklist = Blocklist.parse(text)
    assert blocklist.match("10.1.2.3", T0).reason == "narrow"
    assert blocklist.match("10.1.2.3", T0 + 3600).reason == "wide"
    assert blocklist.match("10.200.0.1", T0).reason == "wide"


def test_duplicate_network_prefers_the_longest_lived() -> None:
    text = "1.2.3.4 2026-11-21T12:05:00Z short\n1.2.3.4 2026-11-21T14:00:00Z long\n"
    assert Blocklist.parse(text).match("1.2.3.4", T0).reason == "long"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1.2.3.4", "ops.txt:3: missing EXPIRES and REASON"),
        ("1.2.3.4 never", "ops.txt:3: missing REASON"),
        ("1.2.3.999 never x", "ops.txt:3: '1.2.3.999' is not an IP address or CIDR prefix"),
        ("10.0.0.5/24 never x", "ops.txt:3: '10.0.0.5/24' has host bits set; did you mean 10.0.0.0/24?"),
        ("1.2.3.4 tomorrow x", "ops.txt:3: EXPIRES 'tomorrow' is neither 'never' nor an ISO-8601"),
        ("1.2.3.4 2026-11-21T13:00:00 x", "ops.txt:3: EXPIRES '2026-11-21T13:00:00' must be in UTC"),
        ("1.2.3.4 2026-11-21T13:00:00+02:00 x", "must be in UTC"),
        ("2001:db8::/129 never x", "not an IP address or CIDR prefix"),
    ],
)
def test_bad_lines_are_reported_with_their_line_number(line: str, message: str) -> None:
    with pytest.raises(BlocklistError) as info:
        Blocklist.parse(f"# header\n1.1.1.1 never fine\n{line}\n", "ops.txt")
    assert message in str(info.value)


def test_load_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "blocklist.txt"
    path.write_text("bogus never x\n")
    with pytest.raises(BlocklistError, match=f"{path}:1:"):
        Blocklist.load(path)
    with pytest.raises(FileNotFoundError, match="cannot read blocklist"):
        Blocklist.load(tmp_path / "missing.txt")
    path.write_bytes(b"\xff\xfe never x\n")
    with pytest.raises(BlocklistError, match="not UTF-8"):
        Blocklist.load(path)


def test_match_rejects_a_non_address(blocklist: Blocklist) -> None:
    with pytest.raises(ValueError, match="not an IP address: 'server-7'"):
        blocklist.match("server-7", T0)


def test_write_round_trips_and_replaces_atomically(tmp_path: Path, blocklist: Blocklist) -> None:
    path = tmp_path / "sub" / "blocklist.txt"
    Blocklist.write(path, blocklist.entries)
    again = Blocklist.load(path)
    assert [(e.network, e.expires, e.reason) for e in again] == [
        (e.network, e.expires, e.reason) for e in blocklist
    ]
    inode = path.stat().st_ino
    extra = Entry.create("2001:db8::7", None, "new\nline  reason")
    Blocklist.write(path, [*again.entries, extra])
    assert path.stat().st_ino != inode  # replaced by rename, never rewritten in place
    text = path.read_text()
    assert text.startswith("# aeron_py blocklist")
    assert text.splitlines()[-1] == "2001:db8::7 never new line reason"
    assert "2026-11-21T13:00:00Z" in text
    assert [p.name for p in path.parent.iterdir()] == ["blocklist.txt"]  # no temp files left
    assert len(Blocklist.load(path)) == 6


def test_write_refuses_an_entry_without_reason_and_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "blocklist.txt"
    Blocklist.write(path, [Entry.create("1.2.3.4", None, "ok")])
    before = path.read_bytes()
    with pytest.raises(BlocklistError, match="empty reason"):
        Blocklist.write(path, [Entry.create("1.2.3.5", None, "   ")])
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["blocklist.txt"]


def test_entry_create_validates_the_target() -> None:
    assert Entry.create("::ffff:0:0/120", None, "x").network == ipaddress.ip_network("0.0.0.0/24")
    with pytest.raises(BlocklistError, match="host bits set"):
        Entry.create("2001:db8::1/64", None, "x")
