"""A request a broker sends with a deadline on the Runtime's clock (Kafka's network client times requests out;
a controller that drops an AlterIsr event, or a lost fetch, must not stall the sender for ever)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from zkcontroller.model import Broker
from zkcontroller.protocol.transport import BrokerTransport, BrokerUnreachableError
from zkcontroller.runtime.runtime import Runtime


async def send_with_timeout(transport: BrokerTransport, runtime: Runtime, broker: Broker, request: Any,
                            timeout_ms: int) -> Any:
    """``transport.send``; raises `BrokerUnreachableError` if no answer came within ``timeout_ms``."""
    return await _first(runtime, transport.send(broker, request), timeout_ms,
                        f"no answer from broker {broker.id} within {timeout_ms} ms")


async def _first(runtime: Runtime, work: Coroutine[Any, Any, Any], timeout_ms: int, message: str) -> Any:
    task = runtime.spawn(work, "request")  # the coroutine itself: cancelled before it starts, it is still closed
    timer = runtime.spawn(runtime.sleep_ms(timeout_ms), "request-timeout")
    try:
        done, _ = await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        timer.cancel()
        if not task.done():
            task.cancel()
    if task in done:
        return task.result()
    raise BrokerUnreachableError(message)
