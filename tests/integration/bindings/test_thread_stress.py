"""Threads at once on one client, for a few seconds each: two offerers on one concurrent
publication, two pollers racing for one subscription (one wins each poll, the other gets
RuntimeError), a claimer on an exclusive publication with its poller, a PollSet polled while
another thread adds and removes entries, and a thread that makes, uses and closes
publications, subscriptions and images. Every accepted message arrives exactly once, in its
sender's order; refusals are the documented errors; then the client is closed under all of
them, and every thread ends with a clear error or a closed result.

Each scenario runs in a child process (a crash fails the test, not the run). The same file
is the free-threading stress test of docs/safety.md: on a GIL build it exercises what runs
with the GIL released; the sanitizer job runs it under ASan+UBSan."""
from __future__ import annotations

import textwrap

import pytest

from processes import run_python_script

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

#: Seconds of chaos per phase.
SECONDS = 2.0

CHILD = r'''
import collections, faulthandler, sys, threading, time
from aeron_py import Aeron, AeronError, BackoffIdleStrategy, MediaDriver, OfferError, PollSet

faulthandler.dump_traceback_later(120, exit=True)  # a hang prints every thread's stack, then ends

SECONDS = float(sys.argv[1])
IPC = "aeron:ipc?term-length=65536"
driver = MediaDriver()
aeron = Aeron(driver=driver)
errors = []          # unexpected exceptions, by thread
refused = collections.Counter()


def guarded(name, body):
    def run():
        try:
            body()
        except BaseException as exc:  # reported, never swallowed
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
    thread = threading.Thread(target=run, name=name, daemon=True)  # a failed main never waits for them
    thread.start()
    return thread


def join_all(threads, timeout=40.0):
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), [t.name for t in threads if t.is_alive()]


def wait(condition, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.001)


sub = aeron.add_subscription(IPC, 1001)
pub = aeron.add_publication(IPC, 1001)
xsub = aeron.add_subscription(IPC, 1002)
xpub = aeron.add_exclusive_publication(IPC, 1002)
wait(lambda: pub.is_connected and xpub.is_connected, "the publications to connect")
stop = threading.Event()
drained = threading.Event()  # every accepted message was received (set by the main thread)
accepted = {0: 0, 1: 0}
offers_done = threading.Semaphore(0)
claims_done = threading.Event()  # the claimer made its last claim: claimed[0] is final
received = []
claimed = [0]
x_received = []


def offerer(k):
    def body():
        seq, idle = 0, BackoffIdleStrategy()
        while not stop.is_set():
            if pub.offer(b"%d:%d" % (k, seq)) > 0:
                seq += 1
                idle.idle(1)
            else:
                idle.idle(0)
        accepted[k] = seq
        offers_done.release()
    return body


def poller(name):
    def body():
        handler = lambda data, header: received.append(data)
        idle = BackoffIdleStrategy()
        while not drained.is_set() and time.monotonic() < drain_deadline[0]:
            try:
                idle.idle(sub.poll(handler, 10))
            except AeronError:  # AeronError is a RuntimeError too: never a refusal
                raise
            except RuntimeError:  # the other poller holds it: refused before anything is read
                refused[name] += 1
                idle.idle(0)
    return body


def claimer():
    idle = BackoffIdleStrategy()
    while not stop.is_set():
        try:
            claim = xpub.try_claim(16)
        except OfferError as exc:
            if exc.retryable:  # back pressure: the poller catches up
                idle.idle(0)
                continue
            raise
        claim.data[:16] = claimed[0].to_bytes(16, "little")
        claim.commit()
        claimed[0] += 1
        idle.idle(1)
    claims_done.set()


def x_poller():
    handler = lambda data, header: x_received.append(int.from_bytes(data, "little"))
    idle = BackoffIdleStrategy()
    while not drained.is_set() and time.monotonic() < drain_deadline[0]:
        idle.idle(xsub.poll(handler, 10))


churned = [0]


def churner():
    stream = 2000
    while not stop.is_set():
        stream += 1
        s = aeron.add_subscription(IPC, stream)
        p = aeron.add_publication(IPC, stream)
        p.offer(b"churn")
        s.poll(lambda data, header: None, 10)
        for image in s.images():
            image.poll(lambda data, header: None, 10)
        s.close()
        p.close()
        churned[0] += 1


poll_set_messages = [0]


def set_poller(ps):
    def body():
        idle = BackoffIdleStrategy()
        while not stop.is_set():
            try:
                got = len(ps.poll(fragment_limit=10))
                poll_set_messages[0] += got
                idle.idle(got)
            except AeronError:
                raise
            except RuntimeError:
                refused["poll-set"] += 1
                idle.idle(0)
    return body


def set_changer(ps, subs):
    def body():
        i = 0
        while not stop.is_set():
            s = subs[i % len(subs)]
            try:
                if s in ps:
                    ps.remove(s)
                else:
                    ps.add(s, i)
            except AeronError:
                raise
            except RuntimeError as exc:  # the set is being polled: changed between polls only
                assert "change it between polls" in str(exc), exc
                refused["set-change"] += 1
            i += 1
            time.sleep(0.0005)  # a change every half millisecond: churn, not a spin
    return body
'''

