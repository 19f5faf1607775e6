"""Echo 2.0's handshake and one echo, with the sans-I/O cores only: no driver, no sockets."""
import random

from aeron_py.echo import (
    Broadcast, CreateDuologue, EchoClientCore, DuologueServerCore, OpenDuologue, SendDuologue, ServerConfig,
)
from aeron_py.echo.core.echo_rule import answer

server = DuologueServerCore(ServerConfig(max_clients=4, clients_base_port=9010), rng=random.Random(1))
client = EchoClientCore(key=0x611786D9)          # the guide's worked example key

# The client's initial publication shows up on the server's all-clients subscription as an
# image: Aeron tells the server its session id and source address, the client learns the
# same session id from its own publication.
server.initial_image_available(image_id=1, session_id=-555798973,
                               source_identity="127.0.0.2:53211", term_length=65536, now=0.0)
client.set_initial_session(-555798973)

hello = client.hello()
print(hello)                                     # b'HELLO 611786D9'
actions = server.hello_received(image_id=1, data=hello, now=0.1)
create = next(a for a in actions if isinstance(a, CreateDuologue))
connect = next(a for a in actions if isinstance(a, Broadcast))
print(create)                                    # the glue opens these two channels
print(connect.data)                              # b'-555798973 CONNECT <data> <control> <crypt>'

duologue = client.initial_reply(connect.data, now=0.2)
assert isinstance(duologue, OpenDuologue)
assert duologue.session_id == create.session_id  # key XOR crypt: only this client can know it

# The client's duologue publication appears on the duologue subscription, from the owner's IP.
server.duologue_image_available(create.session_id, image_id=2, source_identity="127.0.0.2:40400",
                                term_length=65536, now=0.3)
echo = client.next_echo(b"hello, duologue", now=0.4)
# The core hands the message to the application (a Deliver action); Echo's rule answers it.
delivered = server.duologue_message(create.session_id, 2, echo, now=0.5)
print(delivered)                                 # [Deliver(session_id=..., data=b'ECHO hello, duologue')]
reply = next(a for a in answer(server, delivered, now=0.5) if isinstance(a, SendDuologue))
print(client.duologue_reply(reply.data, now=0.6))  # Echoed(...)
