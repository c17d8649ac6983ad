"""How a leader's ISR change reaches ZooKeeper, per ``inter.broker.protocol.version`` (spec §9.8).

* `AlterIsrManager` (IBP >= 2.7-IV2, Kafka's ``DefaultAlterIsrManager``): pending changes go to the controller
  in one AlterIsr request at a time; a refused (NOT_CONTROLLER) or undelivered request is retried after a
  back-off, to whichever broker the metadata cache then names as controller. The controller checks the leader
  epoch and partition-state version, writes ZooKeeper fenced and answers with the state in force.
* `ZkIsrManager` (older IBP, Kafka's ``ZkIsrManager`` + ``ReplicaManager.maybePropagateIsrChanges``): the
  leader writes the partition state itself, conditional on its zkVersion and not fenced, then publishes the
  changed partitions as ``/isr_change_notification/isr_change_N`` in batches (after a quiet ``linger`` or at
  most ``max delay`` after the previous batch) for the controller to propagate.

`isr_manager_for` picks one: the only place the IBP switch is read.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.broker.partition import IsrProposal
from zkcontroller.broker.timeouts import send_with_timeout
from zkcontroller.coordination.errors import ErrorCode, ZkError
from zkcontroller.model import Broker, LeaderAndIsr, TopicPartition, sorted_partitions
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import AlterIsrPartition, AlterIsrRequest, AlterIsrResponse
from zkcontroller.protocol.transport import BrokerTransport, BrokerUnreachableError
from zkcontroller.runtime.runtime import Runtime
from zkcontroller.zk.errors import KafkaZkError
from zkcontroller.zk.fencing import NO_FENCING
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

log = logging.getLogger("kafka.server.DefaultAlterIsrManager")
zk_log = logging.getLogger("kafka.server.ZkIsrManager")

IsrResultCallback = Callable[[IsrProposal, LeaderAndIsr | Errors], None]
"""Told the outcome of each proposal: the state now in ZooKeeper, or the partition's error."""


class IsrManager(Protocol):
    def submit(self, proposal: IsrProposal) -> None: ...
    def clear_pending(self, tp: TopicPartition) -> None: ...
    def resubmit(self, proposal: IsrProposal) -> None: ...
    def start(self) -> None: ...
    def shutdown(self) -> None: ...