PHASE_TRAFFIC = r'''
drain_deadline = [float("inf")]
set_subs = [aeron.add_subscription(IPC, 3000 + i) for i in range(4)]
set_pubs = [aeron.add_publication(IPC, 3000 + i) for i in range(4)]
ps = PollSet()
threads = [guarded("offer-0", offerer(0)), guarded("offer-1", offerer(1)), guarded("poll-a", poller("poll-a")),
           guarded("poll-b", poller("poll-b")), guarded("claim", claimer), guarded("x-poll", x_poller),
           guarded("churn", churner), guarded("set-poll", set_poller(ps)), guarded("set-change", set_changer(ps, set_subs))]
deadline = time.monotonic() + SECONDS
while time.monotonic() < deadline:
    for p in set_pubs:
        p.offer(b"set")
    time.sleep(0.001)
drain_deadline[0] = time.monotonic() + 20.0
stop.set()
for _ in range(2):
    assert offers_done.acquire(timeout=20.0), "an offerer did not stop"
assert claims_done.wait(20.0) or errors, "the claimer did not stop"
wait(lambda: len(received) >= sum(accepted.values()) and len(x_received) >= claimed[0] or errors,
     "every accepted message to be received", timeout=25.0)
drained.set()
join_all(threads)
assert not errors, errors
by_sender = {0: [], 1: []}
for data in received:
    k, seq = data.split(b":")
    by_sender[int(k)].append(int(seq))
for k in (0, 1):
    assert by_sender[k] == list(range(accepted[k])), (k, len(by_sender[k]), accepted[k])
assert x_received == list(range(claimed[0])), (len(x_received), claimed[0])
print("TRAFFIC", sum(accepted.values()), claimed[0], churned[0], poll_set_messages[0] > 0,
      refused["poll-a"] + refused["poll-b"], flush=True)
'''

PHASE_CLOSE = r'''
ended = collections.Counter()
loops = collections.Counter()


def until_closed(name, step):
    def body():
        idle = BackoffIdleStrategy()
        while True:
            loops[name] += 1
            try:
                idle.idle(step() or 0)
            except AeronError:  # ClientClosedError and kin (AeronError is a RuntimeError): the end
                ended[name] += 1
                return
            except RuntimeError:
                idle.idle(0)  # the other poller's turn
    return body


steps = {"offer": lambda: max(0, pub.offer(b"late")) and 1, "poll-a": lambda: sub.poll(lambda d, h: None, 10),
         "poll-b": lambda: sub.poll(lambda d, h: None, 10), "x-poll": lambda: xsub.poll(lambda d, h: None, 10),
         "images": lambda: len([i.position for i in sub.images()]) and 0,
         "add": lambda: aeron.add_subscription(IPC, 4000).close()}
threads = [guarded(name, until_closed(name, step)) for name, step in steps.items()]
wait(lambda: all(loops[name] >= 50 for name in steps), "every thread to be at work")
aeron.close()  # under all of them
join_all(threads)
assert not errors, errors
print("CLOSED", sorted(ended), flush=True)
driver.close()
print("DONE", flush=True)
'''


def run(phases: str) -> list[str]:
    script = textwrap.dedent(CHILD) + phases
    return run_python_script(script, str(SECONDS), timeout=150)


def test_threads_at_once_lose_nothing_duplicate_nothing_and_survive_the_close() -> None:
    lines = run(PHASE_TRAFFIC + PHASE_CLOSE)
    traffic = next(line for line in lines if line.startswith("TRAFFIC")).split()
    offered, claimed, churned, set_polled = int(traffic[1]), int(traffic[2]), int(traffic[3]), traffic[4]
    assert offered > 0 and claimed > 0 and churned > 0 and set_polled == "True", lines
    closed = next(line for line in lines if line.startswith("CLOSED"))
    for name in ("offer", "poll-a", "poll-b", "x-poll", "images", "add"):
        assert f"'{name}'" in closed, lines


CONTEXTS = r'''
import os, pwd, sys, threading
from aeron_py import _aeron

os.environ.pop("USER", None)  # Aeron then asks getpwuid_r for the user's name
expected = _aeron.DriverContext().get_dir()
assert expected.endswith(pwd.getpwuid(os.getuid()).pw_name), expected
seen, errors = [], []
start = threading.Barrier(4)

def make():
    try:
        start.wait(10)
        seen.extend(_aeron.DriverContext().get_dir() for _ in range(200))
    except BaseException as exc:
        errors.append(repr(exc))

threads = [threading.Thread(target=make) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join(60)
assert not errors and not any(t.is_alive() for t in threads), errors
assert seen == [expected] * 800, sorted(set(seen))
print("DONE")
'''


def test_threads_making_contexts_at_once_all_name_the_default_directory() -> None:
    """Aeron's context initialisers share one static buffer for the user's name when USER is
    unset; the binding runs them one at a time (.ci/tsan reported the race before)."""
    run_python_script(CONTEXTS, timeout=120)
