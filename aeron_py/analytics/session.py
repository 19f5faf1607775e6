"""Build the SparkSession the analytics job runs in.

Three ways to run:

* embedded (default): ``local[*]`` inside this Python process; the Spark UI is off;
* ``--master spark://HOST:PORT``: a Spark standalone cluster. The master's TCP port is
  probed first with a short timeout (an unreachable master fails in seconds, never
  hangs), the driver advertises the local address that reached the master, and the
  session is only returned once at least one executor has registered (bounded wait);
* under ``spark-submit``: whatever spark-submit configured (no master is forced).

Every session uses UTC, few shuffle partitions (the data per key is small) and shows
console progress bars; embedded ones add :data:`LOCAL_TUNING`.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import socket
import sys
import threading
from dataclasses import dataclass

from pyspark.errors import PySparkRuntimeError
from pyspark.sql import SparkSession

__all__ = [
    "LOCAL_TUNING",
    "SparkUnavailable",
    "MasterAddress",
    "build_session",
    "parse_standalone_master",
    "probe_master",
    "spark_log_level",
]

log = logging.getLogger(__name__)

DEFAULT_CONNECT_TIMEOUT_S = 3.0
DEFAULT_EXECUTOR_TIMEOUT_S = 60.0
#: What an embedded (``local[N]``) session adds. Measured on the 10 M-event batch job,
#: 2 cores, in interleaved runs (docs/benchmarks.md, analytics round 7):
#:
#: * the parallel (throughput) garbage collector instead of G1, whose concurrent threads
#:   and write barriers compete with the two task threads: about 6 s of 65 s. Like the
#:   driver memory, effective only when the JVM starts here (not under spark-submit);
#: * no adaptive query execution: the job's shuffles are small after the scan and have
#:   ``2 * cores`` partitions already, so re-planning every stage only cost driver time:
#:   about 2 s. A standalone cluster keeps Spark's defaults.
LOCAL_TUNING = {
    "spark.driver.extraJavaOptions": "-XX:+UseParallelGC",
    "spark.sql.adaptive.enabled": "false",
}
_LOCAL = re.compile(r"^local(?:\[(\*|[1-9][0-9]*)(?:,[0-9]+)?\])?$")


class SparkUnavailable(RuntimeError):
    """The requested Spark master cannot be used (unreachable, bad URL, no executors)."""


@dataclass(frozen=True)
class MasterAddress:
    """One ``host:port`` of a standalone master URL."""

    host: str
    port: int


def spark_log_level(python_level: str) -> str:
    """Spark's log level for a Python logging level name (Spark one step quieter)."""
    return {
        "DEBUG": "INFO",
        "INFO": "WARN",
        "WARNING": "WARN",
        "ERROR": "ERROR",
        "CRITICAL": "FATAL",
    }.get(python_level.upper(), "WARN")


def parse_standalone_master(url: str) -> list[MasterAddress]:
    """The masters of ``spark://HOST:PORT[,HOST:PORT...]``; raises SparkUnavailable."""
    if not url.startswith("spark://"):
        raise SparkUnavailable(f"not a standalone master URL (spark://HOST:PORT): {url!r}")
    addresses = []
    for part in url[len("spark://") :].split(","):
        host, sep, port = part.rpartition(":")
        host = host.strip("[]")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise SparkUnavailable(f"bad master address {part!r} in {url!r}; expected HOST:PORT")
        addresses.append(MasterAddress(host, int(port)))
    return addresses


def probe_master(url: str, timeout: float = DEFAULT_CONNECT_TIMEOUT_S) -> str:
    """Connect to each master's TCP port; return the local address that reached one.

    Raises :class:`SparkUnavailable` naming every address tried and why it failed.
    """
    failures = []
    for master in parse_standalone_master(url):
        try:
            with socket.create_connection((master.host, master.port), timeout=timeout) as sock:
                return str(sock.getsockname()[0])
        except OSError as exc:
            failures.append(f"{master.host}:{master.port}: {exc.strerror or exc}")
    raise SparkUnavailable(
        f"cannot reach Spark master {url} (TCP connect, {timeout:g} s timeout): "
        + "; ".join(failures)
        + ". Is the master running (spark-class org.apache.spark.deploy.master.Master)?"
    )


