"""The secure transport on real drivers and real UDP (cpp/plugins/secure_transport/,
``MediaDriver(secure_transport=True)``, :mod:`aeron_py.secure`).

Two drivers, one publishing and one subscribing, each with the session's key; between them a
UDP relay (tests/udp_relay.py) that records every datagram both ways, drops some if asked and
injects what an attacker on the path would send. Each claim is checked against the same setup
without keys (the capture shows the payload in clear, a forged frame gets through), so these
tests can fail."""
from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from aeron_py import Aeron, MediaDriver
from aeron_py.errors import AeronError
from aeron_py.secure import COUNTERS, OVERHEAD, Role, check_mtu, generate_session_key, max_mtu
from conftest import free_udp_port, wait_until
from forged import data_frame
from udp_relay import DOWN, UP, UdpRelay

pytestmark = [pytest.mark.timeout(90), pytest.mark.integration]

STREAM = 2101
SESSION = 424242
MARKER = b"SECRET-PAYLOAD-"
SM_TYPE = 0x03


@contextmanager
def secured_pair(*, keyed: bool = True, loss: float = 0.0, key: bytes | None = None) -> Iterator[dict]:
    """Publisher and subscriber drivers, a relay between them; the session keyed on both sides."""
    port = free_udp_port()
    key = key or generate_session_key()
    with MediaDriver(secure_transport=True) as pub_driver, MediaDriver(secure_transport=True) as sub_driver, \
            UdpRelay(("127.0.0.1", port), loss=loss) as relay, \
            Aeron(driver=pub_driver) as pub_client, Aeron(driver=sub_driver) as sub_client:
        if keyed:
            sub_driver.secure_transport.add(Role.SUBSCRIPTION, port=port, stream_id=STREAM, session_id=SESSION, key=key)
            pub_driver.secure_transport.add(Role.PUBLICATION, stream_id=STREAM, session_id=SESSION, key=key)
        sub = sub_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", STREAM)
        pub = pub_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{relay.port}|session-id={SESSION}", STREAM)
        wait_until(lambda: pub.is_connected and sub.image_count == 1, 15, "the publication to connect through the relay")
        yield {"pub": pub, "sub": sub, "relay": relay, "pub_driver": pub_driver, "sub_driver": sub_driver,
               "port": port, "key": key}


def send_and_receive(pair: dict, count: int, timeout: float = 30.0, start: int = 0) -> list[bytes]:
    got: list[bytes] = []
    for i in range(start, start + count):
        pair["pub"].offer_until(MARKER + str(i).encode(), timeout=timeout)
    wait_until(lambda: pair["sub"].poll(lambda data, header: got.append(data), 100) >= 0 and len(got) >= count,
               timeout, f"{count} messages")
    return got


def one_by_one(pair: dict, count: int, start: int = 0, timeout: float = 30.0) -> list[bytes]:
    """Each message waits for the one before to arrive: one DATA datagram each, no batching."""
    got: list[bytes] = []
    for i in range(start, start + count):
        got += send_and_receive(pair, 1, timeout, i)
    return got


def expected(count: int, start: int = 0) -> list[bytes]:
    return [MARKER + str(i).encode() for i in range(start, start + count)]


def counters(driver: MediaDriver) -> dict[str, int]:
    return driver.secure_transport.counters()


def test_plain_session_shows_its_payload_on_the_wire() -> None:
    with secured_pair(keyed=False) as pair:
        assert send_and_receive(pair, 20) == expected(20)
        assert any(MARKER in d for d in pair["relay"].datagrams(UP)), "the capture must see plain payloads"
        assert counters(pair["pub_driver"])["sealed"] == 0


def test_secured_session_hides_every_payload_and_delivers_in_order() -> None:
    with secured_pair() as pair:
        assert send_and_receive(pair, 200) == expected(200)
        up = pair["relay"].datagrams(UP)
        assert up and not any(MARKER in d for d in up), "a payload crossed the wire in clear"
        assert not any(pair["key"] in d for d in up + pair["relay"].datagrams(DOWN)), "the key crossed the wire"
        pub_counts, sub_counts = counters(pair["pub_driver"]), counters(pair["sub_driver"])
        assert pub_counts["sealed"] > 0 and sub_counts["opened"] > 0, "data is sealed and opened (batched)"
        assert sub_counts["sealed"] > 0 and pub_counts["opened"] > 0, "status messages are sealed and opened too"
        assert all(v == 0 for k, v in sub_counts.items() if k.startswith("dropped")), sub_counts


