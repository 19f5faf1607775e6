"""Misuse of subscriptions, images and the client from Python: each case runs in a child
process (a crash would kill it by a signal) and must end in the documented exception or
safe behaviour, with exit code 0.

Contract under test (see aeron_py/subscription.py):
* a close (client, subscription, image) from a handler or another thread during a poll is
  deferred until the poll returns; the poll delivers nothing after it;
* a re-entrant poll of a subscription or of one of its images raises RuntimeError;
* the header view and a zero-copy memoryview (and its slices) raise ValueError after the
  handler returned;
* the client conductor never waits for the GIL, so a thread holding it past the client
  liveness timeout does not get the client closed;
* add/close cycles keep memory flat.
"""
from __future__ import annotations

import sys
import textwrap

import pytest

from aeron_py import _aeron
from processes import CHILD_HELPERS, run_python_script

pytestmark = [pytest.mark.timeout(90), pytest.mark.integration]

PRELUDE = '''
import gc, os, sys, threading, time
import aeron_py
from aeron_py import Aeron, AeronError, MediaDriver

''' + CHILD_HELPERS + '''
driver = MediaDriver(publication_linger_timeout_ns=0, **DRIVER_OPTIONS)
aeron = Aeron(driver=driver, **CLIENT_OPTIONS)
sub = aeron.add_subscription("aeron:ipc", 7)
pub = aeron.add_publication("aeron:ipc", 7)
until(lambda: pub.is_connected and sub.is_connected, what="connect")

def send(*messages):
    for message in messages:
        until(lambda: pub.offer(message) > 0, what="offer")
'''


def run_child(body: str, driver_options: str = "{}", client_options: str = "{}", timeout: float = 60.0) -> list[str]:
    """Run PRELUDE + body in a fresh interpreter; assert a clean exit; return its stdout lines."""
    script = (f"DRIVER_OPTIONS = {driver_options}\nCLIENT_OPTIONS = {client_options}\n" + PRELUDE
              + textwrap.dedent(body) + "\naeron.close()\ndriver.close()\nprint('DONE', flush=True)\n")
    return run_python_script(script, timeout=timeout)


def test_aeron_close_inside_fragment_handler_is_deferred_until_the_poll_returns():
    lines = run_child('''
        send(b"one", b"two", b"three")
        seen = []
        def handler(data, header):
            seen.append(data)
            aeron.close()
            print("CLOSED-IN-HANDLER", aeron.is_closed, flush=True)
        until(lambda: sub.poll(handler, 10) or seen, what="delivery")
        assert seen == [b"one"], seen  # nothing delivered after close
        assert aeron.is_closed and sub.is_closed
        print("RAISES", type(expect(AeronError, sub.poll, handler, 10)).__name__, flush=True)
        print("IMAGES", type(expect(AeronError, sub.images)).__name__, flush=True)
    ''')
    assert "CLOSED-IN-HANDLER True" in lines
    assert "RAISES ClientClosedError" in lines or "RAISES AeronError" in lines


def test_subscription_close_inside_its_handler_is_deferred_and_the_client_lives_on():
    lines = run_child('''
        send(b"one", b"two")
        seen = []
        def handler(data, header):
            seen.append(data)
            sub.close()
        until(lambda: sub.poll(handler, 10) or seen, what="delivery")
        assert seen == [b"one"] and sub.is_closed, seen
        expect(AeronError, sub.poll, handler, 10)
        expect(AeronError, lambda: sub.image_count)
        other = aeron.add_subscription("aeron:ipc", 7)
        until(lambda: other.is_connected, what="second subscription")
        send(b"after")
        got = []
        until(lambda: other.poll(lambda d, h: got.append(d), 10) and b"after" in got,
              what="delivery to a new subscription")
        print("AFTER", got[-1], flush=True)
    ''')
    assert "AFTER b'after'" in lines


