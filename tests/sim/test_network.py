"""SimNetwork: FIFO per connection under random latency, partitions, drops, hold-and-release, frozen hosts."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from zkcontroller.model import Broker
from zkcontroller.protocol.transport import BrokerUnreachableError, RequestHandler
from zkcontroller.sim.host import HostProcess
from zkcontroller.sim.loop import run_virtual
from zkcontroller.sim.network import NetworkConfig, SimNetwork


class _PassThrough:
    def deliver(self, host: Any, handler: RequestHandler, request: Any) -> Any:
        return handler(request)


def _world(config: NetworkConfig | None = None) -> tuple[SimNetwork, HostProcess, HostProcess, list[Any]]:
    network = SimNetwork(random.Random(7), _PassThrough(), config or NetworkConfig(min_latency_ms=1,
                                                                                  max_latency_ms=50))
    sender, receiver = HostProcess(1, 1), HostProcess(2, 1)
    received: list[Any] = []

    def handle(request: Any) -> Any:
        received.append(request)
        return ("ack", request)

    network.endpoint(receiver).register(2, handle)
    return network, sender, receiver, received


BROKER_2 = Broker(2, ())


def test_one_connection_delivers_in_sending_order_despite_random_latency() -> None:
    async def main() -> list[Any]:
        network, sender, _, received = _world()
        out = network.endpoint(sender)
        # Sent one after another without waiting: latencies differ, order must not.
        responses = await asyncio.gather(*(out.send(BROKER_2, i) for i in range(50)))
        assert responses == [("ack", i) for i in range(50)]
        return received

    assert run_virtual(main()) == list(range(50))


def test_a_partitioned_link_loses_the_request_and_the_sender_times_out() -> None:
    async def main() -> tuple[float, list[Any]]:
        network, sender, _, received = _world(NetworkConfig(request_timeout_ms=3000))
        network.partition([1], [2], one_way=True)
        loop = asyncio.get_running_loop()
        with pytest.raises(BrokerUnreachableError):
            await network.endpoint(sender).send(BROKER_2, "lost")
        return loop.time(), received

    elapsed, received = run_virtual(main())
    assert received == [] and elapsed == pytest.approx(3.0)


def test_one_way_partition_delivers_the_request_but_loses_the_response() -> None:
    async def main() -> list[Any]:
        network, sender, _, received = _world(NetworkConfig(request_timeout_ms=1000))
        network.partition([2], [1], one_way=True)  # only broker 2 -> broker 1 is cut
        with pytest.raises(BrokerUnreachableError):
            await network.endpoint(sender).send(BROKER_2, "applied, unanswered")
        return received

    assert run_virtual(main()) == ["applied, unanswered"]


def test_held_link_delivers_everything_in_order_on_release() -> None:
    async def main() -> list[Any]:
        network, sender, _, received = _world()
        network.hold(1, 2)
        sends = [asyncio.ensure_future(network.endpoint(sender).send(BROKER_2, i)) for i in range(5)]
        await asyncio.sleep(10)
        assert received == []
        network.release(1, 2)
        await asyncio.gather(*sends)
        return received

    assert run_virtual(main()) == [0, 1, 2, 3, 4]


def test_a_frozen_broker_handles_what_arrived_only_when_it_resumes() -> None:
    async def main() -> list[Any]:
        network, sender, receiver, received = _world()
        receiver.freeze()
        send = asyncio.ensure_future(network.endpoint(sender).send(BROKER_2, "while frozen"))
        await asyncio.sleep(5)
        assert received == [] and not send.done()
        receiver.thaw()
        assert await send == ("ack", "while frozen")
        return received

    assert run_virtual(main()) == ["while frozen"]


def test_a_request_on_the_wire_arrives_even_if_its_sender_is_cancelled() -> None:
    async def main() -> list[Any]:
        network, sender, _, received = _world()
        send = asyncio.ensure_future(network.endpoint(sender).send(BROKER_2, "in flight"))
        await asyncio.sleep(0)
        send.cancel()
        await asyncio.sleep(1)
        return received

    assert run_virtual(main()) == ["in flight"]


def test_dropped_messages_reset_the_connection_at_once() -> None:
    async def main() -> int:
        network, sender, _, received = _world(NetworkConfig(drop_probability=1.0, request_timeout_ms=30_000))
        with pytest.raises(BrokerUnreachableError, match="reset"):
            await network.endpoint(sender).send(BROKER_2, "dropped")
        assert asyncio.get_running_loop().time() < 1
        return len(received)

    assert run_virtual(main()) == 0
