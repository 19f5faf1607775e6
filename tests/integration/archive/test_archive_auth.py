"""Authenticated connect (``connect(credentials=..., on_challenge=...)``) against a Java Archive
that requires credentials: Aeron's sample authenticator, which accepts ``admin:admin``,
challenges ``admin:adminC`` with ``challenge!`` (answer: ``admin:CSadmin``) and rejects the rest."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from aeron_py import Aeron, MediaDriver
from aeron_py.archive import AeronArchive, AuthenticationRejectedError

from archive_harness import JavaArchive, connect, running_archive

pytestmark = [pytest.mark.integration, pytest.mark.java, pytest.mark.timeout(180)]
AUTHENTICATOR = {"aeron.archive.authenticator.supplier": "io.aeron.samples.archive.SampleAuthenticatorSupplier"}


@pytest.fixture(scope="module")
def driver() -> Iterator[MediaDriver]:
    with MediaDriver(publication_linger_timeout_ns=0) as d:
        yield d


@pytest.fixture(scope="module")
def java_archive(driver: MediaDriver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaArchive]:
    with running_archive(driver.dir, tmp_path_factory.mktemp("auth-archive"), extra_properties=AUTHENTICATOR) as a:
        yield a


@pytest.fixture(scope="module")
def aeron(driver: MediaDriver) -> Iterator[Aeron]:
    with Aeron(driver=driver) as client:
        yield client


def test_credentials_accepted(aeron: Aeron, java_archive: JavaArchive) -> None:
    archive = connect(aeron, java_archive, credentials=b"admin:admin")
    assert isinstance(archive, AeronArchive)
    with archive:
        assert archive.archive_id == java_archive.archive_id
        assert archive.list_recordings() == []


def test_challenge_answered(aeron: Aeron, java_archive: JavaArchive) -> None:
    challenges: list[bytes] = []

    def answer(challenge: bytes) -> bytes:
        challenges.append(challenge)
        return b"admin:CSadmin"

    archive = connect(aeron, java_archive, credentials=b"admin:adminC", on_challenge=answer)
    assert isinstance(archive, AeronArchive)
    with archive:
        assert archive.archive_id == java_archive.archive_id
    assert challenges == [b"challenge!"]


@pytest.mark.parametrize("credentials", [None, b"", b"admin:wrong"])
def test_wrong_or_missing_credentials_rejected(aeron: Aeron, java_archive: JavaArchive,
                                               credentials: bytes | None) -> None:
    connect(aeron, java_archive, credentials=b"admin:admin").close()  # the Archive is up: a refusal is a refusal
    with pytest.raises(AuthenticationRejectedError, match="authentication rejected"):
        AeronArchive.connect(aeron, control_channel=java_archive.control_channel,
                             response_channel="aeron:udp?endpoint=127.0.0.1:0", message_timeout=5.0,
                             credentials=credentials)


def test_wrong_challenge_answer_rejected(aeron: Aeron, java_archive: JavaArchive) -> None:
    with pytest.raises(AuthenticationRejectedError, match="authentication rejected"):
        connect(aeron, java_archive, credentials=b"admin:adminC", on_challenge=lambda challenge: b"admin:guess")


def test_challenge_without_answerer_rejected(aeron: Aeron, java_archive: JavaArchive) -> None:
    with pytest.raises(AuthenticationRejectedError, match="authentication rejected"):
        connect(aeron, java_archive, credentials=b"admin:adminC")


def test_on_challenge_raising_is_raised(aeron: Aeron, java_archive: JavaArchive) -> None:
    def broken(challenge: bytes) -> bytes:
        raise KeyError("no key for " + challenge.decode())

    with pytest.raises(KeyError, match="no key for challenge!"):
        connect(aeron, java_archive, credentials=b"admin:adminC", on_challenge=broken)
    connect(aeron, java_archive, credentials=b"admin:admin").close()  # the client is still usable


def test_on_challenge_returning_non_bytes_is_type_error(aeron: Aeron, java_archive: JavaArchive) -> None:
    with pytest.raises(TypeError, match="on_challenge must return bytes, got str"):
        connect(aeron, java_archive, credentials=b"admin:adminC", on_challenge=lambda challenge: "admin:CSadmin")


def test_credential_arguments_checked(aeron: Aeron, java_archive: JavaArchive) -> None:
    with pytest.raises(TypeError, match="credentials must be bytes"):
        AeronArchive.connect(aeron, control_channel=java_archive.control_channel,
                             credentials="admin:admin")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pass credentials too"):
        AeronArchive.connect(aeron, control_channel=java_archive.control_channel, on_challenge=lambda c: c)
    with pytest.raises(TypeError, match="on_challenge must be callable"):
        AeronArchive.connect(aeron, control_channel=java_archive.control_channel, credentials=b"admin:admin",
                             on_challenge=b"admin:CSadmin")  # type: ignore[arg-type]