def test_image_close_inside_its_handler_is_deferred_and_later_messages_stay_for_the_subscription():
    lines = run_child('''
        send(b"one", b"two", b"three")
        [image] = sub.images()
        seen = []
        def handler(data, header):
            seen.append(data)
            image.close()
        until(lambda: image.poll(handler, 10) or seen, what="image delivery")
        assert seen == [b"one"] and not image.is_live, seen
        print("IMAGE-POLL", type(expect(AeronError, image.poll, handler, 10)).__name__, flush=True)
        rest = []
        until(lambda: sub.poll(lambda d, h: rest.append(d), 10) and len(rest) >= 2, what="the rest")
        print("REST", rest, flush=True)
    ''')
    assert "IMAGE-POLL AeronError" in lines
    assert "REST [b'two', b'three']" in lines


def test_reentrant_poll_from_a_handler_raises_runtime_error_and_loses_nothing():
    lines = run_child('''
        send(b"one", b"two")
        [image] = sub.images()
        errors, seen = [], []
        def handler(data, header):
            seen.append(data)
            for inner in (lambda: sub.poll(handler, 10), lambda: image.poll(handler, 10),
                          lambda: sub.poll_batch(10), lambda: image.controlled_poll(handler, 10)):
                try:
                    inner()
                except RuntimeError as exc:
                    errors.append(str(exc))
        until(lambda: sub.poll(handler, 1) or seen, what="delivery")
        print("ERRORS", len(errors), "re-entrant" in errors[0], flush=True)
        def raising(data, header):
            seen.append(data)
            sub.poll(raising, 10)
        exc = expect(RuntimeError, lambda: until(lambda: sub.poll(raising, 10), what="second"))
        print("SEEN", seen, flush=True)
        assert sub.poll(raising, 10) == 0  # nothing left, nothing lost, poll usable again
        image.close()
    ''')
    assert "ERRORS 4 True" in lines
    assert "SEEN [b'one', b'two']" in lines


def test_close_from_another_thread_while_a_poll_runs_its_handler_is_deferred():
    lines = run_child('''
        send(b"one", b"two")
        in_handler, closed = threading.Event(), threading.Event()
        def closer(target):
            assert in_handler.wait(5)
            target.close()
            closed.set()
        seen = []
        def handler(data, header):
            seen.append(data)
            in_handler.set()
            assert closed.wait(5)  # the GIL is released while we wait: the other thread closes now
        thread = threading.Thread(target=closer, args=(sub,))
        thread.start()
        until(lambda: sub.poll(handler, 10) or seen, what="delivery")
        thread.join(5)
        assert seen == [b"one"] and sub.is_closed, seen
        expect(AeronError, sub.poll, handler, 10)
        print("SUB-OK", flush=True)
        other = aeron.add_subscription("aeron:ipc", 7)
        until(lambda: other.is_connected, what="second subscription")
        send(b"three")
        in_handler.clear(); closed.clear(); seen.clear()
        thread = threading.Thread(target=closer, args=(aeron,))
        thread.start()
        until(lambda: other.poll(handler, 10) or seen, what="delivery")
        thread.join(5)
        assert aeron.is_closed and other.is_closed
        print("CLIENT-OK", flush=True)
    ''')
    assert "SUB-OK" in lines and "CLIENT-OK" in lines


def test_concurrent_poll_from_another_thread_raises_runtime_error():
    lines = run_child('''
        send(b"one")
        in_handler, done = threading.Event(), threading.Event()
        result = []
        def other_thread():
            assert in_handler.wait(5)
            try:
                sub.poll(lambda d, h: None, 10)
            except RuntimeError:
                result.append("RuntimeError")
            done.set()
        def handler(data, header):
            in_handler.set()
            assert done.wait(5)
        thread = threading.Thread(target=other_thread)
        thread.start()
        until(lambda: sub.poll(handler, 10), what="delivery")
        thread.join(5)
        print("OTHER", result, flush=True)
    ''')
    assert "OTHER ['RuntimeError']" in lines


