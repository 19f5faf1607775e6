"""Aeron's properties files (``aeron_properties_file_load``): the Java-style settings files
that Aeron's tools and drivers read, e.g.::

    # driver.properties
    aeron.term.buffer.length=65536
    aeron.mtu.length=1408

:func:`load_properties` makes each ``name=value`` the environment variable Aeron's C code
reads (``aeron.term.buffer.length`` is ``AERON_TERM_BUFFER_LENGTH``), so every
:class:`~aeron_py.MediaDriver` and :class:`~aeron_py.Aeron` made afterwards in this process
starts from those values (explicit options still win). The variables are set in the C
environment of the process: :data:`os.environ` keeps the values it read at start-up.
Call it before starting drivers and clients: it changes the whole process.
"""
from __future__ import annotations

import os

from . import _aeron
from .errors import AeronError

__all__ = ["load_properties", "load_properties_text"]


def load_properties(path: str | os.PathLike[str]) -> None:
    """Load a properties file; FileNotFoundError if it is missing, AeronError if Aeron refuses it."""
    source = os.fspath(path)
    if not os.path.isfile(source):
        raise FileNotFoundError(f"no Aeron properties file at {source!r}")
    try:
        _aeron.properties_file_load(source)
    except AeronError as exc:
        raise type(exc)(f"cannot load the Aeron properties file {source!r}: {exc}") from None


def load_properties_text(text: str) -> None:
    """Load ``name=value`` lines from a string (as a properties file's content)."""
    if "\0" in text:
        raise ValueError("Aeron properties text must not contain NUL characters")
    _aeron.properties_buffer_load(text if text.endswith("\n") else text + "\n")  # Aeron reads whole lines