def test_replayed_flipped_and_forged_datagrams_are_dropped_and_counted() -> None:
    with secured_pair() as pair:
        relay, sub_driver = pair["relay"], pair["sub_driver"]
        assert one_by_one(pair, 10) == expected(10)
        data = [d for d in relay.datagrams(UP) if MARKER not in d and len(d) > 32 + OVERHEAD]
        assert len(data) >= 5, "sealed DATA datagrams were captured"
        before = counters(sub_driver)
        for datagram in data[:5]:
            relay.inject_up(datagram)                                   # replayed as it was
            for at in (40, 8):                                          # a ciphertext bit; the term offset (clear)
                flipped = bytearray(datagram)
                flipped[at] ^= 0x01
                flipped[-1] ^= 0x80                                     # ... with a fresh counter (not a replay)
                relay.inject_up(bytes(flipped))
        relay.inject_up(data_frame(SESSION, 0, 0, MARKER + b"forged in clear" + b"\x01" * 40, STREAM))
        wait_until(lambda: sum(counters(sub_driver)[k] - before[k] for k in ("dropped_bad_tag", "dropped_replay"))
                   >= 16, 10, "16 drops counted")
        after = counters(sub_driver)
        assert after["dropped_replay"] - before["dropped_replay"] == 5
        assert after["dropped_bad_tag"] - before["dropped_bad_tag"] == 11
        assert send_and_receive(pair, 10, start=10) == expected(10, 10), "the owner's messages must go on in order"


def forged_status_message(session_id: int, window: int) -> bytes:
    """An SM that would open a huge window far ahead of the receiver, with 40 bytes where a
    seal's tag and nonce would be (an attacker without the key can only guess them)."""
    return struct.pack("<iBBhiiiiiq", 36, 0, 0, SM_TYPE, session_id, STREAM, 1 << 20, 0, window, 99) + os.urandom(40)


def test_forged_status_messages_cannot_steer_the_publication() -> None:
    with secured_pair() as pair:
        relay, pub_driver = pair["relay"], pair["pub_driver"]
        assert one_by_one(pair, 5) == expected(5)
        wait_until(lambda: len(relay.datagrams(DOWN)) >= 3, 10, "three status messages (one per 200 ms when idle)")
        genuine = relay.datagrams(DOWN)[:5]
        before = counters(pub_driver)
        for _ in range(20):
            relay.inject_down(forged_status_message(SESSION, 1 << 30))
        for sm in genuine:
            relay.inject_down(sm)                                       # replayed genuine SMs
        wait_until(lambda: counters(pub_driver)["dropped_bad_tag"] - before["dropped_bad_tag"] >= 20 and
                   counters(pub_driver)["dropped_replay"] - before["dropped_replay"] >= len(genuine), 10,
                   "forged and replayed SMs dropped")
        assert counters(pub_driver)["dropped_bad_tag"] - before["dropped_bad_tag"] == 20
        assert send_and_receive(pair, 5, start=5) == expected(5, 5)


def test_plain_forged_frames_reach_an_unkeyed_subscription() -> None:
    # the control for the test above: without keys the same forged frame is taken as data
    with secured_pair(keyed=False) as pair:
        assert send_and_receive(pair, 3) == expected(3)
        assert counters(pair["sub_driver"])["dropped_bad_tag"] == 0


def test_ten_percent_loss_both_ways_loses_nothing() -> None:
    with secured_pair(loss=0.10) as pair:
        assert one_by_one(pair, 150) + send_and_receive(pair, 150, 60, 150) == expected(300)
        relay = pair["relay"]
        assert relay.dropped[UP] >= 5 and relay.dropped[DOWN] >= 5, relay.dropped
        assert counters(pair["sub_driver"])["dropped_replay"] == 0, "retransmits must never look like replays"


def test_rotation_on_both_sides_loses_nothing() -> None:
    with secured_pair() as pair:
        assert send_and_receive(pair, 20) == expected(20)
        new_key = generate_session_key()
        pair["sub_driver"].secure_transport.add(Role.SUBSCRIPTION, port=pair["port"], stream_id=STREAM,
                                                session_id=SESSION, key=new_key)
        assert send_and_receive(pair, 20, start=20) == expected(20, 20), "old key still opens"
        pair["pub_driver"].secure_transport.add(Role.PUBLICATION, stream_id=STREAM, session_id=SESSION, key=new_key)
        assert send_and_receive(pair, 20, start=40) == expected(20, 40), "new key seals"
        pair["sub_driver"].secure_transport.forget_previous(Role.SUBSCRIPTION, port=pair["port"], stream_id=STREAM,
                                                            session_id=SESSION)
        assert send_and_receive(pair, 20, start=60) == expected(20, 60)
        assert pair["sub_driver"].secure_transport.session_count == 1


def test_a_plain_publication_cannot_reach_a_secured_port() -> None:
    with secured_pair() as pair, Aeron(driver=pair["pub_driver"]) as other:
        plain = other.add_publication(f"aeron:udp?endpoint=127.0.0.1:{pair['port']}|session-id=777", STREAM)
        wait_until(lambda: counters(pair["sub_driver"])["dropped_unknown_session"] > 0, 10, "plain SETUPs dropped")
        assert not plain.is_connected and pair["sub"].image_count == 1
        assert send_and_receive(pair, 5) == expected(5)


