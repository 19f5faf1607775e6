"""Echo secure mode's key files (docs/spec/echo2.md §5.6): the server's key, the client's known servers.

* The **server key file** holds the server's static X25519 secret key: one comment line
  naming its public key, then the secret as base64url without padding::

      # aeron_py echo server key; public key: <base64url>
      <base64url secret>

  :func:`generate_server_key` writes it atomically with mode 0600 and refuses to replace
  an existing file unless ``force=True``; :func:`load_server_key` refuses a file that
  group or others may read or write, that another user owns, or whose content is wrong.
* The **known servers file** (default ``~/.config/aeron_py/known_echo_servers``) records
  the public key each server presented first, as ssh's ``known_hosts`` does: one
  ``host:port base64url-public-key`` per line, ``#`` comments and blank lines allowed.
  :class:`KnownServers` looks keys up, remembers new ones (atomic rewrite) and raises
  :class:`KnownServerMismatch` when a server presents a different key.

Secret keys are returned in a ``bytearray`` (:meth:`ServerKeyPair.wipe` zeroes it); the
file's text and the decoded ``bytes`` are immutable Python objects that cannot be wiped.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import crypto
from ..validation import require_int
from .core.noise import x25519_public_key
from .core.secure_handshake import ServerSecrets
from .core.secure_hello import b64url_decode, b64url_encode

__all__ = ["DEFAULT_KNOWN_SERVERS", "KnownServer", "KnownServerMismatch", "KnownServers", "ServerKeyPair",
           "generate_server_key", "key_option_argv", "load_server_key", "server_address", "server_secrets"]

logger = logging.getLogger("aeron_py.duologue.keys")

DEFAULT_KNOWN_SERVERS = Path("~/.config/aeron_py/known_echo_servers")
_MAX_KEY_FILE = 4096  # bytes: a key file is about 110
_MAX_KNOWN_SERVERS_FILE = 16 * 1024 * 1024
_REGENERATE = ("or generate a new key with `python -m aeron_py.echo_server --generate-key PATH --force` "
               "(aeron_py.duologue.keys.generate_server_key(path, force=True))")


@dataclass
class ServerKeyPair:
    """The server's static X25519 key pair (public key, secret key)."""

    public: bytes
    secret: bytearray = field(repr=False)

    def as_tuple(self) -> tuple[bytes, bytearray]:
        """``(public, secret)``, the form the handshake objects take."""
        return self.public, self.secret

    def wipe(self) -> None:
        """Zero the secret key."""
        self.secret[:] = bytes(len(self.secret))


# ----------------------------------------------------------------- atomic files


def key_option_argv(argv: Sequence[str], option: str = "--server-key") -> list[str]:
    """``argv`` with ``option KEY`` written ``option=KEY``: a base64url key starts with ``-``
    one time in 64, and argparse takes such a word for an option (``expected one argument``)."""
    out: list[str] = []
    words = iter(argv)
    for word in words:
        value = next(words, None) if word == option else None
        out.append(word if value is None else f"{option}={value}")
    return out


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomically(path: Path, text: str, *, replace: bool, what: str) -> None:
    """Write ``text`` to a private (0600) temporary file beside ``path``, then move it there.

    ``replace=False`` publishes it with a hard link, which fails if ``path`` exists.
    """
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temp = Path(temp_name)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(temp, path)
        else:
            try:
                os.link(temp, path)
            except FileExistsError:
                raise FileExistsError(f"{path} already exists: refusing to overwrite {what}") from None
    finally:
        temp.unlink(missing_ok=True)
    _fsync_directory(path.parent)


# --------------------------------------------------------------- server key


def generate_server_key(path: str | os.PathLike[str], *, force: bool = False) -> bytes:
    """Write a new server key file (mode 0600, atomically); return its public key.

    Refuses to replace an existing file unless ``force``: clients that recorded the old
    public key will refuse the server after that.
    """
    target = Path(path)
    public, secret = crypto.x25519_keypair()
    text = f"# aeron_py echo server key; public key: {b64url_encode(public)}\n{b64url_encode(secret)}\n"
    what = "a server key (pass force=True to replace it; clients that know the old key will refuse the new one)"
    _write_atomically(target, text, replace=force, what=what)
    logger.info("wrote a new echo server key to %s (public key %s)", target, b64url_encode(public))
    return public


def _check_private(path: Path, info: os.stat_result) -> None:
    """PermissionError unless ``path`` is owned by us and closed to group and others."""
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise PermissionError(
            f"server key file {path} is owned by uid {info.st_uid}, not by the current user (uid {os.geteuid()}): "
            f"a server key must belong to the user running the server; copy it to a file you own "
            f"and run `chmod 600 {path}`, {_REGENERATE}")
    if info.st_mode & 0o077:
        raise PermissionError(
            f"server key file {path} has mode {stat.S_IMODE(info.st_mode):04o}: group or others may read or "
            f"write it, and a server key must be private; run `chmod 600 {path}` (and consider the key "
            f"exposed if others could read it: {_REGENERATE})")


