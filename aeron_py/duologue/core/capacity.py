"""How big a driver's counters file must be for a number of duologues.

Every channel a driver holds takes counters in its CnC file: a duologue's publication
(``pub-lmt``, ``snd-pos``, ``snd-lmt``, ``snd-bpe``, ``snd-naks-received`` and its
endpoint's ``snd-channel``, ``snd-local-sockaddr``, ``mdc-num-dest``), its subscription
and image (``rcv-channel``, ``rcv-local-sockaddr``, ``sub-pos``, ``rcv-hwm``,
``rcv-pos``, ``rcv-naks-sent``), and on the client's side the same shapes mirrored:
15 per duologue on either side (measured at 4,325 duologues: 65,114 counters in the
server's driver, 65,536 in the clients'). A client's HELLO image adds 4 while it
handshakes, and a freed counter is reused only a second later.

Aeron's default counters buffer (8 MiB of 128-byte values: 65,536 counters) is full at
about 4,300 duologues, and every add after that fails in the driver with "Max counter
id (65535) exceeded" (``(12) Cannot allocate memory``). :func:`counters_buffer_length`
sizes it from the duologues a driver must hold instead.
"""
from __future__ import annotations

from ...validation import require_int

__all__ = ["COUNTERS_PER_DUOLOGUE", "counters_buffer_length"]

#: Counters budgeted per duologue: the 15 measured, a HELLO image's 4, one spare.
COUNTERS_PER_DUOLOGUE = 20
_VALUE_BYTES = 128  # AERON_COUNTERS_MANAGER_VALUE_LENGTH: one counter's value slot
_SYSTEM_COUNTERS = 1024  # the driver's own counters, the broadcast channels, headroom
_MIB = 1 << 20
_AERON_DEFAULT = 8 * _MIB  # AERON_COUNTERS_VALUES_BUFFER_LENGTH_DEFAULT
_AERON_MAX = 500 * _MIB  # AERON_COUNTERS_VALUES_BUFFER_LENGTH_MAX


def counters_buffer_length(duologues: int) -> int:
    """``counters_buffer_length`` (bytes of counter values) for a driver that holds up to
    ``duologues`` duologues: Aeron's default 8 MiB when that is enough, else whole MiB
    for :data:`COUNTERS_PER_DUOLOGUE` each (at most Aeron's 500 MiB). The CnC file also
    holds 512 bytes of metadata per counter: 5,064 client slots take a 13 MiB buffer and
    52 MiB of metadata (the server's whole CnC file, rings and error log included, is
    ~72 MiB)."""
    require_int("duologues", duologues, min=0)
    need = (duologues * COUNTERS_PER_DUOLOGUE + _SYSTEM_COUNTERS) * _VALUE_BYTES
    return min(_AERON_MAX, max(_AERON_DEFAULT, -(-need // _MIB) * _MIB))
