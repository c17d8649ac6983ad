"""What Kafka's two state machines do the same way, written once: a transition runs inside one request
batch that is sent at the end with the controller's fencing token; a version check that fails means another
controller exists (`ControllerMovedError` propagates so the controller resigns); any other failure is logged
and reported per item; illegal and failed transitions are logged in Kafka's words.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from enum import Enum
from typing import Generic, TypeVar

from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.errors import StateChangeFailedError
from zkcontroller.controller.event_log import StateChangeLogger
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.controller.states import render_states
from zkcontroller.coordination.errors import NoNodeError
from zkcontroller.model import LeaderIsrAndControllerEpoch, TopicPartition
from zkcontroller.protocol.ibp import alter_isr_enabled
from zkcontroller.zk.errors import ControllerMovedError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

K = TypeVar("K")
S = TypeVar("S", bound=Enum)
R = TypeVar("R")


class StateMachine(Generic[K, S]):
    """The skeleton; subclasses name the items (``_noun``), the table and Kafka's wording for an illegal move."""

    _noun: str
    """``partitions`` or ``replicas``, as Kafka's "moving some ... to ... state" lines say."""
    _valid_previous: dict[S, frozenset[S]]
    _invalid_template: str
    """Kafka's message for an illegal transition; fields ``item``, ``states``, ``target``, ``current``."""

    first_attempt_from_context = True
    """False: read every state from ZooKeeper first, as Kafka does (the benchmark's before-figure)."""

    def __init__(self, config: ControllerConfig, context: ControllerContext, zk: KafkaZkClient,
                 batch: ControllerBrokerRequestBatch, logger: StateChangeLogger, name: str) -> None:
        self.config = config
        self.context = context
        self.zk = zk
        self.batch = batch
        self.state_change_logger = logger
        self.controller_id = config.broker_id
        self._log = logging.getLogger(f"kafka.controller.Zk{name}")
        self._ident = f"[{name} controllerId={config.broker_id}] "
        self.only_controller_writes_states = alter_isr_enabled(config.inter_broker_protocol_version)
        """From IBP 2.7-IV2 leaders propose ISR changes (AlterIsr) and never write partition states, so the
        context's copy is as fresh as ZooKeeper's; before it a leader may have written one we have not seen."""

    def _cached_states(self, partitions: Iterable[TopicPartition]
                       ) -> tuple[dict[TopicPartition, LeaderIsrAndControllerEpoch], list[TopicPartition]]:
        """The context's copy of each partition state (with the zkVersion it was read or written at), and the
        partitions it holds none for.

        Kafka re-reads every state from ZooKeeper before a batch of conditional writes; a first attempt from
        this copy writes the same data at the same expected version when the copy is current, and a stale copy
        fails the version check (BADVERSION), after which the caller re-reads as Kafka does. So the reads are
        saved and no write can land on a state we have not seen.
        """
        cached: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        missing: list[TopicPartition] = []
        if not StateMachine.first_attempt_from_context:
            return cached, list(partitions)
        leadership = self.context.partition_leadership_info
        for tp in partitions:
            info = leadership(tp)
            if info is None:
                missing.append(tp)
            else:
                cached[tp] = info
        return cached, missing

    @staticmethod
    def _redo_from_zookeeper(failed: Mapping[TopicPartition, Exception], from_cache: bool) -> list[TopicPartition]:
        """Writes from the context's copy that found no znode: the re-read attempt reports them in Kafka's
        words (state missing, or the topic being deleted)."""
        return [tp for tp, e in failed.items() if from_cache and isinstance(e, NoNodeError)] if failed else []

    async def _in_batch(self, target: S, step: Callable[[], Awaitable[R]],
                        on_error: Callable[[Exception], R]) -> R:
        """Run ``step`` in a fresh batch and send it with this tenure's fencing token."""
        try:
            self.batch.new_batch()
            result = await step()
            await self.batch.send_requests_handing_leader_and_isr_first(self.context.fencing)
            return result
        except ControllerMovedError as e:
            self._log.error("%sController moved to another broker when moving some %s to %s state",
                            self._ident, self._noun, target, exc_info=e)
            raise
        except Exception as e:
            self._log.error("%sError while moving some %s to %s state", self._ident, self._noun, target,
                            exc_info=e)
            return on_error(e)

    def _written_by_newer_controller(self, state: LeaderIsrAndControllerEpoch) -> bool:
        """A partition state stamped with a higher controller epoch: we went through a soft failure."""
        return state.controller_epoch > self.context.epoch

    def _log_invalid_transition(self, item: K, current: S, target: S) -> None:
        error = StateChangeFailedError(self._invalid_template.format(
            item=item, states=render_states(self._valid_previous[target]), target=target, current=current))
        self._log_failed_state_change(item, current, target, error)

    def _log_failed_state_change(self, item: K, current: S, target: S, error: BaseException) -> None:
        raise NotImplementedError
