"""Publication-side misuse, each in a child process: a typed exception, never a signal.

Covers claims after commit/abort/close (views and slices dead, commit raising), abandoned
claims (aborted: the stream goes on with no garbage), bad offer/claim arguments, handles used
after their client closed, and counter ids out of range. Each scenario runs after a prelude
with a driver, a client and a connected IPC publication/subscription pair.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from processes import run_process


PRELUDE = '''
import gc, re, sys, time
import aeron_py
from aeron_py import errors

def expect(exc_type, fn, match=""):
    try:
        fn()
    except exc_type as exc:
        assert re.search(match, str(exc)), f"{exc_type.__name__} message {str(exc)!r} does not match {match!r}"
        return exc
    raise AssertionError(f"expected {exc_type.__name__} from {fn}")

def wait_until(condition, timeout=5.0, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.001)

def drain(sub, count, timeout=5.0):
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        if sub.poll(lambda data, header: got.append(bytes(data)), 10) == 0:
            time.sleep(0.001)
    return got

driver = aeron_py.MediaDriver(publication_linger_timeout_ns=0)
aeron = aeron_py.Aeron(driver=driver)
CHANNEL = "aeron:ipc?term-length=64k"
sub = aeron.add_subscription(CHANNEL, 77)
pub = aeron.add_publication(CHANNEL, 77)
wait_until(lambda: pub.is_connected, 5, "the IPC publication to connect")
'''

EPILOGUE = '''
print("SCENARIO OK", flush=True)
'''


def run_scenario(body: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run ``body`` after the prelude in a child; assert it ended normally and printed SCENARIO OK."""
    script = PRELUDE + textwrap.dedent(body) + EPILOGUE
    root = Path(__file__).resolve().parents[3]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    proc = run_process([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, env=env)
    report = f"exit code {proc.returncode}\n--- stdout ---\n{proc.stdout[-3000:]}\n--- stderr ---\n{proc.stderr[-3000:]}"
    if proc.returncode < 0:
        raise AssertionError(f"child killed by signal {signal.Signals(-proc.returncode).name}\n{report}")
    assert proc.returncode == 0 and "SCENARIO OK" in proc.stdout, report
    return proc


pytestmark = [pytest.mark.timeout(90), pytest.mark.integration]


def test_claim_views_and_commit_after_client_close():
    run_scenario("""
        claim = pub.try_claim(8)
        view = claim.data
        piece = view[2:4]
        aeron.close()  # aborts the pending claim before the log is unmapped
        expect(ValueError, lambda: view.__setitem__(0, 1), "released")
        if aeron_py._aeron.LAYOUT_TRICKS:
            expect(ValueError, lambda: piece.__setitem__(0, 1), "released")
            expect(ValueError, lambda: bytes(piece), "released")
        else:  # no layout tricks (AERON_PY_NO_TRICKS, free-threaded or unchecked CPython): a slice of the staging copy, never of the (unmapped) log
            piece[0] = 1
            assert bytes(piece)[0] == 1
        expect(ValueError, lambda: claim.data, "ended")
        expect(errors.ClientClosedError, claim.commit, "client was closed")
        expect(errors.ClientClosedError, claim.abort, "client was closed")
        assert claim.done and claim.state == "client_closed"
        del pub, claim, view, piece
        gc.collect()
    """)


def test_with_block_after_client_close_raises_and_sends_nothing():
    run_scenario("""
        def body():
            with pub.try_claim(4) as buf:
                aeron.close()
                buf[0] = 1
        expect(ValueError, body, "released")

        def closed_inside_clean_block():
            with pub2.try_claim(4) as buf:
                buf[:] = b"lost"
                aeron2.close()
        aeron2 = aeron_py.Aeron(driver=driver)
        sub2 = aeron2.add_subscription(CHANNEL, 79)
        pub2 = aeron2.add_publication(CHANNEL, 79)
        wait_until(lambda: pub2.is_connected, 5, "the second client's publication to connect")
        expect(errors.ClientClosedError, closed_inside_clean_block, "claim was aborted")
    """)


def test_claim_slices_are_dead_after_commit_and_only_committed_bytes_arrive():
    run_scenario("""
        claim = pub.try_claim(8)
        view = claim.data
        view[:] = b"ABCDEFGH"
        piece = view[0:4]
        alias = memoryview(view)
        cast = view.cast("B")
        claim.commit()
        # Without the layout tricks (AERON_PY_NO_TRICKS, or a CPython they were not checked on) the view is over a staging copy, written to the
        # log by commit: it dies, its slices and casts stay usable but reach only that copy.
        for v in (view, piece, alias, cast) if aeron_py._aeron.LAYOUT_TRICKS else (view,):
            expect(ValueError, lambda: v.__setitem__(0, 0x7A), "released")
            expect(ValueError, lambda: v.tobytes(), "released")
        if not aeron_py._aeron.LAYOUT_TRICKS:
            for v in (piece, alias, cast):
                v[0] = 0x7A
            assert piece.tobytes() == b"zBCD" and alias.tobytes() == b"zBCDEFGH"
        expect(ValueError, lambda: claim.data, "ended")
        assert drain(sub, 1) == [b"ABCDEFGH"]
    """)


def test_commit_twice_and_abort_after_commit_raise():
    run_scenario("""
        claim = pub.try_claim(4)
        claim.commit()
        expect(RuntimeError, claim.commit, "already committed")
        expect(RuntimeError, claim.abort, "already committed")
        other = pub.try_claim(4)
        other.abort()
        expect(RuntimeError, other.commit, "already aborted")
        assert pub.offer(b"still fine") > 0
    """)


def test_abandoned_claim_is_aborted_and_the_stream_goes_on():
    run_scenario("""
        claim = pub.try_claim(16)
        claim.data[:] = b"G" * 16  # garbage the subscriber must never see
        view = claim.data
        del claim
        gc.collect()
        expect(ValueError, lambda: view.__setitem__(0, 1), "released")
        assert pub.offer(b"after") > 0
        with pub.try_claim(5) as buf:
            buf[:] = b"claim"
        assert drain(sub, 2) == [b"after", b"claim"]
        assert sub.poll(lambda d, h: None, 10) == 0
    """)


def test_claim_keeps_its_publication_alive_and_publication_close_aborts_it():
    run_scenario("""
        claim = aeron.add_publication(CHANNEL, 77).try_claim(3)  # no other reference to the publication
        gc.collect()
        claim.data[:] = b"xyz"
        claim.commit()
        assert drain(sub, 1) == [b"xyz"]
        pending = pub.try_claim(3)
        view = pending.data
        pub.close()
        expect(ValueError, lambda: view.__setitem__(0, 1), "released")
        expect(errors.PublicationClosedError, pending.commit, "publication was closed")
        assert pending.state == "publication_closed"
    """)


def test_offer_and_claim_after_close_raise_publication_closed():
    run_scenario("""
        pub.close()
        expect(errors.PublicationClosedError, lambda: pub.offer(b"x"), "CLOSED")
        expect(errors.PublicationClosedError, lambda: pub.offer_batch([b"x"]), "CLOSED")
        expect(errors.PublicationClosedError, lambda: pub.try_claim(1), "CLOSED")
        other = aeron.add_exclusive_publication(CHANNEL, 78)
        aeron.close()  # the publication outlives its client
        assert other.is_closed and not other.is_connected
        expect(errors.PublicationClosedError, lambda: other.offer(b"x"), "CLOSED")
        expect(errors.PublicationClosedError, lambda: other.try_claim(1), "CLOSED")
        expect(errors.AeronError, lambda: other.position, "closed")
        expect(errors.AeronError, lambda: other.add_destination("aeron:udp?endpoint=127.0.0.1:1"), "closed")
        other.close()  # idempotent, quiet
        del other
        gc.collect()
    """)


def test_bad_offer_arguments_are_clear_errors():
    run_scenario("""
        strided = memoryview(bytearray(16))[::2]
        expect(BufferError, lambda: pub.offer(strided), "C-contiguous")
        expect(TypeError, lambda: pub.offer(12), "bytes-like.*int")
        expect(TypeError, lambda: pub.offer("text"), "bytes-like.*str")
        expect(TypeError, lambda: pub.offer(), "missing required argument 'buffer'")
        expect(TypeError, lambda: pub.offer(b"a", b"b"), "at most 1")
        assert pub.offer(buffer=b"keyword") > 0
        released = memoryview(b"gone")
        released.release()
        expect(ValueError, lambda: pub.offer(released), "released")
        expect(TypeError, lambda: pub.offer_batch([b"a", 3, b"c"]), "item 1 .*int")
        expect(BufferError, lambda: pub.offer_batch([b"a", strided]), "item 1 .*C-contiguous")
        expect(TypeError, lambda: pub.offer_batch(5), "sequence")
        too_big = b"x" * (pub.max_message_length + 1)
        expect(errors.PublicationError, lambda: pub.offer(too_big), "max")
        assert drain(sub, 2)[:2] == [b"keyword", b"a"]
    """)


def test_bad_claim_lengths_are_clear_errors():
    run_scenario("""
        expect(ValueError, lambda: pub.try_claim(-1), "between 0 and max_payload_length")
        expect(ValueError, lambda: pub.try_claim(2 ** 70), "between 0 and max_payload_length")
        expect(errors.PublicationError, lambda: pub.try_claim(pub.max_payload_length + 1), "max_payload_length")
        expect(errors.PublicationError, lambda: pub.try_claim(2 ** 40), "max_payload_length")
        expect(TypeError, lambda: pub.try_claim("3"), "must be an int")
        expect(TypeError, lambda: pub.try_claim(3.0), "must be an int")
        with pub.try_claim(length=2) as buf:
            expect(ValueError, lambda: buf.__setitem__(slice(None), b"too long"))
            buf[:] = b"ok"
        assert drain(sub, 1) == [b"ok"]
    """)


def test_public_classes_are_not_made_directly():
    run_scenario("""
        expect(TypeError, lambda: aeron_py.Publication(object()), "made by Aeron")
        expect(TypeError, lambda: aeron_py.ExclusivePublication(pub), "made by Aeron")
        expect(TypeError, lambda: aeron_py.Claim(), "")
    """)


def test_counter_ids_out_of_range_raise_index_error():
    run_scenario("""
        stat = aeron_py.DriverStat(driver.dir)
        reader = stat.counters_reader()
        top = reader.max_counter_id
        for bad in (top + 1, -1, 2 ** 31, 2 ** 40, -(2 ** 40)):
            expect(IndexError, lambda: reader.value(bad), "out of range")
        for method in (reader.label, reader.type_id, reader.state, reader.registration_id):
            expect(IndexError, lambda: method(top + 1), "out of range")
        expect(IndexError, lambda: stat.counter_value(-5), "out of range")
        assert reader.value(0) >= 0 and reader.label(0)
        stat.close()
        expect(errors.AeronError, lambda: reader.value(0), "closed")
        expect(errors.AeronError, reader.counters, "closed")
    """)


def test_offers_racing_a_client_close_from_another_thread_end_in_typed_errors():
    run_scenario("""
        import threading
        outcome = []
        started = threading.Event()

        def offer_forever():
            started.set()
            try:
                for _ in range(50_000_000):  # bounded; ends with the close below
                    pub.offer(b"racing")
                    claim = pub.try_claim(4) if pub.is_connected else None
                    if claim is not None:
                        claim.data[:] = b"race"
                        claim.commit()
                outcome.append("finished without seeing the close")
            except (errors.PublicationClosedError, errors.ClientClosedError, errors.NotConnectedError,
                    errors.BackPressuredError, errors.AdminActionError) as exc:
                outcome.append(type(exc).__name__)
            except ValueError as exc:  # a view killed between data and the write
                outcome.append("ValueError")

        thread = threading.Thread(target=offer_forever)
        thread.start()
        started.wait(5)
        time.sleep(0.05)  # let the offer loop run a while (not synchronisation: either order is valid)
        aeron.close()
        thread.join(30)
        assert not thread.is_alive() and outcome, outcome
    """)


def test_fast_methods_check_their_self():
    run_scenario("""
        raw = aeron_py._aeron.Publication
        expect(TypeError, lambda: raw.offer(object(), b"x"), "doesn.t apply|expected a")
        expect(TypeError, lambda: raw.try_claim(object(), 1), "doesn.t apply|expected a")
        expect(TypeError, lambda: aeron_py._aeron.BufferClaim.commit(object()), "doesn.t apply|expected a")
    """)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="Python-level __buffer__ needs CPython 3.12+")
def test_python_buffer_exporters_that_mutate_or_close_mid_batch():
    run_scenario("""
        class Clearing:
            def __init__(self, batch): self.batch = batch
            def __buffer__(self, flags):
                self.batch.clear()  # the list offer_batch is walking shrinks under it
                return memoryview(b"clear")

        batch = [b"first", None, b"never"]
        batch[1] = Clearing(batch)
        assert pub.offer_batch(batch) == 2

        class Closing:
            def __buffer__(self, flags):
                aeron.close()  # the publication is freed by aeron_close before the offer
                return memoryview(b"closing")

        expect(errors.PublicationClosedError, lambda: pub.offer(Closing()), "CLOSED")
        expect(errors.PublicationClosedError, lambda: pub.offer_batch([Closing()]), "CLOSED")
    """)