class _Worker:
    """A queue of proposals (the newest per partition wins) drained by one task; retries wait a back-off."""

    def __init__(self, runtime: Runtime, name: str) -> None:
        self.runtime = runtime
        self.name = name
        self.unsent: dict[TopicPartition, IsrProposal] = {}
        self._back_off = False
        self._wakeup = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def submit(self, proposal: IsrProposal) -> None:
        self.unsent[proposal.topic_partition] = proposal
        self._wakeup.set()

    def resubmit(self, proposal: IsrProposal) -> None:
        """A proposal answered with an error the leader retries goes again, after the back-off. (Kafka re-sends it
        at once; against a controller that keeps failing it, that is a busy loop, which on virtual time would
        never let the clock move.)"""
        self.unsent.setdefault(proposal.topic_partition, proposal)
        self._back_off = True
        self._wakeup.set()

    def clear_pending(self, tp: TopicPartition) -> None:
        """Kafka's ``clearPending`` on a new leadership or followership: a queued proposal carries the old leader
        epoch and version, so sending it would only earn a refusal. One already in flight is still answered (and
        the answer ignored by the partition, whose epoch moved on)."""
        self.unsent.pop(tp, None)

    def start(self) -> None:
        if not any(t.get_name() == self.name for t in self._tasks):
            self._tasks.append(self.runtime.spawn(self._run(), self.name))

    def shutdown(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()

    async def _run(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self.unsent:
                batch = dict(self.unsent)
                sent = await self.send(batch)
                if not sent or self._back_off:
                    self._back_off = False
                    await self.runtime.sleep_ms(self.retry_backoff_ms())

    def done(self, proposal: IsrProposal) -> None:
        """Forget a proposal once answered (unless a newer one for its partition came meanwhile)."""
        if self.unsent.get(proposal.topic_partition) is proposal:
            del self.unsent[proposal.topic_partition]

    async def send(self, batch: dict[TopicPartition, IsrProposal]) -> bool:
        raise NotImplementedError

    def retry_backoff_ms(self) -> int:
        raise NotImplementedError


class AlterIsrManager(_Worker):
    def __init__(self, broker_id: int, broker_epoch: Callable[[], int], controller: Callable[[], Broker | None],
                 transport: BrokerTransport, runtime: Runtime, config: ReplicationConfig,
                 on_result: IsrResultCallback) -> None:
        super().__init__(runtime, f"alter-isr-{broker_id}")
        self.broker_id = broker_id
        self._broker_epoch = broker_epoch
        self._controller = controller
        self._transport = transport
        self._config = config
        self._on_result = on_result
        self.requests_sent = 0

    def retry_backoff_ms(self) -> int:
        return self._config.alter_isr_retry_backoff_ms

    async def send(self, batch: dict[TopicPartition, IsrProposal]) -> bool:
        controller = self._controller()
        if controller is None:
            log.debug("No controller known; retrying")
            return False
        request = AlterIsrRequest(self.broker_id, self._broker_epoch(), tuple(
            AlterIsrPartition(tp, p.leader_and_isr.leader_epoch, p.leader_and_isr.isr, p.leader_and_isr.zk_version)
            for tp, p in ((tp, batch[tp]) for tp in sorted_partitions(batch))))
        try:
            self.requests_sent += 1
            response = await send_with_timeout(self._transport, self.runtime, controller, request,
                                               self._config.request_timeout_ms)
        except BrokerUnreachableError as e:
            log.debug("AlterIsr to controller %d failed: %s", controller.id, e)
            return False
        if not isinstance(response, AlterIsrResponse) or response.error is not Errors.NONE:
            self._log_top_level_error(controller, request, response)
            return False
        answered = {r.topic_partition: r for r in response.partitions}
        for tp, proposal in batch.items():
            result = answered.get(tp)
            if result is None:  # not answered: stays unsent, goes again
                log.warning("Partition %s was sent but not included in the response", tp)
                continue
            self.done(proposal)
            self._on_result(proposal, result.error if result.error is not Errors.NONE else LeaderAndIsr(
                result.leader_id, result.leader_epoch, result.isr, result.current_isr_version))
        return True

    def _log_top_level_error(self, controller: Broker, request: AlterIsrRequest, response: object) -> None:
        """Kafka 2.8.2's ``handleAlterIsrResponse`` warnings; NOT_CONTROLLER is re-queued by Kafka's channel to
        the controller without a word, so ours says it at DEBUG only."""
        error = getattr(response, "error", response)
        if error is Errors.NOT_CONTROLLER:  # DefaultAlterIsrManager has no logIdent
            log.debug("Controller %d answered AlterIsr with NOT_CONTROLLER; retrying", controller.id)
        elif error is Errors.STALE_BROKER_EPOCH:
            log.warning("Broker had a stale broker epoch (%d), retrying.", request.broker_epoch)
        else:
            name = error.name if isinstance(error, Errors) else repr(error)
            log.warning("Controller returned an unexpected top-level error when handling AlterIsr request: %s", name)


class ZkIsrManager(_Worker):
    def __init__(self, broker_id: int, zk: Callable[[], KafkaZkClient | None], runtime: Runtime,
                 config: ReplicationConfig, on_result: IsrResultCallback) -> None:
        super().__init__(runtime, f"zk-isr-{broker_id}")
        self.broker_id = broker_id
        self._zk = zk
        self._config = config
        self._on_result = on_result
        self.isr_change_set: set[TopicPartition] = set()
        self.last_isr_change_ms = 0
        self.last_isr_propagation_ms = 0
        self.notifications_written = 0

    def start(self) -> None:
        if not self._tasks:
            self.last_isr_propagation_ms = self.runtime.now_ms()
            super().start()
            self._tasks.append(self.runtime.spawn(self._propagate_periodically(), f"isr-change-propagation-"
                                                  f"{self.broker_id}"))


    def retry_backoff_ms(self) -> int:
        return self._config.replica_fetch_backoff_ms or 1

    async def send(self, batch: dict[TopicPartition, IsrProposal]) -> bool:
        zk = self._zk()
        if zk is None:
            return False
        by_epoch: dict[int, dict[TopicPartition, LeaderAndIsr]] = {}
        for tp, proposal in batch.items():
            by_epoch.setdefault(proposal.controller_epoch, {})[tp] = proposal.leader_and_isr
        ok = True
        for controller_epoch, states in sorted(by_epoch.items()):
            try:
                result = await zk.update_leader_and_isr(states, controller_epoch, NO_FENCING)
            except (ZkError, OSError) as e:
                zk_log.warning("Failed to write ISR changes: %s", e)
                ok = False
                continue
            now = self.runtime.now_ms()
            for tp, lai in result.finished.items():
                self.isr_change_set.add(tp)
                self.last_isr_change_ms = now
                self._answer(batch[tp], lai)
            for tp in result.to_retry:
                version = await self._already_written(zk, tp, batch[tp].leader_and_isr, controller_epoch)
                if version is None:
                    self._answer(batch[tp], Errors.INVALID_UPDATE_VERSION)
                else:
                    self.isr_change_set.add(tp)
                    self.last_isr_change_ms = self.runtime.now_ms()
                    self._answer(batch[tp], batch[tp].leader_and_isr.with_zk_version(version))
            for tp, error in result.failed.items():
                if error.code == ErrorCode.NO_NODE:
                    self._answer(batch[tp], Errors.UNKNOWN_TOPIC_OR_PARTITION)
                else:
                    ok = False  # a store fault: stays unsent, written again after the back-off
        return ok

    @staticmethod
    async def _already_written(zk: KafkaZkClient, tp: TopicPartition, lai: LeaderAndIsr,
                               controller_epoch: int) -> int | None:
        """Kafka's ``checkLeaderAndIsrZkData`` after BADVERSION: when the znode already holds what we meant to
        write (leader, leader epoch, ISR, controller epoch), as after a write whose answer was lost and that was
        sent again, the write succeeded at the znode's version. None otherwise, or if it cannot be read."""
        try:
            written = await zk.get_topic_partition_state(tp)
        except (ZkError, KafkaZkError, OSError):
            return None
        if written is None:
            return None
        stored = written.leader_and_isr
        if (stored.leader, stored.leader_epoch, tuple(stored.isr), written.controller_epoch) != (
                lai.leader, lai.leader_epoch, tuple(lai.isr), controller_epoch):
            return None
        return stored.zk_version

    def _answer(self, proposal: IsrProposal, result: LeaderAndIsr | Errors) -> None:
        self.done(proposal)
        self._on_result(proposal, result)

    async def _propagate_periodically(self) -> None:
        while True:
            await self.runtime.sleep_ms(self._config.isr_change_notification_check_interval_ms)
            try:
                await self.maybe_propagate_isr_changes()
            except (ZkError, OSError) as e:
                zk_log.warning("Failed to publish ISR changes: %s", e)

    async def maybe_propagate_isr_changes(self) -> bool:
        """Publish the changed partitions in one notification when changes have settled for ``linger`` ms, or
        the previous publication is ``max delay`` ms old (Kafka's ``maybePropagateIsrChanges``)."""
        now, config, zk = self.runtime.now_ms(), self._config, self._zk()
        if not self.isr_change_set or zk is None:
            return False
        if not (self.last_isr_change_ms + config.isr_change_notification_linger_ms < now
                or self.last_isr_propagation_ms + config.isr_change_notification_max_delay_ms < now):
            return False
        changed = sorted_partitions(self.isr_change_set)
        await zk.propagate_isr_changes(changed)
        self.isr_change_set.difference_update(changed)
        self.last_isr_propagation_ms = now
        self.notifications_written += 1
        return True


def isr_manager_for(config: ReplicationConfig, *, broker_id: int, broker_epoch: Callable[[], int],
                    controller: Callable[[], Broker | None], transport: BrokerTransport,
                    zk: Callable[[], KafkaZkClient | None], runtime: Runtime,
                    on_result: IsrResultCallback) -> AlterIsrManager | ZkIsrManager:
    """Kafka's ``AlterIsrManager`` choice in ``KafkaServer.startup``: AlterIsr from 2.7-IV2 on, else ZooKeeper."""
    if config.uses_alter_isr:
        return AlterIsrManager(broker_id, broker_epoch, controller, transport, runtime, config, on_result)
    return ZkIsrManager(broker_id, zk, runtime, config, on_result)
