"""Echo 2.0's own sans-I/O rule (:mod:`.echo_rule`): ``ECHO <payload>`` comes back, anything
else is a bad message. The handshake, admission and limits it runs on are the duologue
layer's core (:mod:`aeron_py.duologue.core`)."""