# -- races the GIL does not cover (docs/safety.md, "Threads") --------------------------------
# Two of the five have no test here: the endpoint filter's and secure transport's phase
# (written by the driver's close thread) and a subscription's `closed` flag (read by a replay
# merge with the GIL released) became atomics; those were plain data races, benign on x86,
# that only a thread sanitizer would report, so no test can fail deterministically without
# the fix.

@pytest.mark.parametrize("strategy", ["SleepingIdleStrategy(1_000_000)", "BackoffIdleStrategy()"])
def test_a_daemon_thread_idling_when_the_interpreter_exits_does_not_abort_it(strategy):
    """A daemon poller thread that swallows every error keeps polling and idling while the
    client, the driver and then the interpreter shut down. At exit CPython ends such a thread
    when it takes the GIL back (a forced unwind, from pthread_exit); a catch-all in the
    extension's fast calls swallowed it and the process aborted ("FATAL: exception not
    rethrown"). The guard now lets it through (fastcall.hpp)."""
    lines = run_child(f'''
        idle = aeron_py.{strategy}
        loops = [0]
        def poller():
            while True:
                loops[0] += 1
                try:
                    idle.idle(sub.poll(lambda data, header: None, 10))
                except Exception:  # closed client, closed subscription: keep going, as careless code does
                    idle.idle(0)
        threading.Thread(target=poller, daemon=True).start()
        until(lambda: loops[0] > 100, what="the daemon thread at work")
        print("POLLING", flush=True)
    ''')
    assert "POLLING" in lines


WAITING_CALLS = {
    "hashing": "crypto.sha256(big)",  # libsodium on a buffer, GIL released
    "probing the driver": "aeron_py.driver_active(driver.dir, timeout=0.05)",  # aeron_is_driver_active
    "a client connecting": "Aeron(driver=driver).close()",  # aeron_init, aeron_start, then a close
}


@pytest.mark.parametrize("call", sorted(WAITING_CALLS))
def test_a_daemon_thread_inside_a_call_without_the_gil_at_exit_does_not_abort_it(call):
    """Daemon threads loop on a call that releases the GIL while the interpreter exits. CPython
    ends a thread that takes the GIL back then with pthread_exit, a forced unwind; taken back in
    pybind11's gil_scoped_release destructor, it aborted the process ("terminate called without
    an active exception"; the wheels: "uncaught foreign exception"). The GIL now comes back
    through gil.hpp, which parks such a thread until the process exits. Three runs: the race
    aborted two of three before."""
    for _ in range(3):
        lines = run_child(f'''
            from aeron_py import crypto
            big = bytes(1 << 20)
            loops = [0]
            def worker():
                while True:
                    try:
                        {WAITING_CALLS[call]}
                    except Exception:  # the driver closing under it: keep going, as careless code does
                        pass
                    loops[0] += 1
            for _ in range(2):
                threading.Thread(target=worker, daemon=True).start()
            until(lambda: loops[0] > 4, what="the daemon threads at work")
            print("WORKING", flush=True)
        ''')
        assert "WORKING" in lines and "DONE" in lines


