"""Echo 1.0 (the guide's Take 1) in one process: a server and a client on 127.0.0.1.

The server subscribes on 127.0.0.1:29000; the client subscribes on 127.0.0.1:28000 and sends
``HELLO 28000``; the server then publishes *back* to the client's IP on port 28000 and
echoes every later message. Every wait is bounded.
"""
import time

from aeron_py import Aeron, BackoffIdleStrategy, ChannelUri, MediaDriver

STREAM_ID = 0x2044F002


def udp(endpoint: str) -> str:
    return str(ChannelUri.udp(endpoint, reliable=True, term_length=65536))


with MediaDriver() as driver, Aeron(driver=driver) as aeron:
    # --- server: one subscription for every client; replies are opened on demand
    server_sub = aeron.add_subscription(udp("127.0.0.1:29000"), STREAM_ID)
    replies = {}                                   # client session id -> reply publication

    def on_server_message(data: bytes, header) -> None:
        text = data.decode("utf-8", errors="replace")
        if header.session_id not in replies:       # the first message must be HELLO <port>
            port = int(text.removeprefix("HELLO "))
            with server_sub.image_by_session_id(header.session_id) as image:
                ip = image.source_address[0]       # '127.0.0.1:53211' -> '127.0.0.1'
            replies[header.session_id] = aeron.add_publication(udp(f"{ip}:{port}"), STREAM_ID)
        else:
            replies[header.session_id].offer_until(data, timeout=5)

    # --- client: a subscription for the replies, a publication to the server
    client_sub = aeron.add_subscription(udp("127.0.0.1:28000"), STREAM_ID)
    client_pub = aeron.add_publication(udp("127.0.0.1:29000"), STREAM_ID)
    client_pub.offer_until(b"HELLO 28000", timeout=5)

    received: list[str] = []
    idle = BackoffIdleStrategy()

    def run_until(done, timeout: float = 10.0) -> None:
        """Poll both sides (the server's loop and the client's) until done() or the deadline."""
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError("echo1: no progress within 10 s")
            work = server_sub.poll(on_server_message, 10)
            work += client_sub.poll(lambda data, header: received.append(data.decode()), 10)
            idle.idle(work)

    run_until(lambda: replies and client_sub.is_connected)   # HELLO taken, reply stream up
    sent = ["2745822766", "1016181810", "296510575"]
    for number in sent:
        client_pub.offer_until(number.encode(), timeout=5)
    run_until(lambda: len(received) == len(sent))
    print("echoed:", received)
    assert received == sent, received
