"""PollSet misuse, each scenario in a child process: a documented result or a Python
exception, never a signal (a crash would kill the child by one).

Contract under test (aeron_py/poll_set.py): entries whose subscription, image or client was
closed are dropped and never touched; after Aeron.close() a poll returns []; a poll of the
set while it polls (another thread, a finalizer run by the poll) or while one of its
subscriptions polls raises RuntimeError; finalizers may add/remove/clear during a poll;
keys are held strongly; a set alive at interpreter exit is safe.
"""
from __future__ import annotations

import sys
import textwrap

import pytest

from processes import CHILD_HELPERS, run_python_script

pytestmark = [pytest.mark.timeout(120), pytest.mark.integration]

PRELUDE = '''
import gc, sys, threading, time
import aeron_py
from aeron_py import Aeron, AeronError, MediaDriver, PollSet

''' + CHILD_HELPERS + '''
driver = MediaDriver(publication_linger_timeout_ns=0)
aeron = Aeron(driver=driver)
subs = [aeron.add_subscription("aeron:ipc", 30 + i) for i in range(4)]
pubs = [aeron.add_publication("aeron:ipc", 30 + i) for i in range(4)]
until(lambda: all(p.is_connected for p in pubs), what="connect")
ps = PollSet()
for i, s in enumerate(subs):
    ps.add(s, i)

def send(pub, *messages):
    for message in messages:
        until(lambda: pub.offer(message) > 0, what="offer")
'''


def run_child(body: str, close: bool = True, timeout: float = 90.0) -> list[str]:
    """Run PRELUDE + body in a fresh interpreter; assert it exited cleanly; return its stdout."""
    ending = "\naeron.close()\ndriver.close()\n" if close else "\n"
    script = PRELUDE + textwrap.dedent(body) + ending + "print('DONE', flush=True)\n"
    return run_python_script(script, timeout=timeout)


def test_closed_subscriptions_images_and_client_are_dropped_never_touched():
    lines = run_child('''
        send(pubs[0], b"pending")
        subs[0].close()                        # closed with a message pending
        [image] = subs[1].images()
        ps.add(image, "image")
        subs[1].close()                        # its image goes with it
        print("AFTER-SUB-CLOSE", ps.poll(), len(ps), flush=True)
        send(pubs[2], b"x")
        print("LIVE", [(k, d) for k, _, d in until(ps.poll, what="x")], flush=True)
        aeron.close()
        print("AFTER-CLIENT-CLOSE", ps.poll(), ps.end_of_stream(), len(ps), flush=True)
        print("ADD", type(expect(AeronError, ps.add, subs[3], 9)).__name__, flush=True)
        del ps
        gc.collect()
    ''')
    assert "AFTER-SUB-CLOSE [] 2" in lines
    assert "LIVE [(2, b'x')]" in lines
    assert "AFTER-CLIENT-CLOSE [] [] 0" in lines
    assert "ADD ClientClosedError" in lines or "ADD AeronError" in lines


def test_closes_from_other_threads_while_the_set_is_polled():
    lines = run_child('''
        stop = threading.Event()
        def sender():
            n = 0
            while not stop.is_set() and n < 100000:
                for p in pubs[2:]:
                    p.offer(b"m%d" % n)
                n += 1
                time.sleep(0.0002)
        threads = [threading.Thread(target=sender)]
        threads.append(threading.Thread(target=lambda: (time.sleep(0.05), subs[2].close(),
                                                         time.sleep(0.05), aeron.close())))
        for t in threads:
            t.start()
        got = 0
        deadline = time.monotonic() + 20
        while len(ps) and time.monotonic() < deadline:
            got += len(ps.poll())
        stop.set()
        for t in threads:
            t.join(10)
        print("GOT-SOME", got > 0, "LEFT", len(ps), ps.poll(), flush=True)
    ''')
    assert "GOT-SOME True LEFT 0 []" in lines