def test_a_driver_close_waits_for_an_idle_in_flight_on_another_thread():
    """INVOKER mode: Driver.idle runs Aeron's idle strategy with the GIL released; a close from
    another thread meanwhile freed the strategy's state under it (use after free). Now the close
    waits for the idle (within its timeout, then in the background); a second idle is refused."""
    lines = run_child('''
        invoker = MediaDriver(threading_mode="INVOKER", idle_strategy="sleep-ns",
                              shared_idle_strategy_init_args="3000ms")
        native = invoker._driver
        returned = []
        thread = threading.Thread(target=lambda: (native.idle(0), returned.append("idle returned")))
        thread.start()
        until(lambda: native.idling, what="the idle to start")
        print("SECOND", type(expect(RuntimeError, native.idle, 0)).__name__, flush=True)
        # The idle sleeps up to 3 s (a signal may cut a sleep short): a close bounded at 50 ms
        # returns, and the driver is never stopped while the idle is still in flight.
        done = invoker.close(timeout=0.05)
        stopped, idling = invoker.is_stopped, native.idling  # in this order: stopped implies not idling
        print("BOUNDED", not (stopped and idling), stopped or not done, invoker.is_closed, flush=True)
        print("DO_WORK", type(expect(AeronError, invoker.do_work)).__name__, flush=True)
        thread.join(10)
        until(lambda: invoker.is_stopped, what="the close to finish after the idle")
        print("AFTER", returned, os.path.exists(invoker.dir), flush=True)

        invoker = MediaDriver(threading_mode="INVOKER", idle_strategy="sleep-ns",
                              shared_idle_strategy_init_args="500ms")
        native = invoker._driver
        thread = threading.Thread(target=native.idle, args=(0,))
        thread.start()
        until(lambda: native.idling, what="the idle to start")
        print("UNBOUNDED", invoker.close(timeout=None), invoker.is_stopped, native.idling, flush=True)
        thread.join(10)
    ''')
    assert "SECOND RuntimeError" in lines
    assert "BOUNDED True True True" in lines
    assert "DO_WORK AeronError" in lines
    assert "AFTER ['idle returned'] False" in lines
    assert "UNBOUNDED True True False" in lines


def test_an_idle_strategy_used_from_a_second_thread_while_one_waits_raises_runtime_error():
    lines = run_child('''
        strategy = aeron_py.SleepingIdleStrategy(period_ns=3_000_000_000)
        thread = threading.Thread(target=strategy.idle, args=(0,))
        thread.start()
        until(lambda: strategy.idling, what="the idle to start")
        waiting = type(expect(RuntimeError, strategy.idle, 0)).__name__
        resetting = type(expect(RuntimeError, strategy.idle, 1)).__name__  # a reset would race too
        print("REFUSED", waiting, resetting, flush=True)
        thread.join(10)
        strategy.idle(1)
        print("AFTER", strategy.idling, flush=True)
        spin = aeron_py.BusySpinIdleStrategy()
        spin.idle(0)
        print("SPIN", spin.idling, flush=True)
    ''')
    assert "REFUSED RuntimeError RuntimeError" in lines
    assert "AFTER False" in lines and "SPIN False" in lines


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="CPython 3.12+ collects at safe points, never inside "
                    "an allocation of the poll")
def test_a_finalizer_run_by_poll_batch_s_list_allocation_finds_the_subscription_polling():
    """CPython 3.11 runs the cycle collector inside allocations: poll_batch's result list did
    so after the second-poller check and before the poll was counted, so a finalizer there
    (which may also switch threads) could start a second poll of the same subscription."""
    lines = run_child('''
        events, phase = [], ["outside"]
        class Meddler:  # cyclic garbage: only the cycle collector finalizes it
            def __init__(self):
                self.cycle = self
            def __del__(self):
                if phase[0] != "in poll_batch":
                    return  # collected elsewhere: leave the message to the poll
                try:
                    sub.poll_batch(10)
                    events.append("nested poll ran")
                except RuntimeError:
                    events.append("refused")
        class Filler:
            pass
        kept, results = [], []
        gc.collect()
        gc.set_threshold(1)  # a collection at nearly every other allocation of a container
        # Lists come from a free list, which allocates nothing: empty it, and free no list
        # below, so that poll_batch's list is a real allocation each time.
        drained = [[] for _ in range(100)]
        for n in range(300):
            send(b"%d" % n)  # something to read: poll_batch goes on to its list
            Meddler()
            for _ in range(n % 3):  # vary which allocation the collection falls on
                kept.append(Filler())
            phase[0] = "in poll_batch"
            results.append(sub.poll_batch(10))
            phase[0] = "outside"
            if events:
                break
        gc.set_threshold(700)
        print("EVENTS", sorted(set(events)), flush=True)
    ''')
    assert "EVENTS ['refused']" in lines, lines


