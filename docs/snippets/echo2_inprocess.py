"""An Echo 2.0 server and two clients in one process, on loopback (about 2 s)."""
from aeron_py import BackoffIdleStrategy
from aeron_py.echo.client import EchoClient
from aeron_py.duologue.server import ServerOptions
from aeron_py.echo.server import echo_server
from aeron_py.duologue.core.contract import ServerConfig

config = ServerConfig(max_clients=4, clients_base_port=27310, max_per_ip=1)
options = ServerOptions(address="127.0.0.1", port=27300, control_port=27301)

with echo_server(config, options) as server:         # serves on a background thread
    first = EchoClient("127.0.0.1", 27300, 27301, count=3, timeout=10)
    first.open()                                     # its duologue now counts against 127.0.0.1
    idle = BackoffIdleStrategy()                     # step() never blocks: idle when it did nothing
    while first.phase.value in ("join", "hello"):    # step it until the server has answered
        idle.idle(first.step())
    # max_per_ip=1: a second client from the same address is refused while the first lives
    second = EchoClient("127.0.0.1", 27300, 27301, count=1, timeout=10).run()
    print("second:", second.ok, second.server_reason)  # False too many connections for IP address
    while not first.finished:                        # the client's own timeout bounds this loop
        idle.idle(first.step())
    first.close()
    print("first:", first.result.ok, first.result.echoes, "echoes")
    print(server.stats)