def test_two_threads_polling_one_set_get_every_message_once_or_a_runtime_error():
    lines = run_child('''
        gc.set_threshold(5)                    # collections (and thread switches in finalizers) mid-poll
        total = 4 * 500
        got, errors = [], []
        lock = threading.Lock()
        def poller():
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with lock:
                    if len(got) >= total:
                        return
                try:
                    batch = ps.poll(5)
                except RuntimeError as exc:
                    errors.append(str(exc))
                    continue
                with lock:
                    got.extend(batch)
        class Cycle:
            def __init__(self):
                self.me = self
            def __del__(self):
                time.sleep(0)                  # lets the other thread run inside a poll's phase C
        pollers_done = threading.Event()
        def churn():
            for _ in range(2000000):
                if pollers_done.is_set():
                    return
                Cycle()
        pollers = [threading.Thread(target=poller) for _ in range(2)]
        churner = threading.Thread(target=churn)
        for t in pollers + [churner]:
            t.start()
        for n in range(500):
            for i, p in enumerate(pubs):
                send(p, b"%d-%d" % (i, n))
        for t in pollers:
            t.join(40)
        pollers_done.set()
        churner.join(10)
        by_key = {}
        for key, session, data in got:
            by_key.setdefault(key, []).append(data)
        ok = all(sorted(by_key[i]) == sorted(b"%d-%d" % (i, n) for n in range(500)) for i in range(4))
        print("ERRORS", len(errors), flush=True)
        print("ONCE", len(got) == total and ok, "ERRORS-ARE-REENTRY",
              all("already being polled" in e for e in errors), flush=True)
    ''')
    assert "ONCE True ERRORS-ARE-REENTRY True" in lines, lines


def test_finalizers_run_by_a_poll_may_poll_add_remove_and_clear():
    lines = run_child('''
        events = []
        class Meddler:
            def __init__(self):
                self.me = self                 # garbage only the cycle collector frees
            def __del__(self):
                try:
                    ps.poll()
                    events.append("poll-ok")
                except RuntimeError:
                    events.append("poll-refused")
                ps.remove(subs[3])
                ps.add(subs[3], 3)
                events.append(len(ps))
        class Key:                             # a key whose finalizer polls and clears the set
            def __del__(self):
                ps.poll()
                ps.clear()
                events.append("key-finalized")
        extra = aeron.add_subscription("aeron:ipc", 99)
        ps.add(extra, Key())
        gc.set_threshold(1)
        received = 0
        for n in range(300):
            for p in pubs:
                send(p, b"%d" % n)
            Meddler()
            received += len(ps.poll())
        gc.set_threshold(700)
        gc.collect()
        extra.close()                          # the next poll drops it: the Key finalizer runs then
        ps.poll()
        print("REFUSED-IN-POLL", "poll-refused" in events, "KEY", [e for e in events if str(e).startswith("key")],
              "LEN", len(ps), flush=True)
    ''')
    # Before 3.12 the cycle collector runs inside allocations, so inside the poll's phase C.
    refused = "True" if sys.version_info < (3, 12) else ""
    assert any(line.startswith(f"REFUSED-IN-POLL {refused}") and line.endswith("KEY ['key-finalized'] LEN 0")
               for line in lines), lines


def test_poll_from_a_subscription_handler_raises_and_a_set_alive_at_exit_is_safe():
    lines = run_child('''
        send(pubs[0], b"a", b"b")
        def handler(data, header):
            ps.poll()
        exc = expect(RuntimeError, lambda: until(lambda: subs[0].poll(handler), what="handler"))
        print("REENTRY", "already being polled" in str(exc), flush=True)
        print("BAD", type(expect(ValueError, ps.poll, -1)).__name__, type(expect(ValueError, ps.poll, 2**64)).__name__,
              type(expect(ValueError, ps.poll, 1, max_messages=-5)).__name__, flush=True)
        keep_alive = ps                       # module globals alive while the interpreter finalizes
    ''', close=False)
    assert "REENTRY True" in lines
    assert "BAD ValueError ValueError ValueError" in lines


def test_an_uninitialised_set_and_a_foreign_self_raise_type_error():
    lines = run_child('''
        raw = aeron_py._aeron.PollSet
        blank = PollSet.__new__(PollSet)     # __init__ never ran
        for call in (lambda: blank.add(subs[0], 1), lambda: len(blank), blank.end_of_stream,
                     lambda: blank.remove(subs[0]), lambda: subs[0] in blank, blank.clear, blank.poll,
                     lambda: raw.add(object(), subs[0], 1), lambda: raw.__len__(3), lambda: raw.poll(object())):
            print("TYPE", type(expect(TypeError, call)).__name__, flush=True)
        del blank
        gc.collect()
    ''')
    assert lines.count("TYPE TypeError") == 10