def test_removed_keys_leave_nothing_and_never_hand_on_ciphertext() -> None:
    with secured_pair() as pair:
        assert send_and_receive(pair, 5) == expected(5)
        secure = pair["sub_driver"].secure_transport
        secure.remove(Role.SUBSCRIPTION, port=pair["port"], stream_id=STREAM, session_id=SESSION)
        assert secure.session_count == 0 and secure.secured_port_count == 1
        before = counters(pair["sub_driver"])["dropped_unknown_session"]
        got: list[bytes] = []
        pair["pub"].offer_until(MARKER + b"after removal", timeout=5)
        wait_until(lambda: counters(pair["sub_driver"])["dropped_unknown_session"] > before, 10, "drops")
        pair["sub"].poll(lambda data, header: got.append(data), 100)
        assert got == [], "a datagram no key opened reached the application"
        with pytest.raises(KeyError):
            secure.remove(Role.SUBSCRIPTION, port=pair["port"], stream_id=STREAM, session_id=SESSION)


def test_a_thousand_keys_added_and_removed_leave_an_empty_table() -> None:
    with MediaDriver(secure_transport=True) as driver:
        secure = driver.secure_transport
        for i in range(1000):
            key = generate_session_key()
            secure.add(Role.PUBLICATION, stream_id=STREAM, session_id=i, key=key)
            secure.add(Role.SUBSCRIPTION, port=20000 + i % 100, stream_id=STREAM, session_id=i, key=key)
            secure.remove(Role.PUBLICATION, stream_id=STREAM, session_id=i)
            secure.remove(Role.SUBSCRIPTION, port=20000 + i % 100, stream_id=STREAM, session_id=i)
        assert secure.session_count == 0


def test_misuse_raises_never_crashes() -> None:
    driver = MediaDriver(secure_transport=True)
    secure = driver.secure_transport
    with pytest.raises(ValueError, match="32 bytes"):
        secure.add(Role.PUBLICATION, stream_id=1, session_id=1, key=b"short")
    with pytest.raises(TypeError):
        secure.add(Role.PUBLICATION, stream_id=1, session_id=1, key=bytearray(32))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        secure.add(1, stream_id=1, session_id=1, key=bytes(32))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="local UDP port"):
        secure.add(Role.SUBSCRIPTION, port=70000, stream_id=1, session_id=1, key=bytes(32))
    secure.add(Role.SUBSCRIPTION, stream_id=1, session_id=1, key=bytes(32))  # any port
    assert secure.secured_port_count == 0
    with pytest.raises(ValueError, match="leave port out"):
        secure.add(Role.PUBLICATION, port=5, stream_id=1, session_id=1, key=bytes(32))
    with pytest.raises(ValueError):
        secure.secure_port(0)
    with pytest.raises(KeyError):
        secure.forget_previous(Role.PUBLICATION, stream_id=1, session_id=1)
    secure.add(Role.PUBLICATION, stream_id=1, session_id=1, key=bytes(32))
    assert set(secure.counters()) == set(COUNTERS)
    driver.close()                                                      # closed with keys installed
    secure.add(Role.PUBLICATION, stream_id=1, session_id=2, key=bytes(32))
    secure.remove(Role.PUBLICATION, stream_id=1, session_id=1)
    with pytest.raises(AeronError, match="closed"):
        secure.counters()
    with MediaDriver() as plain, pytest.raises(AeronError, match="no secure transport"):
        plain.secure_transport


def test_the_counters_are_in_the_cnc_file() -> None:
    with secured_pair() as pair:
        send_and_receive(pair, 3)
        with pair["sub_driver"].stat() as stat:
            labels = {c.label: c.value for c in stat.counters()}
        assert labels["aeron_py secure transport opened"] >= 3
        assert "aeron_py secure transport dropped: bad tag" in labels


def test_mtu_room_for_the_seal() -> None:
    assert max_mtu() == 1432 and max_mtu(ipv6=True) == 1412
    check_mtu(1408)
    with pytest.raises(ValueError, match="mtu=1432"):
        check_mtu(1500)


def test_remove_later_removes_once_due_and_an_add_meanwhile_cancels_it() -> None:
    with MediaDriver(secure_transport=True) as driver:
        transport = driver.secure_transport
        identity = {"stream_id": STREAM, "session_id": SESSION}
        transport.add(Role.PUBLICATION, key=generate_session_key(), **identity)
        transport.remove_later(Role.PUBLICATION, delay=1.0, **identity)
        assert transport.session_count == 1 and transport.removals_pending == 1  # not before it is due
        wait_until(lambda: transport.session_count == 0, 5, "the key removed once due")
        assert transport.removals_pending == 0
        transport.add(Role.PUBLICATION, key=generate_session_key(), **identity)
        transport.remove_later(Role.PUBLICATION, delay=1.0, **identity)
        transport.add(Role.PUBLICATION, key=generate_session_key(), **identity)  # the session is in use again
        assert transport.removals_pending == 0
        transport.remove_later(Role.SUBSCRIPTION, port=4000, delay=0.0, **identity)  # nothing there: no error
        wait_until(lambda: transport.removals_pending == 0, 5, "the empty removal done")
        assert transport.session_count == 1
        with pytest.raises(ValueError, match="delay must be >= 0"):
            transport.remove_later(Role.PUBLICATION, delay=-1.0, **identity)
        with pytest.raises(ValueError, match="delay must be >= 0"):
            transport.remove_later(Role.PUBLICATION, delay=float("nan"), **identity)
