"""The stopping broker's side of controlled shutdown (spec §8.3, Kafka's ``KafkaServer.controlledShutdown``).

Before it deregisters, a broker asks the controller to move its leadership away: it finds the controller through
``/controller`` and ``/brokers/ids/<id>``, sends ControlledShutdown with its broker epoch, and succeeds when the
answer has no error and no remaining partitions. Otherwise it waits ``controlled.shutdown.retry.backoff.ms`` and
tries again, up to ``controlled.shutdown.max.retries`` attempts, then stops anyway ("unclean shutdown").

Each attempt waits at most ``controller.socket.timeout.ms`` for the connection (a transport that has one, such as
`TcpTransport`, is asked to `connect` first, Kafka's ``awaitReady``) and then ``request.timeout.ms`` for the answer
(the NetworkClient's request timeout), both on the `Runtime`'s clock as every wait of the broker (virtual in the
simulator: a wall-clock bound ended too soon there, or never for a test's manual clock), with Kafka's texts for
either timeout in the "Error during controlled shutdown" warning. When ``/controller`` names no broker, or one
whose registration is gone, the attempt goes to the controller asked last (Kafka's ``prevController``).

Beyond Kafka: no back-off follows the last failed attempt (Kafka sleeps once more before giving up). And a caller
tearing the whole cluster down passes ``give_up``, which stops the retries once they cannot help: no broker left
running could take the partitions the broker still leads, or the controller is a killed broker that cannot
answer (``zkcontroller cluster``'s ``quit`` waited 10 s for each such broker, and looked hung). A single broker's
stop leaves it None and retries as Kafka does.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from zkcontroller.broker.timeouts import within
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.errors import ZkError
from zkcontroller.model import Broker, TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import ControlledShutdownRequest, ControlledShutdownResponse
from zkcontroller.protocol.transport import CONTROLLED_SHUTDOWN_CLIENT, BrokerTransport, BrokerUnreachableError
from zkcontroller.runtime.runtime import Runtime
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

log = logging.getLogger("kafka.server.KafkaServer")


@dataclass(frozen=True)
class ControlledShutdownOutcome:
    succeeded: bool
    attempts: int
    last_response: ControlledShutdownResponse | None = None


GiveUp = Callable[[ControlledShutdownResponse | None], Awaitable[str | None]]
"""Asked after a failed attempt (its answer, None without one): why retrying is futile, or None to retry."""


@runtime_checkable
class Connecting(Protocol):
    """A transport with a connection to open before a request (`TcpTransport`); others deliver at once."""

    async def connect(self, broker: Broker, *, client: str) -> None: ...


class _NoAnswer(Exception):
    """An attempt that timed out, with Kafka's words for it."""


async def controlled_shutdown(
    broker_id: int,
    broker_epoch: Callable[[], int],
    config: ControllerConfig,
    zk: KafkaZkClient,
    transport: BrokerTransport,
    runtime: Runtime,
    give_up: GiveUp | None = None,
) -> ControlledShutdownOutcome:
    """Run the handshake; never raises (a broker that cannot shut down cleanly still shuts down)."""
    prefix = f"[KafkaServer id={broker_id}] "
    if not config.controlled_shutdown_enable:
        return ControlledShutdownOutcome(False, 0)
    log.info("%sStarting controlled shutdown", prefix)
    asked: set[int] = set()
    try:
        return await _attempts(broker_id, broker_epoch, config, zk, transport, runtime, give_up, prefix, asked)
    finally:  # Kafka's doControlledShutdown closes its NetworkClient: the next run counts its ids from 0 again
        close_client = getattr(transport, "close_client", None)
        if close_client is not None:
            for controller_id in asked:
                close_client(controller_id, CONTROLLED_SHUTDOWN_CLIENT, "controlled shutdown over")


