"""What partition reassignment records in ZooKeeper: topic znodes (phases U1 and B6) and the legacy
``/admin/reassign_partitions`` znode (B7), with completions recorded in batches.

Kafka writes both znodes once per completed partition, each time whole: the work grows with the square of the
partitions per topic and per request. Here a completion updates the context at once (B1–B5 and B8 run as in
Kafka) and queues one `CompletedReassignmentsFlush` behind the events already waiting, which writes each touched
topic znode once and rewrites ``/admin/reassign_partitions`` once. A controller that dies before the flush leaves
RS = ORS + TRS in ZooKeeper, which the next one completes again, as after a Kafka controller's death between B5
and B6.

``/admin/reassign_partitions`` is read as Kafka's ``getPartitionReassignment`` reads it (`read_zk_reassignment`):
data that is not the JSON Kafka binds is logged and read as no reassignment, so completing or overriding one
deletes that znode, as Kafka does; null data, or JSON whose nulls Kafka's decoder dereferences, throws there
and here, leaving the znode as it is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zkcontroller.controller.assignment import render_assignment
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.core import ControllerCore
from zkcontroller.controller.errors import IllegalControllerStateError
from zkcontroller.controller.events import CompletedReassignmentsFlush, ZkPartitionReassignment
from zkcontroller.controller.families import TopicDeletionClient
from zkcontroller.controller.scala_render import scala_buffer, scala_map
from zkcontroller.model import ReplicaAssignment, TopicPartition, sorted_partitions
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ControllerMovedError, ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import BoundReassignment, ReassignPartitionsZNode

BoundPartition = tuple[str | None, int]
"""An entry of ``/admin/reassign_partitions`` as Kafka binds it: a `TopicPartition`, or a null topic's."""

kafka_zk_client_log = logging.getLogger("kafka.zk.KafkaZkClient")
"""Kafka logs its reading of ``/admin/reassign_partitions`` in ``KafkaZkClient``, under that class's logger."""


async def read_zk_reassignment(zk: KafkaZkClient) -> BoundReassignment:
    """Kafka 2.8's ``getPartitionReassignment``: the znode as its Jackson binding reads it, empty when it is
    absent; data that binding refuses (a JSON error) is logged as Kafka logs it and read as empty. Null data and
    the nulls Kafka's decoder dereferences raise (`NullZnodeDataError`, `NullDereferenceError`), as Kafka throws
    there."""
    try:
        return await zk.get_bound_partition_reassignment() or BoundReassignment({}, {})
    except ZnodeDecodeError as e:
        if not ReassignPartitionsZNode.kafka_reads_as_empty(e):
            raise
        kafka_zk_client_log.warning("Ignoring partition reassignment due to invalid json: %s", e, exc_info=e)
        return BoundReassignment({}, {})


def shown_partition(key: BoundPartition) -> TopicPartition:
    """How Kafka prints a bound entry's partition (``TopicPartition.toString``: ``null-0`` for a null topic)."""
    return key if isinstance(key, TopicPartition) else TopicPartition("null" if key[0] is None else key[0], key[1])


def _list(partitions: Sequence[TopicPartition]) -> str:
    return ", ".join(str(tp) for tp in partitions)


class ReassignmentRecords:
    def __init__(self, core: ControllerCore, context: ControllerContext, deletion: TopicDeletionClient) -> None:
        self.core = core
        self.context = context
        self.deletion = deletion
        self._completed: dict[TopicPartition, tuple[int, ...]] = {}
        """Completed in the context, not yet in ZooKeeper: partition → its final replicas."""

    def clear(self) -> None:
        """On resignation: the next controller records them (from what ZooKeeper still says)."""
        self._completed.clear()

    def completed(self, tp: TopicPartition, replicas: tuple[int, ...]) -> None:
        """Queue B6 and B7 for ``tp`` (the first completion since the last flush queues the flush event)."""
        if not self._completed:
            self.core.events.put(CompletedReassignmentsFlush())
        self._completed[tp] = replicas

    async def flush(self, _event: CompletedReassignmentsFlush) -> None:
        """B6 once per topic from the context (which holds RS = TRS for each), then B7 in one rewrite."""
        done, self._completed = self._completed, {}
        if not self.core.is_active or not done:
            return
        for topic in sorted({tp.topic for tp in done}):
            if topic not in self.context.all_topics:
                continue  # deleted meanwhile: nothing left to record
            # a topic queued for deletion is written too: Kafka writes RS = TRS (B6) before resuming its deletion,
            # so a controller that takes over mid-deletion deletes the target replicas, not the removed ones again
            parts = sorted_partitions(tp for tp in done if tp.topic == topic)
            try:
                await self.write_topic_assignment(topic)
            except ControllerMovedError:
                raise
            except Exception as e:  # ZooKeeper keeps RS = ORS + TRS: the next failover completes them again
                self.core.log.error(f"Failed to record completed reassignments of {_list(parts)} in ZooKeeper", e)
                continue
            for tp in parts:
                self.core.log.info(f"Successfully updated assignment of partition {tp} to "
                                   f"{render_assignment(self.context.partition_full_replica_assignment(tp))}")
        await self.maybe_remove_from_zk(
            lambda p, r: p[0] is not None and done.get(TopicPartition(p[0], p[1])) == tuple(r))

    async def write_topic_assignment(self, topic: str,
                                     changed: Mapping[TopicPartition, ReplicaAssignment] | None = None) -> None:
        """The topic znode from the context's assignment of every partition (``changed`` overriding)."""
        topic_assignment = dict(self.context.partition_full_replica_assignment_for_topic(topic))
        topic_assignment.update(changed or {})
        if not await self.core.zk.path_exists(paths.topic_path(topic)):
            raise IllegalControllerStateError(
                f"Failed to update assignment for {_list(sorted_partitions(changed or topic_assignment))} since the "
                "topic has no current assignment")
        await self.core.zk.set_topic_assignment(topic, self.context.topic_ids.get(topic), topic_assignment,
                                                self.context.fencing.epoch_zk_version)

    async def maybe_remove_from_zk(self, should_remove: Callable[[BoundPartition, Sequence[Any]], bool]) -> None:
        """Kafka's ``maybeRemoveFromZkReassignment``: ``should_remove`` sees every entry the znode binds, unusable
        ones (`BoundReassignment`) by ``(topic, partition)`` with their replicas as bound."""
        core = self.core
        if not await core.zk.reassign_partitions_in_progress():
            return
        current = await read_zk_reassignment(core.zk)  # null data raises: the znode stays, as in Kafka
        entries: dict[BoundPartition, Sequence[Any]] = dict(current.targets.items())
        entries.update(current.unusable)
        removing = {key: r for key, r in entries.items() if should_remove(key, r)}
        remaining = current.keeping(lambda key: key not in removing)
        removed = scala_map({shown_partition(key): scala_buffer(r) for key, r in removing.items()},
                            built_from=len(entries))
        core.log.info(f"Removing partitions {removed} from the list of reassigned partitions in zookeeper")
        if not remaining:
            core.log.info(f"No more partitions need to be reassigned. Deleting zk path {paths.REASSIGN_PARTITIONS}")
            await core.zk.delete_partition_reassignment(self.context.fencing.epoch_zk_version)
            core.events.put(ZkPartitionReassignment())  # re-arm the creation watch
        else:
            await core.zk.set_or_create_partition_reassignment(remaining, self.context.fencing.epoch_zk_version)