def _parse_server_key(path: Path, text: str) -> bytearray:
    lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1)]
    keys = [(number, line) for number, line in lines if line and not line.startswith("#")]
    if len(keys) != 1:
        raise ValueError(f"server key file {path} must hold exactly one key line (base64url), "
                         f"found {len(keys)}; {_REGENERATE}")
    number, line = keys[0]
    secret = b64url_decode(line)
    if secret is None or len(secret) != 32:
        raise ValueError(f"server key file {path} line {number} is not a 32-byte X25519 secret key in "
                         f"base64url without padding; {_REGENERATE}")
    return bytearray(secret)


def load_server_key(path: str | os.PathLike[str]) -> ServerKeyPair:
    """Read a server key file written by :func:`generate_server_key` (checks owner and mode)."""
    source = Path(path)
    with open(source, "rb") as handle:
        _check_private(source, os.fstat(handle.fileno()))
        raw = handle.read(_MAX_KEY_FILE + 1)
    if len(raw) > _MAX_KEY_FILE:
        raise ValueError(f"server key file {source} is larger than {_MAX_KEY_FILE} bytes: not a key file; "
                         f"{_REGENERATE}")
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise ValueError(f"server key file {source} is not ASCII text: not a key file; {_REGENERATE}") from None
    secret = _parse_server_key(source, text)
    return ServerKeyPair(x25519_public_key(crypto, secret), secret)


def server_secrets(path: str | os.PathLike[str]) -> ServerSecrets:
    """What a secure server's core needs (``ServerConfig(secure=...)``), from a server key file."""
    return ServerSecrets(load_server_key(path).as_tuple(), crypto)


# ------------------------------------------------------------- known servers


def server_address(host: str, port: int) -> str:
    """``host:port`` as recorded: IP addresses canonical (IPv6 in brackets), names lowercase."""
    require_int("port", port, min=1, max=65535)
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ip = ipaddress.ip_address(bare)
    except ValueError:
        if not bare or any(c.isspace() or c in "[]#" for c in bare) or ":" in bare:
            raise ValueError(f"host {host!r} is neither an IP address nor a host name") from None
        return f"{bare.lower()}:{port}"
    return f"[{ip.compressed}]:{port}" if ip.version == 6 else f"{ip.compressed}:{port}"


@dataclass(frozen=True)
class KnownServer:
    """A recorded key: the public key and the line of the known servers file it is on."""

    public_key: bytes
    line: int


class KnownServerMismatch(ValueError):
    """A server presented a different public key than the one recorded for it."""

    def __init__(self, address: str, path: Path, line: int) -> None:
        super().__init__(
            f"the server at {address} presented a different key than the one recorded in {path} line {line}; "
            f"if the server's key was changed on purpose, remove that line (otherwise someone may be "
            f"impersonating the server: do not connect)")
        self.address, self.path, self.line = address, path, line


class KnownServers:
    """The known servers file: trust on first use, then the recorded key only."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else DEFAULT_KNOWN_SERVERS.expanduser()

    def _read(self) -> list[str]:
        try:
            with open(self.path, "rb") as handle:
                raw = handle.read(_MAX_KNOWN_SERVERS_FILE + 1)
        except FileNotFoundError:
            return []
        if len(raw) > _MAX_KNOWN_SERVERS_FILE:
            raise ValueError(f"known servers file {self.path} is larger than {_MAX_KNOWN_SERVERS_FILE} bytes")
        try:
            return raw.decode("ascii").splitlines()
        except UnicodeDecodeError:
            raise ValueError(f"known servers file {self.path} is not ASCII text") from None

    def _entries(self, lines: list[str]) -> dict[str, KnownServer]:
        entries: dict[str, KnownServer] = {}
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            key = b64url_decode(fields[1]) if len(fields) == 2 else None
            if key is None or len(key) != 32:
                raise ValueError(f"known servers file {self.path} line {number} is not "
                                 f"'host:port base64url-public-key'; fix or remove that line")
            entries.setdefault(fields[0], KnownServer(key, number))  # the first line wins
        return entries

    def lookup(self, host: str, port: int) -> KnownServer | None:
        """The key recorded for ``host:port``, or None."""
        return self._entries(self._read()).get(server_address(host, port))

    def verify(self, host: str, port: int, public_key: bytes) -> bool:
        """True if ``public_key`` is the one recorded, False if none is; else KnownServerMismatch."""
        known = self.lookup(host, port)
        if known is None:
            return False
        if known.public_key != bytes(public_key):
            raise KnownServerMismatch(server_address(host, port), self.path, known.line)
        return True

    def remember(self, host: str, port: int, public_key: bytes) -> None:
        """Record ``public_key`` for ``host:port`` (atomic rewrite); mismatch if another is recorded."""
        if len(public_key) != 32:
            raise ValueError(f"a server public key is 32 bytes, not {len(public_key)}")
        address = server_address(host, port)
        lines = self._read()
        known = self._entries(lines).get(address)
        if known is not None:
            if known.public_key != bytes(public_key):
                raise KnownServerMismatch(address, self.path, known.line)
            return
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        text = "".join(f"{line}\n" for line in [*lines, f"{address} {b64url_encode(public_key)}"])
        _write_atomically(self.path, text, replace=True, what="the known servers file")
        logger.info("recorded the key of the echo server at %s in %s", address, self.path)
