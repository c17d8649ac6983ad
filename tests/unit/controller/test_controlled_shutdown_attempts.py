"""Audit #15, the stopping broker's side of controlled shutdown (``cluster/controlled_shutdown.py``) against Kafka
2.8.2's ``KafkaServer.controlledShutdown``: the connection waits ``controller.socket.timeout.ms`` and the answer
``request.timeout.ms`` (not the smaller of the two for both), Kafka's lines for a timeout, for a controller whose
registration is gone and for the partitions left to move. Timeouts run on a virtual-time loop."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from tests.helpers import ManualClock, ManualRuntime, until_idle

from zkcontroller.cluster.controlled_shutdown import Connecting, ControlledShutdownOutcome, controlled_shutdown
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import Broker, BrokerInfo, EndPoint, TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import ControlledShutdownRequest, ControlledShutdownResponse
from zkcontroller.protocol.transport import ConnectTimeoutError
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.runtime.tcp_transport import TcpTransport
from zkcontroller.sim.loop import run_virtual
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

LOGGER = "kafka.server.KafkaServer"
DONE = ControlledShutdownResponse(Errors.NONE)


def info(broker_id: int) -> BrokerInfo:
    return BrokerInfo(Broker(broker_id, (EndPoint(f"b{broker_id}", 9092, "PLAINTEXT", "PLAINTEXT"),), None))


async def zk_with_controller(controller_id: int = 2) -> KafkaZkClient:
    clock = ManualClock()
    zk = KafkaZkClient(await EmbeddedBackend(clock, tick_ms=None).new_session(), clock)
    await zk.create_top_level_paths()
    await zk.register_broker(info(2))
    await zk.register_controller_and_increment_controller_epoch(controller_id)
    return zk


class SlowTransport:
    """Delivers at once (as the in-process and simulated transports: no connection to open) after ``answer_s``
    virtual seconds; None: never answers."""

    def __init__(self, answer_s: float | None, response: Any = DONE) -> None:
        self.answer_s = answer_s
        self.response = response
        self.sent: list[int] = []

    async def send(self, broker: Broker, request: Any) -> Any:
        assert isinstance(request, ControlledShutdownRequest)
        self.sent.append(broker.id)
        await asyncio.sleep(10**9 if self.answer_s is None else self.answer_s)
        return self.response


class SlowConnectingTransport(SlowTransport):
    """A transport with a connection to open first (as `TcpTransport`), which takes ``connect_s`` (None: never)."""

    def __init__(self, connect_s: float | None, answer_s: float | None) -> None:
        super().__init__(answer_s)
        self.connect_s = connect_s

    async def connect(self, broker: Broker, *, client: str) -> None:
        await asyncio.sleep(10**9 if self.connect_s is None else self.connect_s)


Outcome = tuple[ControlledShutdownOutcome, float]


def shut_down(transport: Any, config: ControllerConfig,
              before: Callable[[KafkaZkClient], Awaitable[None]] | None = None) -> Outcome:
    """Run the controlled shutdown of broker 1 on a virtual-time loop; returns its outcome and virtual duration."""
    async def main() -> Outcome:
        zk = await zk_with_controller()
        if before is not None:
            await before(zk)
        loop = asyncio.get_running_loop()
        start = loop.time()
        # the loop's (virtual) time: the attempts' bounds and the back-off are sleeps on the runtime
        outcome = await controlled_shutdown(1, lambda: 77, config, zk, transport, AsyncioRuntime(random.Random(0)))
        return outcome, loop.time() - start
    return run_virtual(main())


def config(**changes: Any) -> ControllerConfig:
    return ControllerConfig(broker_id=1, controlled_shutdown_max_retries=1, **changes)


@pytest.mark.parametrize(("connect_s", "answer_s"), [(None, 45.0), (20.0, 25.0)])
def test_the_answer_gets_request_timeout_ms_after_the_connection(connect_s: float | None, answer_s: float) -> None:
    """Kafka waits up to controller.socket.timeout.ms to connect and then request.timeout.ms for the answer; ours
    bounded the whole exchange by the smaller of the two (30 s here), so a slow controller's answer was lost."""
    slow = config(controller_socket_timeout_ms=30_000, request_timeout_ms=60_000)
    transport = (SlowTransport(answer_s) if connect_s is None
                 else SlowConnectingTransport(connect_s, answer_s))
    outcome, took = shut_down(transport, slow if connect_s is None else config())
    assert outcome.succeeded, "the answer came within request.timeout.ms"
    assert took == pytest.approx(answer_s + (connect_s or 0))


