"""The duologue layer's sans-I/O core: the handshake, admission and every limit, with no I/O.

Nothing here imports Aeron, sockets, threads, asyncio or a clock: the glue passes ``now``
and the facts it knows in, and executes the actions that come back (h11's design). A
test reads these modules' imports and fails otherwise (``tests/unit/test_layers.py``).

* :mod:`.protocol` - the wire format of the handshake and of Echo 2.0 (``docs/spec/echo2.md`` §1);
* :mod:`.server` - :class:`~.server.DuologueServerCore`, the server's state machine, with
  :mod:`.hello_admission` (HELLOs on the all-clients channel) and :mod:`.contract`
  (the actions and events it exchanges with its glue; a duologue's messages go to the
  application as :class:`~.contract.Deliver`);
* :mod:`.client` - :class:`~.client.EchoClientCore`, the client's state machine;
* secure mode (``docs/spec/echo2.md`` §5): :mod:`.noise` (the Noise NK handshake, over
  primitives passed in), :mod:`.secure_hello` (its messages), :mod:`.secure_handshake`
  (the state object of each side) and :mod:`.secure_client` (the client's HELLO-KEY /
  HELLO-SECURE sequence);
* allocators and limits: :mod:`.ports`, :mod:`.sessions`, :mod:`.per_ip`,
  :mod:`.large_terms`, :mod:`.reclaim`; due times :mod:`.deadlines`; repeated-log folding
  :mod:`.log_summary`; records :mod:`.records`; driver sizing :mod:`.capacity`.
"""
