"""Echo 2.0 server command line.

    python -m aeron_py.echo_server                       # 127.0.0.1:9000, control 9001, 64 clients from 9010
    python -m aeron_py.echo_server DIR ADDRESS PORT CONTROL_PORT CLIENTS_BASE_PORT CLIENT_COUNT
    python -m aeron_py.echo_server --address ::1 --port 40123 --max-per-ip 2 --events /tmp/ev

Prints ``READY <address> <port> <control-port>`` on stdout (flushed) once serving.
SIGINT/SIGTERM: clean shutdown (every duologue closed, driver directory removed),
exit 0.  The shutdown is bounded: if the process is still running ``--shutdown-grace``
seconds later (e.g. stuck on a stalled driver) it dumps its threads' stacks and exits
1; a second SIGINT/SIGTERM exits 1 at once.  The ``--blocklist`` file is watched: a
new version is applied by itself (``--close-blocked``, the default, also closes the
duologues of owners it blocks); SIGHUP re-reads it at once.
Secure mode: ``--generate-key FILE`` writes a server key (mode 0600) and prints its
public key; ``--secure --key-file FILE`` serves secure duologues only (a key file that
others may read, or that holds no valid key, is refused: exit 2).
Startup errors exit 1; losing the media driver (keepalive timeout) exits 1 within
about ``--driver-timeout`` seconds, with the reason logged.
"""
from __future__ import annotations

import argparse
import faulthandler
import logging
import os
import shutil
import signal
import sys
from collections.abc import Sequence
from typing import Any

from .echo_application import echo_server
from ...duologue.server.loop import DEFAULT_TERM_LENGTH, DriverLostError, DuologueServer, ServerOptions, aeron_cause
from ...duologue.core.contract import (LARGE_TERM_IMAGES_PER_CLIENT,
                             DEFAULT_FLOOD_HELLOS, DEFAULT_FLOOD_PENALTY, DEFAULT_MAX_IMAGE_TERM_LENGTH,
                             DEFAULT_RECLAIM_AFTER, ServerConfig)
from ...duologue.core.secure_handshake import ServerSecrets
from ...duologue.core.secure_hello import b64url_encode
from ...duologue.keys import generate_server_key, server_secrets