def _local_cores(master: str) -> int:
    match = _LOCAL.match(master)
    if match is None:
        raise SparkUnavailable(f"unsupported master {master!r}; use local[N], local[*] or spark://HOST:PORT")
    count = match.group(1)
    if count in (None, "*"):
        return os.cpu_count() or 1
    return int(count)


def _wait_for_executors(spark: SparkSession, url: str, timeout: float) -> None:
    """Return once the cluster has run a one-row job (so an executor is registered);
    cancel it, stop the session and raise after ``timeout`` seconds.

    Public API only: the probe job runs in a thread under its own job group, which
    :meth:`SparkContext.cancelJobGroup` cancels when the deadline passes.
    """
    context = spark.sparkContext
    group = f"aeron_py-executor-probe-{os.getpid()}"
    outcome: list[BaseException | None] = []

    def probe() -> None:
        try:
            context.setJobGroup(group, "wait for an executor", interruptOnCancel=True)
            spark.range(0, 1, 1, 1).count()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            outcome.append(exc)

    thread = threading.Thread(target=probe, name="executor-probe", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive() or outcome[:1] != [None]:
        cause = outcome[0] if outcome else None  # the probe's own failure, not our cancellation
        if thread.is_alive():
            context.cancelJobGroup(group)
            thread.join(10.0)
        spark.stop()
        raise SparkUnavailable(
            f"Spark master {url} accepted the application but no executor ran a task "
            f"within {timeout:g} s: are workers running and offering enough cores/memory?"
            + (f" ({type(cause).__name__}: {str(cause).splitlines()[0] if str(cause) else ''})" if cause else "")
        )


def build_session(
    master: str | None = None,
    *,
    app_name: str = "aeron_py-analytics",
    log_level: str = "WARNING",
    driver_memory: str = "2g",
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
    executor_timeout: float = DEFAULT_EXECUTOR_TIMEOUT_S,
) -> SparkSession:
    """A SparkSession for ``master`` (None: spark-submit's choice, else ``local[*]``).

    Raises :class:`SparkUnavailable` for a bad or unreachable master, or when a
    standalone cluster offers no executor within ``executor_timeout`` seconds.
    """
    under_submit = master is None and "PYSPARK_GATEWAY_PORT" in os.environ
    if not under_submit and not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        raise SparkUnavailable("Spark needs a Java 17+ runtime: put java on PATH or set JAVA_HOME")
    if master is None and not under_submit:
        master = "local[*]"
    conf: dict[str, str] = {
        "spark.ui.showConsoleProgress": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.log.level": spark_log_level(log_level),
        "spark.pyspark.python": sys.executable,
        "spark.sql.debug.maxToStringFields": "200",  # wide event schema: no truncation warning
    }
    if master is not None and master.startswith("spark://"):
        conf["spark.driver.host"] = probe_master(master, connect_timeout)
        conf["spark.sql.shuffle.partitions"] = "8"
    elif master is not None:
        cores = _local_cores(master)
        conf["spark.ui.enabled"] = "false"
        conf["spark.sql.shuffle.partitions"] = str(max(2, 2 * cores))
        conf["spark.driver.memory"] = driver_memory  # effective if the JVM starts here
        conf.update(LOCAL_TUNING)
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
        # Embedded Spark needs no network: keep it on loopback (and quiet about it).
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    log.info("starting Spark (master %s)", master or "from spark-submit")
    try:
        spark = builder.getOrCreate()
    except PySparkRuntimeError as exc:
        if exc.getCondition() != "JAVA_GATEWAY_EXITED":
            raise
        # Java printed its own reason above (no java, a heap it cannot reserve, a bad option).
        raise SparkUnavailable(
            "the Spark JVM exited while starting (Java's own message is printed above): check that "
            f"Java 17+ is on PATH or JAVA_HOME, and that --driver-memory {driver_memory} fits this machine"
        ) from None
    spark.sparkContext.setLogLevel(spark_log_level(log_level))
    if master is not None and master.startswith("spark://"):
        _wait_for_executors(spark, master, executor_timeout)
    return spark