async def _attempts(broker_id: int, broker_epoch: Callable[[], int], config: ControllerConfig, zk: KafkaZkClient,
                    transport: BrokerTransport, runtime: Runtime, give_up: GiveUp | None, prefix: str,
                    asked: set[int]) -> ControlledShutdownOutcome:
    """The attempts of one controlled shutdown; ``asked`` collects the controllers it sent to."""
    attempts = 0
    response: ControlledShutdownResponse | None = None
    controller: Broker | None = None
    while attempts < config.controlled_shutdown_max_retries:
        attempts += 1
        controller = await _find_controller(zk, prefix, controller)
        if controller is not None:
            asked.add(controller.id)
        response = None if controller is None else await _attempt(
            broker_id, broker_epoch(), config, controller, transport, runtime, prefix)
        if response is not None and response.error is Errors.NONE and not response.remaining_partitions:
            log.info("%sControlled shutdown succeeded", prefix)
            return ControlledShutdownOutcome(True, attempts, response)
        if response is not None:
            log.info("%sRemaining partitions to move: %s", prefix, _remaining(response.remaining_partitions))
            log.info("%sError from controller: %s", prefix, response.error.name)
        futile = await give_up(response) if give_up is not None else None
        if futile is not None and attempts < config.controlled_shutdown_max_retries:
            log.info("%sNot retrying controlled shutdown (%s); proceeding to do an unclean shutdown", prefix, futile)
            return ControlledShutdownOutcome(False, attempts, response)
        if attempts < config.controlled_shutdown_max_retries:
            await runtime.sleep_ms(config.controlled_shutdown_retry_backoff_ms)
            log.warning("%sRetrying controlled shutdown after the previous attempt failed...", prefix)
    log.warning("%sProceeding to do an unclean shutdown as all the controlled shutdown attempts failed", prefix)
    return ControlledShutdownOutcome(False, attempts, response)


async def _find_controller(zk: KafkaZkClient, prefix: str, previous: Broker | None) -> Broker | None:
    """The controller ``/controller`` names now; when ZooKeeper names none, or its registration is gone (its session
    expired), the one asked last, as Kafka's ``prevController`` (None before any was found)."""
    try:
        controller_id = await zk.get_controller_id()
        found = None if controller_id is None else await zk.get_broker(controller_id)
    except (ZkError, ZnodeDecodeError, OSError) as e:
        log.warning("%sCannot find the controller for controlled shutdown: %s", prefix, e)
        return previous
    if controller_id is None:
        log.info("%sNo controller registered in ZooKeeper", prefix)
    elif found is None:
        log.info("%sBroker registration for controller %d is not available (i.e. the Controller's ZK session "
                 "expired)", prefix, controller_id)
    return previous if found is None else found.broker


async def _attempt(broker_id: int, epoch: int, config: ControllerConfig, controller: Broker,
                   transport: BrokerTransport, runtime: Runtime, prefix: str) -> ControlledShutdownResponse | None:
    """One request to ``controller``; None when there was no answer. The connection and the answer are bounded
    apart, as Kafka's ``awaitReady(controller.socket.timeout.ms)`` then ``sendAndReceive`` (the NetworkClient's
    request timeout, request.timeout.ms), both on the runtime's clock (virtual in the simulator)."""
    socket_ms, request_ms = config.controller_socket_timeout_ms, config.request_timeout_ms
    try:
        if isinstance(transport, Connecting):
            await within(runtime, transport.connect(controller, client=CONTROLLED_SHUTDOWN_CLIENT), socket_ms,
                         lambda: _NoAnswer(f"Failed to connect within {socket_ms} ms"))
        # the NetworkClient disconnects on its request timeout
        answer = await within(runtime, transport.send(controller, ControlledShutdownRequest(broker_id, epoch)),
                              request_ms, lambda: _NoAnswer(f"Connection to {controller.id} was disconnected "
                                                            "before the response was read"))
    except (BrokerUnreachableError, OSError, _NoAnswer) as e:
        log.warning("%sError during controlled shutdown, possibly because leader movement took longer than the "
                    "configured controller.socket.timeout.ms and/or request.timeout.ms: %s", prefix, e or repr(e))
        return None
    if not isinstance(answer, ControlledShutdownResponse):
        log.warning("%sUnexpected answer to controlled shutdown from broker %d: %r", prefix, controller.id, answer)
        return None
    return answer


def _remaining(partitions: Iterable[TopicPartition]) -> str:
    """The response's ``remainingPartitions`` as Kafka prints them (a Java collection of generated messages)."""
    return "[" + ", ".join(f"RemainingPartition(topicName='{tp.topic}', partitionIndex={tp.partition})"
                           for tp in partitions) + "]"