def test_header_view_kept_past_its_handler_raises_and_copy_survives():
    lines = run_child('''
        send(b"one", b"two")
        kept = []
        until(lambda: sub.poll(lambda d, h: kept.append((h, h.copy(), h.session_id)), 10) and len(kept) >= 2,
              what="delivery")
        (view, copy, session), (view2, _, _) = kept
        assert view is not view2  # a kept view is never reused for the next fragment
        print("VIEW", type(expect(ValueError, lambda: view.position)).__name__, view.is_valid, flush=True)
        print("COPY", copy.session_id == session == pub.session_id, copy.position > 0, flush=True)
    ''')
    assert "VIEW ValueError False" in lines
    assert "COPY True True" in lines


def test_zero_copy_view_and_its_slices_are_dead_after_the_handler():
    lines = run_child('''
        send(b"zero-copy payload")
        kept = []
        def handler(data, header):
            kept.extend([data, data[5:9], memoryview(data)[0:4]])
            kept.append(bytes(data))
            try:
                data[0:1] = b"x"
            except TypeError:
                kept.append("read-only")
        until(lambda: sub.poll(handler, 10, zero_copy=True) or kept, what="delivery")
        view, piece, derived, copy, readonly = kept
        dead = 0
        # Without the layout tricks (AERON_PY_NO_TRICKS, or a CPython they were not checked on) the view is over a private copy: it dies,
        # its slices stay usable, and read only that copy.
        for v in (view, piece, derived) if aeron_py._aeron.LAYOUT_TRICKS else (view,):
            for touch in (lambda: v.tobytes(), lambda: v[0], lambda: bytes(v), lambda: len(v)):
                expect(ValueError, touch)
                dead += 1
        print("DEAD", dead, copy, readonly, flush=True)
        if not aeron_py._aeron.LAYOUT_TRICKS:
            print("SLICES", bytes(piece), bytes(derived), flush=True)
    ''')
    if _aeron.LAYOUT_TRICKS:
        assert "DEAD 12 b'zero-copy payload' read-only" in lines
    else:
        assert "DEAD 4 b'zero-copy payload' read-only" in lines and "SLICES b'copy' b'zero'" in lines


def test_a_raw_buffer_export_kept_past_a_zero_copy_handler_raises_buffer_error():
    lines = run_child('''
        import pickle
        send(b"exported", b"released")
        kept = []
        def exporting(data, header):
            kept.append(pickle.PickleBuffer(data))  # holds a Py_buffer export of the view
        exc = expect(BufferError, lambda: until(lambda: sub.poll(exporting, 1, zero_copy=True), what="export"))
        print("EXPORT", type(exc).__name__, flush=True)
        def releasing(data, header):
            buffer = pickle.PickleBuffer(data)
            kept.append(bytes(buffer.raw()))
            buffer.release()  # released within the call: fine
        until(lambda: sub.poll(releasing, 1, zero_copy=True), what="released export")
        print("COPY", kept[-1], flush=True)
    ''')
    assert "EXPORT BufferError" in lines
    assert "COPY b'released'" in lines


def test_handler_raising_in_zero_copy_mode_loses_nothing():
    lines = run_child('''
        send(*[bytes([i]) * 8 for i in range(5)])
        seen = []
        def handler(data, header):
            seen.append(bytes(data))
            if len(seen) == 2:
                raise KeyError("boom")
        expect(KeyError, lambda: until(lambda: sub.poll(handler, 10, zero_copy=True) and False, what="raise"))
        until(lambda: sub.poll(handler, 10, zero_copy=True) == 0 and len(seen) == 5, what="the rest")
        print("SEEN", [s[0] for s in seen], flush=True)
    ''')
    assert "SEEN [0, 1, 2, 3, 4]" in lines


def test_aeron_close_inside_an_image_callback_is_safe():
    lines = run_child('''
        closed_in_callback = threading.Event()
        def on_available(image):
            aeron.close()
            closed_in_callback.set()
        watched = aeron.add_subscription("aeron:ipc", 9, on_available_image=on_available)
        pending = aeron.async_add_publication("aeron:ipc", 9)
        until(closed_in_callback.is_set, what="image callback")
        print("CLOSED", aeron.is_closed, watched.is_closed, flush=True)
    ''')
    assert "CLOSED True True" in lines


