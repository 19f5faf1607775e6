"""aeron_py.asyncio: awaitable offer and receive on an event loop (IPC, one process).

requires: aeron_py.asyncio
"""
import asyncio

import aeron_py.asyncio as aio
from aeron_py import MediaDriver


async def main() -> None:
    with MediaDriver() as driver:
        async with aio.Aeron(driver=driver) as aeron:
            sub = await aeron.add_subscription("aeron:ipc", 10)
            pub = await aeron.add_publication("aeron:ipc", 10)
            for text in ("hello", "from", "asyncio"):
                await pub.offer(text.encode(), timeout=5)   # waits out back pressure, loop keeps running
            for _ in range(3):
                message = await asyncio.wait_for(sub.receive(), timeout=5)
                print(message.data, message.header.session_id == pub.session_id)


asyncio.run(main())