logger = logging.getLogger("aeron_py.echo_server")
DEFAULTS = {"address": "127.0.0.1", "port": 9000, "control_port": 9001, "base_port": 9010, "clients": 64}
_POSITIONAL = ("dir", "address", "port", "control_port", "base_port", "clients")


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def _non_negative_float(text: str) -> float:
    value = float(text)
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0, got {text}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m aeron_py.echo_server", description="Echo 2.0 server over Aeron.",
        epilog="Positional form (io7m take2): DIR ADDRESS PORT CONTROL_PORT CLIENTS_BASE_PORT CLIENT_COUNT.")
    p.add_argument("positional", nargs="*", metavar="ARG",
                   help="either nothing or DIR ADDRESS PORT CONTROL_PORT CLIENTS_BASE_PORT CLIENT_COUNT")
    p.add_argument("--dir", help="Aeron directory (default: a fresh one under /dev/shm); deleted on exit")
    p.add_argument("--address", help=f"local address to serve on (default {DEFAULTS['address']})")
    p.add_argument("--port", type=int, help=f"all-clients data port (default {DEFAULTS['port']})")
    p.add_argument("--control-port", type=int, help=f"all-clients control port (default {DEFAULTS['control_port']})")
    p.add_argument("--base-port", type=int, help=f"first duologue port (default {DEFAULTS['base_port']})")
    p.add_argument("--clients", type=int, help=f"maximum duologues (default {DEFAULTS['clients']})")
    p.add_argument("--max-per-ip", type=int, default=3, help="duologues per source IP (default 3)")
    p.add_argument("--ipc-clients", type=int, default=0, metavar="N",
                   help="also serve up to N same-host clients over IPC, through this server's media driver "
                   "(aeron_py.duologue.connect_ipc(DIR); give --dir so they can find it); not with --secure "
                   "(default 0: none)")
    p.add_argument("--expiry", type=_positive_float, default=10.0,
                   help="seconds a duologue may wait for its client (default 10)")
    p.add_argument("--reclaim-after", type=_non_negative_float, default=DEFAULT_RECLAIM_AFTER,
                   help="when the server is full, a HELLO from a source in good standing takes the place of the "
                   "oldest duologue nobody joined within this many seconds; a source whose duologue is "
                   "reclaimed or expires unjoined loses its standing for a minute (default "
                   f"{DEFAULT_RECLAIM_AFTER:g}; 0: never reclaim, wait for --expiry)")
    p.add_argument("--flood-penalty", type=_non_negative_float, default=DEFAULT_FLOOD_PENALTY,
                   help=f"a source that sends {DEFAULT_FLOOD_HELLOS} HELLOs on one publication after being refused "
                   "(a client gives up at its first refusal) is refused, and dropped in the media driver, for this "
                   f"many seconds (default {DEFAULT_FLOOD_PENALTY:g}; 0: never)")
    p.add_argument("--idle-timeout", type=_positive_float, help="close duologues silent this long (s)")
    p.add_argument("--max-message", type=int, default=1024, help="longest accepted message in bytes (1024)")
    p.add_argument("--term-length", type=int, default=DEFAULT_TERM_LENGTH,
                   help="term length of the server's publications (64 KiB)")
    p.add_argument("--max-image-term-length", type=int, default=DEFAULT_MAX_IMAGE_TERM_LENGTH,
                   help="refuse client images with a larger term (default 16 MiB, the term of a stock Aeron "
                   "client)")
    p.add_argument("--large-term-images", type=int,
                   help="client images with terms over 64 KiB kept at once, in total (default "
                   f"{LARGE_TERM_IMAGES_PER_CLIENT} x --clients + 1: a stock client's initial and duologue images; "
                   "0: refuse them). Logs are sparse: an image costs what its client wrote into it")
    p.add_argument("--large-term-images-per-ip", type=int,
                   help=f"the same, per source IP (default {LARGE_TERM_IMAGES_PER_CLIENT} x --max-per-ip + 1)")
    p.add_argument("--ipv6-prefix", type=int, default=64, help="IPv6 prefix length counted as one IP (64)")
    p.add_argument("--blocklist", help="blocklist file; a new version of it is applied within about 0.2 s "
                   "(checked every 100 ms; SIGHUP re-reads it at once); an invalid version keeps the old list")
    blocked = p.add_mutually_exclusive_group()
    blocked.add_argument("--close-blocked", dest="close_blocked", action="store_true", default=True,
                         help="a new blocklist version closes the duologues of owners it blocks (default)")
    blocked.add_argument("--keep-blocked", dest="close_blocked", action="store_false",
                         help="a new blocklist version only refuses new HELLOs; existing duologues live on")
    p.add_argument("--events", help="write telemetry events (JSON Lines) into this directory")
    p.add_argument("--record", metavar="CONTROL_CHANNEL",
                   help="also send the telemetry to the Aeron Archive answering on this control channel, which "
                   "records it (e.g. aeron:udp?endpoint=127.0.0.1:8010; needs --events; replay a window with "
                   "python -m aeron_py.telemetry.replay)")
    p.add_argument("--record-channel", default="aeron:udp?endpoint=127.0.0.1:9110|term-length=1m",
                   help="the recorded stream's channel: where the Archive's media driver receives it "
                   "(aeron:udp?endpoint=127.0.0.1:9110|term-length=1m; aeron:ipc?... when the Archive shares this "
                   "server's driver directory)")
    p.add_argument("--record-stream", type=int, default=9100, help="the recorded stream id (9100)")
    p.add_argument("--record-max-bytes", type=int, default=64 * 1024 * 1024,
                   help="bytes per recording before a new one starts (64 MiB)")
    p.add_argument("--record-keep", type=int, default=8,
                   help="recordings of the telemetry kept in the Archive; older ones are purged (8)")
    p.add_argument("--snapshot-interval", type=_positive_float, default=10.0,
                   help="seconds between driver_snapshot events (10)")
    p.add_argument("--image-liveness-timeout", type=_positive_float, default=5.0,
                   help="seconds before a silent client image is dropped; a departed client's resources are "
                   "released about twice this after its last datagram (default 5; Aeron's own is 10)")
    p.add_argument("--driver-timeout", type=_positive_float, default=10.0,
                   help="seconds without the media driver's keepalive before the server exits (10)")
    p.add_argument("--shutdown-grace", type=_positive_float, default=10.0,
                   help="seconds a shutdown may take before the process is forced to exit (10)")
    p.add_argument("--max-creating", type=int, default=4,
                   help="duologue channel adds in flight at once; more wait, then 'server full' (4)")
    p.add_argument("--events-max-bytes", type=int, default=16 * 1024 * 1024,
                   help="telemetry kept on disk, in bytes; oldest files deleted (16 MiB)")
    p.add_argument("--events-max-files", type=int, default=1024,
                   help="telemetry files kept (1024; files rotate every 2 s; --events-max-bytes bounds the total)")
    p.add_argument("--no-endpoint-filter", action="store_true",
                   help="do not install the driver's endpoint filter even when this build has one")
    p.add_argument("--setup-rate", type=_positive_float, default=20.0,
                   help="endpoint filter: new sessions per second per source address (20)")
    p.add_argument("--max-images-per-source", type=int, default=8,
                   help="endpoint filter: concurrent images per source address (8)")
    p.add_argument("--max-images-total", type=int, default=None,
                   help="endpoint filter: concurrent images in total (2 x --clients + 64)")
    p.add_argument("--quiet-after", type=float, default=1.0, metavar="SECONDS",
                   help="after this long with no client traffic the server sleeps until traffic comes and the "
                   "driver slows to one duty cycle per --quiet-period: idle CPU falls, the first message after a "
                   "quiet spell waits up to --quiet-period (1.0)")
    p.add_argument("--quiet-period", type=_positive_float, default=0.05, metavar="SECONDS",
                   help="the driver's duty cycle period while quiet, at most 1 (0.05)")
    p.add_argument("--deep-quiet-after", type=float, default=15.0, metavar="SECONDS",
                   help="after this much more quiet the driver's period becomes --deep-quiet-period: less idle "
                   "CPU with thousands of duologues, the first message after a long silence waits up to that "
                   "period (15.0)")
    p.add_argument("--deep-quiet-period", type=_positive_float, default=0.2, metavar="SECONDS",
                   help="the driver's duty cycle period in deep quiet, at most 1 (0.2)")
    p.add_argument("--no-deep-quiet", action="store_true", help="stay at --quiet-period however long the silence")
    p.add_argument("--no-quiet", action="store_true",
                   help="never go quiet: poll with backoff however idle (lowest latency, most CPU)")
    p.add_argument("--keepalive-interval", type=float, default=1.0, metavar="SECONDS",
                   help="an idle duologue's heartbeats and unchanged status messages go out once per this many "
                   "seconds, in [0.1, 2], instead of Aeron's every 0.1 s and 0.2 s (far fewer system calls when "
                   "thousands of duologues idle); 0: Aeron's own pace (1.0)")
    secure = p.add_argument_group(
        "secure mode", "every duologue encrypted and authenticated in the driver, its keys agreed with a Noise NK "
        "handshake against the server's key (docs/spec/echo2.md section 5); clients need --secure too")
    secure.add_argument("--secure", action="store_true", help="serve secure duologues only (needs --key-file)")
    secure.add_argument("--key-file", metavar="FILE",
                        help="the server's private key, mode 0600 (make one with --generate-key FILE)")
    secure.add_argument("--generate-key", metavar="FILE",
                        help="write a new server key to FILE (mode 0600), print its public key and exit")
    secure.add_argument("--force", action="store_true",
                        help="with --generate-key: replace an existing key file (clients that know the old "
                        "public key will then refuse this server)")
    p.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    return p


