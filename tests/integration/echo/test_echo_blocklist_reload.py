"""The server applies a new version of its blocklist file by itself."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from aeron_py.duologue.blocklist import Blocklist, Entry
from aeron_py.telemetry.reader import read_events
from echo_harness import PortBlocks, make_server, raw_peer, wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

BLOCKS = PortBlocks(29500, 30000)
REFUSED = b"ERROR too many connections for IP address"


def echo(peer, pub, sub, text: bytes) -> None:
    peer.send(pub, b"ECHO " + text)
    assert peer.receive(sub, lambda m: True) == b"ECHO " + text


@pytest.mark.parametrize("close_blocked", [True, False], ids=["close", "keep"])
def test_new_blocklist_file_refuses_and_closes_without_a_signal(tmp_path: Path, close_blocked: bool) -> None:
    ports = BLOCKS.take(8)
    path, events = tmp_path / "blocklist.txt", tmp_path / "events"
    Blocklist.write(path, [Entry.create("10.9.9.9", None, "someone else")])
    options = {"blocklist": str(path), "events": str(events), "close_blocked": close_blocked,
               "endpoint_filter": False}  # refusals are answered, not dropped by the driver's filter
    with make_server(ports, options=options) as server, raw_peer(ports) as peer:
        caught, kept = peer.handshake(key=2, interface="127.0.0.2"), peer.handshake(key=3, interface="127.0.0.3")
        caught_pub, caught_sub = peer.open_duologue(caught, "127.0.0.2")
        kept_pub, kept_sub = peer.open_duologue(kept, "127.0.0.3")
        echo(peer, caught_pub, caught_sub, b"before")
        echo(peer, kept_pub, kept_sub, b"before")

        Blocklist.write(path, [Entry.create("127.0.0.2", None, "caught by the analytics")])  # atomic
        wait_until(lambda: server.blocklist_version == 2, 5, "the server to notice the new blocklist")
        if close_blocked:
            wait_until(lambda: server.stats.closes.get("blocked") == 1, 5, "the blocked duologue to close")
            assert {d.owner_ip for d in server.duologues} == {"127.0.0.3"}
        else:
            echo(peer, caught_pub, caught_sub, b"kept")
            assert server.stats.closes.get("blocked") is None
        pub, sub = peer.initial("127.0.0.2")
        peer.send(pub, b"HELLO 7")
        assert peer.reply_to(sub, pub).split(b" ", 1)[1] == REFUSED
        echo(peer, kept_pub, kept_sub, b"after")
        assert server.stats.rejects == {"blocklist": 1}
    reloads = [e for e in read_events(events) if e["kind"] == "blocklist_reload"]
    assert len(reloads) == 1 and reloads[0]["reason"] == "file_changed"
    assert reloads[0]["counters"] == {"version": 2, "entries": 1, "active": 1, "added": 1, "removed": 1,
                                      "duologues_closed": 1 if close_blocked else 0}
    closed = [e for e in read_events(events) if e["kind"] == "duologue_closed" and e["reason"] == "blocked"]
    assert len(closed) == (1 if close_blocked else 0)


def test_invalid_new_version_keeps_the_old_list(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ports = BLOCKS.take(4)
    path = tmp_path / "blocklist.txt"
    Blocklist.write(path, [Entry.create("127.0.0.2", None, "blocked")])
    with make_server(ports, options={"blocklist": str(path), "endpoint_filter": False}) as server, \
            raw_peer(ports) as peer, caplog.at_level(logging.ERROR, logger="aeron_py.duologue.server"):
        path.write_text("127.0.0.3 never ok\n127.0.0.4 tomorrow oops\n")
        wait_until(lambda: "blocklist reload failed" in caplog.text, 5, "the invalid version to be refused")
        pub, sub = peer.initial("127.0.0.2")
        peer.send(pub, b"HELLO 8")
        assert peer.reply_to(sub, pub).split(b" ", 1)[1] == REFUSED  # the old list is still in force
        Blocklist.write(path, [Entry.create("127.0.0.4", None, "valid again")])
        wait_until(lambda: server.blocklist_version == 2, 5, "the next valid version")
        peer.send(pub, b"HELLO 9")
        assert peer.reply_to(sub, pub).split(b" ", 1)[1].startswith(b"CONNECT ")
    assert caplog.text.count("blocklist reload failed") == 1