@pytest.mark.timeout(120)
def test_a_thread_holding_the_gil_past_the_client_liveness_timeout_does_not_kill_the_client():
    # Driver: clients time out after 1 s without keepalive; client: keepalive every 100 ms.
    # The main thread keeps the GIL for 3 s while an image becomes available, so an image
    # callback would need the GIL; the conductor must keep its keepalives going regardless.
    lines = run_child('''
        available = threading.Event()
        watched = aeron.add_subscription("aeron:ipc", 11, on_available_image=lambda image: available.set())
        pending = aeron.async_add_publication("aeron:ipc", 11)
        sys.setswitchinterval(30.0)
        deadline = time.monotonic() + 3.0
        spins = 0
        while time.monotonic() < deadline:  # holds the GIL: no blocking call in this loop
            spins += 1
        sys.setswitchinterval(0.005)
        until(available.is_set, what="image callback after the GIL came back")
        until(pending.poll, what="publication")
        print("ALIVE", not aeron.is_closed, flush=True)
        send(b"still here")
        got = []
        until(lambda: sub.poll(lambda d, h: got.append(d), 10) or got, what="delivery")
        print("GOT", got, flush=True)
    ''', driver_options="{'client_liveness_timeout_ns': 1_000_000_000, 'timer_interval_ns': 100_000_000}",
        client_options="{'keepalive_interval_ns': 100_000_000}", timeout=90)
    assert "ALIVE True" in lines
    assert "GOT [b'still here']" in lines


@pytest.mark.memory
@pytest.mark.timeout(200)
def test_subscription_add_close_cycles_keep_memory_flat():
    # 5,000 warm-up cycles, then 10,000 with image callbacks and image look-ups: RSS may grow by
    # at most 3 MiB (about 300 bytes per cycle). Before callback state lived and died with its
    # subscription, 10,000 cycles grew RSS by about 7 MiB; now 100,000 cycles plateau under
    # 2 MiB (measured, not asserted here: it takes longer). Invoker mode keeps each add fast.
    lines = run_child('''
        def rss_kib():
            with open(f"/proc/{os.getpid()}/status") as status:
                return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
        fast = Aeron(driver=driver, use_conductor_agent_invoker=True)
        def cycles(n):
            for i in range(n):
                s = fast.add_subscription("aeron:ipc", 20, on_available_image=lambda image: None,
                                          on_unavailable_image=lambda image: None)
                s.images()
                s.close()
        cycles(5000)
        gc.collect()
        before = rss_kib()
        cycles(10000)
        gc.collect()
        grown = rss_kib() - before
        fast.close()
        print("GROWN_KIB", grown, flush=True)
        assert grown < 3072, grown
    ''', timeout=180)
    assert any(line.startswith("GROWN_KIB") for line in lines)


def test_uninitialised_instances_raise_type_error() -> None:
    """``T.__new__(T)`` without ``__init__`` (or without the factory that makes T) has no C++
    value: every method raises TypeError instead of running on uninitialised memory."""
    lines = run_child('''
        from aeron_py import _aeron
        refused = 0
        for name in ("Subscription", "Publication", "Image", "Client", "Driver", "DriverContext", "Cnc",
                     "CountersReader", "PollSet", "IdleStrategy", "BufferClaim"):
            t = getattr(_aeron, name)
            try:
                o = t.__new__(t)
            except TypeError:
                continue
            for method in ("close", "poll", "offer", "is_closed", "do_work", "commit", "add", "idle"):
                try:  # a property is read here, a method called
                    f = getattr(o, method, None)
                    if callable(f):
                        f()
                except TypeError:
                    refused += 1
        print("REFUSED", refused, flush=True)
    ''')
    refused = [int(line.split()[1]) for line in lines if line.startswith("REFUSED")]
    assert refused and refused[0] >= 5, lines