#: Exit status for a refused server key file (as for bad arguments).
EXIT_BAD_KEY_FILE = 2


def generate_key(path: str, force: bool) -> int:
    """``--generate-key``: write the key file, print its public key (what clients pin)."""
    try:
        public = generate_server_key(path, force=force)
    except (OSError, ValueError) as exc:
        print(f"echo_server: cannot write the server key: {exc}", file=sys.stderr)
        return EXIT_BAD_KEY_FILE
    print(f"wrote {path}; public key (give it to clients, --server-key): {b64url_encode(public)}", flush=True)
    return 0


def secure_mode(args: argparse.Namespace, p: argparse.ArgumentParser) -> ServerSecrets | None:
    """The server key of ``--secure --key-file`` (None without ``--secure``); a bad file exits 2."""
    if not args.secure:
        if args.key_file is not None:
            p.error("--key-file is only used with --secure")
        return None
    if args.key_file is None:
        p.error("--secure needs --key-file FILE (make one with --generate-key FILE)")
    try:
        return server_secrets(args.key_file)
    except (OSError, ValueError) as exc:  # PermissionError is an OSError
        print(f"echo_server: refusing the server key file: {exc}", file=sys.stderr)
        sys.exit(EXIT_BAD_KEY_FILE)


def settings(args: argparse.Namespace, p: argparse.ArgumentParser) -> tuple[ServerConfig, ServerOptions]:
    """Turn parsed arguments into the core's config and the glue's options."""
    values: dict[str, Any] = dict(DEFAULTS, dir=None)
    if args.positional:
        if len(args.positional) != len(_POSITIONAL):
            p.error(f"expected no positional arguments or 6 ({' '.join(n.upper() for n in _POSITIONAL)}), "
                    f"got {len(args.positional)}: {' '.join(args.positional)}")
        clashing = [n for n in _POSITIONAL if getattr(args, n) is not None]
        if clashing:
            p.error(f"--{clashing[0].replace('_', '-')} given together with the positional form")
        for name, text in zip(_POSITIONAL, args.positional):
            try:
                values[name] = text if name in ("dir", "address") else int(text)
            except ValueError:
                p.error(f"{name.upper()} must be an integer, got {text!r}")
    for name in _POSITIONAL:
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    try:
        config = ServerConfig(
            max_clients=values["clients"], clients_base_port=values["base_port"], max_per_ip=args.max_per_ip,
            expiry=args.expiry, reclaim_after=args.reclaim_after or None, idle_timeout=args.idle_timeout,
            flood_hellos=DEFAULT_FLOOD_HELLOS if args.flood_penalty else None,
            flood_penalty=args.flood_penalty or DEFAULT_FLOOD_PENALTY, max_message=args.max_message,
            ipv6_prefix=args.ipv6_prefix, max_image_term_length=args.max_image_term_length,
            max_large_term_images=args.large_term_images, max_large_term_images_per_ip=args.large_term_images_per_ip,
            secure=secure_mode(args, p), max_ipc_clients=args.ipc_clients)
        options = ServerOptions(
            address=values["address"], port=values["port"], control_port=values["control_port"],
            dir=values["dir"], term_length=args.term_length, blocklist=args.blocklist, events=args.events,
            close_blocked=args.close_blocked,
            snapshot_interval=args.snapshot_interval, image_liveness_timeout=args.image_liveness_timeout,
            driver_timeout=args.driver_timeout, max_creating=args.max_creating, events_max_bytes=args.events_max_bytes,
            events_max_files=args.events_max_files, endpoint_filter=not args.no_endpoint_filter,
            setup_rate=args.setup_rate, setup_burst=max(1, int(2 * args.setup_rate)),
            max_images_per_source=args.max_images_per_source, max_images_total=args.max_images_total,
            quiet_after=None if args.no_quiet else args.quiet_after, quiet_period=args.quiet_period,
            deep_quiet_after=None if args.no_deep_quiet else args.deep_quiet_after,
            deep_quiet_period=args.deep_quiet_period,
            keepalive_interval=args.keepalive_interval or None, record=args.record,
            record_channel=args.record_channel, record_stream=args.record_stream, record_max_bytes=args.record_max_bytes, record_keep=args.record_keep)
        top = config.clients_base_port + 2 * config.max_clients - 1
        if not 1 <= config.clients_base_port <= top <= 65535:
            raise ValueError(f"duologue ports [{config.clients_base_port}, {top}] are outside [1, 65535]")
    except ValueError as exc:
        p.error(str(exc))
    return config, options


