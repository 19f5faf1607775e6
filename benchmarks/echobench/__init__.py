"""The parts of ``benchmarks/echo_bench.py`` (Echo 2.0: RTT, handshakes, capacity).

- :mod:`.plan`: what a run measures, constants, summaries;
- :mod:`.children`: the orchestrator's role children (JSON lines over stdin/stdout);
- :mod:`.roles`, :mod:`.pool`: the child side (servers, raw ping/pong, client pools);
- :mod:`.rtt`, :mod:`.handshakes`, :mod:`.capacity`: the three parts;
- :mod:`.plot`: ``echo.png``.
"""