def test_a_connection_not_made_within_controller_socket_timeout_ms_fails_the_attempt(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    outcome, took = shut_down(SlowConnectingTransport(None, 0), config(controller_socket_timeout_ms=7_000))
    assert not outcome.succeeded and took == pytest.approx(7.0)
    assert ("[KafkaServer id=1] Error during controlled shutdown, possibly because leader movement took longer than "
            "the configured controller.socket.timeout.ms and/or request.timeout.ms: Failed to connect within 7000 ms"
            in caplog.messages)


def test_an_answer_not_given_within_request_timeout_ms_fails_the_attempt(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    outcome, took = shut_down(SlowTransport(None), config(controller_socket_timeout_ms=60_000,
                                                          request_timeout_ms=9_000))
    assert not outcome.succeeded and took == pytest.approx(9.0)
    assert any(m.endswith("and/or request.timeout.ms: Connection to 2 was disconnected before the response was read")
               for m in caplog.messages)


def test_a_controller_without_a_registration_is_logged_and_the_previous_one_asked(
        caplog: pytest.LogCaptureFixture) -> None:
    """``/controller`` names broker 5, whose registration is gone (its session expired): Kafka says so and sends
    the attempt to the controller it asked last, or to none on a first attempt."""
    caplog.set_level(logging.INFO, LOGGER)
    left = ControlledShutdownResponse(Errors.NONE, (TopicPartition("t", 0), TopicPartition("u", 3)))

    class ControllerMoves(SlowTransport):
        def __init__(self, zk: list[KafkaZkClient]) -> None:
            super().__init__(0, left)
            self.zk = zk

        async def send(self, broker: Broker, request: Any) -> Any:
            answer = await super().send(broker, request)
            await self.zk[0].session.delete("/controller")
            await self.zk[0].register_controller_and_increment_controller_epoch(5)
            self.response = DONE
            return answer

    zk: list[KafkaZkClient] = []

    async def keep(client: KafkaZkClient) -> None:
        zk.append(client)

    transport = ControllerMoves(zk)
    outcome, _ = shut_down(transport, ControllerConfig(broker_id=1, controlled_shutdown_max_retries=3), keep)
    assert outcome.succeeded and outcome.attempts == 2 and transport.sent == [2, 2]
    prefix = "[KafkaServer id=1] "
    assert caplog.messages[:4] == [
        f"{prefix}Starting controlled shutdown",
        f"{prefix}Remaining partitions to move: [RemainingPartition(topicName='t', partitionIndex=0), "
        "RemainingPartition(topicName='u', partitionIndex=3)]",
        f"{prefix}Error from controller: NONE",
        f"{prefix}Retrying controlled shutdown after the previous attempt failed...",
    ]
    assert (f"{prefix}Broker registration for controller 5 is not available (i.e. the Controller's ZK session "
            "expired)") in caplog.messages

    first = SlowTransport(0)

    async def unregistered(client: KafkaZkClient) -> None:
        await client.session.delete("/controller")
        await client.register_controller_and_increment_controller_epoch(5)

    outcome, _ = shut_down(first, config(), unregistered)
    assert not outcome.succeeded and first.sent == []  # no controller asked before: nobody to send to


def test_the_tcp_transport_is_connected_first_and_bounds_its_connect() -> None:
    """`TcpTransport.connect` is the ``awaitReady`` step: a bound (controller.socket.timeout.ms) ending before the
    connection-setup timeout is Kafka's ``SocketTimeoutException`` text."""
    async def never(*_: Any) -> Any:
        await asyncio.Event().wait()

    async def main() -> None:
        transport = TcpTransport(AsyncioRuntime(), connect_timeout_ms=150)
        assert isinstance(transport, Connecting)
        transport._open_connection = never  # type: ignore[assignment]
        with pytest.raises(ConnectTimeoutError, match=r"^Failed to connect within 150 ms$"):
            await transport.connect(info(2).broker, client="controlled-shutdown")
        await transport.close()

    run_virtual(main())


class ClosingTransport(SlowTransport):
    """Records `close_client` calls (`TcpTransport`'s: Kafka's ``NetworkClient.close``)."""

    def __init__(self, response: Any) -> None:
        super().__init__(0, response)
        self.closed: list[tuple[int, str]] = []

    def close_client(self, broker_id: int, client: str, reason: str = "") -> None:
        self.closed.append((broker_id, client))


@pytest.mark.parametrize("response", [DONE, ControlledShutdownResponse(Errors.NONE, (TopicPartition("t", 0),))])
def test_each_run_closes_its_client_after_its_attempts(response: ControlledShutdownResponse) -> None:
    """``doControlledShutdown`` makes a NetworkClient and closes it in ``finally``, so a later run connects anew
    and counts its correlation ids from 0; the attempts of one run share it."""
    transport = ClosingTransport(response)
    two_attempts = ControllerConfig(broker_id=1, controlled_shutdown_max_retries=2,
                                    controlled_shutdown_retry_backoff_ms=1)
    outcome, _ = shut_down(transport, two_attempts)
    assert transport.sent == ([2] if outcome.succeeded else [2, 2])
    assert transport.closed == [(2, "controlled-shutdown")]


class NeverAnswers(SlowTransport):
    """A controller that takes the request and never answers (a connecting transport: nor connects)."""

    def __init__(self, connecting: bool) -> None:
        super().__init__(None)
        self.connecting = connecting

    async def connect(self, broker: Broker, *, client: str) -> None:
        if self.connecting:
            await asyncio.Event().wait()


@pytest.mark.parametrize("connecting", [False, True])
async def test_each_attempt_ends_after_its_timeout_on_the_runtime_clock(
        connecting: bool, caplog: pytest.LogCaptureFixture) -> None:
    """The connection and the answer were bounded by ``asyncio.wait_for`` in the loop's time, while the back-off and
    everything else of the broker waits on the `Runtime`'s clock (virtual in the simulator). On a runtime whose
    clock moves only when told, each attempt must end exactly ``controller.socket.timeout.ms`` (connecting) or
    ``request.timeout.ms`` (the answer) after it began, then back off ``controlled.shutdown.retry.backoff.ms``,
    up to ``controlled.shutdown.max.retries`` attempts, with Kafka's lines."""
    caplog.set_level(logging.INFO, LOGGER)
    runtime = ManualRuntime()
    config = ControllerConfig(broker_id=1, controller_socket_timeout_ms=4_000, request_timeout_ms=6_000,
                              controlled_shutdown_max_retries=3, controlled_shutdown_retry_backoff_ms=500)
    transport = NeverAnswers(connecting)
    zk = await zk_with_controller()
    shutdown = asyncio.ensure_future(controlled_shutdown(1, lambda: 77, config, zk, transport, runtime))
    bound = 4_000 if connecting else 6_000
    reason = ("Failed to connect within 4000 ms" if connecting
              else "Connection to 2 was disconnected before the response was read")
    prefix = "[KafkaServer id=1] "
    for attempt in (1, 2, 3):
        await until_idle()
        assert runtime.sleeping() == [runtime.now + bound], f"attempt {attempt} is not bounded on the runtime"
        runtime.advance(bound - 1)
        await until_idle()
        assert sum("Error during" in m for m in caplog.messages) == attempt - 1, "the attempt ended early"
        runtime.advance(1)
        await until_idle()
        failed = (f"{prefix}Error during controlled shutdown, possibly because leader movement took longer than the "
                  f"configured controller.socket.timeout.ms and/or request.timeout.ms: {reason}")
        assert caplog.messages[-1 if attempt < 3 else -2] == failed
        if attempt < 3:
            assert runtime.sleeping() == [runtime.now + 500], "the back-off"
            runtime.advance(500)
            await until_idle()
            assert caplog.messages[-1] == f"{prefix}Retrying controlled shutdown after the previous attempt failed..."
    await until_idle()
    assert shutdown.done()
    outcome = shutdown.result()
    assert (outcome.succeeded, outcome.attempts, runtime.now) == (False, 3, 3 * bound + 2 * 500)
    assert transport.sent == ([] if connecting else [2, 2, 2])
    assert caplog.messages[-1] == (f"{prefix}Proceeding to do an unclean shutdown as all the controlled shutdown "
                                   "attempts failed")