def main(argv: Sequence[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    logging.basicConfig(level=args.log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.generate_key is not None:
        return generate_key(args.generate_key, args.force)
    config, options = settings(args, p)
    try:
        server = echo_server(config, options)
    except (OSError, ValueError) as exc:
        print(f"echo_server: {exc}", file=sys.stderr)
        return 1

    def ready(s: DuologueServer) -> None:
        o = s.options
        print(f"READY {o.address} {o.port} {o.control_port}", flush=True)
        if config.secure is not None:
            print(f"echo_server: secure mode, server public key {b64url_encode(config.secure.static_keypair[0])}",
                  file=sys.stderr, flush=True)
        print(f"echo_server: serving on {o.address} port {o.port} control {o.control_port}, "
              f"{config.max_clients} clients on ports {config.clients_base_port}-"
              f"{config.clients_base_port + 2 * config.max_clients - 1}, driver dir {s.driver_dir}"
              + (f", {config.max_ipc_clients} same-host IPC clients" if config.max_ipc_clients else ""),
              file=sys.stderr, flush=True)

    grace = args.shutdown_grace
    signals: list[int] = []

    def arm_watchdog(why: str) -> None:
        """Bound the shutdown: faulthandler's own thread needs no GIL and no Python code."""
        logger.info("%s; if still running in %.1f s the process dumps its stacks and exits 1", why, grace)
        faulthandler.dump_traceback_later(grace, exit=True)

    def on_stop(signum: int, frame: object) -> None:
        signals.append(signum)
        name = signal.Signals(signum).name
        if len(signals) > 1:
            logger.error("second %s during shutdown: exiting now (status 1); only the driver directory "
                         "%s is removed", name, server.driver_dir)
            if server.driver_dir is not None:  # the driver's own (its files are unlinked, not unmapped)
                shutil.rmtree(server.driver_dir, ignore_errors=True)
            logging.shutdown()
            os._exit(1)
        arm_watchdog(f"{name}: stopping")
        server.stop()

    def stopping(s: DuologueServer) -> None:
        if not signals:  # the loop ended by itself (error, driver lost): bound the teardown too
            arm_watchdog("serving ended")

    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGTERM, on_stop)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, lambda signum, frame: server.reload_blocklist())
    try:
        server.run(on_ready=ready, on_stopping=stopping)
    except DriverLostError as exc:
        logger.error("exiting: %s", exc)
        print(f"echo_server: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - report any startup/serving failure plainly
        logger.debug("server failed", exc_info=True)
        print(f"echo_server: {aeron_cause(exc)}", file=sys.stderr)
        return 1
    finally:
        faulthandler.cancel_dump_traceback_later()
    return 0


if __name__ == "__main__":
    sys.exit(main())
