"""The stopping broker's side of controlled shutdown (spec §8.3, Kafka's ``KafkaServer.controlledShutdown``).

Before it deregisters, a broker asks the controller to move its leadership away: it finds the controller through
``/controller`` and ``/brokers/ids/<id>``, sends ControlledShutdown with its broker epoch, and succeeds when the
answer has no error and no remaining partitions. Otherwise it waits ``controlled.shutdown.retry.backoff.ms`` and
tries again, up to ``controlled.shutdown.max.retries`` attempts, then stops anyway ("unclean shutdown").

Beyond Kafka: no back-off follows the last failed attempt (Kafka sleeps once more before giving up). And a caller
tearing the whole cluster down passes ``give_up``, which stops the retries once they cannot help: no broker left
running could take the partitions the broker still leads, or the controller is a killed broker that cannot
answer (``zkcontroller cluster``'s ``quit`` waited 10 s for each such broker, and looked hung). A single broker's
stop leaves it None and retries as Kafka does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.errors import ZkError
from zkcontroller.model import Broker
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import ControlledShutdownRequest, ControlledShutdownResponse
from zkcontroller.protocol.transport import BrokerTransport, BrokerUnreachableError
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
    attempts = 0
    response: ControlledShutdownResponse | None = None
    controller: Broker | None = None
    while attempts < config.controlled_shutdown_max_retries:
        attempts += 1
        controller = await _find_controller(zk, prefix, controller)
        response = None if controller is None else await _attempt(
            broker_id, broker_epoch(), config, controller, transport, prefix)
        if response is not None and response.error is Errors.NONE and not response.remaining_partitions:
            log.info("%sControlled shutdown succeeded", prefix)
            return ControlledShutdownOutcome(True, attempts, response)
        if response is not None:
            remaining = ", ".join(str(tp) for tp in response.remaining_partitions)
            log.info("%sRemaining partitions to move: %s", prefix, remaining)
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
                   transport: BrokerTransport, prefix: str) -> ControlledShutdownResponse | None:
    """One request to ``controller``; None when there was no answer."""
    timeout_s = min(config.controller_socket_timeout_ms, config.request_timeout_ms) / 1000
    try:
        answer = await asyncio.wait_for(
            transport.send(controller, ControlledShutdownRequest(broker_id, epoch)), timeout_s)
    except (BrokerUnreachableError, TimeoutError, OSError) as e:
        log.warning("%sError during controlled shutdown, possibly because leader movement took longer than the "
                    "configured controller.socket.timeout.ms and/or request.timeout.ms: %s", prefix, e or repr(e))
        return None
    if not isinstance(answer, ControlledShutdownResponse):
        log.warning("%sUnexpected answer to controlled shutdown from broker %d: %r", prefix, controller.id, answer)
        return None
    return answer
