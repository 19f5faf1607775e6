"""Segment files: where the one holding a position begins.

A recording is stored in segment files of ``segment_file_length`` bytes of stream, a whole
number of terms; :meth:`~aeron_py.archive.AeronArchive.detach_segments` and its kin take
positions at their boundaries."""
from __future__ import annotations

from .._aeron import archive as _native
from ..validation import require_int


def segment_file_base_position(start_position: int, position: int, term_length: int, segment_length: int) -> int:
    """Where the segment file holding ``position`` begins, for a recording that started at
    ``start_position`` with these term and segment file lengths (powers of two; ValueError
    otherwise): the positions :meth:`AeronArchive.detach_segments` and
    :meth:`~AeronArchive.purge_segments` take. Before ``start_position`` when the recording
    started within a term."""
    return int(_native.segment_file_base_position(
        require_int("start_position", start_position, min=0, max=2**63 - 1),
        require_int("position", position, min=0, max=2**63 - 1),
        require_int("term_length", term_length, min=1, max=2**31 - 1),
        require_int("segment_length", segment_length, min=1, max=2**31 - 1)))


__all__ = ["segment_file_base_position"]
