"""Echo secure mode's key files (aeron_py.duologue.keys): the server key and the known servers file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from aeron_py import crypto
from aeron_py.duologue.core.noise import x25519_public_key
from aeron_py.duologue.core.secure_hello import b64url_encode
from aeron_py.duologue.keys import (
    DEFAULT_KNOWN_SERVERS,
    KnownServer,
    KnownServerMismatch,
    KnownServers,
    generate_server_key,
    load_server_key,
    server_address,
)

pytestmark = [pytest.mark.timeout(30)]


# ----------------------------------------------------------------- server key


def test_generate_then_load(tmp_path: Path) -> None:
    path = tmp_path / "server.key"
    public = generate_server_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and lines[0] == f"# aeron_py echo server key; public key: {b64url_encode(public)}"
    pair = load_server_key(path)
    assert pair.public == public == x25519_public_key(crypto, pair.secret)
    assert isinstance(pair.secret, bytearray) and len(pair.secret) == 32
    assert pair.secret.hex() not in repr(pair)
    pair.wipe()
    assert pair.secret == bytearray(32)
    assert [p.name for p in tmp_path.iterdir()] == ["server.key"]  # no temporary file left


def test_generate_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    path = tmp_path / "server.key"
    first = generate_server_key(path)
    with pytest.raises(FileExistsError, match="refusing to overwrite a server key.*force=True"):
        generate_server_key(path)
    assert load_server_key(path).public == first
    second = generate_server_key(path, force=True)
    assert second != first and load_server_key(path).public == second
    assert [p.name for p in tmp_path.iterdir()] == ["server.key"]


def test_generate_ignores_a_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        generate_server_key(tmp_path / "k")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "k").stat().st_mode) == 0o600


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o644, 0o666])
def test_load_refuses_a_key_others_can_read_or_write(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "server.key"
    generate_server_key(path)
    path.chmod(mode)
    with pytest.raises(PermissionError, match=rf"{path}.*mode {mode:04o}.*chmod 600 {path}"):
        load_server_key(path)


def test_load_refuses_a_key_owned_by_another_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "server.key"
    generate_server_key(path)
    monkeypatch.setattr(os, "geteuid", lambda: path.stat().st_uid + 1)
    with pytest.raises(PermissionError, match="not by the current user"):
        load_server_key(path)


@pytest.mark.parametrize("content, where", [
    ("", "exactly one key line"),
    ("# only a comment\n", "exactly one key line"),
    (f"{'A' * 43}\n{'A' * 43}\n", "exactly one key line"),
    ("not base64!\n", "line 1 is not a 32-byte"),
    (f"# c\n{b64url_encode(bytes(31))}\n", "line 2 is not a 32-byte"),
    (f"{b64url_encode(bytes(32))}==\n", "line 1"),
    ("é\n", "not ASCII"),
    ("#" * 5000, "larger than"),
])
def test_load_refuses_bad_content(tmp_path: Path, content: str, where: str) -> None:
    path = tmp_path / "server.key"
    path.write_text(content)
    path.chmod(0o600)
    with pytest.raises(ValueError, match=where) as raised:
        load_server_key(path)
    assert str(path) in str(raised.value) and "generate_server_key" in str(raised.value)


def test_load_accepts_a_hand_written_key_without_comment(tmp_path: Path) -> None:
    public, secret = crypto.x25519_keypair()
    path = tmp_path / "k"
    path.write_text(f"\n  {b64url_encode(secret)}  \n\n")
    path.chmod(0o600)
    assert load_server_key(path).public == public


# ------------------------------------------------------------ known servers


def test_server_address_is_canonical() -> None:
    assert server_address("Echo.Example.ORG", 9000) == "echo.example.org:9000"
    assert server_address("127.0.0.1", 1) == "127.0.0.1:1"
    assert server_address("::1", 9000) == "[::1]:9000"
    assert server_address("[0:0::1]", 9000) == "[::1]:9000"
    for host, port in [("a b", 1), ("", 1), ("x", 0), ("x", 65536), ("a:b", 1)]:
        with pytest.raises(ValueError):
            server_address(host, port)


def test_default_path() -> None:
    assert KnownServers().path == Path("~/.config/aeron_py/known_echo_servers").expanduser()
    assert DEFAULT_KNOWN_SERVERS.name == "known_echo_servers"


def test_remember_lookup_verify(tmp_path: Path) -> None:
    known = KnownServers(tmp_path / "sub" / "known")
    key, other = bytes(range(32)), bytes(32)
    assert known.lookup("h", 1) is None and known.verify("h", 1, key) is False
    known.remember("h", 1, key)
    known.remember("::1", 2, other)
    known.remember("h", 1, key)  # again: nothing changes
    assert known.lookup("H", 1) == KnownServer(key, 1)
    assert known.lookup("[::1]", 2) == KnownServer(other, 2)
    assert known.verify("h", 1, key) is True
    assert (tmp_path / "sub" / "known").read_text() == f"h:1 {b64url_encode(key)}\n[::1]:2 {b64url_encode(other)}\n"
    assert stat.S_IMODE((tmp_path / "sub").stat().st_mode) == 0o700


def test_a_different_key_is_refused_like_ssh(tmp_path: Path) -> None:
    path = tmp_path / "known"
    path.write_text(f"# my servers\n\nother:5 {b64url_encode(bytes(32))}\nsrv:9000 {b64url_encode(bytes(range(32)))}\n")
    known = KnownServers(path)
    expected = (f"the server at srv:9000 presented a different key than the one recorded in {path} line 4; "
                "if the server's key was changed on purpose, remove that line")
    with pytest.raises(KnownServerMismatch, match=expected) as raised:
        known.verify("srv", 9000, bytes(32))
    assert raised.value.line == 4 and raised.value.path == path
    with pytest.raises(KnownServerMismatch, match="line 4"):
        known.remember("srv", 9000, bytes(32))
    assert path.read_text().count("\n") == 4  # not rewritten


def test_a_malformed_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "known"
    path.write_text("srv:9000 not-a-key\n")
    with pytest.raises(ValueError, match=f"{path} line 1 is not 'host:port base64url-public-key'"):
        KnownServers(path).lookup("srv", 9000)
    path.write_text("srv:9000\n")
    with pytest.raises(ValueError, match="line 1"):
        KnownServers(path).lookup("srv", 9000)


def test_remember_keeps_comments_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "known"
    path.write_text("# hand-written comment\n")
    KnownServers(path).remember("10.0.0.1", 7, bytes(range(32)))
    assert path.read_text().splitlines()[0] == "# hand-written comment"
    assert [p.name for p in tmp_path.iterdir()] == ["known"]


def test_a_server_key_starting_with_a_dash_reaches_argparse_as_a_value() -> None:
    from aeron_py.echo.client.cli import parser
    from aeron_py.duologue.keys import key_option_argv

    argv = ["127.0.0.1", "9000", "9001", "--secure", "--server-key", "-AbC_de", "--count", "1"]
    assert key_option_argv(argv) == ["127.0.0.1", "9000", "9001", "--secure", "--server-key=-AbC_de", "--count", "1"]
    assert parser().parse_args(key_option_argv(argv)).server_key == "-AbC_de"
    assert key_option_argv(["--server-key"]) == ["--server-key"]  # argparse reports the missing value
