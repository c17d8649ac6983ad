"""A request a broker sends with a deadline on the Runtime's clock (Kafka's network client times requests out;
a controller that drops an AlterIsr event, or a lost fetch, must not stall the sender for ever)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from zkcontroller.model import Broker
from zkcontroller.protocol.transport import BrokerTransport, BrokerUnreachableError
from zkcontroller.runtime.runtime import Runtime

TIMER_TASK = "request-timeout"
"""The name `within` gives its timer's task (a test's runtime can tell the bound's sleep from others by it)."""
NO_ANSWER = "no answer within {} ms"
"""The message `within` cancels its work with when its bound passed."""
SENDER_STOPPED = "its sender stopped"
"""The message `within` cancels its work with when it was itself cancelled (the sender shut down)."""


async def send_with_timeout(transport: BrokerTransport, runtime: Runtime, broker: Broker, request: Any,
                            timeout_ms: int) -> Any:
    """``transport.send``; raises `BrokerUnreachableError` if no answer came within ``timeout_ms``."""
    message = f"no answer from broker {broker.id} within {timeout_ms} ms"
    return await within(runtime, transport.send(broker, request), timeout_ms, lambda: BrokerUnreachableError(message))


async def within(runtime: Runtime, work: Coroutine[Any, Any, Any], timeout_ms: int,
                 timed_out: Callable[[], BaseException]) -> Any:
    """``work``'s result, or ``timed_out()`` raised once ``timeout_ms`` of the runtime's time passed first (``work``
    is then cancelled). The bound is on the `Runtime`'s clock, as every wait of a broker: ``asyncio.wait_for``
    counts the loop's time, which a paused simulated process does not stop and a test's manual clock never moves.
    ``work`` is cancelled with a message saying why (`NO_ANSWER` or `SENDER_STOPPED`), which the TCP transport
    puts in its disconnect line (`runtime.tcp_transport.cancel_reason`)."""
    task = runtime.spawn(work, "request")  # the coroutine itself: cancelled before it starts, it is still closed
    timer = runtime.spawn(runtime.sleep_ms(timeout_ms), TIMER_TASK)
    try:
        done, _ = await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        timed_out_now = timer.done() and not timer.cancelled()
        timer.cancel()
        if not task.done():
            task.cancel(NO_ANSWER.format(timeout_ms) if timed_out_now else SENDER_STOPPED)
    if task in done:
        return task.result()
    raise timed_out()
